/**
 * The standing evaluation: a seeded simulator of retries where some of what a developer is shown
 * is wrong, and a review has said so. Real SQLite files, BAZINGA's rows written through bazinga-db,
 * the real assembler in process.
 *
 * A session holds groups; each has a task. The tech lead's session-wide decision is written first.
 * A group's developer is spawned (iteration 0, then a retry per failed review, up to
 * `maxIterations`; a group never approved counts maxIterations). After an iteration that fails,
 * the developer's claims of it (completion, decisions) are wrong, and the review says so as
 * BAZINGA records one: QA's failures package for that iteration, QA's reasoning of what it found,
 * the group's revision count. A retry is given its reasoning at the `minimal` level with a budget
 * that holds about three entries (`reasoningBudget`), so what ranks first is what it reads. Its
 * verdict is drawn from what that spawn was shown and nothing else:
 *
 *   p(approve) = clamp(base + gain × useful shown / useful there − harm × wrong shown as fact / shown, 0.02, 0.98)
 *
 * where useful is QA's findings of the group and the tech lead's decision, wrong is any claim of a
 * failed iteration, and "as fact" is one shown without the mark that a review failed it. The same
 * draw decides an iteration in every arm (common random numbers). Arms, on copies of one world:
 *   - before: no standing (what the product did before it: claims shown in phase order, unmarked);
 *   - blind: standing marked, not ranked (`provenance.contradicted: shown`);
 *   - aware: the product's default (`provenance.contradicted: ranked`).
 * In the null world p = base whatever was shown.
 *
 * `npm run eval:standing` prints the grid; test/standing.eval.test.ts runs a few seeds of the
 * default world and holds the result to what the feature promises.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runScript } from '../../skills/context-assembler/scripts/lib/shell.ts';
import { cli, drawOf, interval, mean, newProject, type Project } from './simulate.ts';

export interface StandingSettings {
  groups: number;
  maxIterations: number;
  base: number;
  gain: number;
  harm: number;
  /** The reasoning budget of the minimal level (tokens) in the simulated project. */
  reasoningBudget: number;
  nullWorld: boolean;
}

export const STANDING_DEFAULTS: StandingSettings = { groups: 8, maxIterations: 6, base: 0.2, gain: 0.5, harm: 0.3, reasoningBudget: 260, nullWorld: false };

export const STANDING_ARMS = ['before', 'blind', 'aware'] as const;
export type StandingArm = (typeof STANDING_ARMS)[number];

export interface StandingArmResult {
  /** Mean iterations to approval over the groups. */
  iterations: number;
  /** QA's findings and the tech lead's decision shown, over those there, averaged over retries. */
  usefulRecall: number;
  /** Wrong claims among the entries shown, averaged over retries. */
  wrongRate: number;
  retries: number;
}

const SPEC = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;
const SESSION = 'standing_sim';

const ARM_CONFIG: Record<StandingArm, object> = {
  before: { provenance: { show: false, contradicted: { default: 'shown' } } },
  blind: { provenance: { contradicted: { default: 'shown' } } },
  aware: {},
};

const sqlTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

function writeConfig(p: Project, s: StandingSettings, arm: StandingArm): void {
  const config = { context_engineering: { reasoning: { level_budgets: { minimal: s.reasoningBudget, medium: 800, full: 1200 } }, ...ARM_CONFIG[arm] } };
  fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify(config));
}

/** A reasoning entry written as BAZINGA writes it, stamped at the simulated time. */
function reason(p: Project, group: string, agent: string, phase: string, text: string, iteration: number | null, at: number): number {
  const out = cli(p.root, p.dbPath, ['save-reasoning', SESSION, group, agent, phase, text, ...(iteration === null ? [] : ['--iteration', String(iteration)])]);
  stamp(p, 'UPDATE orchestration_logs SET timestamp = ? WHERE id = ?', sqlTime(at), out.log_id);
  return out.log_id as number;
}

function stamp(p: Project, sql: string, ...values: (string | number)[]): void {
  const db = new Database(p.dbPath);
  try {
    db.prepare(sql).run(...values);
  } finally {
    db.close();
  }
}

/** Words enough that an entry costs about as much as a real one (a few dozen tokens). */
const FILLER = 'with the module boundaries kept as they are and the tests of the flow run before and after the change';

/** One arm of one world: every group run to approval; what the measures need. */
function runArm(seed: number, s: StandingSettings, base: string, arm: StandingArm): StandingArmResult {
  const p = newProject(base, arm);
  writeConfig(p, s, arm);
  cli(p.root, p.dbPath, ['create-session', SESSION, 'parallel', 'standing', '--metadata', JSON.stringify({ project_id: 'sim' })]);
  let clock = Date.parse('2026-01-05T00:00:00Z');
  const tick = () => (clock += 600_000);
  const lead = reason(p, 'global', 'tech_lead', 'decisions', `All groups: validate input at the edge and keep errors typed, ${FILLER}`, null, tick());
  const iterations: number[] = [];
  const useful: number[] = [];
  const wrong: number[] = [];
  let retries = 0;
  for (let g = 0; g < s.groups; g++) {
    const group = `G${g + 1}`;
    cli(p.root, p.dbPath, ['create-task-group', group, SESSION, `Feature ${g + 1}`]);
    const usefulIds = new Set<number>([lead]);
    const wrongIds = new Set<number>();
    let approvedAt = s.maxIterations;
    for (let iteration = 0; iteration < s.maxIterations; iteration++) {
      const now = new Date(tick()).toISOString();
      let out = '';
      let err = '';
      const argv = ['--project-root', p.root, '--session', SESSION, '--group', group, '--agent', 'developer', '--iteration', String(iteration), '--reasoning-level', 'minimal', '--now', now, '--format', 'json'];
      const code = runScript(SPEC, { argv, cwd: p.root, env: {}, stdout: (t) => (out += t), stderr: (t) => (err += t), readStdin: () => undefined, now: () => new Date(now) });
      if (code !== 0) throw new Error(`assemble failed (${code}): ${err}`);
      const entries = (JSON.parse(out).reasoning?.entries ?? []) as { id: number; standing?: string }[];
      let pApprove = s.base;
      if (iteration > 0) {
        retries++;
        const usefulShown = entries.filter((e) => usefulIds.has(e.id)).length;
        const wrongShown = entries.filter((e) => wrongIds.has(e.id));
        // Before standing existed nothing was marked: every wrong claim shown read as fact.
        const asFact = wrongShown.filter((e) => arm === 'before' || e.standing !== 'contradicted').length;
        useful.push(usefulShown / usefulIds.size);
        wrong.push(entries.length === 0 ? 0 : wrongShown.length / entries.length);
        if (!s.nullWorld) pApprove = Math.min(0.98, Math.max(0.02, s.base + (s.gain * usefulShown) / usefulIds.size - (entries.length === 0 ? 0 : (s.harm * asFact) / entries.length)));
      }
      // The developer's claims of this iteration, then the review.
      wrongIds.add(reason(p, group, 'developer', 'completion', `Iteration ${iteration}: implemented the feature and its tests pass locally, ${FILLER}`, iteration, tick()));
      const decided = reason(p, group, 'developer', 'decisions', `Iteration ${iteration}: chose to handle the error inside the handler, ${FILLER}`, iteration, tick());
      if (drawOf(seed, `${group}/${iteration}`) < pApprove) {
        stamp(p, "UPDATE task_groups SET last_review_status = 'APPROVED', status = 'completed', updated_at = ? WHERE id = ? AND session_id = ?", sqlTime(tick()), group, SESSION);
        approvedAt = iteration + 1;
        break;
      }
      wrongIds.add(decided);
      const at = tick();
      const file = path.join('bazinga', 'artifacts', SESSION, `failures_${group}_iter${iteration}.md`);
      fs.mkdirSync(path.join(p.root, path.dirname(file)), { recursive: true });
      fs.writeFileSync(path.join(p.root, file), `# QA\n\nIteration ${iteration} failed: the error escapes the handler untyped.\n`);
      const pkg = cli(p.root, p.dbPath, ['save-context-package', SESSION, group, 'failures', file, 'qa_expert', '["developer"]', 'high', `Iteration ${iteration} failed review`]);
      stamp(p, 'UPDATE context_packages SET created_at = ? WHERE id = ?', sqlTime(at), pkg.package_id);
      usefulIds.add(reason(p, group, 'qa_expert', 'understanding', `Iteration ${iteration}: the error escapes the handler untyped; map it at the edge, ${FILLER}`, iteration, tick()));
      stamp(p, "UPDATE task_groups SET last_review_status = 'CHANGES_REQUESTED', revision_count = ?, updated_at = ? WHERE id = ? AND session_id = ?", iteration + 1, sqlTime(tick()), group, SESSION);
    }
    iterations.push(approvedAt);
  }
  return { iterations: mean(iterations), usefulRecall: mean(useful), wrongRate: mean(wrong), retries };
}

export type StandingWorldResult = Record<StandingArm, StandingArmResult>;

/** One world (one seed), each arm on a project of its own with the same draws. */
export function simulateStandingWorld(seed: number, settings: Partial<StandingSettings> = {}): StandingWorldResult {
  const s = { ...STANDING_DEFAULTS, ...settings };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-standing-sim-'));
  try {
    const out = {} as StandingWorldResult;
    for (const arm of STANDING_ARMS) out[arm] = runArm(seed, s, base, arm);
    return out;
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

export interface StandingSummary {
  seeds: number;
  arms: Record<StandingArm, { iterations: number; usefulRecall: number; wrongRate: number }>;
  /** Iterations blind minus aware, per seed: mean and 95 % interval (above 0: aware needs fewer). */
  gainOverBlind: { mean: number; lo: number; hi: number };
  /** Iterations before minus aware, per seed. */
  gainOverBefore: { mean: number; lo: number; hi: number };
}

export function summariseStanding(settings: Partial<StandingSettings>, seeds: readonly number[]): StandingSummary {
  const worlds = seeds.map((seed) => simulateStandingWorld(seed, settings));
  const arms = Object.fromEntries(
    STANDING_ARMS.map((arm) => [arm, { iterations: mean(worlds.map((w) => w[arm].iterations)), usefulRecall: mean(worlds.map((w) => w[arm].usefulRecall)), wrongRate: mean(worlds.map((w) => w[arm].wrongRate)) }]),
  ) as StandingSummary['arms'];
  return {
    seeds: seeds.length,
    arms,
    gainOverBlind: interval(worlds.map((w) => w.blind.iterations - w.aware.iterations)),
    gainOverBefore: interval(worlds.map((w) => w.before.iterations - w.aware.iterations)),
  };
}

export const STANDING_GRID: { name: string; settings: Partial<StandingSettings> }[] = [
  { name: 'default world', settings: {} },
  { name: 'roomier budget (600 tokens)', settings: { reasoningBudget: 600 } },
  { name: 'no harm from claims read as fact', settings: { harm: 0 } },
  { name: 'null world', settings: { nullWorld: true } },
];

const f2 = (n: number) => n.toFixed(2);
const ci = (x: { mean: number; lo: number; hi: number }) => `${f2(x.mean)} [${f2(x.lo)}, ${f2(x.hi)}]`;

function main(args: string[]): void {
  const seedsFlag = args.indexOf('--seeds');
  const n = seedsFlag === -1 ? 10 : Number(args[seedsFlag + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--seeds must be a positive integer, got '${args[seedsFlag + 1]}'`);
  const seeds = Array.from({ length: n }, (_, i) => i + 1);
  console.log(`Standing: iterations to approval by arm (${n} seeds; ${STANDING_DEFAULTS.groups} groups each; model in test/outcomes/standing.ts)\n`);
  console.log('| world | before | blind | aware | blind - aware [95 %] | before - aware [95 %] | useful shown before / blind / aware | wrong shown before / blind / aware |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { name, settings } of STANDING_GRID) {
    const s = summariseStanding(settings, seeds);
    const a = s.arms;
    console.log(
      `| ${name} | ${f2(a.before.iterations)} | ${f2(a.blind.iterations)} | ${f2(a.aware.iterations)} | ${ci(s.gainOverBlind)} | ${ci(s.gainOverBefore)} | ${f2(a.before.usefulRecall)} / ${f2(a.blind.usefulRecall)} / ${f2(a.aware.usefulRecall)} | ${f2(a.before.wrongRate)} / ${f2(a.blind.wrongRate)} / ${f2(a.aware.wrongRate)} |`,
    );
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
