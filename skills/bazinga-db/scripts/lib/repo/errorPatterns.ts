/** Repository: `error_patterns`. Confidence is compared and returned rounded to 2 decimals. */
import { stmt, type DB } from '../statements.ts';
import { errorPatternHash, parseStoredSignature, type ErrorSignature } from '../hashing.ts';
import { pyJsonDumps } from '../pyjson.ts';
import { isContentError } from '../schemaSteps.ts';
import type { ProjectScope } from './sessions.ts';

import type { ErrorPatternRow } from '../patternRow.ts';

export type { ErrorPatternRow } from '../patternRow.ts';

export function findErrorPattern(db: DB, hash: string, projectId: string): ErrorPatternRow | undefined {
  return stmt(db, 'SELECT * FROM error_patterns WHERE pattern_hash = ? AND project_id = ?').get(hash, projectId) as
    | ErrorPatternRow
    | undefined;
}

/** A new pattern, seen once; at confidence 0.5 (a hand-saved one) unless given. */
export function insertErrorPattern(
  db: DB,
  p: { hash: string; projectId: string; signatureJson: string; solution: string; lang: string | null; confidence?: number },
): void {
  stmt(
    db,
    `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang,
                                 last_seen, created_at, ttl_days)
     VALUES (@hash, @projectId, @signatureJson, @solution, @confidence, 1, @lang, datetime('now'), datetime('now'), 90)`,
  ).run({ ...p, confidence: p.confidence ?? 0.5 });
}

/**
 * A pattern's confidence after a fix of it worked (`success`: +0.1, at most 1) or did not
 * (`failure`: −0.2, at least 0.1), from the stored value rounded to 2 decimals.
 */
export function nextConfidence(stored: number, outcome: 'success' | 'failure'): number {
  const previous = round2(stored);
  return outcome === 'success' ? round2(Math.min(1.0, previous + 0.1)) : round2(Math.max(0.1, previous - 0.2));
}

/** One more occurrence of a known pattern, whose fix worked or not (the capture): its new confidence, seen now. */
export function recordErrorOutcome(db: DB, hash: string, projectId: string, confidence: number): void {
  stmt(
    db,
    `UPDATE error_patterns SET confidence = ?, occurrences = occurrences + 1, last_seen = datetime('now') WHERE pattern_hash = ? AND project_id = ?`,
  ).run(confidence, hash, projectId);
}

/** One more occurrence; the solution is replaced only by a longer one. */
export function recordErrorOccurrence(db: DB, hash: string, projectId: string, solution: string | null): void {
  stmt(
    db,
    `UPDATE error_patterns SET occurrences = occurrences + 1, last_seen = datetime('now'),
            solution = COALESCE(@solution, solution)
     WHERE pattern_hash = @hash AND project_id = @projectId`,
  ).run({ hash, projectId, solution });
}

export interface ErrorPatternQuery {
  /** One project's patterns, or every project's (repo/sessions.ts ProjectScope). */
  scope: ProjectScope;
  lang: string | null;
  minConfidence: number;
  limit: number;
}

/** The WHERE term of a scope (a constant text; the project id is bound as @projectId). */
const inScope = (scope: ProjectScope) => (scope.wholeDatabase ? '1' : 'project_id = @projectId');

/** Patterns at or above the threshold, most confident, then most frequent, then oldest row first. */
export function listErrorPatterns(db: DB, q: ErrorPatternQuery): ErrorPatternRow[] {
  return stmt(
    db,
    `SELECT * FROM error_patterns
     WHERE ${inScope(q.scope)} AND (@lang IS NULL OR lang = @lang) AND ROUND(confidence, 2) >= @minConfidence
     ORDER BY ROUND(confidence, 2) DESC, occurrences DESC, rowid ASC LIMIT @limit`,
  ).all({ projectId: q.scope.projectId, lang: q.lang, minConfidence: q.minConfidence, limit: q.limit }) as ErrorPatternRow[];
}

/**
 * The scope's patterns at or above the threshold, one at a time, in the order the assembler shows
 * them when no error text ranks them: most confident, most frequent, most recently seen, then by
 * hash and project. The caller stops reading once it has the few it shows, so the cost is not the
 * table's size (ca_idx_patterns_shown, or ca_idx_patterns_shown_all for the whole database).
 */
export function iterateErrorPatterns(db: DB, q: { scope: ProjectScope; minConfidence: number }): IterableIterator<ErrorPatternRow> {
  return stmt(
    db,
    `SELECT * FROM error_patterns
     WHERE ${inScope(q.scope)} AND ROUND(confidence, 2) >= @minConfidence
     ORDER BY ROUND(confidence, 2) DESC, occurrences DESC, last_seen DESC, pattern_hash ASC, project_id ASC`,
  ).iterate({ projectId: q.scope.projectId, minConfidence: q.minConfidence }) as IterableIterator<ErrorPatternRow>;
}

export function setErrorConfidence(db: DB, hash: string, projectId: string, confidence: number): void {
  stmt(
    db,
    `UPDATE error_patterns SET confidence = ?, last_seen = datetime('now') WHERE pattern_hash = ? AND project_id = ?`,
  ).run(confidence, hash, projectId);
}

/** Deletes patterns past their TTL (by date), optionally of one project; returns the count. */
export function deleteExpiredErrorPatterns(db: DB, projectId: string | null): number {
  return stmt(
    db,
    `DELETE FROM error_patterns
     WHERE date(last_seen, '+' || ttl_days || ' days') < date('now') AND (@projectId IS NULL OR project_id = @projectId)`,
  ).run({ projectId }).changes;
}

/** Rounds to 2 decimals the way every confidence value is stored, compared and printed. */
export const round2 = (x: number) => Math.round(x * 100) / 100;

/** A row an earlier release of this layer re-keyed, given back the original's key. */
export interface RestoredPattern {
  project_id: string;
  /** The hash the earlier release gave it. */
  from: string;
  /** The original's hash over its signature in the original's shape. */
  to: string;
}

/** What restoreOriginalKeys changed: each re-keyed row's new hash, and the rows merged where two met on one key. */
export interface Restored {
  restored: RestoredPattern[];
  /** Per key where rows met: the row kept (its project and restored hash) and how many rows became it. */
  merged: { project_id: string; kept: string; rows: number }[];
  /** Keys whose restore failed (SQLite refused a statement): their rows were left as they were. */
  failed: { project_id: string; from: string; rowid: number; error: string }[];
}

interface RowidRow extends ErrorPatternRow {
  rid: number;
}

/**
 * Gives the rows an earlier release of this layer re-keyed by their fault (their signature_json
 * carries a `tool` key, which the original never writes) the key and signature the original would
 * have given them: `tool` dropped, the original's key order and JSON spacing (pyjson.ts), the hash
 * the original computes over that signature (errorPatternHash). The message pattern they hold is
 * the re-keyed one (the original's is not recoverable); the hash is the original's over it, so
 * both tools find the row by it from now on.
 *
 * Where rows then meet on one (project_id, pattern_hash), one is kept: a row already under that
 * key that was not re-keyed and whose signature is the one that key is computed from (BAZINGA's
 * own), else the representative (highest confidence, then occurrences, then the latest last_seen,
 * then the oldest row). It keeps its solution and confidence and gains the others' occurrences
 * (its own count when none of them holds a number), the latest last_seen, the earliest
 * created_at, the longest TTL (NULL only when none holds a number) and the first language given;
 * the others are deleted.
 *
 * Odd rows are left as they are: a signature that is not JSON, not an object, without a string
 * type and message, or with hints that are not all strings; so are the rows of a key held by a
 * row that is not BAZINGA's own for it (a signature that does not parse, or that the key is not
 * computed from: merging would replace a pattern by another), and the rows of a key that cannot
 * be given back (each key is restored in a savepoint of its own: one key never fails the open;
 * such keys are listed in `failed`). Idempotent (a restored row has no `tool`). In the caller's
 * write transaction.
 */
export function restoreOriginalKeys(db: DB): Restored {
  const out: Restored = { restored: [], merged: [], failed: [] };
  const candidates = stmt(db, "SELECT rowid AS rid, * FROM error_patterns WHERE instr(signature_json, '\"tool\"') > 0 ORDER BY rowid").all() as RowidRow[];
  const groups = new Map<string, { hash: string; signatureJson: string; rows: RowidRow[] }>();
  for (const row of candidates) {
    const original = originalKeyOf(row.signature_json);
    if (original === undefined) continue;
    const { hash, signatureJson } = original;
    const key = `${row.project_id}\u0000${hash}`;
    const group = groups.get(key) ?? { hash, signatureJson, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  // Each key in a savepoint of its own: a key that cannot be given back (a statement SQLite
  // refuses) leaves its rows as they are, and the rest of the open goes on.
  const restoreGroup = db.transaction((g: { hash: string; signatureJson: string; rows: RowidRow[] }) => {
    const project = (g.rows[0] as RowidRow).project_id;
    // The row under the key already, when there is one.
    const found = stmt(db, 'SELECT rowid AS rid, * FROM error_patterns WHERE project_id = ? AND pattern_hash = ?').get(project, g.hash) as RowidRow | undefined;
    const own = found !== undefined && g.rows.some((r) => r.rid === found.rid);
    const held = found && !own ? parseStoredSignature(found.signature_json) : undefined;
    // A re-keyed row of another key holds this hash still: this key waits for it to move first.
    if (held?.extra.includes('tool')) return undefined;
    // A row under the key that is not the original's row for it: left alone, and so are these.
    if (found && !own && (held === undefined || held.extra.length > 0 || errorPatternHash(held) !== g.hash)) return 'held' as const;
    const host = found && !own ? found : undefined;
    const rows = host ? [host, ...g.rows] : g.rows;
    const keeper = host ?? ([...rows].sort(representativeOrder)[0] as RowidRow);
    for (const r of rows) if (r !== keeper) stmt(db, 'DELETE FROM error_patterns WHERE rowid = ?').run(r.rid);
    const ttls = rows.map((r) => r.ttl_days).filter((t): t is number => typeof t === 'number' && Number.isFinite(t));
    const counted = rows.reduce((n, r) => n + (typeof r.occurrences === 'number' && Number.isFinite(r.occurrences) ? r.occurrences : 0), 0);
    stmt(
      db,
      `UPDATE error_patterns SET pattern_hash = @hash, signature_json = @signature, occurrences = @occurrences, lang = @lang,
              last_seen = @lastSeen, created_at = @createdAt, ttl_days = @ttl
       WHERE rowid = @rid`,
    ).run({
      rid: keeper.rid,
      hash: g.hash,
      signature: keeper === host ? host.signature_json : g.signatureJson,
      // No row holds a count (NULL, or text another tool wrote): the keeper's stays as it is.
      occurrences: counted >= 1 ? counted : keeper.occurrences,
      lang: keeper.lang ?? rows.find((r) => r.lang !== null)?.lang ?? null,
      lastSeen: latest(rows.map((r) => r.last_seen), keeper.last_seen, 1),
      createdAt: latest(rows.map((r) => r.created_at), keeper.created_at, -1),
      ttl: ttls.length === 0 ? keeper.ttl_days : Math.max(...ttls),
    });
    return { project, merged: rows.length };
  });
  // A key another key's row still holds is tried again once that row moved: passes go on while one
  // moves something (a chain of any length), and stop when one moves nothing (rows that hold each
  // other's keys stay as they are).
  let waiting = [...groups.values()];
  for (let before = Infinity; waiting.length > 0 && waiting.length < before; ) {
    before = waiting.length;
    const next: typeof waiting = [];
    for (const g of waiting) {
      try {
        const done = restoreGroup(g);
        if (done === 'held') continue;
        if (done === undefined) {
          next.push(g);
          continue;
        }
        for (const r of g.rows) out.restored.push({ project_id: done.project, from: r.pattern_hash, to: g.hash });
        if (done.merged > 1) out.merged.push({ project_id: done.project, kept: g.hash, rows: done.merged });
      } catch (err) {
        // Left as it was (the savepoint rolled back); said, with its first row, for doctor.
        if (!isContentError(err)) throw err;
        const first = g.rows[0] as RowidRow;
        out.failed.push({ project_id: first.project_id, from: first.pattern_hash, rowid: first.rid, error: (err as Error).message });
      }
    }
    waiting = next;
  }
  return out;
}

/**
 * The key and signature text BAZINGA's own tool computes for a re-keyed row's signature, or
 * undefined for an odd row: one that does not parse as a signature, or that cannot be written as
 * BAZINGA writes JSON (a number beyond a double's range, nesting too deep to walk).
 */
function originalKeyOf(signatureJson: unknown): { hash: string; signatureJson: string } | undefined {
  try {
    const restored = restoredSignature(signatureJson);
    return restored === undefined ? undefined : { hash: errorPatternHash(restored), signatureJson: pyJsonDumps(restored) };
  } catch {
    return undefined;
  }
}

/** The latest (sign 1) or earliest (sign -1) of the texts given, NULLs aside; `fallback` when none. */
function latest(values: readonly (string | null)[], fallback: string, sign: 1 | -1): string {
  return values.reduce<string>((m, v) => (typeof v === 'string' && (m === null || (sign === 1 ? v > m : v < m)) ? v : m), fallback);
}

/** The representative order (patternFaults.ts compareRepresentatives), the oldest row last breaking ties. */
function representativeOrder(a: RowidRow, b: RowidRow): number {
  return (
    round2(b.confidence) - round2(a.confidence) ||
    b.occurrences - a.occurrences ||
    (a.last_seen === b.last_seen ? 0 : a.last_seen < b.last_seen ? 1 : -1) ||
    a.rid - b.rid
  );
}

/** The signature in the original's shape of a re-keyed row, or undefined for a row left as it is (see restoreOriginalKeys). */
function restoredSignature(json: unknown): ErrorSignature | undefined {
  // Text only: a BLOB is nothing either tool wrote.
  if (typeof json !== 'string') return undefined;
  const sig = parseStoredSignature(json);
  if (sig === undefined || !sig.extra.includes('tool')) return undefined;
  // Hints the original could not have hashed (it sorts them as strings): not a row it could have written.
  const raw = JSON.parse(json) as Record<string, unknown>;
  if (Array.isArray(raw.context_hints) && raw.context_hints.some((h) => typeof h !== 'string')) return undefined;
  return { error_type: sig.error_type, message_pattern: sig.message_pattern, context_hints: sig.context_hints, stack_pattern: sig.stack_pattern };
}

/** Two rows in the order iterateErrorPatterns reads them (what a row read with its learning needs to take its place). */
export function compareShownOrder(a: ErrorPatternRow, b: ErrorPatternRow): number {
  return (
    round2(b.confidence) - round2(a.confidence) ||
    b.occurrences - a.occurrences ||
    (a.last_seen === b.last_seen ? 0 : a.last_seen < b.last_seen ? 1 : -1) ||
    (a.pattern_hash === b.pattern_hash ? 0 : a.pattern_hash < b.pattern_hash ? -1 : 1) ||
    (a.project_id === b.project_id ? 0 : a.project_id < b.project_id ? -1 : 1)
  );
}
