/** Repository: `error_patterns`. Confidence is compared and returned rounded to 2 decimals. */
import { stmt, type DB } from '../statements.ts';

export interface ErrorPatternRow {
  pattern_hash: string;
  project_id: string;
  signature_json: string;
  solution: string;
  confidence: number;
  occurrences: number;
  lang: string | null;
  last_seen: string;
  created_at: string;
  ttl_days: number;
}

export function findErrorPattern(db: DB, hash: string, projectId: string): ErrorPatternRow | undefined {
  return stmt(db, 'SELECT * FROM error_patterns WHERE pattern_hash = ? AND project_id = ?').get(hash, projectId) as
    | ErrorPatternRow
    | undefined;
}

export function insertErrorPattern(
  db: DB,
  p: { hash: string; projectId: string; signatureJson: string; solution: string; lang: string | null },
): void {
  stmt(
    db,
    `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang,
                                 last_seen, created_at, ttl_days)
     VALUES (@hash, @projectId, @signatureJson, @solution, 0.5, 1, @lang, datetime('now'), datetime('now'), 90)`,
  ).run(p);
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
  projectId: string;
  lang: string | null;
  minConfidence: number;
  limit: number;
}

/** Patterns at or above the threshold, most confident, then most frequent, then oldest row first. */
export function listErrorPatterns(db: DB, q: ErrorPatternQuery): ErrorPatternRow[] {
  return stmt(
    db,
    `SELECT * FROM error_patterns
     WHERE project_id = @projectId AND (@lang IS NULL OR lang = @lang) AND ROUND(confidence, 2) >= @minConfidence
     ORDER BY ROUND(confidence, 2) DESC, occurrences DESC, rowid ASC LIMIT @limit`,
  ).all(q) as ErrorPatternRow[];
}

/**
 * A project's patterns at or above the threshold, one at a time, in the order the assembler shows
 * them when no error text ranks them: most confident, most frequent, most recently seen, then by
 * hash. The caller stops reading once it has the few it shows, so the cost is not the table's size.
 */
export function iterateErrorPatterns(db: DB, q: { projectId: string; minConfidence: number }): IterableIterator<ErrorPatternRow> {
  return stmt(
    db,
    `SELECT * FROM error_patterns
     WHERE project_id = @projectId AND ROUND(confidence, 2) >= @minConfidence
     ORDER BY ROUND(confidence, 2) DESC, occurrences DESC, last_seen DESC, pattern_hash ASC`,
  ).iterate(q) as IterableIterator<ErrorPatternRow>;
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
