/**
 * bazinga-db run in the test's own process (no Node start per call): `runCli` from
 * skills/bazinga-db/scripts/lib/cli.ts with a fake io, on real SQLite files. `bazingaDbIn` returns
 * the same RunResult as the real-process runner `bazingaDb` (helpers.ts), with the same working
 * directory and environment by default, so the same exit-code, stdout and stderr assertions apply
 * to both; test/bazinga-db.smoke.test.ts checks per command family that the two give identical bytes.
 */
import { runCli } from '../skills/bazinga-db/scripts/lib/cli.ts';
import type { ScriptIo } from '../skills/context-assembler/scripts/lib/shell.ts';
import { REPO_ROOT, bazingaDb, copyFixture, toResult, type Project, type RunOptions, type RunResult } from './helpers.ts';

export function bazingaDbInProcess(project: Project, args: readonly string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const code = runCli(['--quiet', '--db', project.dbPath, '--project-root', project.root, ...args], {
    cwd: project.root,
    env: {},
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  return { code, out, err };
}

/** One bazinga-db invocation in process, with exactly the given argv (no global flags added). */
export function runBazingaDbInProcess(argv: readonly string[], opts: RunOptions = {}): RunResult {
  if (opts.input !== undefined && opts.input !== '') throw new Error('bazinga-db reads no stdin; an in-process run cannot be given input');
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, {
    // The defaults of the process runner (runScript): the repository as working directory, this environment.
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? { ...process.env },
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  });
  return toResult(code, stdout, stderr);
}

/** In-process twin of `bazingaDb`: `--quiet --db <project db> --project-root <project root>` before `args`. */
export function bazingaDbIn(project: Project, args: readonly string[], opts: RunOptions = {}): RunResult {
  return runBazingaDbInProcess(['--quiet', '--db', project.dbPath, '--project-root', project.root, ...args], opts);
}

export type CliMode = 'process' | 'in-process';

/** The bazinga-db runner of a mode: a real `tsx` process, or runCli in this process. */
export function bazingaDbVia(mode: CliMode): (project: Project, args: readonly string[], opts?: RunOptions) => RunResult {
  return mode === 'process' ? bazingaDb : bazingaDbIn;
}

/**
 * The io a context-assembler script gets in process: stdout and stderr captured, stdin closed
 * (undefined), a fixed clock when `now` is given.
 */
export function capturingIo(
  argv: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; now?: string },
): { io: ScriptIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  const io: ScriptIo = {
    argv,
    cwd: opts.cwd,
    env: opts.env ?? {},
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    readStdin: () => undefined,
    now: () => (opts.now === undefined ? new Date() : new Date(opts.now)),
  };
  return { io, out: () => out, err: () => err };
}

/**
 * A temporary copy of the v19 fixture whose search index is built (`bazinga-db index-search`, in
 * process), as a project is once the plugin's SessionStart hook or install-skills has run: a read
 * never indexes, so a dry run on the raw fixture ranks without relevance and says so.
 */
export function copyIndexedFixture(prefix = 'ca-fixture-'): Project {
  const project = copyFixture(prefix);
  const r = bazingaDbInProcess(project, ['index-search']);
  if (r.code !== 0) {
    project.cleanup();
    throw new Error(`index-search on the fixture copy failed (exit ${r.code}): ${r.err}`);
  }
  return project;
}
