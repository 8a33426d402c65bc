/**
 * The warm assembler when it fails, and when someone tries to keep it from running, in real
 * processes on a copy of the built skills:
 *   - a real `serve` made to hang or die part way (a preload module stands in for the fault: it
 *     stops the process right after its greeting, or half way through its answer, or kills it once
 *     it recorded the delivery): the call gives up on it after its own deadline, not the server's,
 *     prints the block (assembled in its own process), and the database holds one record of the
 *     request, the one whose block was printed (the server's, when it wrote one, taken over);
 *   - a server stopped before it greets is ended, so no later call waits on it; one asked for a
 *     prompt another hook is working on leaves it to its caller instead of waiting;
 *   - where XDG_RUNTIME_DIR is unset, a folder at <tmpdir>/context-assembler-<uid> that is not this
 *     user's private one (open to others, a link, another user's) does not keep a server from
 *     starting: it lives in ~/.cache/context-assembler/run/; a pid file naming a live process that
 *     is no server does not either; where none can run, a call says so once, and doctor shows it.
 * The wall-time bound is generous (a busy machine passes it); what it tells apart is waiting for the
 * caller's own deadline (1 s) from waiting for the server (10 s and more).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, S1, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';
import { BUILD, installStandInBuilder } from './standInBuilder.ts';
import { launcherEnv, makeWarmTree, splitTrace, startWarmServer, waitFor, type WarmTree } from './warmServer.ts';
// @ts-expect-error plain JavaScript shared with the launchers
import warm from '../skills/bazinga-db/bin/warmServer.cjs';

/**
 * Above the caller's deadline and its own run on a busy machine (two CPU-bound processes beside the
 * suite), below the 10.3 s of a caller that waits for a hung server. The trace's line is what tells
 * the caller's own deadline apart; this bound only catches a wait for the server.
 */
const WALL_BOUND_MS = 8_000;
/**
 * The deadline of the cases where the server must get as far as recording before it fails: long
 * enough that a busy machine's server gets there (with the shipped 1 s it might not, and the caller
 * would stop it before it recorded), short enough to keep within WALL_BOUND_MS.
 */
const RECORDING_DEADLINE_MS = 4_000;
/** A deadline a busy machine's server cannot miss, where a test is about what the server answers rather than its deadline. */
const PATIENT = { CONTEXT_ASSEMBLER_SERVER_WAIT_MS: '20000' };

/** Makes a real server fail where CA_TEST_FAULT says: after its greeting, half way through its answer, or once it recorded. */
const FAULT_PRELOAD = `const net = require('node:net');
const fault = process.env.CA_TEST_FAULT;
const write = net.Socket.prototype.write;
const end = net.Socket.prototype.end;
net.Socket.prototype.write = function (chunk, ...rest) {
  const written = write.call(this, chunk, ...rest);
  if (fault === 'after-hello' && typeof chunk === 'string' && chunk.startsWith('{"hello":true')) process.kill(process.pid, 'SIGSTOP');
  return written;
};
net.Socket.prototype.end = function (chunk, ...rest) {
  if (typeof chunk === 'string' && chunk.startsWith('{"code"')) {
    if (fault === 'kill-after-record') process.kill(process.pid, 'SIGKILL');
    if (fault === 'mid-answer') {
      write.call(this, chunk.slice(0, chunk.length >> 1));
      process.kill(process.pid, 'SIGSTOP');
      return this;
    }
  }
  return end.call(this, chunk, ...rest);
};
`;

let warmTree: WarmTree;
let runtime: string;
let preload: string;
let project: Project;
const children: ChildProcess[] = [];
const scratch: string[] = [];

beforeAll(() => {
  warmTree = makeWarmTree('ca-warm-faults-');
  runtime = warmTree.runtime;
  preload = path.join(warmTree.tree, 'fault.cjs');
  fs.writeFileSync(preload, FAULT_PRELOAD);
  project = copyIndexedFixture('ca-warm-faults-project-');
  installStandInBuilder(project.root);
});

afterEach(async () => {
  // Stopped ones included: SIGKILL ends a stopped process too.
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await new Promise((r) => c.once('exit', r));
    }
  }
  fs.rmSync(path.join(runtime, 'context-assembler'), { recursive: true, force: true });
});

afterAll(() => {
  warmTree.cleanup();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
  project.cleanup();
});

const LAUNCHER = () => warmTree.launcher;
const BUNDLE = () => warmTree.bundle;

/** The environment of a call: this test's runtime folder unless `vars` say otherwise (undefined: unset). */
const envWith = (vars: Record<string, string | undefined> = {}) => launcherEnv(runtime, vars);

/** The socket the launcher uses under `env` (the rule reads this process's environment: set for the call). */
function socketUnder(env: NodeJS.ProcessEnv): string {
  const saved = { ...process.env };
  for (const k of ['XDG_RUNTIME_DIR', 'XDG_CACHE_HOME', 'TMPDIR', 'HOME']) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  try {
    return warm.socketPath(BUNDLE()) as string;
  } finally {
    for (const k of ['XDG_RUNTIME_DIR', 'XDG_CACHE_HOME', 'TMPDIR', 'HOME']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

/** One launcher call, and its wall time (spawn to exit). */
function timedCall(args: string[], env: NodeJS.ProcessEnv, extra: { cwd?: string; input?: string } = {}) {
  const started = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [LAUNCHER(), ...args], { cwd: extra.cwd ?? project.root, env, encoding: 'utf8', input: extra.input ?? '', timeout: 60_000 });
  return { ...splitTrace(r), ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

const request = (iteration: number, extra: string[] = []) => ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', String(iteration), '--format', 'json', '--now', '2025-12-02T00:00:00Z', ...extra];
const served = (trace: string[]) => trace.includes('launch: assemble.cjs answered by the warm assembler');
const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** Starts a real server (its Node flags first, then the launcher's serve) under `env`; waits until its socket and pid file are in place. */
const startServer = (env: NodeJS.ProcessEnv, nodeFlags: string[] = []) => startWarmServer(LAUNCHER(), { env, socket: socketUnder(env), children, nodeFlags });

/** What the database holds of qa_expert's spawns at `iteration`: the records (key, delivered), the packages recorded consumed (with their counts), the record ids handed out so far. */
function storedAt(iteration: number) {
  const db = new Database(project.dbPath, { readonly: true });
  try {
    const records = (db.prepare("SELECT * FROM ca_assemblies WHERE session_id = ? AND agent_type = 'qa_expert' AND iteration = ?").all(S1, iteration) as { request_key?: string | null; outcome: string; detail: string }[]).map((r) => ({
      request_key: r.request_key ?? null,
      outcome: r.outcome,
      delivered: [...((JSON.parse(r.detail).delivered ?? []) as number[])].sort((a, b) => a - b),
    }));
    const consumed = db.prepare("SELECT package_id, COUNT(*) AS n FROM consumption_scope WHERE agent_type = 'qa_expert' AND iteration = ? GROUP BY package_id ORDER BY package_id").all(iteration) as { package_id: number; n: number }[];
    const seq = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'ca_assemblies'").get() as { seq: number } | undefined)?.seq ?? 0;
    return { records, consumed, seq };
  } finally {
    db.close();
  }
}

/** The stand-in builder's run for `agent` in the shared project: the hook's event and the prompt it wrote. */
function builderRun(agent: string): { event: string; prompt: string } {
  const dir = `bazinga/prompts/${S1}`;
  const params = `${dir}/params_${agent}_AUTH.json`;
  fs.mkdirSync(path.join(project.root, dir), { recursive: true });
  fs.writeFileSync(path.join(project.root, params), JSON.stringify({ agent_type: agent, session_id: S1, group_id: 'AUTH', task_title: 'Login flow with refresh tokens', task_requirements: 'Users stay logged in; refresh tokens rotate', branch: 'feature/x', mode: 'parallel', testing_mode: 'full', model: 'sonnet', output_file: `${dir}/${agent}_AUTH.md` }));
  const build = spawnSync('/bin/sh', ['-c', `${BUILD(params)} 2>&1`], { cwd: project.root, encoding: 'utf8' });
  expect(build.status, build.stdout).toBe(0);
  const event = JSON.stringify({ session_id: 'cc', hook_event_name: 'PostToolUse', cwd: project.root, tool_name: 'Bash', tool_input: { command: BUILD(params) }, tool_response: { stdout: build.stdout.replace(/\n$/, ''), stderr: '', interrupted: false, isImage: false } }) + '\n';
  return { event, prompt: path.join(project.root, dir, `${agent}_AUTH.md`) };
}

describe('a server that hangs or dies part way costs the call at most its deadline; the block is printed and recorded once', () => {
  it.each([
    { fault: 'after-hello', iteration: 41, deadline: warm.ANSWER_DEADLINE_MS, why: `no answer within ${warm.ANSWER_DEADLINE_MS} ms (the server was stopped)`, serverRecorded: false },
    { fault: 'mid-answer', iteration: 42, deadline: RECORDING_DEADLINE_MS, why: `no answer within ${RECORDING_DEADLINE_MS} ms (the server was stopped)`, serverRecorded: true },
    { fault: 'kill-after-record', iteration: 43, deadline: RECORDING_DEADLINE_MS, why: 'the connection ended without an answer (the server died)', serverRecorded: true },
  ])('$fault', async ({ fault, iteration, deadline, why, serverRecorded }) => {
    const env = envWith({ CONTEXT_ASSEMBLER_SERVER_WAIT_MS: String(deadline) });
    const server = await startServer({ ...env, CA_TEST_FAULT: fault }, ['--require', preload]);
    const before = storedAt(iteration);
    const r = timedCall(request(iteration), env);
    expect(r.ms).toBeLessThan(WALL_BOUND_MS);
    // The caller's own logic ended the wait: its deadline, or the connection's end; then it assembled itself.
    expect(r.trace).toContain(`launch: the warm assembler took the call and gave no answer: ${why}`);
    expect(r.trace.some((l) => l.startsWith('launch: assemble.cjs (bundle)'))).toBe(true);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.consumption).toBe('recorded');
    const shown = (doc.packages as { id: number }[]).map((p) => p.id).sort((a, b) => a - b);
    expect(shown.length).toBeGreaterThan(0);
    expect(await waitFor(() => !running(server))).toBe(true);
    const after = storedAt(iteration);
    // One record of the request, of the block printed, under the request's key.
    expect(after.records).toEqual([{ request_key: expect.any(String), outcome: 'recorded', delivered: shown }]);
    expect(after.consumed).toEqual(shown.map((id) => ({ package_id: id, n: 1 })));
    // The server's own record, when it wrote one before it failed, was written and then taken over.
    expect(after.seq - before.seq).toBe(serverRecorded ? 2 : 1);
  }, 60_000);

  it("the prompt hook: a server stopped right after its greeting costs the hook its deadline; the hook places the block itself, recorded once", async () => {
    const env = envWith({ CLAUDE_PROJECT_DIR: project.root });
    const server = await startServer({ ...env, CA_TEST_FAULT: 'after-hello' }, ['--require', preload]);
    const { event, prompt } = builderRun('developer');
    const r = timedCall(['prompt-hook', '--plugin'], env, { input: event });
    expect(r.ms).toBeLessThan(WALL_BOUND_MS);
    expect(r.trace).toContain(`launch: the warm assembler took the call and gave no answer: no answer within ${warm.ANSWER_DEADLINE_MS} ms (the server was stopped)`);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(prompt, 'utf8')).toContain('<!-- context-assembler:begin -->');
    expect(await waitFor(() => !running(server))).toBe(true);
    const db = new Database(project.dbPath, { readonly: true });
    try {
      const rows = db.prepare("SELECT * FROM ca_assemblies WHERE source = 'prompt-hook' AND agent_type = 'developer'").all() as { request_key?: string | null; outcome: string }[];
      expect(rows.map((row) => ({ request_key: row.request_key ?? null, outcome: row.outcome }))).toEqual([{ request_key: expect.any(String), outcome: 'recorded' }]);
    } finally {
      db.close();
    }
    // The hook found no server any more: it started a new one (stopped here; afterEach does not know it).
    const socket = socketUnder(env);
    if (await waitFor(() => fs.existsSync(`${socket}.pid`) && fs.readFileSync(`${socket}.pid`, 'utf8') !== String(server.pid))) {
      const pid = Number(fs.readFileSync(`${socket}.pid`, 'utf8'));
      process.kill(pid, 'SIGTERM');
      await waitFor(() => !fs.existsSync(`/proc/${pid}`));
    }
  }, 60_000);

  it("the prompt hook on a prompt another hook is working on: the server leaves it to its caller, which waits for the lock in its own process; the server is not stopped", async () => {
    const env = envWith({ CLAUDE_PROJECT_DIR: project.root, ...PATIENT });
    const server = await startServer(env);
    const { event, prompt } = builderRun('senior_software_engineer');
    // Another hook's lock on the prompt, held by a process that ends after a second (its lock then
    // stale); not this process's child, so that nothing here has to collect it meanwhile.
    const lock = path.join(path.dirname(prompt), '.context-assembler', `${path.basename(prompt)}.lock`);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    const holder = spawnSync('/bin/sh', ['-c', 'sleep 1 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }).stdout.trim();
    expect(holder).toMatch(/^\d+$/);
    fs.writeFileSync(lock, holder);
    const r = timedCall(['prompt-hook', '--plugin'], env, { input: event });
    expect(r.code).toBe(0);
    expect(r.trace).not.toContain('launch: prompt-hook.cjs answered by the warm assembler');
    expect(r.trace.some((l) => l.includes('gave no answer'))).toBe(false);
    expect(fs.readFileSync(prompt, 'utf8')).toContain('<!-- context-assembler:begin -->');
    expect(running(server)).toBe(true);
  }, 60_000);

  it("the prompt hook on a prompt whose lock names a zombie (killed, never reaped: a detached server under a parent that does not reap) takes the lock at once and places the block", async () => {
    const env = envWith({ CLAUDE_PROJECT_DIR: project.root, CONTEXT_ASSEMBLER_NO_SERVER: '1' });
    const { event, prompt } = builderRun('tech_lead');
    // A parent that never waits for its child: the child, once exited, stays a zombie while the parent lives.
    const parent = spawn('python3', ['-c', 'import os, sys, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(60)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = await new Promise<number>((resolve) => parent.stdout?.once('data', (d) => resolve(Number(String(d).trim()))));
    expect(await waitFor(() => fs.readFileSync(`/proc/${zombie}/stat`, 'utf8').includes(') Z '))).toBe(true);
    const lock = path.join(path.dirname(prompt), '.context-assembler', `${path.basename(prompt)}.lock`);
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    fs.writeFileSync(lock, String(zombie));
    const r = timedCall(['prompt-hook', '--plugin'], env, { input: event });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('another hook held');
    expect(fs.readFileSync(prompt, 'utf8')).toContain('<!-- context-assembler:begin -->');
  }, 60_000);

  it('a server stopped before it greets is ended: the call assembles itself, and no later call waits on it', async () => {
    const env = envWith();
    const server = await startServer(env);
    process.kill(server.pid as number, 'SIGSTOP');
    const r = timedCall(request(44, ['--dry-run']), env);
    expect(served(r.trace)).toBe(false);
    expect(JSON.parse(r.stdout).packages.length).toBeGreaterThan(0);
    expect(await waitFor(() => !running(server))).toBe(true);
    expect(fs.existsSync(socketUnder(env))).toBe(false);
  }, 60_000);
});

describe('nobody else can keep the server from starting', () => {
  /** A folder of the test's own, outside the shared runtime folder. */
  const fresh = (prefix: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    scratch.push(dir);
    return dir;
  };
  const uid = process.getuid?.() ?? 0;

  const squatted: { name: string; squat: (dir: string) => void; root?: boolean }[] = [
    { name: 'open to others', squat: (dir) => (fs.mkdirSync(dir), fs.chmodSync(dir, 0o777)) },
    { name: 'a symbolic link to a private folder', squat: (dir) => fs.symlinkSync(fresh('ca-elsewhere-'), dir, 'dir') },
    { name: "another user's private folder", squat: (dir) => (fs.mkdirSync(dir, { mode: 0o700 }), fs.chownSync(dir, 4242, 4242)), root: true },
  ];
  it.each(squatted)('XDG_RUNTIME_DIR unset and <tmpdir>/context-assembler-<uid> made first ($name): the server lives in ~/.cache/context-assembler/run and serves', async ({ squat, root }) => {
    if (root && uid !== 0) return; // only root can make a folder another user owns
    const tmp = fresh('ca-tmp-');
    const home = fresh('ca-home-');
    squat(path.join(tmp, `context-assembler-${uid}`));
    const env = envWith({ XDG_RUNTIME_DIR: undefined, TMPDIR: tmp, HOME: home, ...PATIENT });
    const socket = socketUnder(env);
    expect(path.dirname(socket)).toBe(path.join(home, '.cache', 'context-assembler', 'run'));
    await startServer(env);
    expect(fs.statSync(path.dirname(socket)).mode & 0o777).toBe(0o700);
    expect(served(timedCall(request(45, ['--dry-run']), env).trace)).toBe(true);
  }, 60_000);

  it('a pid file naming a live process that is no server (the pid reused after a server died) does not keep one from starting', async () => {
    const env = envWith(PATIENT);
    const dead = await startServer(env);
    dead.kill('SIGKILL');
    await new Promise((r) => dead.once('exit', r));
    const socket = socketUnder(env);
    expect(fs.existsSync(socket)).toBe(true);
    const unrelated = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(unrelated);
    fs.writeFileSync(`${socket}.pid`, String(unrelated.pid));
    // The launcher sees no server (so the prompt hook starts one), and serve takes the socket over.
    expect(socketUnder(env)).toBe(socket);
    const saved = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = runtime;
    try {
      expect(warm.serverState(BUNDLE())).toBe('absent');
    } finally {
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = saved;
    }
    await startServer(env);
    expect(served(timedCall(request(46, ['--dry-run']), env).trace)).toBe(true);
    expect(running(unrelated)).toBe(true);
  }, 60_000);

  it.each([
    ['the launcher', 'context-assembler.cjs serve', true],
    ['the ESM launcher', 'context-assembler.mjs serve', true],
    ["the package's bin link", 'context-assembler serve', true],
    ['another command of the launcher', 'context-assembler.cjs assemble', false],
    ['another program of a like name', 'my-context-assembler serve', false],
  ])("a server started through %s is known as one by its command line", async (_name, command, known) => {
    const { isServer } = createRequire(import.meta.url)(path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'serverDir.cjs')) as { isServer: (pid: number) => boolean };
    const [file, arg] = command.split(' ') as [string, string];
    const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', path.join(os.tmpdir(), file), arg], { stdio: 'ignore' });
    children.push(c);
    expect(await waitFor(() => fs.existsSync(`/proc/${c.pid}`))).toBe(true);
    expect(isServer(c.pid as number)).toBe(known);
  });

  it("a process of another user is never taken for this user's server, whatever its command line", async () => {
    if (uid !== 0) return; // only root can start a process as another user
    const { isServer } = createRequire(import.meta.url)(path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'serverDir.cjs')) as { isServer: (pid: number) => boolean };
    const lookalike = (opts: { uid?: number; gid?: number }) => {
      const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', path.join(os.tmpdir(), 'context-assembler.cjs'), 'serve'], { stdio: 'ignore', ...opts });
      children.push(c);
      return c;
    };
    const mine = lookalike({});
    const theirs = lookalike({ uid: 4242, gid: 4242 });
    expect(await waitFor(() => fs.existsSync(`/proc/${mine.pid}`) && fs.existsSync(`/proc/${theirs.pid}`))).toBe(true);
    expect(isServer(mine.pid as number)).toBe(true);
    expect(isServer(theirs.pid as number)).toBe(false);
  });

  it('where no server can run, a call says so once a day, and doctor shows it', () => {
    const own = copyIndexedFixture('ca-warm-none-');
    try {
      const tmp = fresh('ca-tmp-');
      const home = fresh('ca-home-');
      const first = path.join(tmp, `context-assembler-${uid}`);
      fs.mkdirSync(first);
      fs.chmodSync(first, 0o777);
      // ~/.cache is a file: the second choice cannot be made either.
      fs.writeFileSync(path.join(home, '.cache'), '');
      const env = envWith({ XDG_RUNTIME_DIR: undefined, TMPDIR: tmp, HOME: home });
      const args = ['--project-root', own.root, '--session', S1, '--agent', 'qa_expert', '--format', 'json', '--dry-run'];
      const said = `⚠ context-assembler: no warm assembler can run here (no folder for its socket: ${first} is open to others (mode 777); ${path.join(home, '.cache', 'context-assembler', 'run')} cannot be made); every call assembles in its own process`;
      const once = timedCall(args, env, { cwd: own.root });
      expect(once.stderr).toContain(said);
      expect(JSON.parse(once.stdout).packages.length).toBeGreaterThan(0);
      const again = timedCall(args, env, { cwd: own.root });
      expect(again.stderr).not.toContain('no warm assembler can run here');
      const doctor = timedCall(['doctor', '--project-root', own.root, '--format', 'json'], env, { cwd: own.root });
      const row = (JSON.parse(doctor.stdout).checks as { check: string; status: string; detail: string }[]).find((c) => c.check === 'warm assembler');
      expect(row?.status).toBe('warn');
      expect(row?.detail).toContain(`none can run here: no folder for its socket: ${first} is open to others (mode 777)`);
      expect(row?.detail).toMatch(/the project was told on \d{4}-\d\d-\d\d that none could run/);
    } finally {
      own.cleanup();
    }
  }, 60_000);
});
