/**
 * Golden blocks: the markdown `assemble.ts` prints for each zone, for a request with no packages,
 * on failure (fallback) and when disabled, byte for byte, on a copy of the v19 fixture with a
 * fixed --now and --dry-run. The goldens live in test/golden/ and were read against
 * spec/assembler.md §6 and seed 000 (Step 5, Step 6) before they were frozen; each test also
 * checks the spec's markers directly, so a careless rewrite of a golden cannot hide a regression.
 *
 * To rewrite the goldens after an intended change to the output:
 *   UPDATE_GOLDEN=1 npx vitest run test/assembler.golden.test.ts
 * then review `git diff test/golden/` against §6 before committing.
 *
 * The blocks come from `runScript` (the shell every step script runs) in this process, with
 * assemble.ts's spec; one test runs assemble.ts as a real process and checks it prints the same
 * bytes.
 *
 * Zones for the sonnet window (effective limit floor(200000 × 0.85) = 170000): Normal 0 tokens,
 * Soft_Warning 110000 (64.7 %), Conservative 130000 (76.4 %), Wrap-up 150000 (88.2 %), Emergency
 * 165000 (97.0 %): the banner rounds down, so 94.99 % never reads 95.0.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingIo, copyIndexedFixture } from './inProcess.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { REPO_ROOT, S1, S2, copyFixture, makeProject, type Project } from './helpers.ts';

const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');
const TSX = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
const GOLDEN_DIR = path.join(REPO_ROOT, 'test', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const NOW = '2025-12-02T12:00:00Z';
const HANG_GUARD_MS = 10_000;

const ENV: NodeJS.ProcessEnv = { ...process.env };
delete ENV.CLAUDE_PROJECT_DIR;
delete ENV.BAZINGA_ROOT;
// The `+N more` line's command is sized into the budget: one launcher text wherever the checkout lies.
ENV.CONTEXT_ASSEMBLER_LAUNCHER = 'node <repo>/skills/context-assembler/bin/context-assembler.cjs';

/** Runs assemble.ts as a real process (markdown); expects exit 0 and returns stdout and stderr. */
function assembleProcess(args: readonly string[]): { stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', TSX, ASSEMBLE, ...args], {
    cwd: REPO_ROOT,
    env: ENV,
    input: '',
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  expect(r.status, r.stderr).toBe(0);
  return { stdout: r.stdout, stderr: r.stderr };
}

/** assemble.ts's spec (skills/context-assembler/scripts/assemble.ts), for the in-process runs. */
const ASSEMBLE_SPEC = {
  name: 'assemble.ts',
  step: 'consume',
  defaultFormat: 'markdown',
  readsStdin: false,
  summary: 'every step in one process: the context block the orchestrator pastes into the spawn prompt',
} as const;

/** Runs assemble in this process, as assemble.ts would (markdown); expects exit 0 and returns stdout and stderr. */
function assemble(args: readonly string[]): { stdout: string; stderr: string } {
  const run = capturingIo(args, { cwd: REPO_ROOT, env: ENV });
  const code = runScript(ASSEMBLE_SPEC, run.io);
  expect(code, run.err()).toBe(0);
  return { stdout: run.out(), stderr: run.err() };
}

/**
 * Compares `actual` with test/golden/<name>, or rewrites it under UPDATE_GOLDEN=1. The command the
 * `+N more` line names runs this checkout's launcher by its absolute path (the fixture copy is
 * outside the checkout): the checkout's path is `<repo>` in the goldens.
 */
function expectGolden(name: string, shown: string): void {
  const actual = shown.split(REPO_ROOT).join('<repo>');
  const file = path.join(GOLDEN_DIR, name);
  if (UPDATE) {
    fs.mkdirSync(GOLDEN_DIR, { recursive: true });
    fs.writeFileSync(file, actual);
  }
  expect(fs.existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 to create it`).toBe(true);
  expect(actual).toBe(fs.readFileSync(file, 'utf8'));
}

let fixture: Project;
beforeAll(() => {
  fixture = copyIndexedFixture('ca-golden-');
});
afterAll(() => fixture.cleanup());

/**
 * Developer in AUTH at iteration 2: four eligible packages (1–4); the default limit ranks three,
 * and the fourth is shown too: today's prompt builder would show all four (the floor).
 */
const request = (tokens: number) => [
  '--project-root', fixture.root,
  '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2',
  '--current-tokens', String(tokens), '--now', NOW, '--dry-run',
];

describe('zone blocks (spec §6, seed 000 Step 5)', () => {
  it("Normal: no banner, Relevant Packages with ids (the builder's four), reasoning, error patterns, strategies", () => {
    const { stdout, stderr } = assemble(request(0));
    expect(stderr).toBe('');
    expectGolden('zone-normal.md', stdout);
    expect(stdout.startsWith('## Context for developer\n\n### Relevant Packages (4/4)\n\n**[CRITICAL]** ')).toBe(true);
    expect(stdout).not.toMatch(/🔶|🚨/);
    // Each package with its id, who wrote it and how long before the spawn.
    expect(stdout).toMatch(/^\*\*\[(CRITICAL|HIGH|MEDIUM|LOW)\]\*\* bazinga\/artifacts\/\S+ \(id \d+; [a-z_]+, (?:<1 h|\d+ [hd]) ago\)\n> \S/m);
    expect(stdout).toContain('\n### Prior Agent Reasoning (4 entries)\n');
    expect(stdout).toContain('\n### Error Patterns (2 matches)\n');
    expect(stdout).toContain('⚠️ **Known Issue**: "');
    expect(stdout).toMatch(/^> \*\*Solution\*\*: .+\n> \*\*Confidence\*\*: 0\.8 \(seen 2 times, last 23 h ago; saved by an agent, fix unverified\)$/m);
    // The LOW package the limit ranked out is the builder's too: shown, so nothing is left out.
    expect(stdout).toContain('**[LOW]** bazinga/artifacts/bazinga_20251201_090000/investigation_build.md (id 4; investigator, 25 h ago)');
    expect(stdout).not.toContain('📦');
    expect(stdout).not.toContain('### Left out');
  });

  it('a strategy or pattern that shares no word with the task says so; one the task names does not', () => {
    const doc = JSON.parse(assemble([...request(0), '--format', 'json']).stdout);
    const stdout = assemble(request(0)).stdout;
    const unmatched = doc.strategies.filter((s: { relevance: number }) => s.relevance === 0);
    expect(unmatched.length).toBeGreaterThan(0);
    for (const s of doc.strategies) {
      expect(s.other_task === true, s.strategy_id).toBe(s.relevance === 0);
      expect(stdout).toContain(`- **${s.topic}** (helpful ${s.helpfulness}×, ${s.provenance}${s.relevance === 0 ? '; not matched to this task' : ''}): `);
    }
    // The builder's own pattern, and one that matches the task's words, are never marked.
    for (const p of doc.error_patterns) if (p.relevance > 0 || p.matched_error || doc.floor.error_patterns.includes(p.fault_hash)) expect(p.other_task).toBeUndefined();
    // A task that names the unmatched one's words: it is matched now, and says nothing.
    const named = JSON.parse(assemble([...request(0), '--task', 'connectivity polling for the offline queue', '--format', 'json']).stdout);
    const architecture = named.strategies.find((s: { topic: string }) => s.topic === 'architecture');
    expect(architecture.relevance).toBeGreaterThan(0);
    expect(architecture.other_task).toBeUndefined();
  });

  it('a real assemble.ts process prints the same bytes as the in-process run (Normal)', () => {
    const real = assembleProcess(request(0));
    expect(real).toEqual(assemble(request(0)));
    expectGolden('zone-normal.md', real.stdout);
  });

  it('Soft_Warning: 🔶 banner with the usage, summaries at most 200 characters', () => {
    const { stdout } = assemble(request(110_000));
    expectGolden('zone-soft-warning.md', stdout);
    expect(stdout.startsWith('## Context for developer\n\n🔶 **Token budget: Soft Warning (64.7%) - Reduced summaries (200 char)**\n\n### Relevant Packages (4/4)\n')).toBe(true);
    for (const line of stdout.split('\n').filter((l) => l.startsWith('> ') && !l.startsWith('> **'))) {
      expect(Array.from(line.slice(2)).length).toBeLessThanOrEqual(200);
    }
    expect(stdout).not.toContain('📦');
  });

  it('Conservative: 🔶 banner, Priority Packages from the ladder (never low) with the level used, summaries at most 100, no overflow line', () => {
    const { stdout } = assemble(request(130_000));
    expectGolden('zone-conservative.md', stdout);
    expect(stdout.startsWith('## Context for developer\n\n🔶 **Token budget: Conservative (76.4%)**\n\n### Priority Packages (3/4) - medium level\n')).toBe(true);
    expect(stdout).not.toContain('**[LOW]**');
    expect(stdout).not.toContain('### Relevant Packages');
    const summaries = stdout.split('### Prior Agent Reasoning')[0]!.split('\n').filter((l) => l.startsWith('> '));
    expect(summaries).toHaveLength(3);
    for (const s of summaries) expect(Array.from(s.slice(2)).length).toBeLessThanOrEqual(100);
    // Shortened with the beginning and the end kept, never cut blind.
    expect(summaries.some((s) => s.includes(' […] '))).toBe(true);
    expect(stdout).not.toContain('📦');
  });

  it('Wrap-up: 🔶 banner and Essential Info Only, nothing queried', () => {
    const { stdout } = assemble(request(150_000));
    expectGolden('zone-wrap-up.md', stdout);
    expect(stdout).toBe(
      [
        '## Context for developer',
        '',
        '🔶 **Token budget: Wrap-up (88.2%) - Completing current operation**',
        '',
        '### Essential Info Only',
        '',
        'Minimal context mode active. Focus on completing current task.',
        '',
        '### Left out',
        '',
        "- Also in BAZINGA's own context section, not shown here: package 2, package 1, package 3, package 4, error pattern 62e443afeef6 (for the zone: Wrap-up at 88.2 % of the window)",
        '',
      ].join('\n'),
    );
  });

  it('Emergency: 🚨 banner, assembly skipped, checkpoint suggested', () => {
    const { stdout } = assemble(request(165_000));
    expectGolden('zone-emergency.md', stdout);
    expect(stdout).toBe(
      [
        '## Context for developer',
        '',
        '🚨 **Token budget: Emergency (97.0%) - Checkpoint recommended**',
        '',
        'Context assembly skipped due to token budget constraints.',
        'Suggest: Complete current operation and start new session.',
        '',
        '### Left out',
        '',
        "- Also in BAZINGA's own context section, not shown here: package 2, package 1, package 3, package 4, error pattern 62e443afeef6 (for the zone: Emergency at 97.0 % of the window)",
        '',
      ].join('\n'),
    );
  });

  it('the zone follows the unrounded percentage: 101999 tokens (59.99 %) is still Normal, 102000 (60 %) is Soft_Warning', () => {
    expect(assemble(request(101_999)).stdout).not.toContain('🔶');
    expect(assemble(request(102_000)).stdout).toContain('🔶 **Token budget: Soft Warning (60.0%)');
  });
});

describe('edge blocks (spec §6, seed 000 Step 6)', () => {
  const EMPTY = [
    '## Context for developer',
    '',
    '### Relevant Packages (0/0)',
    '',
    'No context packages found for this session/group. The agent will proceed with task and specialization context only.',
    '',
  ].join('\n');

  it("empty: a session with no packages or reasoning prints the seed block, then the project's pattern the builder shows every spawn", () => {
    const { stdout } = assemble([
      '--project-root', fixture.root, '--session', 'bazinga_20990101_000000', '--agent', 'developer', '--now', NOW, '--dry-run',
    ]);
    expectGolden('empty.md', stdout);
    // The builder shows error patterns above 0.7 of every project to every spawn: so does the block.
    expect(stdout.startsWith(EMPTY)).toBe(true);
    expect(stdout.slice(EMPTY.length)).toMatch(/^\n### Error Patterns \(1 matches\)\n\n⚠️ \*\*Known Issue\*\*: "ModuleNotFound: [^\n]+\n> \*\*Solution\*\*: [^\n]+\n> \*\*Confidence\*\*: 0\.8 \(seen 2 times, [^\n]+\)\n$/);
  });

  it("a package saved for the developers reaches qa_expert in S2's CHK (a consumer list hides nothing); the project's patterns and strategies follow", () => {
    const { stdout } = assemble([
      '--project-root', fixture.root, '--session', S2, '--group', 'CHK', '--agent', 'qa_expert', '--now', '2025-12-04T12:00:00Z', '--dry-run',
    ]);
    expectGolden('empty-with-learnings.md', stdout);
    expect(stdout.startsWith('## Context for qa_expert\n\n### Relevant Packages (1/1)\n\n**[HIGH]** bazinga/artifacts/bazinga_20251203_140000/')).toBe(true);
    expect(stdout).toContain('(id 7; qa_expert, 21 h ago)');
    expect(stdout).toContain('### Error Patterns (2 matches)');
    expect(stdout).toContain('### Strategies That Worked (3)');
    expect(stdout).not.toContain('### Prior Agent Reasoning');
  });

  it('fallback: a missing database prints the seed fallback block', () => {
    const p = makeProject('ca-golden-nodb-');
    try {
      const { stdout, stderr } = assemble([
        '--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', NOW, '--dry-run',
      ]);
      expect(stderr).toContain('Database not found');
      expectGolden('fallback.md', stdout);
      expect(stdout).toBe(
        [
          '## Context for developer',
          '',
          ':warning: Context assembly encountered an error. Proceeding with minimal context.',
          '',
          '**Fallback Mode**: Task and specialization context only. Context packages unavailable.',
          '',
        ].join('\n'),
      );
    } finally {
      p.cleanup();
    }
  });

  it('disabled: enable_context_assembler false prints one line', () => {
    const p = copyFixture('ca-golden-disabled-');
    try {
      fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { enable_context_assembler: false } }));
      const { stdout, stderr } = assemble([
        '--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', NOW, '--dry-run',
      ]);
      expect(stderr).toBe('');
      expectGolden('disabled.md', stdout);
      expect(stdout.split('\n')).toHaveLength(2); // one line and its newline
      expect(stdout.startsWith('## Context for developer')).toBe(true);
      expect(stdout).toContain('disabled');
    } finally {
      p.cleanup();
    }
  });
});

/**
 * Purpose blocks (issue: purpose-driven tiers): developer in AUTH at iteration 2, under each
 * purpose in each zone, with a budget small enough that something is left out (every agent's
 * context_budget_share 0.004: 680 tokens at 0 used, 240 in Soft_Warning, 160 in Conservative,
 * where Tier 1 alone passes the budget and the overrun is stated).
 */
describe('purpose blocks: each purpose × zone', () => {
  const ZONE_TOKENS = { Normal: 0, Soft_Warning: 110_000, Conservative: 130_000, 'Wrap-up': 150_000, Emergency: 165_000 } as const;
  const PURPOSE_LIST = ['design', 'implementation', 'review', 'handoff', 'subagent'] as const;
  let config: string;
  beforeAll(() => {
    config = path.join(fixture.root, 'small-budget.json');
    const share = Object.fromEntries(['developer', 'senior_software_engineer', 'qa_expert', 'tech_lead', 'investigator', 'requirements_engineer', 'other'].map((a) => [a, 0.004]));
    fs.writeFileSync(config, JSON.stringify({ context_engineering: { context_budget_share: share } }));
  });
  const run = (purpose: string, tokens: number) => assemble([...request(tokens), '--config', config, '--purpose', purpose]);
  const cases = PURPOSE_LIST.flatMap((purpose) => Object.entries(ZONE_TOKENS).map(([zone, tokens]) => ({ purpose, zone, tokens })));

  it.each(cases)('$purpose × $zone', ({ purpose, zone, tokens }) => {
    const { stdout, stderr } = run(purpose, tokens);
    expect(stderr).toBe('');
    expectGolden(`purpose-${purpose}-${zone.toLowerCase().replace('_', '-')}.md`, stdout);
    expect(stdout.startsWith('## Context for developer\n')).toBe(true);
    if (zone === 'Wrap-up' || zone === 'Emergency') {
      // Nothing is queried there: the purpose changes nothing.
      expect(stdout).toBe(assemble(request(tokens)).stdout);
      return;
    }
    // Tier 1 whatever the purpose and budget: the group's critical failures package (its summary at the zone's cap).
    // (Its provenance marks go first when the budget leaves a package out.)
    expect(stdout).toMatch(/\*\*\[CRITICAL\]\*\* bazinga\/artifacts\/bazinga_20251201_090000\/failures_AUTH_iter1\.md \(id 2(; qa_expert, 20 h ago)?\)\n> 3 auth tests fail: refresh reuse undetected, expired /);
    // Something is left out at this budget (but at Normal's 680 tokens, where a purpose's candidates
    // may all fit beside navigation lines held to an eighth of the budget: then the block names
    // nothing left out), and the block says what where its report fits the budget (the block never
    // passes it for the report); the JSON's report always does.
    const report = JSON.parse(assemble([...request(tokens), '--config', config, '--purpose', purpose, '--format', 'json']).stdout).truncation;
    const leftOut = Object.values(report.left_out).reduce((a: number, b) => a + (b as number), 0);
    if (leftOut === 0) {
      expect(zone).toBe('Normal');
      expect(stdout).not.toContain('### Left out');
      expect(stdout).not.toContain('📦 +');
    }
    expect(report.used).toBeLessThanOrEqual(report.budget + report.overrun);
    if (report.shown) expect(stdout).toMatch(/\n### Left out\n\n(- Over budget by \d+ tokens \(\d+ of \d+\): Tier 1 is never cut\n)?- \d+ /);
    // Without room for the report the block still names what the builder would show that it left
    // out, and when that line and Tier 1 pass the budget together, says by how much.
    else expect(stdout).not.toMatch(/\n### Left out\n\n- (?!Also in BAZINGA|Over budget by \d+ tokens \(\d+ of \d+\): (?:Tier 1 is never cut|the block's own lines alone pass the budget)\n- Also in BAZINGA)/);
    if (purpose === 'handoff') {
      const at = ['### Position', '### Pending work', '### Active decisions', '### Key learnings', '### Verification commands'].map((h) => stdout.indexOf(`\n${h}\n`));
      expect(at.every((i) => i > 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
      expect(stdout).not.toContain('### Relevant Packages');
    } else {
      expect(stdout).toMatch(/\n### (Relevant|Priority) Packages \(/);
    }
  });

  it('purposes differ: what each keeps at the same budget', () => {
    // At a budget of 510 tokens the purposes' tiers and kind orders decide what fits: at least four
    // different blocks (at 680 most purposes fit every candidate).
    const tighter = path.join(fixture.root, 'tighter-budget.json');
    const share = JSON.parse(fs.readFileSync(config, 'utf8')).context_engineering.context_budget_share;
    fs.writeFileSync(tighter, JSON.stringify({ context_engineering: { context_budget_share: Object.fromEntries(Object.keys(share).map((a) => [a, 0.003])) } }));
    const blocks = new Map(PURPOSE_LIST.map((p) => [p, assemble([...request(0), '--config', tighter, '--purpose', p]).stdout]));
    expect(new Set(blocks.values()).size).toBeGreaterThanOrEqual(PURPOSE_LIST.length - 1);
    // Design holds the group's research as essential; implementation does not.
    // At the default budget, with room in Tier 1 for all it is given (its count raised): what each
    // purpose holds essential (a bounded Tier 1 keeps the table's first rules, research after them).
    const roomy = path.join(fixture.root, 'roomy-tier1.json');
    fs.writeFileSync(roomy, JSON.stringify({ context_engineering: { purposes: { tier1_max_items: 20 } } }));
    const json = (purpose: string) => JSON.parse(assemble([...request(0), '--config', roomy, '--purpose', purpose, '--format', 'json']).stdout);
    const tierOfPackage = (doc: any, id: number) => doc.packages.find((p: any) => p.id === id)?.tier ?? doc.excluded.find((e: any) => e.kind === 'package' && e.id === id)?.tier;
    expect(tierOfPackage(json('design'), 1)).toBe(1);
    expect(tierOfPackage(json('implementation'), 1)).toBe(2);
    // purposes.tier1_max_items as shipped (4): the research is one of the builder's own items, so it
    // is admitted on the block's room alone and keeps Tier 1 however many items the table puts before it.
    expect(tierOfPackage(JSON.parse(assemble([...request(0), '--purpose', 'design', '--format', 'json']).stdout), 1)).toBe(1);
    // The agent's default purpose is its purposes.by_agent entry.
    expect(JSON.parse(assemble([...request(0), '--format', 'json']).stdout).purpose).toBe('implementation');
  });

  it('purposes.by_agent and purposes.splits in config change the block', () => {
    const share = JSON.parse(fs.readFileSync(config, 'utf8')).context_engineering.context_budget_share;
    const custom = path.join(fixture.root, 'custom-purposes.json');
    fs.writeFileSync(
      custom,
      JSON.stringify({ context_engineering: { context_budget_share: share, purposes: { by_agent: { developer: 'handoff' }, splits: { handoff: [100, 0, 0] } } } }),
    );
    const doc = JSON.parse(assemble([...request(0), '--config', custom, '--format', 'json']).stdout);
    expect(doc.purpose).toBe('handoff');
    expect(doc.truncation.tiers.map((t: any) => t.share)).toEqual([1, 0, 0]);
    // With the whole budget Tier 1's, Tier 2 gets what Tier 1 leaves and Tier 3 nothing of its own:
    // more for Tier 2 than the shipped handoff split (70/20/10) gives it at the same budget.
    const shipped = JSON.parse(assemble([...request(0), '--config', config, '--purpose', 'handoff', '--format', 'json']).stdout);
    expect(shipped.truncation.tiers.map((t: any) => t.share)).toEqual([0.7, 0.2, 0.1]);
    expect(doc.truncation.tiers[1].allowance).toBeGreaterThan(shipped.truncation.tiers[1].allowance);
    expect(doc.truncation.tiers[1].allowance).toBeLessThanOrEqual(doc.truncation.budget - doc.truncation.tiers[0].used);
    // At 595 tokens the split decides what fits: the shipped split for handoff (70/20/10) leaves a
    // different block there (at 680 both keep the same rest).
    const tight = Object.fromEntries(Object.keys(share).map((a) => [a, 0.0035]));
    const tightShipped = path.join(fixture.root, 'tight-shipped.json');
    const tightCustom = path.join(fixture.root, 'tight-custom.json');
    fs.writeFileSync(tightShipped, JSON.stringify({ context_engineering: { context_budget_share: tight } }));
    fs.writeFileSync(tightCustom, JSON.stringify({ context_engineering: { context_budget_share: tight, purposes: { by_agent: { developer: 'handoff' }, splits: { handoff: [100, 0, 0] } } } }));
    const md = assemble([...request(0), '--config', tightCustom]).stdout;
    expect(md).toContain('\n### Position\n');
    expect(md).not.toBe(assemble([...request(0), '--config', tightShipped, '--purpose', 'handoff']).stdout);
  });
});
