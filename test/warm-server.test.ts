/**
 * The warm assembler (context-assembler serve; skills/bazinga-db/bin/warmServer.cjs), in real
 * processes on a copy of the built skills: the launcher of assemble is answered by it (the same
 * bytes as assembling in its own process), assembles itself when there is none, when it answers
 * nothing usable or when the bundle was rebuilt since it started (it then stops), never trusts a
 * socket in a folder others can enter, and the server stops when idle.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, S1, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';
// @ts-expect-error plain JavaScript shared with the launchers
import warm from '../skills/bazinga-db/bin/warmServer.cjs';

let tree: string;
let project: Project;
const servers: ChildProcess[] = [];

beforeAll(() => {
  tree = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-warm-'));
  // The built skills as they are (bundles fresh: timestamps kept), without their code caches.
  fs.cpSync(path.join(REPO_ROOT, 'skills'), path.join(tree, 'skills'), { recursive: true, preserveTimestamps: true, filter: (src) => !src.includes('.code-cache') });
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
  project = copyIndexedFixture('ca-warm-project-');
});

afterEach(async () => {
  for (const s of servers.splice(0)) {
    if (s.exitCode === null) {
      s.kill('SIGTERM');
      await new Promise((r) => s.once('exit', r));
    }
  }
});

afterAll(() => {
  fs.rmSync(tree, { recursive: true, force: true });
  project.cleanup();
});

const LAUNCHER = () => path.join(tree, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const BUNDLE = () => path.join(tree, 'skills', 'context-assembler', 'dist', 'assemble.cjs');
const env = (extra: NodeJS.ProcessEnv = {}) => {
  const e: NodeJS.ProcessEnv = { ...process.env, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1', ...extra };
  if (!('CONTEXT_ASSEMBLER_NO_SERVER' in extra)) delete e.CONTEXT_ASSEMBLER_NO_SERVER;
  return e;
};
const ARGS = () => ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1', '--dry-run', '--format', 'json', '--now', '2025-12-02T00:00:00Z'];

function call(extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [LAUNCHER(), ...ARGS()], { cwd: project.root, env: env(extra), encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.split('\n').filter((l) => !l.startsWith('launch: ')).join('\n'), trace: r.stderr.split('\n').filter((l) => l.startsWith('launch: ')) };
}

/** Starts a server for the tree's bundle and waits until its socket answers. */
async function startServer(idleMs = 30_000): Promise<ChildProcess> {
  const s = spawn(process.execPath, [LAUNCHER(), 'serve', '--idle-ms', String(idleMs)], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push(s);
  const socket = warm.socketPath(BUNDLE()) as string;
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(socket);
      c.on('connect', () => (c.destroy(), resolve(true)));
      c.on('error', () => resolve(false));
    });
    if (up) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the server did not start');
}

describe('the warm assembler', () => {
  it('answers the launcher of assemble with the bytes the launcher would print itself; without it the launcher assembles', async () => {
    const alone = call();
    expect(alone.code).toBe(0);
    expect(alone.trace.some((l) => l.includes('answered by the warm assembler'))).toBe(false);
    await startServer();
    const served = call();
    expect(served.trace).toEqual(['launch: assemble.cjs answered by the warm assembler']);
    expect(served.code).toBe(0);
    expect(served.stdout).toBe(alone.stdout);
    expect(served.stderr).toBe(alone.stderr);
    expect(JSON.parse(served.stdout).packages.length).toBeGreaterThan(0);
    // CONTEXT_ASSEMBLER_NO_SERVER=1 keeps a call to itself.
    expect(call({ CONTEXT_ASSEMBLER_NO_SERVER: '1' }).trace.some((l) => l.includes('warm assembler'))).toBe(false);
  });

  it('a second server for the same build does not start; a rebuilt bundle is not served by the old one (that one idles out)', async () => {
    const first = await startServer();
    const second = spawnSync(process.execPath, [LAUNCHER(), 'serve'], { env: env(), encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(second.stdout)).toEqual({ success: true, stopped: 'running' });
    // The bundle rebuilt (here: touched) since the server started.
    const later = new Date(Date.now() + 5_000);
    const before = fs.statSync(BUNDLE());
    fs.utimesSync(BUNDLE(), later, later);
    try {
      const oldSocket = warm.socketPath(BUNDLE());
      expect(fs.existsSync(oldSocket)).toBe(false); // another build, another socket: the launcher assembles itself
      const r = call();
      expect(r.code).toBe(0);
      expect(r.trace.some((l) => l.includes('warm assembler'))).toBe(false);
    } finally {
      fs.utimesSync(BUNDLE(), before.atime, before.mtime);
    }
    expect(first.exitCode).toBe(null);
  });

  it('a socket in a folder others can enter is not trusted; an answer that is not one is not printed', async () => {
    await startServer();
    const dir = warm.serverDir() as string;
    fs.chmodSync(dir, 0o755);
    try {
      expect(call().trace.some((l) => l.includes('warm assembler'))).toBe(false);
    } finally {
      fs.chmodSync(dir, 0o700);
    }
    expect(call().trace).toEqual(['launch: assemble.cjs answered by the warm assembler']);
    // A request it cannot use is answered with nothing: the caller assembles itself.
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      const c = net.connect(warm.socketPath(BUNDLE()) as string);
      c.on('connect', () => c.end('{"argv": 5}\n'));
      c.on('data', (d) => (text += d));
      c.on('end', () => resolve(text));
    });
    expect(reply).toBe('{}');
  });

  it('stops when idle, and removes its socket', async () => {
    const s = await startServer(300);
    const out = await new Promise<string>((resolve) => {
      let text = '';
      s.stdout?.on('data', (d) => (text += d));
      s.once('exit', () => resolve(text));
    });
    expect(JSON.parse(out)).toEqual({ success: true, stopped: 'idle' });
    expect(fs.existsSync(warm.socketPath(BUNDLE()) as string)).toBe(false);
  });

  it("the plugin's SessionStart hook (bootstrap.mjs) starts one in a BAZINGA project, and not with CONTEXT_ASSEMBLER_NO_SERVER=1", async () => {
    const bundle = path.join(REPO_ROOT, 'skills', 'context-assembler', 'dist', 'assemble.cjs');
    const socket = warm.socketPath(bundle) as string;
    const hook = (extra: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [path.join(REPO_ROOT, 'hooks', 'bootstrap.mjs')], { env: env({ CLAUDE_PROJECT_DIR: project.root, ...extra }), encoding: 'utf8', timeout: 60_000 });
    // Not when asked not to.
    expect(hook({ CONTEXT_ASSEMBLER_NO_SERVER: '1' }).status).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    const running = () => fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
      try {
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return cmd.includes('serve') && cmd.some((a) => a === path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'));
      } catch {
        return false;
      }
    });
    const before = running();
    expect(hook({}).status).toBe(0);
    let started: string[] = [];
    for (let i = 0; i < 100 && started.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      started = running().filter((pid) => !before.includes(pid));
    }
    try {
      expect(started.length).toBe(1);
      for (let i = 0; i < 100 && !fs.existsSync(socket); i++) await new Promise((r) => setTimeout(r, 100));
      expect(fs.existsSync(socket)).toBe(true);
    } finally {
      for (const pid of started) process.kill(Number(pid), 'SIGTERM');
    }
  });
});
