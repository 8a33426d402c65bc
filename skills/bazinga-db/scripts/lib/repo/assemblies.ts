/**
 * The assembly record (ca_assemblies, schema.ts ASSEMBLY_DDL): what each recording assembly gave a
 * spawn. Written by the assembler in the transaction that records its consumption (or in one of
 * its own when nothing was delivered, or for a fallback), read by the report. BAZINGA's tools never
 * read it; a database no writer of this version opened has no such table (hasAssemblyRecord).
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import { RowFailure } from '../schemaSteps.ts';

/** One row of ca_assemblies as written (detail: a JSON object, its texts redacted by the caller). */
export interface AssemblyRecord {
  created_at: string;
  session_id: string;
  group_id: string | null;
  agent_type: string;
  iteration: number;
  source: 'assemble' | 'consume' | 'prompt-hook';
  outcome: 'recorded' | 'unrecorded' | 'nothing-delivered' | 'skipped-zone' | 'fallback' | 'left';
  /** Why a fallback happened, or why the prompt hook left the prompt as the builder wrote it. */
  reason: string | null;
  purpose: string | null;
  zone: string | null;
  usage_pct: number | null;
  budget: number | null;
  used_tokens: number | null;
  overrun: number;
  /** The prompt's size by the builder's own estimate, with the block in it (the prompt hook only). */
  prompt_tokens: number | null;
  duration_ms: number;
  version: string;
  detail: string;
  /**
   * The key of the request it answered, when the launcher sent the request to the warm assembler
   * (one record per key: the server's, or the caller's own run that took its place); else absent.
   */
  request_key?: string | null;
}

export type AssemblyRow = AssemblyRecord & { id: number };

/** Whether the file holds the record (a writer of schema v9 or later opened it). */
export function hasAssemblyRecord(db: DB): boolean {
  return hasTable(db, 'ca_assemblies');
}

export function insertAssembly(db: DB, r: AssemblyRecord): number {
  const key = r.request_key ?? null;
  // A file whose schema step has not added the key's column yet (an index build making it) takes
  // the record without it.
  const keyed = key !== null && hasRequestKey(db);
  return Number(
    stmt(
      db,
      `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, reason, purpose, zone,
                                  usage_pct, budget, used_tokens, overrun, prompt_tokens, duration_ms, version, detail${keyed ? ', request_key' : ''})
       VALUES (@created_at, @session_id, @group_id, @agent_type, @iteration, @source, @outcome, @reason, @purpose, @zone,
               @usage_pct, @budget, @used_tokens, @overrun, @prompt_tokens, @duration_ms, @version, @detail${keyed ? ', @request_key' : ''})`,
    ).run(keyed ? { ...r, request_key: key } : withoutKey(r)).lastInsertRowid,
  );
}

const withoutKey = (r: AssemblyRecord): AssemblyRecord => {
  const { request_key: _key, ...rest } = r;
  return rest;
};

/** Whether ca_assemblies has the request_key column (schema v13). */
function hasRequestKey(db: DB): boolean {
  return stmt(db, "SELECT 1 FROM pragma_table_info('ca_assemblies') WHERE name = 'request_key'").get() !== undefined;
}

/** The record written under a request's key, if any (at most one: a unique index). */
export function findAssemblyByKey(db: DB, key: string): AssemblyRow | undefined {
  if (!hasAssemblyRecord(db) || !hasRequestKey(db)) return undefined;
  return stmt(db, 'SELECT * FROM ca_assemblies WHERE request_key = ?').get(key) as AssemblyRow | undefined;
}

/** Removes the record `id` (a delivery whose block was never printed: another run of its request took its place). */
export function deleteAssembly(db: DB, id: number): void {
  stmt(db, 'DELETE FROM ca_assemblies WHERE id = ?').run(id);
}

/** A session's records in the order they were written. */
export function listAssemblies(db: DB, sessionId: string): AssemblyRow[] {
  return stmt(db, 'SELECT * FROM ca_assemblies WHERE session_id = ? ORDER BY id').all(sessionId) as AssemblyRow[];
}

/**
 * Renames error pattern ids in the records' details (`map`: old hash → new id; every 64-hex token
 * that is a key of it, wherever the detail names it: shown, left out, most relevant). Reads only
 * the records that name an error pattern at all. A record SQLite refuses to change fails with its
 * id (RowFailure). In the caller's write transaction.
 */
export function renamePatternIdsInRecords(db: DB, map: ReadonlyMap<string, string>): number {
  if (map.size === 0 || !hasAssemblyRecord(db)) return 0;
  const rows = stmt(db, "SELECT id, detail FROM ca_assemblies WHERE instr(detail, 'error_pattern') > 0 ORDER BY id").all() as { id: number; detail: string }[];
  const set = stmt(db, 'UPDATE ca_assemblies SET detail = ? WHERE id = ?');
  let changed = 0;
  for (const r of rows) {
    if (typeof r.detail !== 'string') continue;
    // A hash is 64 hex digits: it names one pattern wherever it appears in a detail.
    const detail = r.detail.replace(/\b[0-9a-f]{64}\b/g, (h) => map.get(h) ?? h);
    if (detail === r.detail) continue;
    try {
      set.run(detail, r.id);
    } catch (err) {
      throw new RowFailure({ table: 'ca_assemblies', rowid: r.id }, err);
    }
    changed += 1;
  }
  return changed;
}
