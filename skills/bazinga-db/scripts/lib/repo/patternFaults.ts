/**
 * Repository: `ca_pattern_faults` (schema.ts FAULT_DDL), each error pattern row's fault key, and
 * the reads of `error_patterns` by fault. Rows BAZINGA writes arrive without a key: a writer stores
 * them (storeFaultKeys) and moves the mark (`patterns.faults.mark` in ca_meta: the rowid and hash
 * of the newest row keyed), and a read keys the rows past the mark itself (unkeyedPatterns), so it
 * never writes. A file no writer of schema v12 opened has no table: every row is unkeyed there.
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import type { ProjectScope } from './sessions.ts';
import type { ErrorPatternRow } from './errorPatterns.ts';
import { getMeta, setMeta } from './meta.ts';
import { RowFailure } from '../schemaSteps.ts';

export interface StoredFaultKey {
  project_id: string;
  pattern_hash: string;
  fault_hash: string;
  tool: string;
}

/** A pattern row with its rowid (what the mark counts in). */
export type RowidPattern = ErrorPatternRow & { rid: number };

const MARK = 'patterns.faults.mark';

export function hasFaultTable(db: DB): boolean {
  return hasTable(db, 'ca_pattern_faults');
}

/**
 * Stores fault keys; a row keyed already keeps its key (one hash is one signature, so one fault:
 * only the tool the first writer recognised could differ). A key SQLite refuses fails naming its
 * pattern row (RowFailure: its rowid when given). In the caller's write transaction.
 */
export function storeFaultKeys(db: DB, keys: readonly (StoredFaultKey & { rid?: number })[]): void {
  if (keys.length === 0 || !hasFaultTable(db)) return;
  const put = stmt(
    db,
    `INSERT INTO ca_pattern_faults (project_id, pattern_hash, fault_hash, tool) VALUES (@project_id, @pattern_hash, @fault_hash, @tool)
     ON CONFLICT (project_id, pattern_hash) DO NOTHING`,
  );
  for (const k of keys) {
    try {
      put.run({ project_id: k.project_id, pattern_hash: k.pattern_hash, fault_hash: k.fault_hash, tool: k.tool });
    } catch (err) {
      throw new RowFailure({ table: 'error_patterns', ...(k.rid !== undefined ? { rowid: k.rid } : {}), key: `${k.project_id}/${k.pattern_hash}` }, err);
    }
  }
}

/** The stored keys of the given rows (by project and hash); rows without one are absent. */
export function findFaultKeys(db: DB, rows: readonly { project_id: string; pattern_hash: string }[]): Map<string, StoredFaultKey> {
  const out = new Map<string, StoredFaultKey>();
  if (rows.length === 0 || !hasFaultTable(db)) return out;
  const found = stmt(
    db,
    `SELECT f.project_id, f.pattern_hash, f.fault_hash, f.tool FROM ca_pattern_faults f
     JOIN json_each(?) j ON f.project_id = json_extract(j.value, '$[0]') AND f.pattern_hash = json_extract(j.value, '$[1]')`,
  ).all(JSON.stringify(rows.map((r) => [r.project_id, r.pattern_hash]))) as StoredFaultKey[];
  for (const k of found) out.set(rowKey(k), k);
  return out;
}

/** A row's identity in maps: project and hash. */
export const rowKey = (r: { project_id: string; pattern_hash: string }) => `${r.project_id}\u0000${r.pattern_hash}`;

/**
 * The rows of the given faults that a writer keyed, of the scope's project or of the whole
 * database. The rows no writer keyed yet are not among them (unkeyedPatterns).
 */
export function keyedRowsOfFaults(db: DB, scope: ProjectScope, faults: readonly string[]): (ErrorPatternRow & { fault_hash: string; tool: string })[] {
  if (faults.length === 0 || !hasFaultTable(db)) return [];
  return stmt(
    db,
    `SELECT e.*, f.fault_hash, f.tool FROM ca_pattern_faults f
     JOIN error_patterns e ON e.project_id = f.project_id AND e.pattern_hash = f.pattern_hash
     WHERE f.fault_hash IN (SELECT value FROM json_each(@faults)) AND ${scope.wholeDatabase ? '1' : 'f.project_id = @projectId'}
     ORDER BY e.project_id, e.pattern_hash`,
  ).all({ faults: JSON.stringify(faults), projectId: scope.projectId }) as (ErrorPatternRow & { fault_hash: string; tool: string })[];
}

/**
 * The rows past the mark (written since a writer last keyed them: by BAZINGA, or before this
 * layer had the table), of the scope or the whole database; `all` reads every row instead (a
 * writer's migration). The mark names the rowid and hash of the newest row keyed: when that row
 * is gone or holds another pattern (rowids can be reused after the newest row is deleted), every
 * row is read again.
 */
export function unkeyedPatterns(db: DB, scope: ProjectScope | null, all = false): { rows: RowidPattern[]; newest: { rid: number; hash: string } | undefined } {
  const since = all || !hasFaultTable(db) ? 0 : markedRowid(db);
  const rows = stmt(
    db,
    `SELECT rowid AS rid, * FROM error_patterns WHERE rowid > @since AND ${scope === null || scope.wholeDatabase ? '1' : 'project_id = @projectId'} ORDER BY rowid`,
  ).all({ since, projectId: scope?.projectId ?? null }) as RowidPattern[];
  // MAX(rowid): a seek to the table's last row.
  const top = stmt(db, 'SELECT rowid AS rid, pattern_hash AS hash FROM error_patterns WHERE rowid = (SELECT MAX(rowid) FROM error_patterns)').get() as
    | { rid: number; hash: string }
    | undefined;
  return { rows, newest: top };
}

function markedRowid(db: DB): number {
  const mark = getMeta(db, MARK);
  if (mark === undefined) return 0;
  const [rid, hash] = [Number(mark.slice(0, mark.indexOf(':'))), mark.slice(mark.indexOf(':') + 1)];
  if (!Number.isSafeInteger(rid)) return 0;
  const at = stmt(db, 'SELECT pattern_hash FROM error_patterns WHERE rowid = ?').get(rid) as { pattern_hash: string } | undefined;
  return at?.pattern_hash === hash ? rid : 0;
}

/** Records that every row up to `newest` is keyed. In the caller's write transaction. */
export function markFaultKeys(db: DB, newest: { rid: number; hash: string } | undefined): void {
  if (newest !== undefined) setMeta(db, MARK, `${newest.rid}:${newest.hash}`);
}

/** Every stored key (a migration's map from a row's hash to its fault). */
export function allPatternKeys(db: DB): StoredFaultKey[] {
  if (!hasFaultTable(db)) return [];
  return stmt(db, 'SELECT project_id, pattern_hash, fault_hash, tool FROM ca_pattern_faults ORDER BY project_id, pattern_hash').all() as StoredFaultKey[];
}

/** Every stored key with its row's signature (what the key was computed from), in key order. */
export function listKeyedSignatures(db: DB): (StoredFaultKey & { signature_json: string | null })[] {
  if (!hasFaultTable(db)) return [];
  return stmt(
    db,
    `SELECT f.project_id, f.pattern_hash, f.fault_hash, f.tool, e.signature_json FROM ca_pattern_faults f
     JOIN error_patterns e ON e.project_id = f.project_id AND e.pattern_hash = f.pattern_hash
     ORDER BY f.project_id, f.pattern_hash`,
  ).all() as (StoredFaultKey & { signature_json: string | null })[];
}

/** Gives a stored key another fault (its tool kept). A key SQLite refuses fails naming its row (RowFailure). In the caller's write transaction. */
export function setFaultHash(db: DB, key: Pick<StoredFaultKey, 'project_id' | 'pattern_hash' | 'fault_hash'>): void {
  try {
    stmt(db, 'UPDATE ca_pattern_faults SET fault_hash = @fault_hash WHERE project_id = @project_id AND pattern_hash = @pattern_hash').run(key);
  } catch (err) {
    throw new RowFailure({ table: 'ca_pattern_faults', key: `${key.project_id}/${key.pattern_hash}` }, err);
  }
}

/** Drops the keys of rows that are gone (after this layer deleted rows: cleanup-error-patterns). */
export function sweepFaultKeys(db: DB): void {
  if (!hasFaultTable(db)) return;
  stmt(db, 'DELETE FROM ca_pattern_faults WHERE NOT EXISTS (SELECT 1 FROM error_patterns e WHERE e.project_id = ca_pattern_faults.project_id AND e.pattern_hash = ca_pattern_faults.pattern_hash)').run();
}
