/**
 * Timed commands, run by a small helper process (bench/timer-child.cjs): a spawn's cost grows with
 * the spawning process's memory (fork copies its page tables), and this process holds generated
 * databases, indexes and the in-process measurements. Every timed call of the bench, baselines
 * included, goes through the helper, so all pay the same small-parent spawn.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Timed {
  ms: number;
  status: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'timer-child.cjs');
let child: ChildProcess | undefined;
let next = 0;
const pending = new Map<number, (t: Timed) => void>();

function helper(): ChildProcess {
  if (!child) {
    // Plain node: no tsx loader (execArgv), nothing but the spawn loop.
    child = fork(CHILD, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (m: Timed & { id: number }) => {
      const resolve = pending.get(m.id);
      pending.delete(m.id);
      resolve?.(m);
    });
    child.on('exit', (code) => {
      for (const resolve of pending.values()) resolve({ ms: NaN, status: null, stdout: '', stderr: `timer helper exited (${code})`, error: 'helper exited' });
      pending.clear();
      child = undefined;
    });
  }
  return child;
}

/** Starts the helper now (while this process is still small). */
export function startTimer(): void {
  helper();
}

/** Runs `file args` in `cwd` from the helper; resolves with the wall time from spawn to exit. */
export function timed(file: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<Timed> {
  const id = next++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    helper().send({ id, file, args, cwd, env });
  });
}

export function stopTimer(): void {
  child?.disconnect();
  child = undefined;
}
