/** Process glue for the step scripts: real stdin/stdout/clock into the shared shell. */
import { runScript, type ScriptSpec } from './shell.ts';

/** The orchestrator's command (assemble.ts; the warm assembler runs the same). */
export const ASSEMBLE: ScriptSpec = {
  name: 'assemble.ts',
  step: 'consume',
  defaultFormat: 'markdown',
  readsStdin: false,
  summary: 'every step in one process: the context block the orchestrator pastes into the spawn prompt',
};
import { exitQuietlyOnEpipe, readPipedStdin } from './stdio.ts';
import { handedOver } from './handedOver.ts';
import type { ScriptIo } from './shell.ts';

/**
 * Runs `run` on this process's io (argv, cwd, environment, stdout and stderr, the clock; stdin
 * only when `readsStdin`; what the launcher handed over) and sets the exit code it returns; a
 * reader that stops early is no error.
 */
export function mainWith(run: (io: ScriptIo) => number, readsStdin = false): void {
  exitQuietlyOnEpipe();
  process.exitCode = run({
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    env: process.env,
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: readsStdin ? readPipedStdin : () => undefined,
    now: () => new Date(),
    ...handedOver(),
  });
}

/** A step script (or assemble): its spec through the shared shell, stdin read as a piped document. */
export function main(spec: ScriptSpec): void {
  mainWith((io) => runScript(spec, io), true);
}
