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
import { rowKey } from './patternFaults.ts';

interface LearningRow {
  project_id: string;
  pattern_hash: string;
  /** The created_at of the row it learnt of: a row deleted and saved again under the key has learnt nothing. */
  row_created_at: string | null;
  confidence_delta: number;
  occurrences_delta: number;
  last_seen: string | null;
}

/**
 * The confidence a row reads with a learnt delta, rounded to 2 decimals: at most 1, and not below
 * 0.1 (the floor a failure's move keeps) unless the stored value is lower.
 */
export const learntConfidence = (base: number, delta: number) => round2(Math.min(1, Math.max(Math.min(0.1, round2(base)), round2(base) + delta)));

/** A row as this layer reads it, with what it learnt of it applied (the row unchanged when it learnt nothing of this row). */
function applied<R extends ErrorPatternRow>(row: R, l: LearningRow | undefined): R {
  if (!l || (l.row_created_at !== null && l.row_created_at !== row.created_at)) return row;
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
  const byKey = new Map(learnt.map((l) => [rowKey(l), l]));
  return rows.map((r) => applied(r, byKey.get(rowKey(r))));
}

/** Every row of the scope this layer learnt something of, as it reads them (few: the captured faults met again). */
export function learntRows(db: DB, scope: ProjectScope): ErrorPatternRow[] {
  if (!hasTable(db, 'ca_pattern_learning')) return [];
  const rows = stmt(
    db,
    // CROSS JOIN: the few learnt rows drive the read, each finding its row by key (never a scan of error_patterns).
    `SELECT e.*, l.row_created_at, l.confidence_delta, l.occurrences_delta, l.last_seen AS learnt_seen FROM ca_pattern_learning l
     CROSS JOIN error_patterns e ON e.project_id = l.project_id AND e.pattern_hash = l.pattern_hash
     WHERE ${scope.wholeDatabase ? '1' : 'l.project_id = @projectId'}
     ORDER BY e.project_id, e.pattern_hash`,
  ).all({ projectId: scope.projectId }) as (ErrorPatternRow & { row_created_at: string | null; confidence_delta: number; occurrences_delta: number; learnt_seen: string | null })[];
  return rows
    .filter((r) => r.row_created_at === null || r.row_created_at === r.created_at)
    .map(({ confidence_delta, occurrences_delta, learnt_seen, row_created_at, ...row }) =>
      applied(row, { project_id: row.project_id, pattern_hash: row.pattern_hash, row_created_at, confidence_delta, occurrences_delta, last_seen: learnt_seen }),
    );
}

/**
 * Records what this layer learnt of a row: its confidence, as this layer reads it, moved to
 * `confidence`, and (`seen`) one more occurrence, now. The delta from the row's stored confidence is
 * kept (against that row: its created_at), the row is not written. In the caller's write transaction.
 */
export function recordLearning(
  db: DB,
  row: Pick<ErrorPatternRow, 'project_id' | 'pattern_hash' | 'confidence' | 'created_at'>,
  confidence: number,
  seen: boolean,
): void {
  const delta = round2(confidence - round2(row.confidence));
  stmt(
    db,
    `INSERT INTO ca_pattern_learning (project_id, pattern_hash, row_created_at, confidence_delta, occurrences_delta, last_seen)
     VALUES (@project_id, @pattern_hash, @created_at, @delta, @seen, CASE WHEN @seen = 1 THEN datetime('now') END)
     ON CONFLICT (project_id, pattern_hash) DO UPDATE SET
       confidence_delta = excluded.confidence_delta,
       occurrences_delta = CASE WHEN row_created_at IS excluded.row_created_at THEN occurrences_delta ELSE 0 END + excluded.occurrences_delta,
       last_seen = COALESCE(excluded.last_seen, CASE WHEN row_created_at IS excluded.row_created_at THEN last_seen END),
       row_created_at = excluded.row_created_at`,
  ).run({ project_id: row.project_id, pattern_hash: row.pattern_hash, created_at: row.created_at, delta, seen: seen ? 1 : 0 });
}

/** What this layer learnt of rows that are gone, or were saved again since (another row under the key): removed. In the caller's write transaction. */
export function pruneLearning(db: DB): number {
  if (!hasTable(db, 'ca_pattern_learning')) return 0;
  return stmt(
    db,
    `DELETE FROM ca_pattern_learning WHERE NOT EXISTS (
       SELECT 1 FROM error_patterns e WHERE e.project_id = ca_pattern_learning.project_id AND e.pattern_hash = ca_pattern_learning.pattern_hash
         AND (ca_pattern_learning.row_created_at IS NULL OR e.created_at = ca_pattern_learning.row_created_at))`,
  ).run().changes;
}
