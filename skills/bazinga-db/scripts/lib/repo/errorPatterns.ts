/** Repository: `error_patterns`. Confidence is compared and returned rounded to 2 decimals. */
import { stmt, type DB } from '../statements.ts';
import { errorPatternOf, faultPatternHash, type StoredSignature } from '../hashing.ts';
import { pyJsonDumps } from '../pyjson.ts';

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

interface KeyedRow extends ErrorPatternRow {
  rid: number;
}

/** What a re-key changed: rows given a new key, rows merged into another, and each old hash's new one. */
export interface Rekeyed {
  rekeyed: number;
  merged: number;
  /** Old hash → new hash, per project (`project\u0000hash`). */
  moved: Map<string, string>;
}

/** A stored signature, or undefined when it is not one (not JSON, not an object, no type or message): such a row is left as it is. */
function storedSignature(json: string): { error_type: string; message_pattern: string; context_hints: string[]; stack_pattern: unknown[]; tool?: string } | undefined {
  try {
    const s = JSON.parse(json) as Record<string, unknown>;
    if (s === null || typeof s !== 'object' || Array.isArray(s) || typeof s.error_type !== 'string' || typeof s.message_pattern !== 'string') return undefined;
    return {
      error_type: s.error_type,
      message_pattern: s.message_pattern,
      context_hints: Array.isArray(s.context_hints) ? s.context_hints.filter((h): h is string => typeof h === 'string') : [],
      stack_pattern: Array.isArray(s.stack_pattern) ? s.stack_pattern : [],
      ...(typeof s.tool === 'string' ? { tool: s.tool } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Rounds to 2 decimals the way every confidence value is stored, compared and printed. */
export const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * Keys every pattern by its fault (hashing.ts faultPatternHash) and merges the rows of one fault
 * in one project. A row the original keyed its way (no `tool` in its signature) is signed again from
 * its stored type and message (faultSignature.ts patternSignature): the tsc prefix
 * `….ts(21,10): error TS2305: …` and the other positions it kept no longer split it. Merged rows
 * keep the sum of their occurrences, the solution of the most confident (of equals, the
 * longest) with its confidence, the first language given, the earliest creation, the latest sighting, the longest TTL and every
 * hint. Idempotent: a row already keyed by its fault is left as it is. Runs in the caller's transaction.
 */
export function rekeyErrorPatterns(db: DB): Rekeyed {
  const rows = stmt(db, 'SELECT rowid AS rid, * FROM error_patterns ORDER BY project_id, rowid').all() as KeyedRow[];
  const groups = new Map<string, { hash: string; signature: StoredSignature; rows: KeyedRow[] }>();
  for (const row of rows) {
    const sig = storedSignature(row.signature_json);
    // A row whose signature is not one is not this layer's to guess at: it keeps its key.
    if (sig === undefined) continue;
    const keyed =
      sig.tool !== undefined
        ? { hash: faultPatternHash(sig), signature: { ...sig, tool: sig.tool } }
        : errorPatternOf(sig.error_type, sig.message_pattern, { hints: sig.context_hints, stack: sig.stack_pattern });
    const key = `${row.project_id}\u0000${keyed.hash}`;
    const group = groups.get(key) ?? { ...keyed, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  const out: Rekeyed = { rekeyed: 0, merged: 0, moved: new Map() };
  for (const g of groups.values()) {
    const only = g.rows.length === 1 ? (g.rows[0] as KeyedRow) : undefined;
    if (only && only.pattern_hash === g.hash && storedSignature(only.signature_json)?.tool !== undefined) continue;
    // The row already under the new key stays (fewest changes); else the oldest.
    const keeper = g.rows.find((r) => r.pattern_hash === g.hash) ?? (g.rows[0] as KeyedRow);
    const occurrences = g.rows.reduce((n, r) => n + Math.max(1, r.occurrences), 0);
    // The best-confirmed solution and its confidence (of equals, the longer solution).
    const best = g.rows.reduce((b, r) =>
      round2(r.confidence) > round2(b.confidence) || (round2(r.confidence) === round2(b.confidence) && Array.from(r.solution).length > Array.from(b.solution).length) ? r : b,
    );
    const confidence = best.confidence;
    const solution = best.solution;
    const hints = [...new Set(g.rows.flatMap((r) => storedSignature(r.signature_json)?.context_hints ?? []))].sort();
    const signature: StoredSignature = { ...g.signature, context_hints: hints };
    for (const r of g.rows) {
      if (r.pattern_hash !== g.hash) out.moved.set(`${r.project_id}\u0000${r.pattern_hash}`, g.hash);
      if (r !== keeper) stmt(db, 'DELETE FROM error_patterns WHERE rowid = ?').run(r.rid);
    }
    stmt(
      db,
      `UPDATE error_patterns SET pattern_hash = @hash, signature_json = @signature, solution = @solution, confidence = @confidence,
              occurrences = @occurrences, lang = @lang, last_seen = @lastSeen, created_at = @createdAt, ttl_days = @ttl
       WHERE rowid = @rid`,
    ).run({
      rid: keeper.rid,
      hash: g.hash,
      signature: pyJsonDumps(signature),
      solution,
      confidence,
      occurrences,
      lang: keeper.lang ?? g.rows.find((r) => r.lang !== null)?.lang ?? null,
      lastSeen: g.rows.reduce((m, r) => (r.last_seen > m ? r.last_seen : m), keeper.last_seen),
      createdAt: g.rows.reduce((m, r) => (r.created_at < m ? r.created_at : m), keeper.created_at),
      ttl: Math.max(...g.rows.map((r) => r.ttl_days)),
    });
    out.rekeyed += 1;
    out.merged += g.rows.length - 1;
  }
  return out;
}
