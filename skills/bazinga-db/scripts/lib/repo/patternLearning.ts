/**
 * Repository: `ca_pattern_learning`, what this layer learnt of an error pattern row, kept beside it.
 *
 * The capture (capture.ts) sees a known fault's fix pass again (+0.1 confidence, one more
 * occurrence) or the fault come back (−0.2, one more occurrence), the moves `update-error-confidence`
 * makes. The row itself stays as its writer left it, so BAZINGA's own CLI and prompt builder read
 * what they wrote; this layer reads the row with what it learnt applied (withLearning): confidence
 * base + delta (kept within 0 and 1, rounded to 2 decimals), occurrences base + delta, last seen the
 * later of the two. A later move by BAZINGA's own `update-error-confidence` moves the base, and the
 * learnt delta stays on top of it.
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import type { ErrorPatternRow } from '../patternRow.ts';
import type { ProjectScope } from './sessions.ts';
import { round2 } from './errorPatterns.ts';

interface LearningRow {
  project_id: string;
  pattern_hash: string;
  confidence_delta: number;
  occurrences_delta: number;
  last_seen: string | null;
}

const keyOf = (r: { project_id: string; pattern_hash: string }) => `${r.project_id}\u0000${r.pattern_hash}`;

/** The confidence a row reads with a learnt delta: within 0 and 1, rounded to 2 decimals. */
export const learntConfidence = (base: number, delta: number) => round2(Math.min(1, Math.max(0, round2(base) + delta)));

/** A row as this layer reads it, with what it learnt of it applied (the row unchanged when it learnt nothing). */
function applied<R extends ErrorPatternRow>(row: R, l: LearningRow | undefined): R {
  if (!l) return row;
  const lastSeen = l.last_seen !== null && l.last_seen > row.last_seen ? l.last_seen : row.last_seen;
  return { ...row, confidence: learntConfidence(row.confidence, l.confidence_delta), occurrences: row.occurrences + l.occurrences_delta, last_seen: lastSeen };
}

/** `rows` as this layer reads them: each with what it learnt of it (one read for all of them). */
export function withLearning<R extends ErrorPatternRow>(db: DB, rows: readonly R[]): R[] {
  if (rows.length === 0 || !hasTable(db, 'ca_pattern_learning')) return [...rows];
  const keys = JSON.stringify(rows.map((r) => [r.project_id, r.pattern_hash]));
  const learnt = stmt(
    db,
    `SELECT l.* FROM json_each(?) k
     CROSS JOIN ca_pattern_learning l ON l.project_id = json_extract(k.value, '$[0]') AND l.pattern_hash = json_extract(k.value, '$[1]')`,
  ).all(keys) as LearningRow[];
  if (learnt.length === 0) return [...rows];
  const byKey = new Map(learnt.map((l) => [keyOf(l), l]));
  return rows.map((r) => applied(r, byKey.get(keyOf(r))));
}

/** Every row of the scope this layer learnt something of, as it reads them (few: the captured faults met again). */
export function learntRows(db: DB, scope: ProjectScope): ErrorPatternRow[] {
  if (!hasTable(db, 'ca_pattern_learning')) return [];
  const rows = stmt(
    db,
    // CROSS JOIN: the few learnt rows drive the read, each finding its row by key (never a scan of error_patterns).
    `SELECT e.*, l.confidence_delta, l.occurrences_delta, l.last_seen AS learnt_seen FROM ca_pattern_learning l
     CROSS JOIN error_patterns e ON e.project_id = l.project_id AND e.pattern_hash = l.pattern_hash
     WHERE ${scope.wholeDatabase ? '1' : 'l.project_id = @projectId'}
     ORDER BY e.project_id, e.pattern_hash`,
  ).all({ projectId: scope.projectId }) as (ErrorPatternRow & { confidence_delta: number; occurrences_delta: number; learnt_seen: string | null })[];
  return rows.map(({ confidence_delta, occurrences_delta, learnt_seen, ...row }) =>
    applied(row, { project_id: row.project_id, pattern_hash: row.pattern_hash, confidence_delta, occurrences_delta, last_seen: learnt_seen }),
  );
}

/**
 * Records that a row, as this layer reads it (`read`), moved to `confidence` and was seen once
 * more, now: the delta from the row's stored confidence is kept, the row is not written. In the
 * caller's write transaction.
 */
export function recordLearning(db: DB, row: Pick<ErrorPatternRow, 'project_id' | 'pattern_hash'>, storedConfidence: number, confidence: number): void {
  stmt(
    db,
    `INSERT INTO ca_pattern_learning (project_id, pattern_hash, confidence_delta, occurrences_delta, last_seen)
     VALUES (@project_id, @pattern_hash, @delta, 1, datetime('now'))
     ON CONFLICT (project_id, pattern_hash) DO UPDATE SET confidence_delta = excluded.confidence_delta,
       occurrences_delta = occurrences_delta + 1, last_seen = excluded.last_seen`,
  ).run({ project_id: row.project_id, pattern_hash: row.pattern_hash, delta: round2(confidence - round2(storedConfidence)) });
}
