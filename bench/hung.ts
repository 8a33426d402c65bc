/**
 * What a hung warm assembler costs a spawn, on both ways BAZINGA reaches the product:
 *   - the orchestrator's recording call (`context-assembler --format json`, a new iteration each
 *     time, so it records): every call must print a block (not the fallback);
 *   - today's flow, the prompt hook on the prompt builder's run (the plugin's registered command
 *     through /bin/sh, which pipes the event to `context-assembler prompt-hook --plugin`, on the
 *     PostToolUse event of the stand-in builder's run, as the hook tests build it; each run a retry
 *     of the spawn, so a new assembly that records): every prompt must come out holding the
 *     product's block between its markers (not left as the builder wrote it).
 * Each when the server it finds is stopped (SIGSTOP) right after its greeting (the call waits for
 * its own deadline, then runs in its own process), or stopped before it greets (the call waits for
 * the greeting); beside the same call with no server at all, and `node -e 0`, interleaved run by
 * run. Each run gets a fresh server (started untimed; the call ends a stopped one, and the server a
 * prompt hook starts for the next spawns is ended untimed too). On the test fixture (bazinga-v19):
 * the cost measured is the wait, not the assembly.
 *
 * Usage: tsx bench/hung.ts [--runs N]     (default 11; also a section of npm run bench)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { PLUGIN_HOOK_COMMAND } from '../skills/context-assembler/scripts/lib/wiring/hookCommand.ts';
import { copyIndexedFixture } from '../test/inProcess.ts';
import { S1 } from '../test/helpers.ts';
import { BUILD, installStandInBuilder } from '../test/standInBuilder.ts';
import { startTimer, stopTimer, timed } from './timer.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The spec's promise: a fallback (here: the block) within 2 s, whatever the server does. */
export const HUNG_TARGET_MS = 2_000;

/** Stops the server right after it greeted a caller (CA_BENCH_FAULT=after-hello). */
const FAULT_PRELOAD = `const net = require('node:net');
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (chunk, ...rest) {
  const written = write.call(this, chunk, ...rest);
  if (process.env.CA_BENCH_FAULT === 'after-hello' && typeof chunk === 'string' && chunk.startsWith('{"hello":true')) process.kill(process.pid, 'SIGSTOP');
  return written;
};
`;

export interface HungCase {
  name: string;
  path: HungPath;
  fault: HungFault;
  median_ms: number;
  worst_ms: number;
  /** Calls that delivered a block (every one should): a printed block with packages, or a prompt holding the product's block. */
  blocks: number;
}

export interface HungCost {
  runs: number;
  node_median_ms: number;
  cases: HungCase[];
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function waitFor(ok: () => boolean, ms = 15_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) if (ok()) return true;
  return ok();
}

/** The two ways BAZINGA reaches the product: the orchestrator's own call, and the prompt hook on the builder's run. */
export type HungPath = 'call' | 'hook';
/** What the server found does: stopped right after its greeting, stopped before it greets, or there is none. */
export type HungFault = 'after-hello' | 'stopped' | 'none';

/** The prompt hook's spawn: the builder's event (a file: the hook's stdin), the prompt it wrote and its bytes, and where the hook keeps its block. */
interface BuilderSpawn {
  event: string;
  prompt: string;
  builder: Buffer;
  kept: string;
}

/**
 * Runs the stand-in builder (the real builder's formats) for a developer of AUTH in `root` and
 * writes the PostToolUse event Claude Code passes the hook for that run, as the hook tests build it.
 */
function builderSpawn(root: string): BuilderSpawn {
  installStandInBuilder(root);
  const rel = `bazinga/prompts/${S1}`;
  fs.mkdirSync(path.join(root, rel), { recursive: true });
  const params = `${rel}/params_developer_AUTH.json`;
  fs.writeFileSync(path.join(root, params), JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'AUTH', task_title: 'Login flow with refresh tokens', task_requirements: 'Users stay logged in; refresh tokens rotate', branch: 'feature/x', mode: 'parallel', testing_mode: 'full', model: 'sonnet', output_file: `${rel}/developer_AUTH.md` }));
  const command = BUILD(params);
  const build = spawnSync('/bin/sh', ['-c', `${command} 2>&1`], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`the stand-in builder failed: ${build.stdout.slice(0, 300)}`);
  const event = path.join(root, rel, 'event_developer.json');
  fs.writeFileSync(event, JSON.stringify({ session_id: 'bench', hook_event_name: 'PostToolUse', cwd: root, tool_name: 'Bash', tool_input: { command }, tool_response: { stdout: build.stdout.replace(/\n$/, ''), stderr: '', interrupted: false, isImage: false } }) + '\n');
  const prompt = path.join(root, rel, 'developer_AUTH.md');
  return { event, prompt, builder: fs.readFileSync(prompt), kept: path.join(root, rel, '.context-assembler', 'developer_AUTH.md.json') };
}

/** Makes the next hook call a retry of the spawn (a new iteration: a new assembly that records), on the prompt as the builder wrote it. */
function prepareRetry(dbPath: string, spawned: BuilderSpawn): void {
  const db = new Database(dbPath);
  try {
    db.prepare('UPDATE task_groups SET revision_count = COALESCE(revision_count, 0) + 1 WHERE session_id = ? AND id = ?').run(S1, 'AUTH');
  } finally {
    db.close();
  }
  fs.writeFileSync(spawned.prompt, spawned.builder);
  fs.rmSync(spawned.kept, { force: true });
}

/** Measures `runs` interleaved rounds with the launcher `launcher` (its skills built: the bundles fresh). */
export async function benchHungServer(launcher: string, runs = 11): Promise<HungCost> {
  const skills = path.resolve(path.dirname(launcher), '..', '..');
  const launch = createRequire(import.meta.url)(path.join(skills, 'bazinga-db', 'bin', 'launch.cjs')) as { bundlesFresh: (skillDir: string) => boolean };
  // A stale bundle runs from the sources through tsx, which never asks a server: nothing here would be measured.
  for (const skill of ['context-assembler', 'bazinga-db']) {
    if (!launch.bundlesFresh(path.join(skills, skill))) throw new Error(`the bundles of ${skill} are older than its sources: run node scripts/build.mjs first`);
  }
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-hung-run-'));
  fs.chmodSync(runtime, 0o700);
  const preload = path.join(runtime, 'fault.cjs');
  fs.writeFileSync(preload, FAULT_PRELOAD);
  const project = copyIndexedFixture('ca-hung-bench-');
  const warm = createRequire(import.meta.url)(path.join(skills, 'bazinga-db', 'bin', 'warmServer.cjs')) as { socketPath: (b: string) => string | undefined; SERVER_NODE_FLAGS: string[] };
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runtime;
  const socket = warm.socketPath(path.join(skills, 'context-assembler', 'dist', 'assemble.cjs'));
  if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = saved;
  if (socket === undefined) throw new Error('no socket for the warm assembler here');
  // The plugin's hook command finds the launcher under CLAUDE_PLUGIN_ROOT and runs the `node` of the PATH: this one.
  const env: NodeJS.ProcessEnv = {
    ...process.env, XDG_RUNTIME_DIR: runtime, CLAUDE_PROJECT_DIR: project.root, CLAUDE_PLUGIN_ROOT: path.dirname(skills),
    PATH: [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter),
  };
  delete env.CONTEXT_ASSEMBLER_NO_SERVER;
  delete env.CONTEXT_ASSEMBLER_SERVER_WAIT_MS;
  /** The pid the server's pid file names (a positive integer), or undefined. */
  const pidInFile = () => {
    try {
      const pid = Number(fs.readFileSync(`${socket}.pid`, 'utf8'));
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  /** Whether `pid` is a live `serve` of this launcher (its command line says so; a zombie is not). */
  const isServe = (pid: number) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      return argv.includes(launcher) && argv.includes('serve');
    } catch {
      return false;
    }
  };

  /** A server for the round (its pid file written), started with `fault` in its environment; undefined for none. */
  const start = async (fault: HungFault): Promise<ChildProcess | undefined> => {
    if (fault === 'none') return undefined;
    const flags = fault === 'after-hello' ? ['--require', preload] : [];
    const s = spawn(process.execPath, [...warm.SERVER_NODE_FLAGS, ...flags, launcher, 'serve', '--idle-ms', '60000'], { env: { ...env, CA_BENCH_FAULT: fault }, stdio: 'ignore' });
    if (!(await waitFor(() => pidInFile() === s.pid))) throw new Error('the warm assembler did not start');
    if (fault === 'stopped') process.kill(s.pid as number, 'SIGSTOP');
    return s;
  };
  /**
   * Ends the server a prompt hook started for the next spawns once it placed a block (detached, not
   * this process's child): told to stop, then killed if it has not within a few seconds.
   */
  const endStartedByHook = async (ours: ChildProcess | undefined) => {
    const started = () => {
      const pid = pidInFile();
      return pid !== undefined && pid !== ours?.pid && isServe(pid) ? pid : undefined;
    };
    if (!(await waitFor(() => started() !== undefined, 5_000))) return;
    const pid = started() as number;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(pid, name);
      } catch {
        // gone meanwhile
      }
    };
    signal('SIGTERM');
    if (!(await waitFor(() => !isServe(pid), 5_000))) signal('SIGKILL');
  };
  const end = async (s: ChildProcess | undefined) => {
    if (s !== undefined && s.exitCode === null && s.signalCode === null) {
      s.kill('SIGKILL');
      await new Promise((r) => s.once('exit', r));
    }
    for (const f of [socket, `${socket}.pid`]) fs.rmSync(f, { force: true });
  };

  const spawned = builderSpawn(project.root);
  // As Claude Code runs it: the plugin's registered command through /bin/sh, the event on stdin.
  const hookCommand = `exec <${JSON.stringify(spawned.event)}; ${PLUGIN_HOOK_COMMAND}`;
  const servers: { fault: HungFault; name: string }[] = [
    { fault: 'after-hello', name: 'server stopped right after its greeting' },
    { fault: 'stopped', name: 'server stopped before it greets' },
    { fault: 'none', name: 'no server (own process)' },
  ];
  const paths: { path: HungPath; name: string }[] = [
    { path: 'call', name: "orchestrator's call" },
    { path: 'hook', name: 'prompt hook' },
  ];
  const kinds = paths.flatMap((p) => servers.map((s) => ({ path: p.path, fault: s.fault, name: `${p.name}: ${s.name}` })));
  const samples = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
  const blocks = new Map<string, number>(kinds.map((k) => [k.name, 0]));
  const node: number[] = [];
  let iteration = 100;
  try {
    // Round -1 warms the page cache and the code caches, untimed.
    for (let round = -1; round < runs; round++) {
      const order = round % 2 === 0 ? kinds : [...kinds].reverse();
      for (const kind of order) {
        if (kind.path === 'hook') prepareRetry(project.dbPath, spawned);
        const server = await start(kind.fault);
        const baseline = await timed(process.execPath, ['-e', '0'], project.root);
        const args = ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', String(iteration++), '--format', 'json'];
        const r = kind.path === 'call' ? await timed(process.execPath, [launcher, ...args], project.root, env) : await timed('/bin/sh', ['-c', hookCommand], project.root, env);
        if (kind.path === 'hook') await endStartedByHook(server);
        await end(server);
        if (r.status !== 0) throw new Error(`the ${kind.name} failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
        if (round < 0) continue;
        node.push(baseline.ms);
        (samples.get(kind.name) as number[]).push(r.ms);
        if (kind.path === 'call' ? printedBlock(r.stdout) : placedBlock(fs.readFileSync(spawned.prompt, 'utf8'), r.stderr)) blocks.set(kind.name, (blocks.get(kind.name) as number) + 1);
      }
    }
  } finally {
    fs.rmSync(runtime, { recursive: true, force: true });
    project.cleanup();
  }
  return {
    runs,
    node_median_ms: median(node),
    cases: kinds.map((k) => {
      const xs = samples.get(k.name) as number[];
      return { name: k.name, path: k.path, fault: k.fault, median_ms: median(xs), worst_ms: Math.max(...xs), blocks: blocks.get(k.name) as number };
    }),
  };
}

/** Whether the orchestrator's call printed a block with packages (not the fallback). */
function printedBlock(stdout: string): boolean {
  try {
    const doc = JSON.parse(stdout) as { fallback?: boolean; packages?: unknown[] };
    return doc.fallback !== true && (doc.packages?.length ?? 0) > 0;
  } catch {
    return false; // not a document: no block
  }
}

/** Whether the prompt hook put the product's block in the prompt (not left as the builder wrote it). */
function placedBlock(prompt: string, stderr: string): boolean {
  return prompt.includes('<!-- context-assembler:begin -->') && prompt.includes('<!-- context-assembler:end -->') && !stderr.includes('prompt left as the builder wrote it');
}

/** The markdown rows of the table (case, median, worst, × node -e 0, blocks). */
export function hungRows(c: HungCost): string[] {
  const x = (ms: number) => (ms / c.node_median_ms).toFixed(2);
  return [
    `| call | runs | median | worst | median / worst × node -e 0 (${c.node_median_ms.toFixed(1)} ms) | blocks delivered |`,
    '|---|---:|---:|---:|---:|---:|',
    ...c.cases.map((k) => `| ${k.name} | ${c.runs} | ${k.median_ms.toFixed(0)} ms | ${k.worst_ms.toFixed(0)} ms | ${x(k.median_ms)} / ${x(k.worst_ms)} | ${k.blocks} of ${c.runs} |`),
  ];
}

/** The worst call beside a hung server (either fault, either path; of `path` alone when given), in ms. */
export const hungWorst = (c: HungCost, path?: HungPath): number =>
  Math.max(...c.cases.filter((k) => k.fault !== 'none' && (path === undefined || k.path === path)).map((k) => k.worst_ms));

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    fs.writeSync(1, "bench/hung.ts: a hung warm assembler's cost to the orchestrator's call and to the prompt hook on the builder's run, beside node -e 0 (median and worst)\n\nUsage: tsx bench/hung.ts [--runs N]   (default 11; run node scripts/build.mjs first)\n");
    process.exit(0);
  }
  const i = process.argv.indexOf('--runs');
  const runs = i === -1 ? 11 : Math.max(1, Number(process.argv[i + 1]));
  const load = () => (os.loadavg()[0] as number).toFixed(2);
  const loadBefore = load();
  startTimer();
  const c = await benchHungServer(path.join(REPO, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'), runs);
  stopTimer();
  console.log(`a hung warm assembler's cost to a recording call and to the prompt hook, ${c.runs} interleaved runs, ${os.cpus().length} cores, load ${loadBefore} before, ${load()} after\n`);
  for (const row of hungRows(c)) console.log(row);
  const worst = hungWorst(c);
  console.log(`\ntarget: the block within ${HUNG_TARGET_MS / 1000} s beside a hung server (worst): ${worst <= HUNG_TARGET_MS ? 'PASS' : 'FAIL'} (${worst.toFixed(0)} ms; the call ${hungWorst(c, 'call').toFixed(0)} ms, the prompt hook ${hungWorst(c, 'hook').toFixed(0)} ms)`);
}
