/**
 * What the warm assembler's tests (warm-server.test.ts, warm-server.faults.test.ts) share: a copy of
 * the built skills and hooks in a temporary folder, a runtime folder of the test's own for the
 * server's socket, the environment of a launcher call there, and a real server started in it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './helpers.ts';

export interface WarmTree {
  /** The copy: skills/, hooks/ and package.json, with this repository's node_modules linked in. */
  tree: string;
  /** A private folder (0700) that calls get as XDG_RUNTIME_DIR: the server's socket lives under it. */
  runtime: string;
  /** The copy's context-assembler launcher. */
  launcher: string;
  /** The copy's assemble bundle: the server's socket is named after it. */
  bundle: string;
  /** Removes the copy and the runtime folder. */
  cleanup(): void;
}

/**
 * Copies the built skills and hooks as they are (bundles fresh: timestamps kept; their code caches
 * left out) into a new temporary folder named by `prefix`, and makes a private runtime folder.
 */
export function makeWarmTree(prefix: string): WarmTree {
  const tree = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const dir of ['skills', 'hooks']) {
    fs.cpSync(path.join(REPO_ROOT, dir), path.join(tree, dir), { recursive: true, preserveTimestamps: true, filter: (src) => !src.includes('.code-cache') });
  }
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(tree, 'package.json'));
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-run-'));
  fs.chmodSync(runtime, 0o700);
  return {
    tree,
    runtime,
    launcher: path.join(tree, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'),
    bundle: path.join(tree, 'skills', 'context-assembler', 'dist', 'assemble.cjs'),
    cleanup: () => {
      fs.rmSync(tree, { recursive: true, force: true });
      fs.rmSync(runtime, { recursive: true, force: true });
    },
  };
}

/**
 * The environment of a launcher call: this process's, with `runtime` as XDG_RUNTIME_DIR, the
 * launcher's trace on, and neither CONTEXT_ASSEMBLER_NO_SERVER nor XDG_CACHE_HOME; then `vars`
 * (undefined: unset).
 */
export function launcherEnv(runtime: string, vars: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: runtime, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1' };
  delete env.CONTEXT_ASSEMBLER_NO_SERVER;
  delete env.XDG_CACHE_HOME;
  for (const [key, value] of Object.entries(vars)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** A launcher run's stderr parted into its own lines and the trace's (`launch: …`). */
export function splitTrace(r: { status: number | null; stdout: string; stderr: string }) {
  const lines = r.stderr.split('\n');
  return { code: r.status, stdout: r.stdout, stderr: lines.filter((l) => !l.startsWith('launch: ')).join('\n'), trace: lines.filter((l) => l.startsWith('launch: ')) };
}

/** Whether `ok` holds within `ms`, asked every 50 ms (a condition awaited, never a time raced). */
export async function waitFor(ok: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (ok()) return true;
  return ok();
}

/**
 * Starts a real server (`nodeFlags`, then the launcher's `serve --idle-ms idleMs`) under `env`,
 * listed in `children` at once (so a test's cleanup ends it whatever happens), and waits until its
 * socket is in place and its pid file names it.
 */
export async function startWarmServer(
  launcher: string,
  opts: { env: NodeJS.ProcessEnv; socket: string; children: ChildProcess[]; nodeFlags?: readonly string[]; idleMs?: number },
): Promise<ChildProcess> {
  const server = spawn(process.execPath, [...(opts.nodeFlags ?? []), launcher, 'serve', '--idle-ms', String(opts.idleMs ?? 60_000)], { env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  opts.children.push(server);
  const pidFile = `${opts.socket}.pid`;
  const started = await waitFor(() => fs.existsSync(opts.socket) && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8') === String(server.pid));
  if (!started) throw new Error('the server did not start');
  return server;
}
