/**
 * This CLI run again as a child process, for work SQLite cannot be stopped in from JavaScript (a
 * statement has no interrupt in better-sqlite3): the child gets the same arguments on its stdin (so
 * no argument length limit applies and they do not show in the child's entry of the process list),
 * the same working folder and environment, and runs the command itself; the parent relays what it
 * printed, or stops it when its time is up. A child never outlives its bound or its parent: a
 * watchdog thread of its own ends it (see watchOver).
 */
import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Set in the child's environment to the parent's process id: a process is a child only when it
 * names its own parent (a stray value in a user's environment names no parent, and changes nothing).
 */
export const CHILD_ENV = 'BAZINGA_DB_CHILD';

/** Whether this process was started by runChild (its environment names its parent). */
export const isChild = (env: NodeJS.ProcessEnv): boolean => env[CHILD_ENV] !== undefined && env[CHILD_ENV] === String(process.ppid);

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

/** The arguments a child was given (on its stdin, as a JSON array of strings); undefined when stdin holds none. */
export function childArgv(stdin: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(stdin);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `argv` in a child started by `command` (its first word the program), stopped after
 * `timeoutMs`. Its output is kept whole (what it prints is bounded by the command's own caps).
 */
export function runChild(command: readonly string[], argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): ChildRun {
  const [program, ...prefix] = command as [string, ...string[]];
  const r = spawnSync(program, prefix, {
    cwd: opts.cwd,
    env: { ...opts.env, [CHILD_ENV]: String(process.pid) },
    input: JSON.stringify(argv),
    encoding: 'utf8',
    timeout: opts.timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: Infinity,
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') return { code: null, stdout: '', stderr: '' };
  if (r.error) throw new Error(`could not run the command's child process (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`);
  return { code: r.status ?? 1, ...(r.signal ? { signal: r.signal } : {}), stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** How long past its bound a child waits for its parent to stop it before it stops itself. */
const CHILD_GRACE_MS = 1000;

/**
 * In a child: a thread that ends this process (SIGKILL) when its parent is gone (killed on its own,
 * the child adopted by another) or when `boundMs` and a grace have passed, since the main thread
 * may be inside SQLite where nothing of JavaScript runs. It does not keep the process alive.
 */
export function watchOver(boundMs: number): void {
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads');
     const end = Date.now() + workerData.ms;
     setInterval(() => {
       if (process.ppid !== workerData.parent || Date.now() > end) process.kill(workerData.self, 'SIGKILL');
     }, 50);`,
    { eval: true, workerData: { ms: boundMs + CHILD_GRACE_MS, parent: process.ppid, self: process.pid } },
  );
  worker.unref();
}

/**
 * Starts `argv` as a detached process of its own (its own session, no terminal, no output), at
 * the lowest scheduling priority the system allows it, and leaves it running: a job that must not
 * slow what the user waits for. Returns its process id.
 */
export function startDetached(command: readonly string[], argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): number {
  const [program, ...prefix] = command as [string, ...string[]];
  const child = spawn(program, [...prefix, ...argv], { cwd: opts.cwd, env: opts.env, detached: true, stdio: 'ignore' });
  child.on('error', () => {}); // a program that cannot start: nothing to report to a caller that has moved on
  try {
    if (child.pid !== undefined) os.setPriority(child.pid, 19);
  } catch {
    // a priority it may not lower: it runs at the default one
  }
  child.unref();
  return child.pid ?? 0;
}
