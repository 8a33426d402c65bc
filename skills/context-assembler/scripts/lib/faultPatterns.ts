/**
 * The error patterns the rank step chooses from, one per fault: BAZINGA's rows read through the
 * bazinga-db repositories in the order a block shows them, then every row of the faults among
 * them, merged (bazinga-db patternFaults.ts). Reads only: a row no writer keyed yet is keyed here.
 */
import {
  compareShownOrder,
  iterateErrorPatterns,
  learntRows,
  listErrorPatterns,
  mergeFaults,
  rowKey,
  rowsOfFaults,
  withFaultKeys,
  withLearning,
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
  // What this layer learnt of a row (the capture) is kept beside it: those rows are read with it
  // applied, in their place in the order, and the stored ones stand aside (repo/patternLearning.ts).
  const learnt = learntRows(db, scope);
  const learntKeys = new Set(learnt.map(rowKey));
  const read = q.all
    ? withFaultKeys(db, byConfidence([...listErrorPatterns(db, { scope, lang: null, minConfidence: q.minConfidence, limit: -1 }).filter((r) => !learntKeys.has(rowKey(r))), ...learnt.filter((r) => r.confidence >= q.minConfidence)]))
    : firstFaults(db, scope, q, learnt, learntKeys);
  const faults = [...new Set([...read.map((r) => r.fault_hash), ...(q.faults ?? [])])];
  const seen = new Set(read.map(rowKey));
  const rows = [...read, ...withLearning(db, rowsOfFaults(db, scope, faults).filter((r) => !seen.has(rowKey(r))))];
  return mergeFaults(rows, { eligible: q.showable, counted: q.live });
}

/** Rows in listErrorPatterns' order (most confident, then most seen; a stable sort keeps the stored order of ties). */
const byConfidence = (rows: ErrorPatternRow[]) => rows.sort((a, b) => Math.round(b.confidence * 100) - Math.round(a.confidence * 100) || b.occurrences - a.occurrences);

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
function firstFaults(db: DB, scope: ProjectScope, q: FaultRead, learnt: readonly ErrorPatternRow[], learntKeys: ReadonlySet<string>): FaultedPattern[] {
  const learntShown = learnt.filter((r) => r.confidence >= q.minConfidence && q.showable(r));
  for (let want = q.max; ; want *= 2) {
    // The learnt rows' stored figures stand aside (they are skipped, not counted).
    const stored = firstShowable(iterateErrorPatterns(db, { scope, minConfidence: q.minConfidence }), want, (r) => !learntKeys.has(rowKey(r)) && q.showable(r));
    // The learnt rows take their place among the stored ones by what they read now.
    const merged = [...stored, ...learntShown].sort(compareShownOrder).slice(0, want);
    const rows = withFaultKeys(db, merged);
    const faults = [...new Set(rows.map((r) => r.fault_hash))];
    if (faults.length >= q.max || stored.length < want || want >= q.readsAtMost) {
      const kept = new Set(faults.slice(0, q.max));
      return rows.filter((r) => kept.has(r.fault_hash));
    }
  }
}
