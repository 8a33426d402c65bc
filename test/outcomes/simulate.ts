/**
 * The outcome-feedback evaluation: a seeded simulator of BAZINGA sessions on real SQLite files,
 * assembled by the real assembler in process.
 *
 * A world is one project. It has task types; each type has its own words, and strategies written
 * in those words: `keys` of them help a group of that type, the others (`lookalikes`) share the
 * same words and do not. Which are keys is drawn before anything is ranked, from strategies made
 * by one template, so the text cannot tell them apart. A session has groups of random types; each
 * group's developer is spawned (an assembly that records), and the iteration's verdict is drawn
 * from what that spawn was shown and nothing else:
 *
 *   p(approve) = clamp(base + gain × keys shown / keys − harm × look-alikes shown / shown, 0.02, 0.98)
 *
 * (in the null world, p = base whatever was shown). Not approved: the group's revision_count
 * goes up and the developer is spawned again, up to `maxIterations` (a group never approved
 * counts maxIterations). Verdicts are set on task_groups as BAZINGA sets them. The same random
 * draw decides an iteration's verdict in every arm (common random numbers).
 *
 * The first `trainSessions` sessions run with feedback on (the product as it is used: what it
 * learns comes from them). The `testSessions` after them are held out: each arm runs them on its
 * own copy of the trained database, counting outcomes of the training sessions only:
 *   - without: outcome_feedback.enabled false;
 *   - with: the product's outcome feedback, default settings;
 *   - popularity: the same term, every showing counted as helped (how often an item was shown).
 * Reported per arm on the held-out groups: mean iterations to approval, key recall@5 (keys among
 * the five strategies a spawn is shown: strategies.max 5 in the simulated projects, over all
 * spawns) and the rate of look-alikes among what was shown.
 *
 * `npm run eval:outcomes` runs the grid (printSummary); test/outcomes.eval.test.ts runs the default
 * world on fewer seeds and holds the result to what the feature promises.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../skills/bazinga-db/scripts/lib/cli.ts';
import type { DB } from '../../skills/bazinga-db/scripts/lib/index.ts';
import { listVerdicts } from '../../skills/bazinga-db/scripts/lib/repo/outcomes.ts';
import type { Deps } from '../../skills/context-assembler/scripts/lib/pipeline.ts';
import { runScript } from '../../skills/context-assembler/scripts/lib/shell.ts';
import { rng as mulberry32 } from '../../bench/generate.ts';

export interface Settings {
  types: number;
  keys: number;
  lookalikes: number;
  groupsPerSession: number;
  trainSessions: number;
  testSessions: number;
  maxIterations: number;
  base: number;
  gain: number;
  harm: number;
  /** Verdicts ignore what was shown (p = base). */
  nullWorld: boolean;
  /** outcome_feedback keys the simulated projects set (none: the product's defaults). */
  feedback: Record<string, unknown>;
}

export const DEFAULTS: Settings = {
  types: 6,
  keys: 2,
  lookalikes: 8,
  groupsPerSession: 4,
  trainSessions: 8,
  testSessions: 4,
  maxIterations: 6,
  base: 0.15,
  gain: 0.7,
  harm: 0.2,
  nullWorld: false,
  feedback: {},
};

export const ARMS = ['without', 'with', 'popularity'] as const;
export type Arm = (typeof ARMS)[number];

export interface ArmResult {
  /** Mean iterations to approval over the held-out groups. */
  iterations: number;
  /** Keys among the strategies shown, over keys, averaged over held-out spawns. */
  recall: number;
  /** Look-alikes among the strategies shown, averaged over held-out spawns. */
  lookalikeRate: number;
  groups: number;
  spawns: number;
}

export type WorldResult = Record<Arm, ArmResult>;

// ------------------------------------------------------------------------------- the world

/** A draw that depends only on its key (the same in every arm). */
export function drawOf(seed: number, key: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 2654435761) >>> 0;
  return mulberry32(h)();
}

const TOPIC_WORDS = (
  'payment webhook ledger invoice refund checkout cart coupon shipping tracking inventory warehouse ' +
  'login session token oauth password avatar profile settings locale currency search filter facet ' +
  'upload thumbnail gallery video caption playlist comment moderation report export import schedule ' +
  'calendar reminder billing subscription trial quota metering audit backup restore migration'
).split(' ');
const FILLER = (
  'carefully first always small steps review tests before after early late explicit clear simple ' +
  'guard check validate retry cache batch queue index log metric alert lock flag stub mock fixture'
).split(' ');

function pickDistinct<T>(r: () => number, from: readonly T[], n: number): T[] {
  const pool = [...from];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(r() * pool.length), 1)[0] as T);
  return out;
}

interface TaskType {
  words: string[];
  /** Strategy ids of this type, and which are keys. */
  strategies: string[];
  keys: Set<string>;
}

const SPEC = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;
const PROJECT = 'sim';

export function cli(root: string, dbPath: string, args: string[]): any {
  let out = '';
  let err = '';
  const code = runCli(['--quiet', '--db', dbPath, '--project-root', root, ...args], { cwd: root, env: {}, stdout: (t) => (out += t), stderr: (t) => (err += t) });
  if (code !== 0) throw new Error(`bazinga-db ${args[0]} failed (${code}): ${err}`);
  return JSON.parse(out);
}

function writeConfig(root: string, outcome: Record<string, unknown>): void {
  fs.mkdirSync(path.join(root, 'bazinga'), { recursive: true });
  fs.writeFileSync(path.join(root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { strategies: { max: 5 }, outcome_feedback: outcome } }));
}

export interface Project {
  root: string;
  dbPath: string;
}

export function newProject(base: string, name: string): Project {
  const root = path.join(base, name);
  fs.mkdirSync(path.join(root, 'bazinga'), { recursive: true });
  return { root, dbPath: path.join(root, 'bazinga', 'bazinga.db') };
}

function copyProject(from: Project, base: string, name: string): Project {
  const to = newProject(base, name);
  const db = new Database(from.dbPath);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  fs.copyFileSync(from.dbPath, to.dbPath);
  return to;
}

/** The strategies of every type, written to a new project; the keys drawn before any ranking. */
function makeWorld(r: () => number, s: Settings, project: Project): TaskType[] {
  cli(project.root, project.dbPath, ['create-session', 'sim_setup', 'simple', 'setup', '--metadata', JSON.stringify({ project_id: PROJECT })]);
  const words = pickDistinct(r, TOPIC_WORDS, s.types * 3);
  const types: TaskType[] = [];
  for (let t = 0; t < s.types; t++) {
    const w = words.slice(t * 3, t * 3 + 3);
    const ids: string[] = [];
    for (let i = 0; i < s.keys + s.lookalikes; i++) {
      // One template for all: the type's words and three fillers, in a random order.
      const insight = pickDistinct(r, [...w, ...pickDistinct(r, FILLER, 3)], 6).join(' ');
      ids.push(cli(project.root, project.dbPath, ['save-strategy', PROJECT, 'implementation', `${insight} (${t}.${i})`]).strategy_id);
    }
    types.push({ words: w, strategies: ids, keys: new Set(pickDistinct(r, ids, s.keys)) });
  }
  // Saved at the wall clock's second: one time for all, so no tie is broken by when the run happened.
  const db = new Database(project.dbPath);
  try {
    db.prepare("UPDATE strategies SET last_seen = '2026-01-01 00:00:00', created_at = '2026-01-01 00:00:00'").run();
  } finally {
    db.close();
  }
  return types;
}

interface SessionPlan {
  id: string;
  groups: { id: string; type: number; task: string }[];
}

function planSessions(r: () => number, s: Settings, types: TaskType[]): SessionPlan[] {
  const out: SessionPlan[] = [];
  for (let i = 0; i < s.trainSessions + s.testSessions; i++) {
    const groups = [];
    for (let g = 0; g < s.groupsPerSession; g++) {
      const type = Math.floor(r() * types.length);
      const t = types[type] as TaskType;
      groups.push({ id: `G${g + 1}`, type, task: [...t.words, ...pickDistinct(r, FILLER, 2)].join(' ') });
    }
    out.push({ id: `sim_${String(i).padStart(3, '0')}`, groups });
  }
  return out;
}

interface Tally {
  iterations: number[];
  recall: number[];
  lookalike: number[];
}

/** Runs a session's groups to approval; returns what the held-out measures need. */
function runSession(
  seed: number,
  s: Settings,
  project: Project,
  plan: SessionPlan,
  types: TaskType[],
  clock: { ms: number },
  source: Deps['outcomeSource'],
  tally: Tally,
): void {
  cli(project.root, project.dbPath, ['create-session', plan.id, 'parallel', 'simulated', '--metadata', JSON.stringify({ project_id: PROJECT })]);
  for (const g of plan.groups) cli(project.root, project.dbPath, ['create-task-group', g.id, plan.id, g.task]);
  for (const g of plan.groups) {
    const type = types[g.type] as TaskType;
    let approvedAt = s.maxIterations;
    for (let iteration = 0; iteration < s.maxIterations; iteration++) {
      clock.ms += 3_600_000;
      const now = new Date(clock.ms).toISOString();
      let out = '';
      let err = '';
      const code = runScript(
        SPEC,
        {
          argv: ['--project-root', project.root, '--session', plan.id, '--group', g.id, '--agent', 'developer', '--iteration', String(iteration), '--task', g.task, '--now', now, '--format', 'json'],
          cwd: project.root,
          env: {},
          stdout: (t) => (out += t),
          stderr: (t) => (err += t),
          readStdin: () => undefined,
          now: () => new Date(now),
        },
        source ? (deps) => void (deps.outcomeSource = source) : undefined,
      );
      if (code !== 0) throw new Error(`assemble failed (${code}): ${err}`);
      const doc = JSON.parse(out) as { strategies?: { strategy_id: string }[] };
      const shown = (doc.strategies ?? []).map((x) => x.strategy_id);
      const keysShown = shown.filter((id) => type.keys.has(id)).length;
      const lookalikesShown = shown.filter((id) => type.strategies.includes(id) && !type.keys.has(id)).length;
      tally.recall.push(keysShown / type.keys.size);
      tally.lookalike.push(shown.length === 0 ? 0 : lookalikesShown / shown.length);
      const p = s.nullWorld ? s.base : Math.min(0.98, Math.max(0.02, s.base + (s.gain * keysShown) / type.keys.size - (shown.length === 0 ? 0 : (s.harm * lookalikesShown) / shown.length)));
      const db = new Database(project.dbPath);
      try {
        if (drawOf(seed, `${plan.id}/${g.id}/${iteration}`) < p) {
          db.prepare("UPDATE task_groups SET last_review_status = 'APPROVED', status = 'completed' WHERE id = ? AND session_id = ?").run(g.id, plan.id);
          approvedAt = iteration + 1;
        } else {
          db.prepare("UPDATE task_groups SET last_review_status = 'CHANGES_REQUESTED', revision_count = ? WHERE id = ? AND session_id = ?").run(iteration + 1, g.id, plan.id);
        }
      } finally {
        db.close();
      }
      if (approvedAt === iteration + 1) break;
    }
    tally.iterations.push(approvedAt);
  }
}

export const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** One world (one seed): trained with feedback on, then the held-out sessions under each arm. */
export function simulateWorld(seed: number, settings: Partial<Settings> = {}): WorldResult {
  const s = { ...DEFAULTS, ...settings };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-sim-'));
  try {
    const r = mulberry32(seed);
    const trained = newProject(base, 'trained');
    writeConfig(trained.root, s.feedback);
    const types = makeWorld(r, s, trained);
    const plans = planSessions(r, s, types);
    const train = plans.slice(0, s.trainSessions);
    const test = plans.slice(s.trainSessions);
    const clock = { ms: Date.parse('2026-01-05T00:00:00Z') };
    const ignored: Tally = { iterations: [], recall: [], lookalike: [] };
    for (const plan of train) runSession(seed, s, trained, plan, types, clock, undefined, ignored);
    const trainIds = new Set(train.map((p) => p.id));
    // Held out: what the training sessions' spawns were followed by, and nothing after.
    const trainedOnly: NonNullable<Deps['outcomeSource']> = (db: DB, q) => listVerdicts(db, q).filter((v) => trainIds.has(v.session_id));
    const sources: Record<Arm, Deps['outcomeSource']> = {
      without: undefined,
      with: trainedOnly,
      popularity: (db, q) => trainedOnly(db, q).map((v) => ({ ...v, helped: v.helped + v.hurt, hurt: 0 })),
    };
    const result = {} as WorldResult;
    for (const arm of ARMS) {
      const project = copyProject(trained, base, arm);
      writeConfig(project.root, arm === 'without' ? { ...s.feedback, enabled: false } : s.feedback);
      const tally: Tally = { iterations: [], recall: [], lookalike: [] };
      const armClock = { ms: clock.ms };
      for (const plan of test) runSession(seed, s, project, plan, types, armClock, sources[arm], tally);
      result[arm] = { iterations: mean(tally.iterations), recall: mean(tally.recall), lookalikeRate: mean(tally.lookalike), groups: tally.iterations.length, spawns: tally.recall.length };
    }
    return result;
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

// ----------------------------------------------------------------------------- statistics

/** Two-sided 95 % t quantiles by degrees of freedom (1 … 30; larger: 1.96). */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

/** Mean and 95 % interval (t) of a sample. */
export function interval(xs: readonly number[]): { mean: number; lo: number; hi: number } {
  const m = mean(xs);
  if (xs.length < 2) return { mean: m, lo: m, hi: m };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
  const t = T95[xs.length - 2] ?? 1.96;
  const half = (t * sd) / Math.sqrt(xs.length);
  return { mean: m, lo: m - half, hi: m + half };
}

export interface Summary {
  settings: Settings;
  seeds: number;
  arms: Record<Arm, { iterations: number; recall: number; lookalikeRate: number }>;
  /** Iterations without feedback minus with it, per seed: mean and 95 % interval (above 0: feedback needs fewer). */
  gain: { mean: number; lo: number; hi: number };
  /** The same against popularity. */
  gainOverPopularity: { mean: number; lo: number; hi: number };
}

export function summarise(settings: Partial<Settings>, seeds: readonly number[]): Summary {
  const worlds = seeds.map((seed) => simulateWorld(seed, settings));
  const avg = (arm: Arm, k: keyof ArmResult) => mean(worlds.map((w) => w[arm][k]));
  const arms = Object.fromEntries(ARMS.map((a) => [a, { iterations: avg(a, 'iterations'), recall: avg(a, 'recall'), lookalikeRate: avg(a, 'lookalikeRate') }])) as Summary['arms'];
  return {
    settings: { ...DEFAULTS, ...settings },
    seeds: seeds.length,
    arms,
    gain: interval(worlds.map((w) => w.without.iterations - w.with.iterations)),
    gainOverPopularity: interval(worlds.map((w) => w.popularity.iterations - w.with.iterations)),
  };
}

// ------------------------------------------------------------------------------------ CLI

/** The grid `npm run eval:outcomes` runs: the default world, the null world, and one setting changed at a time. */
export const GRID: { name: string; settings: Partial<Settings> }[] = [
  { name: 'default', settings: {} },
  { name: 'null world (verdicts ignore what was shown)', settings: { nullWorld: true } },
  { name: 'look-alikes 4', settings: { lookalikes: 4 } },
  { name: 'look-alikes 14', settings: { lookalikes: 14 } },
  { name: 'types 3', settings: { types: 3 } },
  { name: 'types 12', settings: { types: 12 } },
  { name: 'training sessions 3', settings: { trainSessions: 3 } },
  { name: 'weak signal (gain 0.35, harm 0.1)', settings: { gain: 0.35, harm: 0.1 } },
  { name: 'outcome_feedback.weights.strategy 1', settings: { feedback: { weights: { strategy: 1 } } } },
  { name: 'outcome_feedback.weights.strategy 3', settings: { feedback: { weights: { strategy: 3 } } } },
];

const f2 = (x: number) => x.toFixed(2);
const ci = (x: { mean: number; lo: number; hi: number }) => `${f2(x.mean)} [${f2(x.lo)}, ${f2(x.hi)}]`;

export function summaryRow(name: string, s: Summary): string {
  const a = s.arms;
  return `| ${name} | ${f2(a.without.iterations)} | ${f2(a.with.iterations)} | ${f2(a.popularity.iterations)} | ${ci(s.gain)} | ${ci(s.gainOverPopularity)} | ${f2(a.without.recall)} / ${f2(a.with.recall)} / ${f2(a.popularity.recall)} | ${f2(a.without.lookalikeRate)} / ${f2(a.with.lookalikeRate)} / ${f2(a.popularity.lookalikeRate)} |`;
}

export const TABLE_HEAD = [
  '| world | iterations without | with | popularity | without − with (95 % CI) | popularity − with (95 % CI) | key recall@5 without / with / popularity | look-alike rate without / with / popularity |',
  '|---|---|---|---|---|---|---|---|',
];

function main(argv: string[]): void {
  const seedsArg = argv.find((a) => a.startsWith('--seeds='));
  const seeds = Array.from({ length: seedsArg ? Number(seedsArg.slice(8)) : 10 }, (_, i) => 1000 + i);
  const only = argv.includes('--default-only') ? GRID.slice(0, 2) : GRID;
  const lines = [...TABLE_HEAD];
  process.stdout.write(`outcome feedback, ${seeds.length} seeds per world; defaults ${JSON.stringify(DEFAULTS)}\n`);
  for (const g of only) {
    const s = summarise(g.settings, seeds);
    const row = summaryRow(g.name, s);
    lines.push(row);
    process.stdout.write(`${row}\n`);
  }
  process.stdout.write(`\n${lines.join('\n')}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
