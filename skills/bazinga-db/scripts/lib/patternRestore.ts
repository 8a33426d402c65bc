/**
 * Schema v12 on a file an earlier release wrote (migrate.ts ensureExtensions, in the open's write
 * transaction). That release re-keyed BAZINGA's error patterns by their fault and merged the rows
 * of one fault; BAZINGA's own tool then no longer found them by the hash its save-error-pattern
 * returned. Here the rows get the original's keys back (repo/errorPatterns.ts
 * restoreOriginalKeys), every row gets its fault key in this layer's own table (patternFaults.ts
 * keyNewPatterns), and what this layer's own tables said of a pattern by a row's hash (outcome
 * verdicts, the capture ledger, the ids in assembly records) names its fault key instead, the one
 * that keeps naming it whichever row of the fault stands for it. Each of the four is a schema step
 * of its own (schemaSteps.ts): one that fails leaves the others done and the open going on.
 * Schema v14 (resignPatternKeys): fault keys an earlier signer stored are signed again.
 */
import { keyNewPatterns, resignFaultKeys } from './patternFaults.ts';
import { renamePatternIdsInRecords } from './repo/assemblies.ts';
import { rekeyCaptureLedger } from './repo/captures.ts';
import { restoreOriginalKeys, type Restored } from './repo/errorPatterns.ts';
import { renameOutcomeItems } from './repo/outcomes.ts';
import { allPatternKeys } from './repo/patternFaults.ts';
import { resetPatternIndex } from './repo/searchIndex.ts';
import { runStep, type StepFailure } from './schemaSteps.ts';
import type { DB } from './statements.ts';

/** The steps' names, as the open's notice and doctor say them (references/schema-steps.md). */
export const PATTERN_STEPS = {
  restore: 'restore pattern keys',
  index: 'pattern index reset',
  keys: 'pattern fault keys',
  references: 'pattern references',
  resign: 'pattern fault keys re-signed',
} as const;

/**
 * Restores the original's keys (idempotent: a file with no re-keyed row is left as it is), keys
 * every row, and, when `references` (a file whose extensions predate v12), moves this layer's
 * references to fault keys; each step in its own savepoint, what failed added to `failures` (a key
 * that could not be restored with its first row). The references move only once every row is
 * keyed: they are renamed by those keys. Returns what was restored and merged, for the open's
 * notice (restoreNotice).
 */
export function restorePatternKeys(db: DB, references: boolean, failures: StepFailure[]): Restored {
  let restored: Restored = { restored: [], merged: [], failed: [] };
  runStep(db, failures, PATTERN_STEPS.restore, () => {
    restored = restoreOriginalKeys(db);
  });
  for (const f of restored.failed) {
    failures.push({ step: PATTERN_STEPS.restore, error: f.error, row: { table: 'error_patterns', rowid: f.rowid, key: `${f.project_id}/${f.from}` } });
  }
  // The pattern part of the search index carries each row's hash.
  if (restored.restored.length > 0) runStep(db, failures, PATTERN_STEPS.index, () => resetPatternIndex(db));
  const keyed = runStep(db, failures, PATTERN_STEPS.keys, () => void keyNewPatterns(db, references));
  if (!references) return restored;
  if (!keyed) {
    failures.push({ step: PATTERN_STEPS.references, error: `not run: it renames by the fault keys of step '${PATTERN_STEPS.keys}'` });
    return restored;
  }
  runStep(db, failures, PATTERN_STEPS.references, () => renameReferences(db, restored));
  return restored;
}

/**
 * Schema v14 on a file whose extensions predate it: the fault keys an earlier signer stored are
 * signed again (patternFaults.ts resignFaultKeys: that signer kept a number ending a sentence, so
 * `Expected 3 arguments, but got 2.` and `… but got 1.` were two faults), and this layer's
 * references to a key given up (verdicts, the capture ledger, ids in records) name the one that
 * replaces it. One schema step (runStep): what fails leaves the keys as they were. Returns how many
 * faults were given up.
 */
export function resignPatternKeys(db: DB, failures: StepFailure[]): number {
  let moved = 0;
  runStep(db, failures, PATTERN_STEPS.resign, () => {
    const map = resignFaultKeys(db);
    renameOutcomeItems(db, 'error_pattern', map);
    rekeyCaptureLedger(db, map);
    renamePatternIdsInRecords(db, map);
    moved = map.size;
  });
  return moved;
}

/**
 * Every hash a reference may hold: a row's own (an original key, or a restored one) and the
 * re-keyed one it had; each names the row's fault. The references to them are renamed to it.
 */
function renameReferences(db: DB, restored: Restored): void {
  const faults = new Map<string, string>();
  for (const row of allPatternKeys(db)) faults.set(row.pattern_hash, row.fault_hash);
  for (const r of restored.restored) {
    const fault = faults.get(r.to);
    if (fault !== undefined) faults.set(r.from, fault);
  }
  renameOutcomeItems(db, 'error_pattern', faults);
  rekeyCaptureLedger(db, faults);
  renamePatternIdsInRecords(db, faults);
}

/** The open's one line about a restore, or undefined when nothing was restored. */
export function restoreNotice(r: Restored): string | undefined {
  if (r.restored.length === 0) return undefined;
  const merged = r.merged.map((m) => `${m.rows} rows of project ${m.project_id} into ${m.kept}`).join(', ');
  return `✓ Error patterns: ${r.restored.length} given back the key BAZINGA's own tool computes${merged === '' ? '' : `; merged ${merged} (kept: the one already under that key, else the most confident)`}`;
}

