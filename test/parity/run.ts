/**
 * Runs the parity grid on a rig: every write of the grid through the rig's writers (the hooked
 * project's first, then any twin), and at each spawn of the grid the orchestrator's steps: the
 * params file, the prompt builder alone (its prompt and section: the floor), then the same Bash
 * call as Claude Code makes it with the project's hooks (the prompt the agent reads), measured
 * against each other (measure.ts). Beside them, when the rig has them: the builder of a twin
 * project that only BAZINGA ever touched (does the product change what BAZINGA's own builder
 * prints?), and the stand-in builder on the same database (does it select what the real one does?).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readBuilderSection, readCandidates, type BuilderSection } from './builderSection.ts';
import { SESSION, REQUIREMENTS, TASKS, type Scenario, type Spawn, type Write } from './grid.ts';
import { builderTokens, measureSpawn, type SpawnMeasure } from './measure.ts';
import { buildCommand, builderResult, runBash, BUILDER } from './project.ts';
import { stampsTime, type Writer, type Written } from './writers.ts';

export interface Rig {
  /** The project the product serves. */
  root: string;
  /** The writers of every project of the rig, the served project's first. */
  writers: Writer[];
  /** Rows carry the real time to the second: a time-ordered write waits for a second of its own. */
  wallClock: boolean;
  /** The environment of the builder and of the hooks (CLAUDE_PROJECT_DIR is set per project). */
  env: NodeJS.ProcessEnv;
  /** A twin project written the same way where only BAZINGA runs. */
  alone?: string;
  /** The stand-in builder's script in the served project (relative path), run beside the real builder. */
  standIn?: string;
}

export interface RunOptions {
  /** Only these spawns (by id); every write is made all the same. */
  only?: ReadonlySet<string>;
  log?: (line: string) => void;
}

export interface GridRun {
  measures: SpawnMeasure[];
  /** Findings about the run itself (ids that differ between projects, how often the stand-in agreed with the real builder). */
  notes: string[];
}

const sleepMs = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, ms));

/** Waits until a new second begins (plus a margin). */
function startOfNextSecond(): void {
  sleepMs(1000 - (Date.now() % 1000) + 30);
}

const promptDir = `bazinga/prompts/${SESSION}`;

function paramsOf(spawn: Spawn, output: string): Record<string, unknown> {
  const task = TASKS[spawn.group] ?? { title: spawn.group, requirements: '' };
  return {
    agent_type: spawn.agent, session_id: SESSION, group_id: spawn.group, task_title: task.title, task_requirements: task.requirements,
    branch: `feature/${spawn.group.toLowerCase()}`, mode: 'parallel', testing_mode: 'full', model: spawn.model ?? 'sonnet', output_file: output,
    ...(spawn.qaFeedback ? { qa_feedback: spawn.qaFeedback } : {}),
    ...(spawn.tlFeedback ? { tl_feedback: spawn.tlFeedback } : {}),
  };
}

function writeJson(root: string, rel: string, value: unknown): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), JSON.stringify(value, null, 2) + '\n');
}

/** Runs the builder alone (no hooks) and returns its prompt; throws when it fails. */
function buildAlone(root: string, command: string, prompt: string, env: NodeJS.ProcessEnv): { prompt: Buffer; result: ReturnType<typeof builderResult> } {
  const run = runBash(root, command, { env, hooks: false });
  const result = builderResult(run.output);
  if (run.code !== 0 || result.success !== true) throw new Error(`the builder failed (exit ${run.code}): ${run.output.trim().split('\n').slice(-6).join(' | ').slice(0, 600)}`);
  return { prompt: fs.readFileSync(path.join(root, prompt)), result };
}

const sectionText = (prompt: string, s: BuilderSection) => (s.found ? prompt.slice(0, s.end) : '');

/** How often the stand-in builder printed exactly the real builder's section. */
interface Agreement {
  compared: number;
  agreed: number;
}

function runSpawn(rig: Rig, scenario: string, spawn: Spawn, log: (line: string) => void, standInAgreement: Agreement): SpawnMeasure {
  const outRel = `${promptDir}/${spawn.agent}_${spawn.group}.md`;
  const paramsRel = `${promptDir}/params_${spawn.agent}_${spawn.group}.json`;
  const command = buildCommand(paramsRel);
  const projects = [rig.root, ...(rig.alone ? [rig.alone] : [])];
  for (const root of projects) writeJson(root, paramsRel, paramsOf(spawn, outRel));
  const dbPath = path.join(rig.root, 'bazinga', 'bazinga.db');
  const key = { session: SESSION, group: spawn.group, agent: spawn.agent };
  const notes: string[] = [];
  let env = rig.env;
  if (spawn.fileLimit === 'drop-context') {
    // A limit whose budget (92 % of it) lies halfway between the prompt without its section and with it.
    const probe = buildAlone(rig.root, command, outRel, env);
    const probeSection = readBuilderSection(probe.prompt.toString('utf8'), readCandidates(dbPath, key));
    const total = probe.result.tokens_estimate ?? builderTokens(probe.prompt.toString('utf8'));
    const context = builderTokens(sectionText(probe.prompt.toString('utf8'), probeSection));
    const limit = Math.ceil((total - Math.floor(context / 2)) / 0.92);
    env = { ...env, BAZINGA_PROMPT_FILE_LIMIT: String(limit) };
    notes.push(`BAZINGA_PROMPT_FILE_LIMIT=${limit} (the prompt is ${total} tokens with a ${context}-token section)`);
  }
  const floor = buildAlone(rig.root, command, outRel, env);
  const floorText = floor.prompt.toString('utf8');
  const section = readBuilderSection(floorText, readCandidates(dbPath, key));

  if (rig.alone) {
    const alone = buildAlone(rig.alone, command, outRel, env).prompt;
    if (!alone.equals(floor.prompt)) {
      const aloneSection = readBuilderSection(alone.toString('utf8'), readCandidates(path.join(rig.alone, 'bazinga', 'bazinga.db'), key));
      const [here, there] = [sectionText(floorText, section), sectionText(alone.toString('utf8'), aloneSection)];
      if (here === there) notes.push("BAZINGA's builder prints another prompt (its context section the same) than in a project where only BAZINGA ran");
      else {
        const a = here.split('\n');
        const b = there.split('\n');
        const i = a.findIndex((line, k) => line !== b[k]);
        const [x, y] = [a[i] ?? '', b[i] ?? ''];
        let c = 0;
        while (c < x.length && x[c] === y[c]) c++;
        const around = (line: string) => `${c > 40 ? '…' : ''}${line.slice(Math.max(0, c - 40), c + 60)}`;
        notes.push(`BAZINGA's builder prints another context section than in a project where only BAZINGA ran: \`${around(x)}\` where BAZINGA alone prints \`${around(y)}\``);
      }
    }
  }
  if (rig.standIn && spawn.fileLimit === undefined) {
    const standInOut = `${promptDir}/${spawn.agent}_${spawn.group}.standin.md`;
    const standInParams = `${promptDir}/params_${spawn.agent}_${spawn.group}.standin.json`;
    writeJson(rig.root, standInParams, paramsOf(spawn, standInOut));
    const standIn = buildAlone(rig.root, buildCommand(standInParams, rig.standIn), standInOut, env).prompt.toString('utf8');
    const standInSection = readBuilderSection(standIn, readCandidates(dbPath, key));
    const agrees = sectionText(standIn, standInSection) === sectionText(floorText, section);
    standInAgreement.compared++;
    if (agrees) standInAgreement.agreed++;
    else notes.push('the stand-in builder selects another context section than the real one');
  }

  let rebuilt: Buffer | undefined;
  const run = runBash(rig.root, command, { env, hooks: true, beforeHooks: () => (rebuilt = fs.readFileSync(path.join(rig.root, outRel))) });
  const hooked = fs.readFileSync(path.join(rig.root, outRel));
  const m = measureSpawn({ id: spawn.id, scenario, agent: spawn.agent, group: spawn.group, what: spawn.what }, floor.prompt, section, hooked);
  if (rebuilt === undefined || !rebuilt.equals(floor.prompt)) m.problems.push('the builder wrote another prompt on its second run (the floor is not what the hook saw)');
  if (run.hooks.length === 0) m.problems.push("no PostToolUse hook ran for the builder's command (the project is not wired)");
  for (const h of run.hooks) {
    if (h.code !== 0) m.problems.push(`a hook exited ${h.code}`);
    const said = h.stderr.trim().split('\n').filter((l) => l.startsWith('⚠'));
    if (said.length > 0) m.notes.push(`hook: ${said.join(' | ').slice(0, 300)}`);
  }
  m.notes.push(...notes);
  const counts = { present: 0, stated: 0, silent: 0 };
  for (const i of m.items) counts[i.verdict.status]++;
  log(`${spawn.id} ${spawn.agent} ${spawn.group}: ${m.outcome}; ${m.items.length} builder items: ${counts.present} present, ${counts.stated} stated, ${counts.silent} silent; outside the markers ${m.identical ? 'identical' : 'DIFFERENT'}`);
  return m;
}

/** Runs the grid (see the header). */
export async function runGrid(rig: Rig, grid: readonly Scenario[], opts: RunOptions = {}): Promise<GridRun> {
  const log = opts.log ?? (() => {});
  const out: GridRun = { measures: [], notes: [] };
  const standInAgreement: Agreement = { compared: 0, agreed: 0 };
  await Promise.all(rig.writers.map((w) => w.createSession(SESSION, REQUIREMENTS)));
  for (const scenario of grid) {
    for (const step of scenario.steps) {
      if (step.do === 'spawn') {
        if (opts.only && !opts.only.has(step.id)) continue;
        out.measures.push(runSpawn(rig, scenario.name, step, log, standInAgreement));
        continue;
      }
      const w: Write = step;
      // A second of its own, begun after the previous write ended: in every project each time-ordered
      // row is newer than the one before, so the projects order them alike.
      if (rig.wallClock && stampsTime(w)) startOfNextSecond();
      // The projects' writes at once.
      const written: Written[] = await Promise.all(rig.writers.map((writer) => writer.write(SESSION, w)));
      const ids = new Set(written.map((x) => JSON.stringify({ p: x.packageId, l: x.logId })));
      if (ids.size > 1) out.notes.push(`a ${w.do} write of ${scenario.name} got different ids in the projects: ${[...ids].join(' vs ')}`);
    }
  }
  if (standInAgreement.compared > 0) {
    out.notes.push(`the stand-in builder of the tests printed the real builder's context section byte for byte in ${standInAgreement.agreed} of ${standInAgreement.compared} spawns (on the same database)`);
  }
  return out;
}

/** Where the stand-in builder is put beside the real one in a project (its root is four folders up, as the real builder's). */
export const STAND_IN_BESIDE = BUILDER.replace('prompt-builder', 'prompt-builder-standin');
