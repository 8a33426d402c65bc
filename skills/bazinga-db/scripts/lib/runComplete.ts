/**
 * A script tells its launcher (skills/bazinga-db/bin/launch.cjs) that this run did its work: the
 * launcher keeps V8's compiled code of the bundle only from such a run (one that printed a
 * fallback, an error or help compiled little of the bundle). The launcher reads the same
 * process-wide symbol.
 */
const RUN_COMPLETE = Symbol.for('context-assembler.run-complete');

export function markRunComplete(): void {
  (globalThis as Record<symbol, unknown>)[RUN_COMPLETE] = true;
}
