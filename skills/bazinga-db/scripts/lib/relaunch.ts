/**
 * This CLI run again as a child process, for work SQLite cannot be stopped in from JavaScript (a
 * statement has no interrupt in better-sqlite3): the child gets the same arguments on its stdin (so
 * no argument length limit applies and nothing of them shows in the process list), the same
 * working folder and environment, and runs the command itself; the parent relays what it printed,
 * or stops it when its time is up.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Set in the child's environment: it reads its arguments from stdin and runs the command itself. */
export const CHILD_ENV = 'BAZINGA_DB_CHILD';

export interface ChildRun {
  /** The child's exit code; null when it was stopped at the time bound. */
  code: number | null;
  /** The signal that ended it otherwise (a crash), if any. */
  signal?: string;
  stdout: string;
  stderr: string;
}

/** The skill's launcher (bin/bazinga-db.cjs), found upwards from this module (the source or the bundle). */
function launcher(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'bin', 'bazinga-db.cjs');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error('the bazinga-db launcher (bin/bazinga-db.cjs) was not found above this module');
  }
}

/** How to start this CLI again: node and the skill's launcher. */
export const defaultRelaunch = (): readonly string[] => [process.execPath, launcher()];

/** The arguments a child was given (on its stdin, as a JSON array of strings). */
export function childArgv(stdin: string): string[] {
  const parsed: unknown = JSON.parse(stdin);
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`${CHILD_ENV}: stdin must be a JSON array of strings`);
  return parsed;
}

/**
 * Runs `argv` in a child started by `command` (its first word the program), stopped after
 * `timeoutMs`; its output is read up to `maxBytes` a stream (more stops it too: the caller's caps
 * keep what it prints below that).
 */
export function runChild(command: readonly string[], argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; maxBytes: number }): ChildRun {
  const [program, ...prefix] = command as [string, ...string[]];
  const r = spawnSync(program, prefix, {
    cwd: opts.cwd,
    env: { ...opts.env, [CHILD_ENV]: '1' },
    input: JSON.stringify(argv),
    encoding: 'utf8',
    timeout: opts.timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: opts.maxBytes,
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') return { code: null, stdout: '', stderr: '' };
  if (r.error) throw r.error;
  return { code: r.status ?? 1, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
