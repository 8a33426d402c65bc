/**
 * npm run bench: generates (once, cached in bench/out/) seeded BAZINGA databases at 1k, 10k and
 * 100k packages, then measures in ONE run, with alternating repeats and medians:
 *   - bare `node -e 0`, the floor of any Node command;
 *   - the orchestrator's cold command (the `context-assembler` bin) at each scale;
 *   - `tsx assemble.ts` cold, and the five-step tsx pipe, at 10k;
 *   - in-process ranking + packing + rendering over 100k candidates, and the in-process pipeline
 *     on the 100k database;
 *   - peak RSS of the cold command; counting 1 MB of whitespace-free text.
 * Prints a table (targets of spec/assembler.md §8 and the issue) and writes bench/results.json.
 * Cold commands run with --dry-run so that every repeat sees the same database state.
 * Relevance (bench/relevance.ts): realistic recorded calls with relevance off, on with the implicit
 * task and on with --task; the first read of a database never indexed; the index size.
 *
 * Usage: npm run bench [-- --repeats N]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import type { RankedPackage } from '../skills/context-assembler/scripts/lib/contract.ts';
import { packPackages } from '../skills/context-assembler/scripts/lib/core/packages.ts';
import { rankPackages, type Candidate } from '../skills/context-assembler/scripts/lib/core/rank.ts';
import { renderMarkdown } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { advance, zoneStep } from '../skills/context-assembler/scripts/lib/pipeline.ts';
import { makeDeps, loadEnvironment } from '../skills/context-assembler/scripts/lib/shell.ts';
import { parseFlags, COMMON_FLAGS, requestFromFlags } from '../skills/context-assembler/scripts/lib/params.ts';
import { countCl100k } from '../skills/context-assembler/scripts/lib/tokens.ts';
import { BENCH_SESSION, generate } from './generate.ts';
import { benchIndexBuild, benchRelevanceCalls, indexedCopy } from './relevance.ts';
import { benchRedaction, printRedactionTable } from './redaction.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(REPO, 'bench', 'out');
const BIN = path.join(REPO, 'skills', 'context-assembler', 'bin', 'context-assembler.mjs');
const SCRIPTS = path.join(REPO, 'skills', 'context-assembler', 'scripts');
const TSX = path.join(REPO, 'node_modules', '.bin', 'tsx');
const SCALES = [1000, 10000, 100000] as const;

const repeatsArg = process.argv.indexOf('--repeats');
const REPEATS = repeatsArg === -1 ? 9 : Math.max(3, Number(process.argv[repeatsArg + 1]));

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

function requestArgs(root: string): string[] {
  return ['--project-root', root, '--session', BENCH_SESSION, '--group', 'G00', '--agent', 'developer', '--dry-run'];
}

interface Timed {
  name: string;
  run: () => void;
  samples: number[];
}

function command(name: string, file: string, args: string[], shell = false): Timed {
  return {
    name,
    samples: [],
    run: () => {
      const r = shell
        ? spawnSync('sh', ['-c', args.join(' ')], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
        : spawnSync(file, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
      if (r.status !== 0 || r.stderr.includes('⚠')) throw new Error(`${name} failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
    },
  };
}

function timeOnce(t: Timed): void {
  const start = process.hrtime.bigint();
  t.run();
  t.samples.push(Number(process.hrtime.bigint() - start) / 1e6);
}

/** Peak RSS (KB) of one run of the cold command, from GNU time when the machine has it. */
function peakRssKb(args: string[]): number | null {
  if (!fs.existsSync('/usr/bin/time')) return null;
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, BIN, ...args], { encoding: 'utf8' });
  const kb = Number(r.stderr.trim().split('\n').pop());
  return Number.isFinite(kb) ? kb : null;
}

function syntheticCandidates(n: number): Candidate[] {
  const priorities = ['critical', 'high', 'medium', 'low'];
  const types = ['research', 'failures', 'decisions', 'handoff', 'investigation'];
  const out: Candidate[] = [];
  for (let i = 1; i <= n; i++) {
    const day = 1 + (i % 28);
    out.push({
      id: i,
      priority: priorities[i % 4] as string,
      package_type: types[(i * 7) % 5] as string,
      file_path: `bazinga/artifacts/${BENCH_SESSION}/pkg_${i}.md`,
      summary: `Summary of package ${i}: refresh tokens rotate, cart sync retries, flaky checkout test ${i % 97}`,
      group_id: i % 3 === 0 ? null : i % 2 === 0 ? 'G00' : 'G01',
      created_at: `2025-12-${String(day).padStart(2, '0')} ${String(i % 24).padStart(2, '0')}:00:00`,
      consumed: i % 50 === 0,
    });
  }
  return out;
}

function main(): number {
  console.log(`context-assembler benchmark — ${os.cpus().length} cores, Node ${process.version}, ${REPEATS} repeats`);
  // The launcher runs the bundles only when no source is newer: build them so that the bench
  // measures what an installed copy runs, not the tsx fallback.
  const build = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`build failed: ${build.stderr}`);
  const generated = SCALES.map((n) => {
    const started = performance.now();
    const g = generate(OUT, n);
    const indexed = indexedCopy(g);
    console.log(`  database ${n} packages: ${g.dbPath}, indexed copy ${indexed} (${Math.round(performance.now() - started)} ms)`);
    return g;
  });
  // The cold commands run on projects holding the indexed copies (the first read of an unindexed
  // database is measured on its own below).
  const dbs = generated.map((g) => {
    const root = path.join(OUT, `cold-${g.packages}`);
    fs.rmSync(root, { recursive: true, force: true });
    fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
    fs.mkdirSync(path.join(root, 'bazinga', 'artifacts'), { recursive: true });
    fs.copyFileSync(indexedCopy(g), path.join(root, 'bazinga', 'bazinga.db'));
    return { ...g, root, dbPath: path.join(root, 'bazinga', 'bazinga.db') };
  });
  const byScale = new Map(dbs.map((g) => [g.packages, g]));
  const root10k = (byScale.get(10000) as { root: string }).root;

  const nodeFloor = command('node -e 0', process.execPath, ['-e', '0']);
  const cold = dbs.map((g) => command(`context-assembler (bin), ${g.packages / 1000}k`, process.execPath, [BIN, ...requestArgs(g.root)]));
  const tsxAssemble = command('tsx assemble.ts, 10k', TSX, [path.join(SCRIPTS, 'assemble.ts'), ...requestArgs(root10k)]);
  const p = `--project-root ${root10k}`;
  const pipe = command(
    'five-step tsx pipe, 10k',
    'sh',
    [
      `${TSX} ${SCRIPTS}/zone.ts ${requestArgs(root10k).join(' ')}`,
      `| ${TSX} ${SCRIPTS}/rank.ts ${p} | ${TSX} ${SCRIPTS}/pack.ts ${p}`,
      `| ${TSX} ${SCRIPTS}/reasoning.ts ${p} | ${TSX} ${SCRIPTS}/consume.ts ${p} --dry-run > /dev/null`,
    ],
    true,
  );
  const all = [nodeFloor, ...cold, tsxAssemble, pipe];
  // Warm-up: fills the token-count cache of each database (a run that sees new text counts it once).
  for (const t of all) t.run();
  for (let round = 0; round < REPEATS; round++) {
    const order = round % 2 === 0 ? all : [...all].reverse();
    for (const t of order) timeOnce(t);
  }

  // In-process: the pure core over 100k candidates (tokenizer loaded beforehand).
  countCl100k('warm up the rank table');
  const candidates = syntheticCandidates(100000);
  const count = (text: string) => Math.ceil(countCl100k(text) * 1.2);
  const nowMs = Date.parse('2025-12-29T00:00:00Z');
  const coreSamples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const start = performance.now();
    const ranked = rankPackages({ candidates, group: 'G00', agent: 'developer', zone: 'Normal', limit: 5, nowMs, config: DEFAULT_CONFIG, explain: false });
    const packed = packPackages({
      selected: ranked.selected as RankedPackage[],
      zone: 'Normal',
      totalAvailable: ranked.total_available,
      priorityUsed: null,
      budget: 34000,
      summaryCap: 400,
      redact: (t) => t,
      countTokens: count,
    });
    renderMarkdown({
      step: 'pack',
      request: { agent: 'developer' } as never,
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
    coreSamples.push(performance.now() - start);
  }

  // In-process pipeline on the 100k database (database reads included, no process start).
  const root100k = (byScale.get(100000) as { root: string }).root;
  const flags = parseFlags(requestArgs(root100k), COMMON_FLAGS);
  const env = loadEnvironment(flags, { cwd: REPO, env: {}, stderr: () => {} });
  const made = makeDeps(env, 'sonnet', flags, () => {});
  const request = requestFromFlags(flags, () => new Date());
  const pipelineSamples: number[] = [];
  for (let i = 0; i < 16; i++) {
    const start = performance.now();
    renderMarkdown(advance(zoneStep(request, env.config), 'consume', made.deps));
    if (i > 0) pipelineSamples.push(performance.now() - start);
  }
  made.close();

  // 1 MB without whitespace (random base64), counted after the rank table is loaded.
  let text = '';
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let x = 7;
  for (let i = 0; i < 1_000_000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    text += alphabet[x % 64];
  }
  const tokStart = performance.now();
  const tokens = countCl100k(text);
  const tokenMs = performance.now() - tokStart;

  // Redaction of 1 MB adversarial inputs: time and the 1 MB / 100 KB ratio (linear ≈ 10).
  const redaction = benchRedaction(REPEATS);
  const worstRedaction = redaction.reduce((a, b) => (b.ms_1mb > a.ms_1mb ? b : a));
  const worstRatio = Math.max(...redaction.map((r) => r.ratio));

  const rss = SCALES.map((n) => peakRssKb(requestArgs((byScale.get(n) as { root: string }).root)));

  // Relevance: realistic calls with it off / implicit / explicit, and the index build.
  const relevanceCalls = generated.filter((g) => g.packages >= 10000).map((g) => benchRelevanceCalls(g, BIN, path.join(OUT, `relevance-${g.packages}`), REPEATS + 3));
  const indexBuild = benchIndexBuild(generated.find((g) => g.packages === 100000) as (typeof generated)[number], BIN, path.join(OUT, 'index-100000'));

  const floor = median(nodeFloor.samples);
  const coldMs = cold.map((t) => median(t.samples));
  const [c1k, c10k, c100k] = coldMs as [number, number, number];
  const coreMs = median(coreSamples);
  const pipelineMs = median(pipelineSamples);
  const maxRssMb = Math.max(...rss.map((k) => (k ?? 0) / 1024));
  const targets = [
    { target: 'cold command at 10k ≤ 3 × node -e 0', value: c10k / floor, limit: 3, unit: '×' },
    { target: 'cold command at 100k ≤ 1.5 × at 10k', value: c100k / c10k, limit: 1.5, unit: '×' },
    { target: 'in-process pipeline (reads, rank, pack, reasoning, render) at 100k packages < 50 ms', value: pipelineMs, limit: 50, unit: 'ms' },
    { target: 'in-process rank+pack+render of 100k candidates at once < 50 ms', value: coreMs, limit: 50, unit: 'ms' },
    { target: 'peak RSS of the cold command < 150 MB', value: maxRssMb, limit: 150, unit: 'MB' },
    { target: '1 MB whitespace-free text counted < 1 s', value: tokenMs / 1000, limit: 1, unit: 's' },
    ...relevanceCalls.flatMap((r) => [
      { target: `relevance on (implicit task) − off at ${r.scale / 1000}k ≤ 0.2 × node -e 0`, value: (r.implicit_ms - r.off_ms) / floor, limit: 0.2, unit: '×' },
      { target: `relevance on (--task) − off at ${r.scale / 1000}k ≤ 0.2 × node -e 0`, value: (r.explicit_ms - r.off_ms) / floor, limit: 0.2, unit: '×' },
    ]),
    { target: `redaction of 1 MB adversarial text (slowest: ${worstRedaction.input}) < 200 ms`, value: worstRedaction.ms_1mb, limit: 200, unit: 'ms' },
    { target: 'redaction time 1 MB / 100 KB, worst input ≤ 15 (linear ≈ 10)', value: worstRatio, limit: 15, unit: '×' },
    { target: 'first read of a 100k database never indexed < 5 s', value: indexBuild.first_read_ms / 1000, limit: 5, unit: 's' },
  ];
  const rows = [
    ...all.map((t) => ({ name: t.name, ms: median(t.samples), ratio: median(t.samples) / floor })),
    { name: 'in-process rank+pack+render, 100k candidates', ms: coreMs, ratio: null },
    { name: 'in-process pipeline on the 100k database (reads, rank, pack, reasoning, render)', ms: pipelineMs, ratio: null },
    { name: `count 1 MB whitespace-free (${tokens} tokens)`, ms: tokenMs, ratio: null },
  ];
  console.log('\n| measurement | median ms | × node -e 0 |\n|---|---:|---:|');
  for (const r of rows) console.log(`| ${r.name} | ${r.ms.toFixed(1)} | ${r.ratio === null ? '' : r.ratio.toFixed(2)} |`);
  console.log(`| peak RSS of the cold command (1k / 10k / 100k) | ${rss.map((k) => (k === null ? 'n/a' : `${(k / 1024).toFixed(0)} MB`)).join(' / ')} | |`);
  console.log('\n| realistic calls (iteration ≥ 1, recorded) | relevance off ms | implicit task ms | --task ms | (implicit − off) / node | (--task − off) / node |\n|---|---:|---:|---:|---:|---:|');
  for (const r of relevanceCalls) {
    console.log(`| ${r.scale / 1000}k packages | ${r.off_ms.toFixed(1)} | ${r.implicit_ms.toFixed(1)} | ${r.explicit_ms.toFixed(1)} | ${((r.implicit_ms - r.off_ms) / floor).toFixed(3)} | ${((r.explicit_ms - r.off_ms) / floor).toFixed(3)} |`);
  }
  console.log(
    `\nindex of the 100k database (${indexBuild.rows.packages} packages, ${indexBuild.rows.reasoning} reasoning entries): ${indexBuild.index_mb.toFixed(1)} MB; ` +
      `whole build without a budget ${(indexBuild.full_build_ms / 1000).toFixed(1)} s; first orchestrator call on it never indexed ${(indexBuild.first_read_ms / 1000).toFixed(2)} s ` +
      `(default budget ${DEFAULT_CONFIG.relevance.index_budget_ms} ms, ${indexBuild.first_read_backlog} older rows left for later calls)`,
  );
  printRedactionTable(redaction);
  console.log('\n| target | measured | result |\n|---|---:|---|');
  let ok = true;
  for (const t of targets) {
    const pass = t.value < t.limit || (t.unit === '×' && t.value <= t.limit);
    ok &&= pass;
    console.log(`| ${t.target} | ${t.value.toFixed(2)} ${t.unit} | ${pass ? 'PASS' : 'FAIL'} |`);
  }
  const results = {
    date: new Date().toISOString(),
    machine: { cores: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
    repeats: REPEATS,
    medians_ms: Object.fromEntries(rows.map((r) => [r.name, Number(r.ms.toFixed(2))])),
    ratios_to_node: Object.fromEntries(all.map((t) => [t.name, Number((median(t.samples) / floor).toFixed(3))])),
    cold_1k_10k_100k_ms: [c1k, c10k, c100k].map((v) => Number(v.toFixed(2))),
    peak_rss_kb: Object.fromEntries(SCALES.map((n, i) => [String(n), rss[i]])),
    relevance_calls: relevanceCalls,
    index_build_100k: indexBuild,
    redaction_1mb: redaction,
    targets: targets.map((t) => ({ ...t, value: Number(t.value.toFixed(3)), pass: t.value <= t.limit })),
    all_pass: ok,
  };
  fs.writeFileSync(path.join(REPO, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(`\nwrote bench/results.json — ${ok ? 'every target met' : 'some target missed'}`);
  return ok ? 0 : 1;
}

process.exitCode = main();
