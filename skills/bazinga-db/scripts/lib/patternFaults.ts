/**
 * One fault, one pattern, at read time. BAZINGA's error_patterns rows stay keyed as the original
 * keys them (one row per type, message pattern and hints: the same fault met at another file or
 * line is another row); this layer knows each row's fault (hashing.ts faultKeyOf, kept in
 * ca_pattern_faults: repo/patternFaults.ts) and shows the rows of one fault as one pattern
 * (mergeFaults). A read keys what no writer keyed yet itself and writes nothing; a writer stores
 * those keys (keyNewPatterns).
 */
import { faultKeyOfRow, type FaultKey } from './hashing.ts';
import type { ErrorPatternRow } from './patternRow.ts';
import { findFaultKeys, hasFaultTable, keyedRowsOfFaults, listKeyedSignatures, markFaultKeys, rowKey, setFaultHash, storeFaultKeys, unkeyedPatterns } from './repo/patternFaults.ts';
import type { ProjectScope } from './repo/sessions.ts';
import type { DB } from './statements.ts';

/** A pattern row with its fault key. */
export type FaultedPattern = ErrorPatternRow & FaultKey;

/** The rows with their fault keys: the stored ones, the others computed (nothing is written). */
export function withFaultKeys<R extends ErrorPatternRow>(db: DB, rows: readonly R[]): (R & FaultKey)[] {
  const stored = findFaultKeys(db, rows);
  return rows.map((r) => {
    const k = stored.get(rowKey(r));
    return { ...r, ...(k ? { fault_hash: k.fault_hash, tool: k.tool } : faultKeyOfRow(r)) };
  });
}

/**
 * Every row of the given faults in the scope: those a writer keyed, and those written since
 * (unkeyedPatterns) whose key, computed now, is one of them. Nothing is written.
 */
export function rowsOfFaults(db: DB, scope: ProjectScope, faults: readonly string[]): FaultedPattern[] {
  if (faults.length === 0) return [];
  const keyed: FaultedPattern[] = keyedRowsOfFaults(db, scope, faults);
  const have = new Set(keyed.map(rowKey));
  const wanted = new Set(faults);
  const unkeyed = unkeyedPatterns(db, scope).rows.filter((r) => !have.has(rowKey(r)));
  for (const { rid: _rid, ...row } of withFaultKeys(db, unkeyed)) if (wanted.has(row.fault_hash)) keyed.push(row);
  return keyed;
}

/**
 * Stores the fault keys of the rows written since the last writer keyed them (every row with
 * `all`), keeping keys already stored (the capture's, with the tool of the text it read), and
 * moves the mark. Returns how many were stored. In the caller's write transaction; a file without
 * the table (a writer of an earlier schema) is left as it is.
 */
export function keyNewPatterns(db: DB, all = false): number {
  if (!hasFaultTable(db)) return 0;
  const { rows, newest } = unkeyedPatterns(db, null, all);
  const stored = findFaultKeys(db, rows);
  const keys = rows.filter((r) => !stored.has(rowKey(r))).map((r) => ({ rid: r.rid, project_id: r.project_id, pattern_hash: r.pattern_hash, ...faultKeyOfRow(r) }));
  storeFaultKeys(db, keys);
  markFaultKeys(db, newest);
  return keys.length;
}

/**
 * Signs every stored key's row again (faultKeyOfRow) and gives a key the fault it signs now where
 * that differs: a key an earlier signer stored (one that kept a number ending a sentence, `got 2.`)
 * would leave one fault under two keys. Returns each fault key given up → the one that replaces
 * it (the first row's, in key order, should one old key sign as two), for the references to it.
 * In the caller's write transaction.
 */
export function resignFaultKeys(db: DB): Map<string, string> {
  const moved = new Map<string, string>();
  for (const k of listKeyedSignatures(db)) {
    const now = faultKeyOfRow(k).fault_hash;
    if (now === k.fault_hash) continue;
    setFaultHash(db, { project_id: k.project_id, pattern_hash: k.pattern_hash, fault_hash: now });
    if (!moved.has(k.fault_hash)) moved.set(k.fault_hash, now);
  }
  return moved;
}

/** Whether rows were written since a writer last keyed them (keyNewPatterns has something to do). A read. */
export function patternsToKey(db: DB): boolean {
  return hasFaultTable(db) && unkeyedPatterns(db, null).rows.length > 0;
}

/** Rounds as confidence is compared everywhere. */
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The order in which a fault's rows stand for it: the highest confidence (to 2 decimals) first,
 * then the most occurrences, then the most recently seen, then by project and hash (so the same
 * rows always give the same one).
 */
export function compareRepresentatives(a: ErrorPatternRow, b: ErrorPatternRow): number {
  return (
    round2(b.confidence) - round2(a.confidence) ||
    b.occurrences - a.occurrences ||
    (a.last_seen === b.last_seen ? 0 : a.last_seen < b.last_seen ? 1 : -1) ||
    (a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : 0) ||
    (a.pattern_hash < b.pattern_hash ? -1 : a.pattern_hash > b.pattern_hash ? 1 : 0)
  );
}

/** The row that stands for a fault (compareRepresentatives); undefined for none. */
export function representativeOf<R extends ErrorPatternRow>(rows: readonly R[]): R | undefined {
  return [...rows].sort(compareRepresentatives)[0];
}

/** A fault shown as one pattern: its representative row, with what its rows add up to. */
export type MergedFault<R extends FaultedPattern> = R & {
  /** How many rows of the fault were read (1: a fault of one row). */
  fault_rows: number;
};

/**
 * The rows of each fault as one pattern, in the order of their first row in `rows`. The fault is
 * shown by its representative (compareRepresentatives) among its `eligible` rows (all when not
 * given), with the occurrences of its `counted` rows summed (all when not given: a fault seen
 * twice in two files was seen twice) and the latest last_seen of those; the rest (its solution,
 * confidence, signature, hash: what `update-error-confidence` takes) are the representative's. A
 * fault with no eligible row is left out. Pure.
 */
export function mergeFaults<R extends FaultedPattern>(
  rows: readonly R[],
  opts: { eligible?: (row: R) => boolean; counted?: (row: R) => boolean } = {},
): MergedFault<R>[] {
  const groups = new Map<string, R[]>();
  for (const r of rows) {
    const g = groups.get(r.fault_hash);
    if (g) g.push(r);
    else groups.set(r.fault_hash, [r]);
  }
  const out: MergedFault<R>[] = [];
  for (const g of groups.values()) {
    const rep = representativeOf(opts.eligible ? g.filter(opts.eligible) : g);
    if (rep === undefined) continue;
    const counted = opts.counted ? g.filter((r) => r === rep || (opts.counted as (row: R) => boolean)(r)) : g;
    out.push({
      ...rep,
      // A hand-written row may hold no count: it adds nothing.
      occurrences: counted.reduce((n, r) => n + (Number.isFinite(r.occurrences) ? r.occurrences : 0), 0),
      last_seen: counted.reduce((m, r) => (r.last_seen > m ? r.last_seen : m), rep.last_seen),
      fault_rows: g.length,
    });
  }
  return out;
}
