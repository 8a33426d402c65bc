/**
 * npm run bench: measures, in ONE run, realistic orchestrator calls of the working tree's release
 * and of the previous release, next to the floors every call pays, and prints tables with targets.
 *
 *   - Databases of 1,000 sessions holding 1k / 10k / 100k / 1M packages in total (bench/generate.ts;
 *     generated once and cached in bench/out/ by size, seed and generator version; the time is
 *     printed), each indexed by each release's own code (bench/relevance.ts; cached too).
 *   - Per scale, four series on fresh copies of the database: this release with relevance on (the
 *     default) and off, the previous release (commit PREVIOUS, a git worktree in bench/out/) on and
 *     off, walking the same sequence of spawns (bench/series.ts): iteration ≥ 2 in a session with
 *     prior consumption, never dry runs, the agents' writes between spawns untimed. Interleaved,
 *     step by step, with `node -e 0` and a bare better-sqlite3 open of the same database.
 *   - Share of calls whose output says the tokenizer was loaded (`counting.tokenizer_loaded`;
 *     "n/a" where outputs do not say), peak RSS of the orchestrator call at each scale.
 *   - The one-off index build at 10k and 100k (bench/indexing.ts), on a copy as BAZINGA leaves a
 *     database: `bazinga-db index-search` in the foreground, `--background` (what the plugin's
 *     SessionStart hook runs) and recording spawns while it builds, a dry run on the never-indexed
 *     database.
 *   - What a hung warm assembler costs the orchestrator's call and the prompt hook on the builder's
 *     run (bench/hung.ts), median and worst beside node -e 0.
 *   - Kept from before: in-process rank + pack + render of 100k candidates, the in-process
 *     pipeline on the 100k database, counting 1 MB of text, redaction of 1 MB adversarial inputs,
 *     fault signatures of 1 MB text shapes (bench/signature.ts),
 *     the first recording call on a never-indexed 100k database (no indexer running) and the whole
 *     index build in process.
 * The working tree's skills/ are copied to bench/out/current/ and built there first, so that the
 * bundles measured stay the same while others edit the tree (and the launcher never silently falls
 * back to tsx half-way). Every timed command is spawned by a small helper process (bench/timer.ts):
 * spawning from this process, which grows to gigabytes at 1M, would add 100–250 ms of fork cost to
 * every call and baseline alike. Prints markdown tables and writes bench/results.json.
 *
 * Usage: npm run bench [-- --scales 1k,10k,100k,1M] [--repeats N] [--seed S]
 *   --repeats N: timed developer → QA → tech lead cycles per series (3 N calls each; default 10).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BENCH_GROUPS, BENCH_HISTORY, BENCH_SESSION, generateBench, parseScale, scaleName, SESSIONS, type BenchDb } from './generate.ts';
import { benchIndexBuild, cliStoredCounts, indexedCopy, projectWith, type IndexBench, type Release } from './relevance.ts';
import { benchBuilderHook, benchHookCost, HOOK_TARGET_MS, hookCostRows, type BuilderHookCost } from './hook.ts';
import { benchReport, REPORT_TARGETS } from './report.ts';
import { benchHungServer, HUNG_TARGET_MS, hungRows, hungWorst } from './hung.ts';
import { benchIndexing, indexingRatios, type IndexingBench } from './indexing.ts';
import { median, RSS_METHOD, runScale, type ScaleResult, type SeriesSpec } from './series.ts';
import { startTimer, stopTimer } from './timer.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(REPO, 'bench', 'out');
const PREVIOUS = '5eb9802';

if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  fs.writeSync(
    1,
    `bench: orchestrator calls of this release and of the previous one (${PREVIOUS}) next to their floors; writes bench/results.json

Usage: npm run bench [-- --scales 1k,10k,100k,1M] [--repeats N] [--seed S]

  --scales    package totals of the databases (default 1k,10k,100k,1M; generated once into bench/out/)
  --repeats   timed developer → QA → tech lead cycles per series (default 10)
  --seed      the generator's seed (default 42)

A quick run: npm run bench -- --scales 1k,10k --repeats 5 (2–3 minutes once the databases exist).
`,
  );
  process.exit(0);
}

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  if (i !== -1) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`${name}=`));
  return eq?.slice(name.length + 1);
}
const SCALES = (option('--scales') ?? '1k,10k,100k,1M').split(',').map(parseScale).sort((a, b) => a - b);
const REPEATS = Math.max(1, Number(option('--repeats') ?? 10));
const SEED = Number(option('--seed') ?? 42);

/** Targets: recording calls × node -e 0 (relevance on and off), and what relevance on may add over off. */
const CALL_TARGETS: Record<number, number> = { 10000: 1.8, 100000: 1.8, 1000000: 1.9 };
const RELEVANCE_ALLOWANCE = 0.1;
/** While the index is built in the background, no spawn slower than this × node -e 0; a dry run on a never-indexed database at most this. */
const SPAWN_DURING_BUILD_TARGET = 2.5;
const DRY_RUN_UNINDEXED_TARGET = 4;
/** The scales whose one-off index build is measured (the build of 1M takes minutes and says nothing new). */
const INDEXING_SCALES = [10000, 100000];
const TOKENIZER_SHARE_TARGET = 0.1;
const RSS_TARGET_MB = 100;

const log = (line: string) => console.log(line);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mod = any;

/** True when every bundle of `skillDir` is at least as new as its inputs (the launcher's own test). */
function bundlesFresh(skillDir: string): boolean {
  try {
    const dist = path.join(skillDir, 'dist');
    const { inputs, entries } = JSON.parse(fs.readFileSync(path.join(dist, 'inputs.json'), 'utf8')) as { inputs: string[]; entries?: Record<string, string> };
    // The bundles the launcher runs: those inputs.json names (an older build: every .mjs file).
    const bundles = entries ? Object.values(entries) : fs.readdirSync(dist).filter((f) => f.endsWith('.mjs'));
    if (bundles.length === 0) return false;
    const oldest = Math.min(...bundles.map((f) => fs.statSync(path.join(dist, f)).mtimeMs));
    return inputs.every((rel) => fs.statSync(path.resolve(dist, rel)).mtimeMs <= oldest);
  } catch {
    return false;
  }
}

/** The orchestrator's command of a release: bin/context-assembler.cjs, or .mjs in releases before it. */
function launcherOf(root: string): string {
  const cjs = path.join(root, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
  return fs.existsSync(cjs) ? cjs : cjs.replace(/\.cjs$/, '.mjs');
}

function build(root: string): void {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed in ${root}: ${r.stderr}`);
  for (const skill of ['context-assembler', 'bazinga-db']) {
    if (!bundlesFresh(path.join(root, 'skills', skill))) throw new Error(`${root}: the ${skill} bundles are not fresh after the build; the launcher would run tsx`);
  }
}

function linkModules(root: string): void {
  const link = path.join(root, 'node_modules');
  if (!fs.existsSync(link)) fs.symlinkSync(path.join(REPO, 'node_modules'), link, 'dir');
}

/** The working tree's release, copied (skills/, build script, package.json) and built in bench/out/current. */
function currentRelease(): Release {
  const root = path.join(OUT, 'current');
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, 'scripts'), { recursive: true });
  fs.cpSync(path.join(REPO, 'skills'), path.join(root, 'skills'), {
    recursive: true,
    filter: (src) => !/[\\/](dist|node_modules)([\\/]|$)/.test(path.relative(REPO, src)),
  });
  fs.copyFileSync(path.join(REPO, 'scripts', 'build.mjs'), path.join(root, 'scripts', 'build.mjs'));
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(root, 'package.json'));
  linkModules(root);
  build(root);
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--', 'skills'], { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean).length;
  return {
    key: 'current',
    label: 'this release',
    root,
    bin: launcherOf(root),
    commit: dirty ? `${head} + ${dirty} changed paths under skills/ (working tree)` : head,
  };
}

/** The previous release: a git worktree of PREVIOUS in bench/out, its bundles built once. */
function previousRelease(): Release {
  const root = path.join(OUT, `prev-${PREVIOUS}`);
  if (!fs.existsSync(path.join(root, 'skills'))) {
    fs.rmSync(root, { recursive: true, force: true });
    execFileSync('git', ['worktree', 'prune'], { cwd: REPO });
    execFileSync('git', ['worktree', 'add', '--detach', root, PREVIOUS], { cwd: REPO, stdio: 'ignore' });
  }
  linkModules(root);
  if (!['context-assembler', 'bazinga-db'].every((s) => bundlesFresh(path.join(root, 'skills', s)))) build(root);
  return {
    key: 'previous',
    label: `previous release (${PREVIOUS})`,
    root,
    bin: launcherOf(root),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim(),
  };
}

const imp = (root: string, rel: string): Promise<Mod> => import(pathToFileURL(path.join(root, rel)).href);
const CA = 'skills/context-assembler/scripts/lib';

function syntheticCandidates(n: number): Mod[] {
  const priorities = ['critical', 'high', 'medium', 'low'];
  const types = ['research', 'failures', 'decisions', 'handoff', 'investigation'];
  const out = [];
  for (let i = 1; i <= n; i++) {
    const day = 1 + (i % 28);
    out.push({
      id: i,
      priority: priorities[i % 4],
      package_type: types[(i * 7) % 5],
      file_path: `bazinga/artifacts/${BENCH_SESSION}/pkg_${i}.md`,
      summary: `Summary of package ${i}: refresh tokens rotate, cart sync retries, flaky checkout test ${i % 97}`,
      group_id: i % 3 === 0 ? null : i % 2 === 0 ? 'G00' : 'G01',
      created_at: `2025-12-${String(day).padStart(2, '0')} ${String(i % 24).padStart(2, '0')}:00:00`,
      consumed: i % 50 === 0,
    });
  }
  return out;
}

/** In-process rank + pack + render of 100k candidates (the release's pure core, tokenizer loaded). */
async function benchCore(release: Release): Promise<number> {
  const { DEFAULT_CONFIG } = await imp(release.root, `${CA}/config.ts`);
  const packages = await imp(release.root, `${CA}/core/packages.ts`);
  // Releases before the tiers packed packages alone (packPackages); since, the block's fit does.
  const block = typeof packages.packPackages === 'function' ? undefined : await imp(release.root, `${CA}/core/block.ts`);
  const packPackages = (input: { selected: unknown[]; zone: string; totalAvailable: number; priorityUsed: null; budget: number; summaryCap: number; redact: (t: string) => string; counter: unknown; countTokens: unknown }) => {
    if (!block) return packages.packPackages(input);
    const prepared = packages.preparePackages(input.selected, input.summaryCap, input.redact);
    const tieredPackages = prepared.packages.map((p: object) => ({ ...p, tier: 2 }));
    const out = block.fitBlock({
      purpose: 'implementation',
      split: [0.6, 0.25, 0.15],
      budget: input.budget,
      zone: input.zone,
      totalAvailable: input.totalAvailable,
      totalCapped: false,
      priorityUsed: null,
      // The block's items a list a kind (since the item-kinds table), and the fields a kind before it.
      items: { package: tieredPackages, reasoning: [], error_pattern: [], strategy: [], memory: [] },
      packages: tieredPackages,
      reasoning: [],
      errorPatterns: [],
      strategies: [],
      excludedBefore: prepared.excluded,
      counter: input.counter,
    });
    return out.items ? { ...out, packages: out.items.package.map((p: { id: number }) => ({ ...p, tokens: out.tokensOf('package', p.id) })) } : out;
  };
  const { rankPackages } = await imp(release.root, `${CA}/core/rank.ts`);
  const { renderMarkdown } = await imp(release.root, `${CA}/core/render.ts`);
  const tokens = await imp(release.root, `${CA}/tokens.ts`);
  tokens.countCl100k('warm up the rank table');
  const candidates = syntheticCandidates(100000);
  const counter = typeof tokens.makeTokenCounter === 'function' ? tokens.makeTokenCounter(1.2) : undefined;
  const countTokens = (text: string) => Math.ceil(tokens.countCl100k(text) * 1.2);
  const nowMs = Date.parse('2025-12-29T00:00:00Z');
  const samples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const start = performance.now();
    const ranked = rankPackages({ candidates, group: 'G00', agent: 'developer', zone: 'Normal', limit: 5, nowMs, config: DEFAULT_CONFIG, explain: false });
    const packed = packPackages({
      selected: ranked.selected,
      zone: 'Normal',
      totalAvailable: ranked.total_available,
      priorityUsed: null,
      budget: 34000,
      summaryCap: 400,
      redact: (t: string) => t,
      counter,
      countTokens,
    });
    renderMarkdown({
      step: 'pack',
      request: { agent: 'developer' },
      zone: 'Normal',
      usage_pct: 0,
      summary_cap: 400,
      effective_limit: 170000,
      remaining_budget: 170000,
      context_budget: 34000,
      limit: 5,
      include_reasoning: false,
      packages: packed.packages,
      total_available: ranked.total_available,
      overflow_count: ranked.total_available - packed.packages.length,
    });
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** The release's pipeline in process on the 100k database (reads, rank, pack, reasoning, render; dry run). */
async function benchPipeline(release: Release, g: BenchDb, dbFile: string, counts: readonly [string, number][]): Promise<number> {
  const { parseFlags, COMMON_FLAGS, requestFromFlags } = await imp(release.root, `${CA}/params.ts`);
  const { makeDeps, loadEnvironment } = await imp(release.root, `${CA}/shell.ts`);
  const { advance, zoneStep } = await imp(release.root, `${CA}/pipeline.ts`);
  const { renderMarkdown } = await imp(release.root, `${CA}/core/render.ts`);
  const root = projectWith(g, dbFile, path.join(OUT, 'run', 'pipeline'), undefined, counts);
  const group = BENCH_GROUPS[0] as string;
  const args = ['--project-root', root, '--session', BENCH_SESSION, '--group', group, '--agent', 'developer', '--iteration', String((BENCH_HISTORY[group] ?? 1) + 1), '--dry-run'];
  const flags = parseFlags(args, COMMON_FLAGS);
  const env = loadEnvironment(flags, { cwd: REPO, env: {}, stderr: () => {} });
  const made = makeDeps(env, 'sonnet', flags, () => {});
  const request = requestFromFlags(flags, () => new Date());
  const samples: number[] = [];
  try {
    for (let i = 0; i < 16; i++) {
      const start = performance.now();
      renderMarkdown(advance(zoneStep(request, env.config), 'consume', made.deps));
      if (i > 0) samples.push(performance.now() - start);
    }
  } finally {
    made.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
  return median(samples);
}

/** Counting 1 MB of random base64 (no whitespace) with the rank table loaded. */
async function benchCount(release: Release): Promise<{ ms: number; tokens: number }> {
  const tokens = await imp(release.root, `${CA}/tokens.ts`);
  tokens.countCl100k('warm up');
  let text = '';
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = 7;
  for (let i = 0; i < 1_000_000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    text += alphabet[x % 64];
  }
  const start = performance.now();
  const n = tokens.countCl100k(text) as number;
  return { ms: performance.now() - start, tokens: n };
}

async function attempt<T>(name: string, fn: () => Promise<T>): Promise<T | { error: string }> {
  try {
    return await fn();
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] as string;
    log(`  ⚠ ${name}: not measured (${message})`);
    return { error: message };
  }
}
const failed = (x: unknown): x is { error: string } => typeof x === 'object' && x !== null && 'error' in x;

interface Target {
  target: string;
  value: number | null;
  limit: number;
  unit: string;
}

async function main(): Promise<number> {
  const wallStart = performance.now();
  startTimer();
  log(`context-assembler benchmark — ${os.cpus().length} cores, Node ${process.version}, scales ${SCALES.map(scaleName).join(' / ')}, ${REPEATS} cycles (${3 * REPEATS} timed calls) per series`);
  fs.mkdirSync(OUT, { recursive: true });
  fs.rmSync(path.join(OUT, 'run'), { recursive: true, force: true });
  const current = currentRelease();
  const previous = previousRelease();
  log(`  load average at start: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (the machine is shared; every ratio is measured interleaved, call by call)`);
  log(`  this release: ${current.commit} (copied and built in ${path.relative(REPO, current.root)})`);
  log(`  previous release: ${previous.commit} (worktree ${path.relative(REPO, previous.root)})`);

  // Databases and their indexes.
  const dbs: {
    g: BenchDb;
    indexed: Record<string, string>;
    index_ms: Record<string, number>;
    index_cached: Record<string, boolean>;
    counts: Record<string, [string, number][]>;
  }[] = [];
  let replayMs = 0;
  for (const n of SCALES) {
    log(`  database ${scaleName(n)} (${SESSIONS} sessions):`);
    const g = generateBench(OUT, n, SEED, (l) => log(`  ${l}`));
    log(
      `    ${g.cached ? `cached (generated ${g.generated_at} in ${secs(g.generation_ms)})` : `generated in ${secs(g.generation_ms)}`}: ` +
        `${g.rows.packages} packages (${g.bench_packages} in the bench session), ${g.rows.reasoning} reasoning entries, ${g.rows.consumers} consumer rows, ` +
        `${g.rows.consumption_scope} consumption rows, ${g.rows.token_counts} cached token counts, ${g.rows.error_patterns} error patterns, ${g.rows.strategies} strategies; ${(fs.statSync(g.dbPath).size / 1e6).toFixed(0)} MB`,
    );
    const entry = {
      g,
      indexed: {} as Record<string, string>,
      index_ms: {} as Record<string, number>,
      index_cached: {} as Record<string, boolean>,
      counts: {} as Record<string, [string, number][]>,
    };
    for (const release of [current, previous]) {
      const ix = await indexedCopy(release, g);
      entry.indexed[release.key] = ix.file;
      entry.index_ms[release.key] = ix.ms;
      entry.index_cached[release.key] = ix.cached;
      const counts = await cliStoredCounts(release, g);
      entry.counts[release.key] = counts.rows;
      if (!counts.cached) replayMs += counts.ms;
      log(
        `    by ${release.label}: index ${ix.cached ? `cached (built in ${secs(ix.ms)})` : `built in ${secs(ix.ms)}`}; ` +
          `what its CLI stores beside the bench session's ${g.bench_packages * 3} entries: ${counts.rows.length} token counts (${counts.cached ? 'cached, ' : ''}${secs(counts.ms)})`,
      );
    }
    // Indexes built by older versions of either release are not needed any more.
    const keep = new Set(Object.values(entry.indexed).map((f) => path.basename(f)));
    for (const f of fs.readdirSync(g.root)) {
      const m = /^(indexed-[0-9a-f]+\.db)/.exec(f);
      if (m && !keep.has(m[1] as string)) fs.rmSync(path.join(g.root, f), { force: true });
    }
    dbs.push(entry);
  }

  // The realistic series.
  const scales: ScaleResult[] = [];
  for (const { g, indexed, counts } of dbs) {
    log(`  series at ${scaleName(g.packages)}:`);
    // This release as the plugin runs it (the warm assembler the SessionStart hook starts), and
    // without it (a skills-only install, or calls before the hook): relevance on and off each.
    const specs: SeriesSpec[] = [
      ...(['on', 'off'] as const).map((relevance) => ({ release: current, relevance, warm: true })),
      ...(['on', 'off'] as const).map((relevance) => ({ release: current, relevance, warm: false })),
      ...(['on', 'off'] as const).map((relevance) => ({ release: previous, relevance, warm: false })),
    ].map(({ release, relevance, warm }) => ({
      key: `${release.key}-${relevance}${release.key === 'current' && !warm ? '-cold' : ''}`,
      label: `${release.key === 'current' ? `this release${warm ? '' : ', no warm assembler'}` : `previous (${PREVIOUS})`}, relevance ${relevance}`,
      release,
      relevance,
      warm,
      dbFile: indexed[release.key] as string,
      counts: counts[release.key] as [string, number][],
    }));
    const result = await runScale(g, specs, { outDir: path.join(OUT, 'run'), repoRoot: REPO, cycles: REPEATS, log });
    scales.push(result);
    log(
      `    ${secs(result.wall_ms)}, load ${(os.loadavg()[0] as number).toFixed(1)} (agents' writes ${secs(result.writes_ms)}): node -e 0 ${result.node_median.toFixed(1)} ms, bare better-sqlite3 ${result.bare_median.toFixed(1)} ms; ` +
        result.series.map((s) => `${s.key} ${s.median_ms.toFixed(1)} ms`).join(', ') +
        result.floors.map((f) => `, floor of current-${f.relevance} ${f.median_ms.toFixed(1)} ms`).join(''),
    );
  }

  /** The median and worst call of this release's warm series (relevance on) at `scale`, × node -e 0: what a spawn costs with no build running. */
  const quietWorst = (scale: number): { median: number; worst: number } | undefined => {
    const s = scales.find((x) => x.scale === scale);
    const warm = s?.series.find((r) => r.key === 'current-on');
    if (!s || !warm || warm.calls.length === 0) return undefined;
    return { median: warm.median_ms / s.node_median, worst: Math.max(...warm.calls.map((c) => c.ms)) / s.node_median };
  };

  // The parts kept from before.
  log('  in-process, counting, redaction, index build:');
  const core = await attempt('in-process rank+pack+render', () => benchCore(current));
  const at100k = dbs.find((d) => d.g.packages === 100000);
  const pipeline = at100k
    ? await attempt('in-process pipeline', () => benchPipeline(current, at100k.g, at100k.indexed.current as string, at100k.counts.current as [string, number][])) : { error: 'no 100k database in --scales' };
  const count = await attempt('counting 1 MB', () => benchCount(current));
  const hookCost = await attempt('prompt hook cost', () => benchHookCost());
  // A warm assembler that hangs: what it costs the orchestrator's call and the prompt hook (the test fixture: the wait, not the assembly).
  const hungCost = await attempt('a hung warm assembler', () => benchHungServer(current.bin, Math.max(5, REPEATS)));
  const reportCost = await attempt('report of 1,000 assemblies', () => benchReport(current, REPO));
  // Today's BAZINGA spawn: the prompt hook on the builder's run, warm and in its own process.
  const builderHook: (BuilderHookCost | { error: string })[] = [];
  for (const { g, indexed } of dbs) {
    builderHook.push(await attempt(`prompt hook on the builder's run at ${scaleName(g.packages)}`, () => benchBuilderHook(current, g, indexed.current as string, REPEATS, path.join(OUT, 'run'))));
  }
  const redaction = await attempt('redaction', async () => {
    const { benchRedaction } = (await import('./redaction.ts')) as Mod;
    return benchRedaction(Math.max(3, REPEATS)) as { input: string; ms_1mb: number; ratio: number }[];
  });
  const signatures = await attempt('fault signatures', async () => {
    const { benchSignature } = (await import('./signature.ts')) as Mod;
    return benchSignature(Math.max(3, REPEATS)) as { shape: string; ms_1mb: number; key_ms_1mb: number; ratio: number }[];
  });
  const indexing: (IndexingBench | { error: string })[] = [];
  for (const { g } of dbs.filter((d) => INDEXING_SCALES.includes(d.g.packages))) {
    indexing.push(await attempt(`one-off index build at ${scaleName(g.packages)}`, () => benchIndexing(current, g, path.join(OUT, 'run', `indexing-${scaleName(g.packages)}`), log)));
  }
  const indexBuild: IndexBench | { error: string } = at100k
    ? await attempt('index build', () => benchIndexBuild(current, at100k.g, path.join(OUT, 'run', 'index-100k')))
    : { error: 'no 100k database in --scales' };

  // Tables.
  const fmt = (x: number | null | undefined, d = 2) => (x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(d));
  log(`\n### Databases (${SESSIONS} sessions each; seed ${SEED})\n`);
  log('| scale | packages (bench session) | reasoning | consumers | consumption rows | token counts | error patterns | strategies | size | generation | index (this / previous) |');
  log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|');
  for (const { g, index_ms, index_cached } of dbs) {
    log(
      `| ${scaleName(g.packages)} | ${g.rows.packages} (${g.bench_packages}) | ${g.rows.reasoning} | ${g.rows.consumers} | ${g.rows.consumption_scope} | ${g.rows.token_counts} | ${g.rows.error_patterns} | ${g.rows.strategies} | ` +
        `${(fs.statSync(g.dbPath).size / 1e6).toFixed(0)} MB | ${secs(g.generation_ms)}${g.cached ? ' (cached)' : ''} | ` +
        `${secs(index_ms.current as number)}${index_cached.current ? ' (cached)' : ''} / ${secs(index_ms.previous as number)}${index_cached.previous ? ' (cached)' : ''} |`,
    );
  }

  log(`\n### Realistic orchestrator calls (iteration ≥ 2, prior consumption, recorded; ${3 * REPEATS} per series; peak RSS by ${RSS_METHOD})\n`);
  log('| scale | calls | median ms | × node -e 0 | × bare better-sqlite3 | × previous release | tokenizer share | peak RSS |');
  log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const s of scales) {
    for (const r of s.series) {
      const prev = s.series.find((x) => x.release === 'previous' && x.relevance === r.relevance);
      const share = r.tokenizer.share === null ? 'n/a' : `${(100 * r.tokenizer.share).toFixed(0)} % (${r.tokenizer.loaded}/${r.tokenizer.known})`;
      const flags = r.fallbacks ? ` ⚠ ${r.fallbacks} fallbacks` : '';
      log(
        `| ${s.name} · ${r.label}${flags} | ${r.calls.length} | ${r.median_ms.toFixed(1)} | ${fmt(r.median_ms / s.node_median)} | ${fmt(r.median_ms / s.bare_median)} | ` +
          `${r.release === 'previous' ? '—' : fmt(prev ? r.median_ms / prev.median_ms : null)} | ${share} | ${r.peak_rss_kb === null ? 'n/a' : `${(r.peak_rss_kb / 1024).toFixed(0)} MB`} |`,
      );
    }
    log(`| ${s.name} · node -e 0 | ${s.node_ms.length} | ${s.node_median.toFixed(1)} | 1.00 | ${fmt(s.node_median / s.bare_median)} | | | |`);
    log(`| ${s.name} · bare better-sqlite3 open | ${s.bare_ms.length} | ${s.bare_median.toFixed(1)} | ${fmt(s.bare_median / s.node_median)} | 1.00 | | | |`);
    for (const f of s.floors) {
      log(`| ${s.name} · floor of this release, relevance ${f.relevance} (its ${f.statements} statements and output, bare process) | ${f.ms.length} | ${f.median_ms.toFixed(1)} | ${fmt(f.median_ms / s.node_median)} | ${fmt(f.median_ms / s.bare_median)} | | | |`);
    }
  }
  log('\nThe floor (bench/floor.ts) replays the statements one call of the series ran, in order with their parameters, in a Node process that loads only better-sqlite3, and prints that call\'s output as a constant: what a call costs without any work of this product (no module, ranking, redaction or rendering).');
  for (const s of scales) {
    for (const r of s.series.filter((x) => x.warnings > 0)) log(`  (${s.name} · ${r.label}: ${r.warnings} warnings on stderr, first: ${r.first_warning})`);
  }

  log('\n### Other measurements\n');
  log('| measurement | value |\n|---|---:|');
  log(`| in-process rank + pack + render, 100k candidates | ${failed(core) ? `n/a (${core.error})` : `${core.toFixed(1)} ms`} |`);
  log(`| in-process pipeline on the 100k database (reads, rank, pack, reasoning, render; dry run) | ${failed(pipeline) ? `n/a (${pipeline.error})` : `${pipeline.toFixed(1)} ms`} |`);
  log(`| count 1 MB whitespace-free | ${failed(count) ? `n/a (${count.error})` : `${count.ms.toFixed(1)} ms (${count.tokens} tokens)`} |`);
  if (!failed(indexBuild)) {
    log(`| index of the 100k database (${indexBuild.rows.packages} packages, ${indexBuild.rows.reasoning} reasoning entries) | ${indexBuild.index_mb.toFixed(1)} MB |`);
    log(`| whole index build of the 100k database, no budget | ${secs(indexBuild.full_build_ms)} |`);
    log(`| first orchestrator call on the 100k database never indexed (rows left for later calls: ${indexBuild.first_read_backlog}) | ${secs(indexBuild.first_read_ms)} |`);
  }
  const indexed = indexing.filter((b): b is IndexingBench => !failed(b));
  if (indexed.length > 0) {
    log('\n### The one-off index build (a database as BAZINGA leaves it: no index, no schema step done)\n');
    log('| packages | `index-search` in the foreground | transactions | `index-search --background` returns in | recording spawns during the background build: median / worst × node -e 0 (warned) | the same release\'s warm series with no build, relevance on: median / worst | dry run on the never-indexed database × node -e 0 |');
    log('|---|---:|---:|---:|---:|---:|---:|');
    for (const b of indexed) {
      const x = indexingRatios(b);
      const warned = b.spawns_during_build.filter((s) => s.warned).length;
      const quiet = quietWorst(b.scale);
      log(
        `| ${scaleName(b.scale)} | ${secs(b.build_ms)} | ${b.transactions} | ${b.background_start_ms.toFixed(0)} ms | ${fmt(x.medianSpawnX)} / ${fmt(x.worstSpawnX)} (${b.spawns_during_build.length} spawns, ${b.spawns_during_build.filter((s) => s.served).length} answered by the warm assembler, ${warned} said the build was running${b.build_outlasted_spawns ? '' : '; the build ended before the last'}) | ${quiet ? `${fmt(quiet.median)} / ${fmt(quiet.worst)}` : 'n/a'} | ${fmt(x.dryX)} |`,
      );
    }
  }
  if (!failed(redaction)) {
    const { printRedactionTable } = (await import('./redaction.ts')) as Mod;
    printRedactionTable(redaction);
  }
  if (!failed(signatures)) {
    const { printSignatureTable } = (await import('./signature.ts')) as Mod;
    printSignatureTable(signatures);
  }
  const builderHookDone = builderHook.filter((b): b is BuilderHookCost => !failed(b));
  if (builderHookDone.length > 0) {
    log("\n### Today's BAZINGA spawn: the plugin's prompt hook on the prompt builder's run\n");
    log('Developer → QA → tech lead prompts of one group, each round a new iteration (the hook assembles and records); interleaved with node -e 0.\n');
    log('| packages | rounds | node -e 0 | warm assembler | own process | blocks placed | answered warm |\n|---|---:|---:|---:|---:|---:|---:|');
    for (const b of builderHookDone) {
      const x = (ms: number) => `${ms.toFixed(1)} ms (${(ms / b.node_median_ms).toFixed(2)} ×)`;
      log(`| ${b.scale} | ${b.rounds} × 3 | ${b.node_median_ms.toFixed(1)} ms | ${x(b.warm_median_ms)} | ${x(b.own_median_ms)} | ${b.placed} of ${b.rounds * 6} | ${b.served} of ${b.rounds * 3} |`);
    }
  }
  if (!failed(reportCost)) {
    log(`\n### The report of a session of ${reportCost.assemblies} assemblies (context-assembler report --format html, ${reportCost.runs} runs)\n`);
    log(`| command | median | × node -e 0 | file |\n|---|---:|---:|---:|`);
    log(`| report --format html | ${reportCost.median_ms.toFixed(0)} ms | ${(reportCost.median_ms / reportCost.node_median_ms).toFixed(2)} | ${(reportCost.bytes / 1024 / 1024).toFixed(2)} MB |`);
  }
  if (!failed(hungCost)) {
    log(`\n### A hung warm assembler's cost to the orchestrator's call and to the prompt hook (${hungCost.runs} interleaved runs, a fresh server each)\n`);
    for (const row of hungRows(hungCost)) log(row);
  }
  if (!failed(hookCost)) {
    log(`\n### Prompt hook on a Bash call that is not the prompt builder (${hookCost.rounds} interleaved rounds)\n`);
    log('| command | median | × node -e 0 |\n|---|---:|---:|');
    for (const row of hookCostRows(hookCost)) log(row);
  }

  // Targets.
  const targets: Target[] = [];
  for (const s of scales) {
    const limit = CALL_TARGETS[s.scale];
    if (limit === undefined) continue;
    // The plugin's flow (the warm assembler answering); the calls without it are in the table above.
    const warm = (x: (typeof s.series)[number]) => x.release === 'current' && !x.key.endsWith('-cold');
    for (const r of s.series.filter(warm)) {
      const floor = s.floors.find((f) => f.key === `${r.key}-cold`);
      const floorNote = floor ? ` (the floor of a call in its own process: ${fmt(floor.median_ms / s.node_median)} ×)` : '';
      targets.push({ target: `recording call at ${s.name}, relevance ${r.relevance}, ≤ ${limit.toFixed(1)} × node -e 0${floorNote}`, value: r.fallbacks ? null : r.median_ms / s.node_median, limit, unit: '×' });
    }
    const on = s.series.find((x) => warm(x) && x.relevance === 'on');
    const off = s.series.find((x) => warm(x) && x.relevance === 'off');
    if (on && off) {
      targets.push({ target: `relevance on adds ≤ ${RELEVANCE_ALLOWANCE} × node -e 0 at ${s.name}`, value: (on.median_ms - off.median_ms) / s.node_median, limit: RELEVANCE_ALLOWANCE, unit: '×' });
    }
  }
  for (const b of indexed) {
    const x = indexingRatios(b);
    const quiet = quietWorst(b.scale);
    targets.push({
      target: `no recording spawn slower than ${SPAWN_DURING_BUILD_TARGET} × node -e 0 while the index of ${scaleName(b.scale)} is built in the background (the worst of the warm series with no build: ${quiet ? `${fmt(quiet.worst)} ×` : 'n/a'})`,
      value: x.worstSpawnX,
      limit: SPAWN_DURING_BUILD_TARGET,
      unit: '×',
    });
    targets.push({ target: `dry run on a never-indexed ${scaleName(b.scale)} database ≤ ${DRY_RUN_UNINDEXED_TARGET} × node -e 0`, value: x.dryX, limit: DRY_RUN_UNINDEXED_TARGET, unit: '×' });
  }
  const currentSeries = scales.flatMap((s) => s.series.filter((r) => r.release === 'current'));
  const known = currentSeries.reduce((a, r) => a + r.tokenizer.known, 0);
  const loaded = currentSeries.reduce((a, r) => a + r.tokenizer.loaded, 0);
  const calls = currentSeries.reduce((a, r) => a + r.calls.length, 0);
  targets.push({
    target: `tokenizer loaded in < 10 % of realistic calls (${known === 0 ? `no output says; n/a over ${calls} calls` : `${loaded} of ${known} known, ${calls} calls`})`,
    value: known === 0 ? null : (100 * loaded) / known,
    limit: 100 * TOKENIZER_SHARE_TARGET,
    unit: '%',
  });
  const rssValues = currentSeries.map((r) => r.peak_rss_kb).filter((k): k is number => k !== null);
  targets.push({ target: `peak RSS of the orchestrator call < ${RSS_TARGET_MB} MB (all scales, with and without the warm assembler)`, value: rssValues.length ? Math.max(...rssValues) / 1024 : null, limit: RSS_TARGET_MB, unit: 'MB' });
  const serverRss = scales.map((s) => s.server_peak_rss_kb).filter((k): k is number => k !== null && k > 0);
  targets.push({ target: `peak RSS of the warm assembler < ${RSS_TARGET_MB} MB (all scales)`, value: serverRss.length ? Math.max(...serverRss) / 1024 : null, limit: RSS_TARGET_MB, unit: 'MB' });
  targets.push({ target: 'in-process pipeline at 100k packages < 50 ms', value: failed(pipeline) ? null : pipeline, limit: 50, unit: 'ms' });
  targets.push({ target: 'in-process rank+pack+render of 100k candidates < 50 ms', value: failed(core) ? null : core, limit: 50, unit: 'ms' });
  targets.push({ target: '1 MB whitespace-free text counted < 1 s', value: failed(count) ? null : count.ms / 1000, limit: 1, unit: 's' });
  if (!failed(redaction)) {
    const worst = redaction.reduce((a, b) => (b.ms_1mb > a.ms_1mb ? b : a));
    targets.push({ target: `redaction of 1 MB adversarial text (slowest: ${worst.input}) < 200 ms`, value: worst.ms_1mb, limit: 200, unit: 'ms' });
    targets.push({ target: 'redaction time 1 MB / 100 KB, worst input ≤ 15 (linear ≈ 10)', value: Math.max(...redaction.map((r) => r.ratio)), limit: 15, unit: '×' });
  }
  if (!failed(signatures)) {
    const slowest = (r: { ms_1mb: number; key_ms_1mb: number }) => Math.max(r.ms_1mb, r.key_ms_1mb);
    const worst = signatures.reduce((a, b) => (slowest(b) > slowest(a) ? b : a));
    targets.push({ target: `fault signature of 1 MB text, as a tool output or a stored pattern (slowest: ${worst.shape}) < 200 ms`, value: slowest(worst), limit: 200, unit: 'ms' });
    targets.push({ target: 'fault signature time 1 MB / 100 KB, worst shape ≤ 15 (linear ≈ 10)', value: Math.max(...signatures.map((r) => r.ratio)), limit: 15, unit: '×' });
  }
  targets.push({ target: `report of ${failed(reportCost) ? 1000 : reportCost.assemblies} assemblies written as HTML < 1 s (the command, Node's start included)`, value: failed(reportCost) ? null : reportCost.median_ms / 1000, limit: REPORT_TARGETS.ms / 1000, unit: 's' });
  targets.push({ target: 'that HTML file < 2 MB', value: failed(reportCost) ? null : reportCost.bytes / 1024 / 1024, limit: REPORT_TARGETS.bytes / 1024 / 1024, unit: 'MB' });
  targets.push({ target: `the block within ${HUNG_TARGET_MS / 1000} s of a call whose warm assembler hangs (worst)`, value: failed(hungCost) ? null : hungWorst(hungCost, 'call') / 1000, limit: HUNG_TARGET_MS / 1000, unit: 's' });
  targets.push({ target: `the block in the prompt within ${HUNG_TARGET_MS / 1000} s of a prompt hook whose warm assembler hangs (worst)`, value: failed(hungCost) ? null : hungWorst(hungCost, 'hook') / 1000, limit: HUNG_TARGET_MS / 1000, unit: 's' });
  targets.push({ target: `prompt hook on a non-builder Bash call ≤ ${HOOK_TARGET_MS} ms (median)`, value: failed(hookCost) ? null : hookCost.guarded_median_ms, limit: HOOK_TARGET_MS, unit: 'ms' });
  if (!failed(indexBuild)) targets.push({ target: 'first read of a 100k database never indexed < 5 s', value: indexBuild.first_read_ms / 1000, limit: 5, unit: 's' });

  log('\n### Targets (benchmarks, not timed tests)\n');
  log('| target | measured | result |\n|---|---:|---|');
  const verdict = (t: Target) => (t.value === null ? 'n/a' : t.value < t.limit || (t.unit === '×' && t.value <= t.limit) ? 'PASS' : 'FAIL');
  for (const t of targets) log(`| ${t.target} | ${t.value === null ? 'n/a' : `${t.value.toFixed(2)} ${t.unit}`} | ${verdict(t)} |`);
  const allPass = targets.every((t) => verdict(t) === 'PASS');
  const wallMs = performance.now() - wallStart;
  log(`\nload average at the end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const generationMs = dbs.filter((d) => !d.g.cached).reduce((a, d) => a + d.g.generation_ms, 0);
  const indexMs = dbs.reduce((a, d) => a + Object.entries(d.index_ms).filter(([k]) => !d.index_cached[k]).reduce((x, [, v]) => x + v, 0), 0);

  const results = {
    date: new Date().toISOString(),
    machine: { cores: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}`, load_avg: os.loadavg() },
    options: { scales: SCALES, repeats: REPEATS, calls_per_series: 3 * REPEATS, seed: SEED },
    releases: { current: current.commit, previous: previous.commit },
    rss_method: RSS_METHOD,
    databases: dbs.map(({ g, index_ms, index_cached }) => ({
      scale: g.packages,
      sessions: SESSIONS,
      rows: g.rows,
      bench_packages: g.bench_packages,
      size_mb: Math.round(fs.statSync(g.dbPath).size / 1e6),
      generation_ms: g.generation_ms,
      generated_at: g.generated_at,
      cached: g.cached,
      index_ms,
      index_cached,
    })),
    series: scales.map((s) => ({
      scale: s.scale,
      node_median_ms: Number(s.node_median.toFixed(2)),
      bare_sqlite_median_ms: Number(s.bare_median.toFixed(2)),
      node_ms: s.node_ms.map((x) => Number(x.toFixed(1))),
      bare_ms: s.bare_ms.map((x) => Number(x.toFixed(1))),
      floors: s.floors.map((f) => ({ ...f, median_ms: Number(f.median_ms.toFixed(2)), x_node: Number((f.median_ms / s.node_median).toFixed(3)), ms: f.ms.map((x) => Number(x.toFixed(1))) })),
      server_peak_rss_kb: s.server_peak_rss_kb,
      wall_ms: s.wall_ms,
      copy_ms: s.copy_ms,
      writes_ms: s.writes_ms,
      series: s.series.map((r) => ({
        key: r.key,
        label: r.label,
        median_ms: Number(r.median_ms.toFixed(2)),
        x_node: Number((r.median_ms / s.node_median).toFixed(3)),
        x_bare_sqlite: Number((r.median_ms / s.bare_median).toFixed(3)),
        tokenizer: r.tokenizer,
        peak_rss_kb: r.peak_rss_kb,
        fallbacks: r.fallbacks,
        warnings: r.warnings,
        first_warning: r.first_warning,
        packages_handed_out: r.packages_handed_out,
        // Call by call, in sequence order (group/agent/iteration as in bench/series.ts spawnPlan).
        calls_ms: r.calls.map((c) => Number(c.ms.toFixed(1))),
        calls_tokenizer_loaded: r.calls.map((c) => c.tokenizer_loaded),
        calls_packages: r.calls.map((c) => c.packages),
        calls_spawn: r.calls.map((c) => `${c.group}/${c.agent}/${c.iteration}`),
      })),
    })),
    in_process: { core_100k_ms: failed(core) ? null : core, pipeline_100k_ms: failed(pipeline) ? null : pipeline },
    count_1mb: failed(count) ? null : count,
    index_build_100k: failed(indexBuild) ? null : indexBuild,
    one_off_index: indexed,
    redaction_1mb: failed(redaction) ? null : redaction,
    signature_1mb: failed(signatures) ? null : signatures,
    prompt_hook_cost: failed(hookCost) ? null : hookCost,
    hung_server: failed(hungCost) ? null : hungCost,
    prompt_hook_on_builder_run: builderHookDone,
    report_1000: failed(reportCost) ? null : reportCost,
    targets: targets.map((t) => ({ ...t, value: t.value === null ? null : Number(t.value.toFixed(3)), result: verdict(t) })),
    all_pass: allPass,
    wall_ms: Math.round(wallMs),
    generation_ms_this_run: generationMs,
    index_build_ms_this_run: indexMs,
    cli_replay_ms_this_run: replayMs,
  };
  // Arrays of plain values on one line each (the per-call series would otherwise take thousands of lines).
  const json = JSON.stringify(results, null, 2).replace(/\[\n\s*((?:[^\[\]{}\n]*\n\s*)*?[^\[\]{}\n]*)\n\s*\]/g, (_, body: string) => `[${body.split(/,\n\s*/).join(', ')}]`);
  fs.writeFileSync(path.join(REPO, 'bench', 'results.json'), json + '\n');
  log(
    `\nwrote bench/results.json — ${allPass ? 'every target met' : 'some target missed or not measured'}; wall time ${secs(wallMs)}` +
      ` (of which database generation ${secs(generationMs)}, index builds ${secs(indexMs)}, CLI replays of the bench session ${secs(replayMs)}: all cached for later runs)`,
  );
  return allPass ? 0 : 1;
}

main().then(
  (code) => {
    stopTimer();
    process.exitCode = code;
  },
  (err) => {
    stopTimer();
    console.error(err);
    process.exitCode = 2;
  },
);
