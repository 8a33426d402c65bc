/**
 * The error patterns the rank step chooses from, one per fault: BAZINGA's rows read through the
 * bazinga-db repositories in the order a block shows them, then every row of the faults among
 * them, merged (bazinga-db patternFaults.ts). Reads only: a row no writer keyed yet is keyed here.
 */
import {
  iterateErrorPatterns,
  listErrorPatterns,
  mergeFaults,
  rowsOfFaults,
  withFaultKeys,
  type DB,
  type ErrorPatternRow,
  type FaultedPattern,
  type ProjectScope,
} from '../../../bazinga-db/scripts/lib/index.ts';

export interface FaultRead {
  /** Every pattern at the threshold (a call with an error text: the one it matches may rank anywhere). */
  all: boolean;
  minConfidence: number;
  /** The faults wanted in shown order (when not `all`). */
  max: number;
  /** The most rows read to find them (two of the first rows may be one fault: more are read then). */
  readsAtMost: number;
  /** Whether a row may be shown (confidence, TTL, language): the fault stands as one of these. */
  showable: (row: ErrorPatternRow) => boolean;
  /** Whether a row's occurrences count (not past its TTL). */
  live: (row: ErrorPatternRow) => boolean;
  /** Faults read wherever they rank (the failure's own: failureFaults.ts): every row of them in the scope too. */
  faults?: readonly string[];
}

/**
 * The scope's error patterns a block chooses from, one per fault: the rows read (`all`: every one
 * at the threshold; else the first showable ones in the order they are shown, until `max` faults
 * are among them), then every row of those faults in the scope, merged: the fault stands as its
 * representative showable row (the most confident, then the most seen, then the newest), with the
 * occurrences of its live rows (not past their TTL) summed and the latest last_seen of those. A
 * fault with no showable row is not shown. The faults of `faults` are among them when a showable
 * row of theirs is in the scope, however far down the order they rank.
 */
export function faultPatterns(db: DB, scope: ProjectScope, q: FaultRead): FaultedPattern[] {
  const read = q.all ? withFaultKeys(db, listErrorPatterns(db, { scope, lang: null, minConfidence: q.minConfidence, limit: -1 })) : firstFaults(db, scope, q);
  const faults = [...new Set([...read.map((r) => r.fault_hash), ...(q.faults ?? [])])];
  const key = (r: ErrorPatternRow) => `${r.project_id}\u0000${r.pattern_hash}`;
  const seen = new Set(read.map(key));
  const rows = [...read, ...rowsOfFaults(db, scope, faults).filter((r) => !seen.has(key(r)))];
  return mergeFaults(rows, { eligible: q.showable, counted: q.live });
}

/** The first `max` rows the block would show, from rows in its order. */
function firstShowable(rows: IterableIterator<ErrorPatternRow>, max: number, showable: (row: ErrorPatternRow) => boolean): ErrorPatternRow[] {
  const out: ErrorPatternRow[] = [];
  for (const row of rows) {
    if (!showable(row)) continue;
    out.push(row);
    if (out.length >= max) break; // for…of closes the statement's cursor
  }
  return out;
}

/**
 * The first showable rows in shown order until `max` faults are among them: `max` rows first, more
 * (twice as many each time) while two of them were one fault and the table has more, up to
 * `readsAtMost`. The rows of the first `max` faults.
 */
function firstFaults(db: DB, scope: ProjectScope, q: FaultRead): FaultedPattern[] {
  for (let want = q.max; ; want *= 2) {
    const rows = withFaultKeys(db, firstShowable(iterateErrorPatterns(db, { scope, minConfidence: q.minConfidence }), want, q.showable));
    const faults = [...new Set(rows.map((r) => r.fault_hash))];
    if (faults.length >= q.max || rows.length < want || want >= q.readsAtMost) {
      const kept = new Set(faults.slice(0, q.max));
      return rows.filter((r) => kept.has(r.fault_hash));
    }
  }
}
