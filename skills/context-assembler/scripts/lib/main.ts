/** Process glue for the step scripts: real stdin/stdout/clock into the shared shell. */
import { runScript, type ScriptSpec } from './shell.ts';
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
