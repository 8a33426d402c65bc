/**
 * What the prompt hook costs a session on a Bash call that is not the prompt builder (most of them:
 * `npm test`, `git status`): Claude Code runs the registered command through /bin/sh with the
 * event on stdin. Measured interleaved, call by call, beside `node -e 0`: the shell test of this
 * release (the `if` rule keeps clients that know it from starting even that), and the command an
 * earlier release registered (Node, the launcher and the hook, to find it has nothing to do).
 * Every command runs from the timing helper (bench/timer.ts), baselines included.
 *
 * And what it costs on the prompt builder's run (today's BAZINGA spawn: benchBuilderHook): the
 * plugin's hook command on the builder's event, answered by the warm assembler and in its own
 * process, at a bench scale.
 *
 * Usage: tsx bench/hook.ts [--rounds N]     (also a section of npm run bench)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EARLIER_WIRED_HOOK_COMMANDS, WIRED_HOOK_COMMAND } from '../skills/context-assembler/scripts/lib/wiring/hookCommand.ts';
import Database from 'better-sqlite3';
import { BUILD, installStandInBuilder } from '../test/standInBuilder.ts';
import { BENCH_GROUPS, BENCH_SESSION, scaleName, type BenchDb } from './generate.ts';
import { projectWith, type Release } from './relevance.ts';
import { startServer, stopServer } from './series.ts';
import { startTimer, stopTimer, timed } from './timer.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The target: hook time of a non-builder Bash call, median. */
export const HOOK_TARGET_MS = 5;

export interface HookCost {
  rounds: number;
  node_median_ms: number;
  /** This release's command on an `npm test` event with 64 KB of output. */
  guarded_median_ms: number;
  /** The same on a `git status` event with a line of output. */
  guarded_small_median_ms: number;
  /** An earlier release's command (Node on every call) on the `npm test` event. */
  earlier_median_ms: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

function event(command: string, stdout: string): string {
  return JSON.stringify({
    session_id: 'bench', hook_event_name: 'PostToolUse', cwd: REPO, tool_name: 'Bash',
    tool_input: { command, description: 'bench' }, tool_response: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
  }) + '\n';
}

/** Medians over `rounds` interleaved rounds; the events are files the shell reads as its stdin. */
export async function benchHookCost(rounds = 21): Promise<HookCost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-hook-bench-'));
  try {
    const testRun = path.join(dir, 'npm-test.json');
    fs.writeFileSync(testRun, event('npm test', ' ✓ test/auth.test.ts (12 tests) 340ms\n'.repeat(1700)));
    const gitStatus = path.join(dir, 'git-status.json');
    fs.writeFileSync(gitStatus, event('git status', 'On branch main\nnothing to commit, working tree clean\n'));
    const env = { ...process.env, CLAUDE_PROJECT_DIR: REPO };
    // The launcher of this checkout stands in for the project's installed one.
    const launcher = path.join(REPO, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
    const guarded = WIRED_HOOK_COMMAND.replace('"$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs"', JSON.stringify(launcher));
    const earlier = (EARLIER_WIRED_HOOK_COMMANDS[0] as string).replace('"$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs"', JSON.stringify(launcher));
    const shell = (command: string, input: string) => timed('/bin/sh', ['-c', `exec <${JSON.stringify(input)}; ${command}`], REPO, env);
    const samples = { node: [] as number[], guarded: [] as number[], small: [] as number[], earlier: [] as number[] };
    // One untimed round first: the page cache and the launcher's code cache as a session has them.
    await shell(earlier, testRun);
    for (let i = 0; i < rounds; i++) {
      samples.node.push((await timed(process.execPath, ['-e', '0'], REPO)).ms);
      const g = await shell(guarded, testRun);
      if (g.status !== 0 || g.stderr !== '') throw new Error(`the hook command failed: ${g.stderr}`);
      samples.guarded.push(g.ms);
      samples.small.push((await shell(guarded, gitStatus)).ms);
      samples.earlier.push((await shell(earlier, testRun)).ms);
    }
    return {
      rounds,
      node_median_ms: median(samples.node),
      guarded_median_ms: median(samples.guarded),
      guarded_small_median_ms: median(samples.small),
      earlier_median_ms: median(samples.earlier),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The markdown table rows of a measurement. */
export function hookCostRows(c: HookCost): string[] {
  const x = (ms: number) => (ms / c.node_median_ms).toFixed(3);
  return [
    `| node -e 0 | ${c.node_median_ms.toFixed(1)} ms | 1.000 |`,
    `| prompt hook on a non-builder Bash call (npm test, 64 KB of output): shell test, no Node | ${c.guarded_median_ms.toFixed(1)} ms | ${x(c.guarded_median_ms)} |`,
    `| the same on git status (one line of output) | ${c.guarded_small_median_ms.toFixed(1)} ms | ${x(c.guarded_small_median_ms)} |`,
    `| an earlier release's hook on the npm test call (Node started every time) | ${c.earlier_median_ms.toFixed(1)} ms | ${x(c.earlier_median_ms)} |`,
  ];
}

export interface BuilderHookCost {
  scale: string;
  rounds: number;
  node_median_ms: number;
  /** The plugin's hook command on the builder's event, answered by the warm assembler. */
  warm_median_ms: number;
  /** The same in its own process (CONTEXT_ASSEMBLER_NO_SERVER=1). */
  own_median_ms: number;
  /** Calls that placed the block (every timed call should). */
  placed: number;
  /** Calls the warm assembler answered, of the warm series. */
  served: number;
}

/**
 * The prompt hook on the prompt builder's run, as the plugin registers it: the stand-in builder
 * (test/standInBuilder.ts, the real builder's formats) writes a developer's, a QA expert's and a
 * tech lead's prompt of one bench group on two copies of the scale's database (one per series);
 * each round bumps the group's revision count (a retry: a new iteration, so a new assembly that
 * records what it hands out) and, untimed, puts back the builder's prompt and removes the kept
 * block; then times the hook command on each prompt's event, warm and own process interleaved
 * with `node -e 0`.
 */
export async function benchBuilderHook(release: Release, g: BenchDb, dbFile: string, rounds = 10, dir: string): Promise<BuilderHookCost> {
  const group = BENCH_GROUPS[0] as string;
  const agents = ['developer', 'qa_expert', 'tech_lead'];
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-hook-run-'));
  const modes = ['warm', 'own'] as const;
  const setups = modes.map((mode) => {
    const root = projectWith(g, dbFile, path.join(dir, `hook-${scaleName(g.packages)}-${mode}`));
    installStandInBuilder(root);
    const prompts = agents.map((agent) => {
      const rel = `bazinga/prompts/${BENCH_SESSION}`;
      fs.mkdirSync(path.join(root, rel), { recursive: true });
      const params = `${rel}/params_${agent}_${group}.json`;
      fs.writeFileSync(path.join(root, params), JSON.stringify({ agent_type: agent, session_id: BENCH_SESSION, group_id: group, task_title: 'Bench task', task_requirements: 'Bench requirements', branch: 'main', mode: 'parallel', testing_mode: 'full', model: 'sonnet', output_file: `${rel}/${agent}_${group}.md` }));
      const command = BUILD(params);
      const build = spawnSync('/bin/sh', ['-c', `${command} 2>&1`], { cwd: root, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`the stand-in builder failed: ${build.stdout.slice(0, 300)}`);
      const prompt = path.join(root, rel, `${agent}_${group}.md`);
      const event = path.join(root, rel, `event_${agent}.json`);
      fs.writeFileSync(event, JSON.stringify({ session_id: 'bench', hook_event_name: 'PostToolUse', cwd: root, tool_name: 'Bash', tool_input: { command }, tool_response: { stdout: build.stdout.replace(/\n$/, ''), stderr: '', interrupted: false, isImage: false } }) + '\n');
      return { prompt, builder: fs.readFileSync(prompt), kept: path.join(root, rel, '.context-assembler', `${agent}_${group}.md.json`), event };
    });
    return { mode, root, prompts };
  });
  // The plugin's registered command, with this release's launcher.
  const command = `node ${JSON.stringify(release.bin)} prompt-hook --plugin`;
  const envOf = (mode: 'warm' | 'own', root: string): NodeJS.ProcessEnv => ({
    ...process.env, CLAUDE_PROJECT_DIR: root, XDG_RUNTIME_DIR: runtime, CONTEXT_ASSEMBLER_NO_SERVER: mode === 'warm' ? '0' : '1', CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1',
  });
  const savedRuntime = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runtime; // the server started here
  const server = await startServer(release);
  const samples = { node: [] as number[], warm: [] as number[], own: [] as number[] };
  let placed = 0;
  let served = 0;
  try {
    for (let round = -1; round < rounds; round++) {
      for (const s of setups) {
        const db = new Database(path.join(s.root, 'bazinga', 'bazinga.db'));
        db.prepare('UPDATE task_groups SET revision_count = COALESCE(revision_count, 0) + 1 WHERE session_id = ? AND id = ?').run(BENCH_SESSION, group);
        db.close();
      }
      for (let a = 0; a < agents.length; a++) {
        const node = (await timed(process.execPath, ['-e', '0'], REPO)).ms;
        const order = (round + a) % 2 === 0 ? setups : [...setups].reverse();
        for (const s of order) {
          const p = s.prompts[a] as (typeof s.prompts)[number];
          fs.writeFileSync(p.prompt, p.builder);
          fs.rmSync(p.kept, { force: true });
          const r = await timed('/bin/sh', ['-c', `exec <${JSON.stringify(p.event)}; ${command}`], s.root, envOf(s.mode, s.root));
          if (r.status !== 0) throw new Error(`the hook failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
          // The first round warms the page cache and the code caches, untimed.
          if (round < 0) continue;
          samples[s.mode].push(r.ms);
          if (fs.readFileSync(p.prompt, 'utf8').includes('<!-- context-assembler:begin -->')) placed++;
          if (s.mode === 'warm' && r.stderr.includes('prompt-hook.cjs answered by the warm assembler')) served++;
        }
        if (round >= 0) samples.node.push(node);
      }
    }
  } finally {
    await stopServer(server);
    if (savedRuntime === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = savedRuntime;
    fs.rmSync(runtime, { recursive: true, force: true });
  }
  return { scale: scaleName(g.packages), rounds, node_median_ms: median(samples.node), warm_median_ms: median(samples.warm), own_median_ms: median(samples.own), placed, served };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    fs.writeSync(1, 'bench/hook.ts: the prompt hook\'s cost on a non-builder Bash call, beside node -e 0 (medians, interleaved)\n\nUsage: tsx bench/hook.ts [--rounds N]   (default 21)\n');
    process.exit(0);
  }
  const i = process.argv.indexOf('--rounds');
  const rounds = i === -1 ? 21 : Math.max(1, Number(process.argv[i + 1]));
  startTimer();
  const c = await benchHookCost(rounds);
  stopTimer();
  console.log(`prompt hook cost, ${c.rounds} interleaved rounds, ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)}\n`);
  console.log('| command | median | × node -e 0 |\n|---|---:|---:|');
  for (const row of hookCostRows(c)) console.log(row);
  console.log(`\ntarget: ≤ ${HOOK_TARGET_MS} ms on a non-builder call: ${c.guarded_median_ms <= HOOK_TARGET_MS ? 'PASS' : 'FAIL'} (${c.guarded_median_ms.toFixed(2)} ms)`);
}
