/**
 * Realistic orchestrator calls, as `npm run bench` measures them.
 *
 * Each series is one release (the working tree's, or the previous release's) with relevance on
 * (the default config) or off (`enable_fts5: false` in the project's bazinga/skills_config.json),
 * on its own fresh copy of the same database (indexed by that release: see relevance.ts). All
 * series walk the same spawn sequence of the bench session, call by call, interleaved with the
 * two baselines (`node -e 0`, a bare better-sqlite3 open of the database), in an order that rotates
 * every step:
 *
 *   warm-up (untimed): each of the 6 groups at the iteration after its generated history:
 *     developer → qa_expert → tech_lead (the session's recent past, written by this release);
 *   timed: cycles of developer → qa_expert → tech_lead over the groups, each cycle one iteration
 *     later for its group (iteration ≥ 2 everywhere, prior consumption at every earlier one);
 *   peak RSS (untimed): one more cycle under /usr/bin/time (or a --require probe without it).
 *
 * A third baseline, the floor of each of this release's series (bench/floor.ts): the statements of
 * its first timed call, recorded after the warm-up on a copy of its project, replayed with that
 * call's output in a bare process on another copy (its writes committed and the database closed,
 * as the call does; the copy put back untimed after each replay), timed interleaved like the other two.
 *
 * Every call is the orchestrator's command, `context-assembler.mjs --project-root R --session S
 * --group G --agent A --iteration K --format json`, never a dry run: it records what it hands out.
 * After each spawn the "agent" writes what a BAZINGA agent writes — two reasoning entries and a
 * context package (with its artifact file) designated to the next agents — through the release's
 * own bazinga-db CLI (runCli in process: the same code as the bin, without a process start), outside
 * the timed part. Only the orchestrator call is timed (spawn to exit, as the orchestrator waits), from
 * a small helper process (bench/timer.ts), as are the baselines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_GROUPS, BENCH_HISTORY, BENCH_SESSION, benchPath, benchText, scaleName, type BenchDb } from './generate.ts';
import { recordFloorTrace, writeFloorTrace } from './floor.ts';
import { projectWith, type Release } from './relevance.ts';

/** The warm series' wait for the server's answer (CONTEXT_ASSEMBLER_SERVER_WAIT_MS). */
const BENCH_SERVER_WAIT_MS = 30_000;
import { timed } from './timer.ts';

export interface SeriesSpec {
  key: string;
  label: string;
  release: Release;
  relevance: 'on' | 'off';
  /** The database file the series starts from (a fresh copy is made). */
  dbFile: string;
  /** ca_token_counts rows the release's CLI stores beside the generated entries (relevance.ts cliStoredCounts). */
  counts: readonly [string, number][];
  /** Whether the release's warm assembler (`serve`, started for the scale) answers the calls; otherwise CONTEXT_ASSEMBLER_NO_SERVER=1. */
  warm: boolean;
}

export interface CallRecord {
  ms: number;
  group: string;
  agent: string;
  iteration: number;
  /** counting.tokenizer_loaded of the output; null when the output has no such field. */
  tokenizer_loaded: boolean | null;
  /** Packages handed out (null when the output says nothing). */
  packages: number | null;
  fallback: boolean;
  warnings: number;
}

export interface SeriesResult {
  key: string;
  label: string;
  release: string;
  relevance: 'on' | 'off';
  calls: CallRecord[];
  median_ms: number;
  tokenizer: { loaded: number; known: number; calls: number; share: number | null };
  fallbacks: number;
  warnings: number;
  first_warning: string | null;
  peak_rss_kb: number | null;
  packages_handed_out: number;
}

/** The floor of a series' call (bench/floor.ts): its recorded statements and output replayed in a bare process. */
export interface FloorResult {
  /** The series whose call was recorded. */
  key: string;
  relevance: 'on' | 'off';
  statements: number;
  ms: number[];
  median_ms: number;
}

export interface ScaleResult {
  scale: number;
  name: string;
  steps: number;
  node_ms: number[];
  bare_ms: number[];
  node_median: number;
  bare_median: number;
  floors: FloorResult[];
  series: SeriesResult[];
  rss_method: string;
  /** Peak RSS of the warm assembler over the scale's calls (KB), when one ran. */
  server_peak_rss_kb: number | null;
  wall_ms: number;
  /** Time spent in the agents' writes (untimed). */
  writes_ms: number;
  /** Time spent copying the database for each series. */
  copy_ms: number;
}

export const median = (xs: readonly number[]): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

type Agent = 'developer' | 'qa_expert' | 'tech_lead';
interface Spawn {
  n: number;
  group: string;
  agent: Agent;
  iteration: number;
}

/** The spawn sequence: warm-up cycle over every group, `cycles` timed cycles, one RSS cycle. */
function spawnPlan(cycles: number): { warm: Spawn[]; timed: Spawn[]; rss: Spawn[] } {
  const iteration = new Map(BENCH_GROUPS.map((g) => [g, (BENCH_HISTORY[g] ?? 1) + 1]));
  let n = 0;
  const cycle = (group: string): Spawn[] => {
    const it = iteration.get(group) as number;
    iteration.set(group, it + 1);
    return (['developer', 'qa_expert', 'tech_lead'] as const).map((agent) => ({ n: n++, group, agent, iteration: it }));
  };
  const warm = BENCH_GROUPS.flatMap((g) => cycle(g));
  const timed: Spawn[] = [];
  for (let c = 0; c < cycles; c++) timed.push(...cycle(BENCH_GROUPS[c % BENCH_GROUPS.length] as string));
  const rss = cycle(BENCH_GROUPS[cycles % BENCH_GROUPS.length] as string);
  return { warm, timed, rss };
}

/** What the agent of `sp` writes when it is done: artifact files and bazinga-db commands. */
function agentWrites(sp: Spawn): { files: { rel: string; text: string }[]; commands: string[][] } {
  const seed = 1_000_003 * (sp.n + 1);
  const s = BENCH_SESSION;
  const design: Record<Agent, { type: string; consumers: string[]; priority: string }> = {
    developer: { type: 'handoff', consumers: ['qa_expert', 'tech_lead'], priority: 'high' },
    qa_expert: { type: 'failures', consumers: ['developer', 'senior_software_engineer'], priority: sp.n % 2 ? 'high' : 'critical' },
    tech_lead: { type: 'decisions', consumers: ['developer', 'senior_software_engineer'], priority: 'medium' },
  };
  const d = design[sp.agent];
  const rel = `bazinga/artifacts/${s}/${d.type}_${sp.group}_it${sp.iteration}_${sp.agent}_${sp.n}.md`;
  const summary = benchText(seed + 3, 20 + (sp.n % 25));
  let text = `# ${d.type} for ${sp.group} (iteration ${sp.iteration})\n\n${summary}\n\n`;
  for (let i = 0; i < 12; i++) text += `- ${benchText(seed + 10 + i, 18)} (${benchPath(seed + 30 + i)})\n`;
  const it = String(sp.iteration);
  return {
    files: [{ rel, text }],
    commands: [
      ['save-reasoning', s, sp.group, sp.agent, 'understanding', benchText(seed + 1, 40 + (sp.n % 60)), '--iteration', it, '--confidence', 'medium'],
      ['save-reasoning', s, sp.group, sp.agent, 'completion', benchText(seed + 2, 60 + (sp.n % 80)), '--iteration', it, '--confidence', 'high', '--references', JSON.stringify([benchPath(seed + 4), benchPath(seed + 5)])],
      ['save-context-package', s, sp.group, d.type, rel, sp.agent, JSON.stringify(d.consumers), d.priority, summary],
    ],
  };
}

type RunCli = (argv: readonly string[], io: { cwd: string; env: NodeJS.ProcessEnv; stdout: (t: string) => void; stderr: (t: string) => void }) => number;
const clis = new Map<string, RunCli>();

/** The release's bazinga-db CLI, run in this process. */
async function cliOf(release: Release): Promise<RunCli> {
  let cli = clis.get(release.root);
  if (!cli) {
    const mod = (await import(pathToFileURL(path.join(release.root, 'skills', 'bazinga-db', 'scripts', 'lib', 'cli.ts')).href)) as { runCli: RunCli };
    cli = mod.runCli;
    clis.set(release.root, cli);
  }
  return cli;
}

async function write(release: Release, project: string, sp: Spawn): Promise<void> {
  const cli = await cliOf(release);
  const w = agentWrites(sp);
  for (const f of w.files) fs.writeFileSync(path.join(project, f.rel), f.text);
  for (const argv of w.commands) {
    let err = '';
    const code = cli(['--project-root', project, '--quiet', ...argv], { cwd: project, env: {}, stdout: () => {}, stderr: (t) => (err += t) });
    if (code !== 0) throw new Error(`${release.label}: bazinga-db ${argv[0]} failed (exit ${code}): ${err.slice(0, 400)}`);
  }
}

/** How peak RSS is read: GNU time when the machine has it, else a --require probe in the child. */
const TIME = '/usr/bin/time';
const PROBE = path.join(path.dirname(new URL(import.meta.url).pathname), 'rss-probe.cjs');
const FLOOR_CHILD = path.join(path.dirname(new URL(import.meta.url).pathname), 'floor-child.cjs');
export const RSS_METHOD = fs.existsSync(TIME) ? '/usr/bin/time -f %M (max RSS of the process, KB)' : 'process.resourceUsage().maxRSS at exit (bench/rss-probe.cjs)';

interface Outcome {
  ms: number;
  record: Omit<CallRecord, 'ms' | 'group' | 'agent' | 'iteration'>;
  rssKb: number | null;
  warning: string | null;
}

async function orchestrate(spec: SeriesSpec, project: string, sp: Spawn, rss: boolean): Promise<Outcome> {
  const args = [
    spec.release.bin, '--project-root', project, '--session', BENCH_SESSION, '--group', sp.group, '--agent', sp.agent,
    '--iteration', String(sp.iteration), '--format', 'json',
  ];
  let file = process.execPath;
  let argv = args;
  // A warm call says (launch trace) that the warm assembler answered it: a silent fallback would count as warm.
  // The warm series measure the warm assembler's speed, not its deadline: a patient wait (the
  // default 1 s deadline sends a call the server is still working on, as on a million rows on a
  // busy machine, to its own process; bench/hung.ts measures the deadline).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CONTEXT_ASSEMBLER_NO_SERVER: spec.warm ? '0' : '1',
    CONTEXT_ASSEMBLER_LAUNCH_TRACE: spec.warm ? '1' : '0',
    ...(spec.warm ? { CONTEXT_ASSEMBLER_SERVER_WAIT_MS: String(BENCH_SERVER_WAIT_MS) } : {}),
  };
  let probeFile: string | undefined;
  if (rss && fs.existsSync(TIME)) {
    file = TIME;
    argv = ['-f', '%M', process.execPath, ...args];
  } else if (rss) {
    probeFile = path.join(project, '.rss');
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${PROBE}`.trim();
    env.BENCH_RSS_FILE = probeFile;
  }
  const r = await timed(file, argv, project, env);
  const ms = r.ms;
  let stderr = r.stderr;
  let rssKb: number | null = null;
  if (rss && file === TIME) {
    const lines = stderr.trimEnd().split('\n');
    rssKb = Number(lines.pop());
    stderr = lines.join('\n');
    if (!Number.isFinite(rssKb)) rssKb = null;
  } else if (probeFile) {
    rssKb = fs.existsSync(probeFile) ? Number(fs.readFileSync(probeFile, 'utf8')) : null;
  }
  if (r.status !== 0) throw new Error(`${spec.label}: orchestrator call failed (exit ${r.status}) at ${sp.group}/${sp.agent}/${sp.iteration}: ${stderr.slice(0, 400)}`);
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`${spec.label}: output is not JSON: ${r.stdout.slice(0, 200)} ${stderr.slice(0, 200)}`);
  }
  if (spec.warm && !stderr.includes('launch: assemble.cjs answered by the warm assembler')) {
    throw new Error(`${spec.label}: the call at ${sp.group}/${sp.agent}/${sp.iteration} was not answered by the warm assembler: ${stderr.slice(0, 300)}`);
  }
  const counting = doc.counting as { tokenizer_loaded?: unknown } | undefined;
  const warnings = stderr.split('\n').filter((l) => l.includes('⚠'));
  return {
    ms,
    rssKb,
    warning: warnings[0] ?? null,
    record: {
      tokenizer_loaded: typeof counting?.tokenizer_loaded === 'boolean' ? counting.tokenizer_loaded : null,
      packages: Array.isArray(doc.packages) ? doc.packages.length : null,
      fallback: doc.fallback === true,
      warnings: warnings.length,
    },
  };
}

async function timeBaseline(file: string, args: string[], cwd: string): Promise<number> {
  const r = await timed(file, args, cwd);
  if (r.status !== 0) throw new Error(`baseline ${args.join(' ')} failed: ${r.stderr.slice(0, 300)}`);
  return r.ms;
}

/** A release's warm assembler (`context-assembler serve`), once it has written its pid file (after its socket is in place). */
export async function startServer(release: Release): Promise<ChildProcess> {
  const bundle = path.join(release.root, 'skills', 'context-assembler', 'dist', 'assemble.cjs');
  const socket = (createRequire(import.meta.url)(path.join(release.root, 'skills', 'bazinga-db', 'bin', 'warmServer.cjs')) as { socketPath: (b: string) => string }).socketPath(bundle);
  if (fs.existsSync(`${socket}.pid`)) {
    const pid = Number(fs.readFileSync(`${socket}.pid`, 'utf8'));
    let running = false;
    try {
      process.kill(pid, 0);
      running = true;
    } catch (err) {
      // EPERM: alive (another user's); otherwise a dead server's pid file: `serve` takes its socket over
      running = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (running) throw new Error(`${release.label}: a warm assembler of this build runs already (pid ${pid}); stop it first`);
    fs.rmSync(`${socket}.pid`, { force: true });
  }
  // As the SessionStart hook starts it: its default idle time (the calls here are seconds apart).
  // With the Node flags the hooks start it with (a release before them: none).
  const flags = (createRequire(import.meta.url)(path.join(release.root, 'skills', 'bazinga-db', 'bin', 'warmServer.cjs')) as { SERVER_NODE_FLAGS?: string[] }).SERVER_NODE_FLAGS ?? [];
  const child = spawn(process.execPath, [...flags, release.bin, 'serve'], { stdio: 'ignore', env: { ...process.env, CONTEXT_ASSEMBLER_NO_SERVER: '0' } });
  for (let i = 0; i < 200 && !fs.existsSync(`${socket}.pid`); i++) await new Promise((r) => setTimeout(r, 50));
  if (!fs.existsSync(`${socket}.pid`)) {
    child.kill('SIGKILL');
    throw new Error(`${release.label}: the warm assembler did not start`);
  }
  return child;
}

/** Stops a warm assembler; its peak RSS (KB) as /proc says, or 0 where it cannot be read. */
export async function stopServer(child: ChildProcess): Promise<number> {
  let kb = 0;
  try {
    kb = Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    // not Linux
  }
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  return kb;
}

/**
 * One replay of a floor: its wall time less what the child spent putting the database back for the
 * next replay (it says how long on stderr: `restore-ms N`).
 */
async function timeFloor(db: string, trace: string, cwd: string): Promise<number> {
  const r = await timed(process.execPath, [FLOOR_CHILD, db, trace], cwd);
  const restore = /^restore-ms ([\d.]+)$/m.exec(r.stderr);
  if (r.status !== 0 || !restore) throw new Error(`floor replay failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  return r.ms - Number(restore[1]);
}

/** Runs every series at one scale; `cycles` timed developer → QA → tech lead cycles each. */
export async function runScale(
  g: BenchDb,
  specs: readonly SeriesSpec[],
  opts: { outDir: string; repoRoot: string; cycles: number; log: (line: string) => void },
): Promise<ScaleResult> {
  const started = performance.now();
  const plan = spawnPlan(opts.cycles);
  const dir = path.join(opts.outDir, scaleName(g.packages));
  const copyStart = performance.now();
  const projects = specs.map((spec) =>
    projectWith(g, spec.dbFile, path.join(dir, spec.key), spec.relevance === 'off' ? { context_engineering: { enable_fts5: false } } : undefined, spec.counts),
  );
  const copyMs = performance.now() - copyStart;
  opts.log(`    fresh copies for ${specs.length} series: ${Math.round(copyMs / 1000)} s`);
  const barePath = path.join(projects[0] as string, 'bazinga', 'bazinga.db');
  const state = specs.map(() => ({ calls: [] as CallRecord[], rss: [] as number[], warning: null as string | null }));
  const node: number[] = [];
  const bare: number[] = [];
  const BARE = "require('better-sqlite3')(process.argv[1],{readonly:true}).prepare('select 1').get()";
  const floors: (FloorResult & { db: string; trace: string })[] = [];
  const serverRssKb: number[] = [];
  let step = 0;
  let writesMs = 0;
  const runStep = async (sp: Spawn, mode: 'warm' | 'timed' | 'rss') => {
    const items: (number | 'node' | 'bare' | `floor${number}`)[] = specs.map((_, i) => i);
    if (mode === 'timed') items.push('node', 'bare', ...floors.map((_, i) => `floor${i}` as const));
    const k = step++ % items.length;
    const order = [...items.slice(k), ...items.slice(0, k)];
    for (const item of order) {
      if (item === 'node') node.push(await timeBaseline(process.execPath, ['-e', '0'], opts.repoRoot));
      else if (item === 'bare') bare.push(await timeBaseline(process.execPath, ['-e', BARE, barePath], opts.repoRoot));
      else if (typeof item === 'string') {
        const f = floors[Number(item.slice('floor'.length))] as (typeof floors)[number];
        f.ms.push(await timeFloor(f.db, f.trace, opts.repoRoot));
      } else {
        const o = await orchestrate(specs[item] as SeriesSpec, projects[item] as string, sp, mode === 'rss');
        const st = state[item] as (typeof state)[number];
        st.warning ??= o.warning;
        if (mode === 'timed') st.calls.push({ ms: o.ms, group: sp.group, agent: sp.agent, iteration: sp.iteration, ...o.record });
        if (mode === 'rss' && o.rssKb !== null) st.rss.push(o.rssKb);
        if (o.record.fallback && mode !== 'timed') throw new Error(`${specs[item]!.label}: the orchestrator fell back (${o.warning ?? 'no warning'})`);
      }
    }
    const w = performance.now();
    for (let i = 0; i < specs.length; i++) await write((specs[i] as SeriesSpec).release, projects[i] as string, sp);
    writesMs += performance.now() - w;
  };
  // The warm assembler of each release whose series use it, as the SessionStart hook starts it.
  const servers: ChildProcess[] = [];
  try {
    for (const release of new Set(specs.filter((s) => s.warm).map((s) => s.release))) servers.push(await startServer(release));
    for (const sp of plan.warm) await runStep(sp, 'warm');
    opts.log(`    warm-up: ${plan.warm.length} spawns per series (${Math.round((performance.now() - started - copyMs) / 1000)} s)`);
    // The floor of this release's first timed call, recorded on one copy of the series' project and
    // replayed on another (taken before the recording wrote anything).
    const first = plan.timed[0] as Spawn;
    for (const [i, spec] of specs.entries()) {
      if (spec.release.key !== 'current' || spec.warm) continue;
      const replayDir = path.join(dir, `${spec.key}-floor`);
      const recordDir = path.join(dir, `${spec.key}-floor-recording`);
      fs.cpSync(projects[i] as string, replayDir, { recursive: true });
      fs.cpSync(projects[i] as string, recordDir, { recursive: true });
      const trace = await recordFloorTrace(spec.release, recordDir, [
        '--project-root', recordDir, '--session', BENCH_SESSION, '--group', first.group, '--agent', first.agent, '--iteration', String(first.iteration), '--format', 'json',
      ]);
      fs.rmSync(recordDir, { recursive: true, force: true });
      const traceFile = path.join(dir, `${spec.key}-floor.json`);
      writeFloorTrace(trace, traceFile);
      floors.push({ key: spec.key, relevance: spec.relevance, statements: trace.statements.length, ms: [], median_ms: NaN, db: path.join(replayDir, 'bazinga', 'bazinga.db'), trace: traceFile });
    }
    for (const sp of plan.timed) await runStep(sp, 'timed');
    for (const sp of plan.rss) await runStep(sp, 'rss');
  } finally {
    for (const s of servers) serverRssKb.push(await stopServer(s));
  }
  const series = specs.map((spec, i): SeriesResult => {
    const st = state[i] as (typeof state)[number];
    const known = st.calls.filter((c) => c.tokenizer_loaded !== null);
    const loaded = known.filter((c) => c.tokenizer_loaded).length;
    return {
      key: spec.key,
      label: spec.label,
      release: spec.release.key,
      relevance: spec.relevance,
      calls: st.calls,
      median_ms: median(st.calls.map((c) => c.ms)),
      tokenizer: { loaded, known: known.length, calls: st.calls.length, share: known.length === 0 ? null : loaded / known.length },
      fallbacks: st.calls.filter((c) => c.fallback).length,
      warnings: st.calls.reduce((a, c) => a + c.warnings, 0),
      first_warning: st.warning,
      peak_rss_kb: st.rss.length ? Math.max(...st.rss) : null,
      packages_handed_out: st.calls.reduce((a, c) => a + (c.packages ?? 0), 0),
    };
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    scale: g.packages,
    name: scaleName(g.packages),
    steps: plan.timed.length,
    node_ms: node,
    bare_ms: bare,
    node_median: median(node),
    bare_median: median(bare),
    floors: floors.map(({ key, relevance, statements, ms }) => ({ key, relevance, statements, ms, median_ms: median(ms) })),
    series,
    server_peak_rss_kb: serverRssKb.length ? Math.max(...serverRssKb) : null,
    rss_method: RSS_METHOD,
    wall_ms: Math.round(performance.now() - started),
    writes_ms: Math.round(writesMs),
    copy_ms: Math.round(copyMs),
  };
}
