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

export function main(spec: ScriptSpec): void {
  exitQuietlyOnEpipe();
  process.exitCode = runScript(spec, {
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    env: process.env,
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: readPipedStdin,
    now: () => new Date(),
  });
}
