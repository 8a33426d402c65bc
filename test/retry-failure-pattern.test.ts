/**
 * A retry gets its failure's own error pattern first. Faults are planted in two tiny projects and
 * run through the real tools (the project's own tsc: TS2554 "Expected 3 arguments, but got 2.";
 * vitest: a failed toBe). The same faults were met before in another group, with other values,
 * and saved through bazinga-db's save-error-pattern, beside patterns that only share words with
 * the failure or the task (TS2339, TS2741, TS2304, TS2307, a toEqual AssertionError), more
 * confident than the matching ones. The failure is then put where BAZINGA puts it: only in the
 * group's failures package (summary and artifact), only in the params file's qa_feedback, in both;
 * and assemble runs without a task, with --task, with --error and with --params-file (which always
 * gives a task). Every time, the block's first error pattern is the failure's own.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ASSEMBLE } from '../skills/context-assembler/scripts/lib/main.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import type { AssemblyDoc } from '../skills/context-assembler/scripts/lib/contract.ts';
import { faultSignature } from '../skills/bazinga-db/scripts/lib/faultSignature.ts';
import { REPO_ROOT, makeProject, runScript as runProcess, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const NOW = '2025-12-02T12:00:00Z';
const S = 'bazinga_20251202_100000';
const TASK_TITLE = 'Cart line totals';
const TASK_REQUIREMENTS = 'lineTotal takes price, quantity and discount; the cart total sums every cart line total';
const TASK = `${TASK_TITLE}\n\n${TASK_REQUIREMENTS}`;

let dir: string;
/** The real outputs of the planted faults. */
const output = { tsc: '', vitest: '' };

const toolRun = (args: string[], cwd: string) => {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', CI: '1' }, timeout: 120_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-retry-fault-'));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  write('ts/tsconfig.json', JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'esnext', moduleResolution: 'bundler' }, include: ['src'] }));
  write('ts/src/cart.ts', 'export function lineTotal(price: number, quantity: number, discount: number): number {\n  return price * quantity - discount;\n}\nexport const total = lineTotal(12, 3);\n');
  output.tsc = toolRun([path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], path.join(dir, 'ts'));
  write('vt/vitest.config.mjs', 'export default { test: { include: ["*.test.mjs"] } };\n');
  write('vt/cart.test.mjs', "import { expect, it } from 'vitest';\nconst lineTotal = (price, quantity) => price * quantity;\nit('totals a line', () => {\n  expect(lineTotal(2, 2)).toBe(5);\n});\n");
  output.vitest = toolRun([path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', '.'], path.join(dir, 'vt'));
  // What the tools printed is what the cases below are about.
  expect(output.tsc).toMatch(/^src\/cart\.ts\(4,\d+\): error TS2554: Expected 3 arguments, but got 2\.$/m);
  expect(output.vitest).toMatch(/AssertionError: expected 4 to be 5 \/\/ Object\.is equality/);
}, 240_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A pattern as an agent saves it: type, message, solution; raised to a confidence by reviews that passed. */
interface Saved {
  type: string;
  message: string;
  solution: string;
  /** update-error-confidence successes after the save (0.5 + 0.1 each). */
  passes: number;
}

/** The same faults met in another group, with other values: what the retry's failure must find. */
const OWN = {
  tsc: { type: 'TS2554', message: 'Expected 4 arguments, but got 1.', solution: 'Pass every argument the function declares (price, quantity, discount).', passes: 2 },
  vitest: { type: 'AssertionError', message: 'expected 6 to be 7 // Object.is equality', solution: 'The expected line total counted the discount twice; compute it once.', passes: 2 },
} satisfies Record<string, Saved>;

/** Patterns that share words with the failures or the task, more confident than the failure's own. */
const DECOYS: Saved[] = [
  { type: 'TS2339', message: "Property 'discount' does not exist on type 'CartLine'.", solution: 'Add discount to the CartLine type before the cart line total is computed.', passes: 4 },
  { type: 'TS2741', message: "Property 'quantity' is missing in type '{ price: number; }' but required in type 'CartLine'.", solution: 'Pass quantity with every cart line: lineTotal takes price and quantity.', passes: 4 },
  { type: 'TS2304', message: "Cannot find name 'lineTotal'.", solution: 'Import lineTotal from the cart module before the cart total sums the lines.', passes: 4 },
  { type: 'TS2307', message: "Cannot find module './cart' or its corresponding type declarations.", solution: 'The cart totals module moved; expected arguments are unchanged.', passes: 4 },
  { type: 'AssertionError', message: "expected [ 'cart', 'total' ] to deeply equal [ 'cart' ] // Object.is equality", solution: 'The cart total test compares every cart line; sort the lines first.', passes: 4 },
];

interface Store {
  project: Project;
  /** The pattern hash of each saved pattern, by its type and message. */
  hashOf: Map<string, string>;
}

function db(project: Project, ...args: string[]): any {
  const r = bazingaDbIn(project, args);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
}

/** A project whose session has the CART group, and the patterns saved in another project id (BAZINGA's sessions record none: every project's are read). */
function store(): Store {
  const project = makeProject('ca-retry-fault-');
  db(project, 'create-session', S, 'simple', 'A shop: cart totals, orders, sign-in');
  db(project, 'create-task-group', 'CART', S, 'Cart totals', '--component_path', 'src/cart/');
  const hashOf = new Map<string, string>();
  for (const p of [...DECOYS, OWN.tsc, OWN.vitest]) {
    const saved = db(project, 'save-error-pattern', 'shop', p.type, p.message, p.solution);
    const hash = saved.pattern_hash as string;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    for (let i = 0; i < p.passes; i++) db(project, 'update-error-confidence', hash, 'shop', 'success');
    hashOf.set(`${p.type}: ${p.message}`, hash);
  }
  return { project, hashOf };
}

const hashOf = (s: Store, p: Saved) => s.hashOf.get(`${p.type}: ${p.message}`) as string;

/** QA's failures package of the CART group: a prose summary, the tool's output in its artifact. */
function failuresPackage(s: Store, tool: 'tsc' | 'vitest', name = `qa-failures-${tool}.md`): void {
  const file = writeArtifact(s.project, S, name, `# QA failures\n\nThe ${tool} run fails:\n\n${output[tool]}\n`);
  db(s.project, 'save-context-package', S, 'CART', 'failures', file, 'qa_expert', '["developer"]', 'high', `QA: the ${tool} run fails in the cart module`);
}

/** The params file the orchestrator writes for the developer's retry. */
function paramsFile(s: Store, feedback: string | null, tlFeedback: string | null = null): string {
  const folder = path.join(s.project.root, 'bazinga', 'prompts', S);
  fs.mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'params_developer_CART.json');
  const params: Record<string, string> = {
    agent_type: 'developer',
    session_id: S,
    group_id: 'CART',
    task_title: TASK_TITLE,
    task_requirements: TASK_REQUIREMENTS,
    branch: 'feature/cart',
    mode: 'simple',
    testing_mode: 'full',
    model: 'sonnet',
    output_file: `bazinga/prompts/${S}/developer_CART.md`,
  };
  if (feedback !== null) params.qa_feedback = feedback;
  if (tlFeedback !== null) params.tl_feedback = tlFeedback;
  fs.writeFileSync(file, JSON.stringify(params, null, 2));
  return file;
}

/** One assembly for the developer's retry on CART (in process, a dry run): its JSON and its markdown block. */
function assemble(s: Store, args: readonly string[]): { doc: AssemblyDoc; block: string } {
  const run = (format: string) => {
    const c = capturingIo(['--project-root', s.project.root, '--now', NOW, '--dry-run', '--format', format, ...args], { cwd: s.project.root });
    const code = runScript(ASSEMBLE, c.io);
    expect(code, c.err()).toBe(0);
    return c.out();
  };
  return { doc: JSON.parse(run('json')) as AssemblyDoc, block: run('markdown') };
}

/** The block's error patterns in order: the JSON's hashes and the markdown's "Known Issue" lines. */
const shownHashes = (doc: AssemblyDoc) => (doc.error_patterns ?? []).map((p) => p.pattern_hash);
const knownIssues = (block: string) => [...block.matchAll(/^⚠️ \*\*Known Issue\*\*: "(.*)"$/gm)].map((m) => m[1] as string);

const FLAGS = ['--session', S, '--group', 'CART', '--agent', 'developer', '--iteration', '1'];

/** How a case runs assemble: the request's own flags, with or without a task, or the params file. */
type Run = 'no task' | '--task' | '--params-file';
const RUNS: Run[] = ['no task', '--task', '--params-file'];

function argsOf(s: Store, run: Run, feedback: string | null): string[] {
  if (run === '--params-file') return ['--params-file', paramsFile(s, feedback)];
  const error = feedback === null ? [] : ['--error', feedback];
  return [...FLAGS, ...error, ...(run === '--task' ? ['--task', TASK] : [])];
}

const cleanups: Project[] = [];
afterAll(() => {
  for (const p of cleanups) p.cleanup();
});

function storeOnce(): Store {
  const s = store();
  cleanups.push(s.project);
  return s;
}

describe("a retry's error patterns: the failure's own first", () => {
  const cases = (['tsc', 'vitest'] as const).flatMap((tool) =>
    (['failures package', 'qa_feedback', 'both'] as const).flatMap((place) => RUNS.map((run) => ({ tool, place, run }))),
  );

  it.each(cases)('$tool output in $place, $run: the pattern of its fault is the first shown', ({ tool, place, run }) => {
    const s = storeOnce();
    if (place !== 'qa_feedback') failuresPackage(s, tool);
    const feedback = place === 'failures package' ? null : output[tool];
    const { doc, block } = assemble(s, argsOf(s, run, feedback));
    const own = OWN[tool];
    expect(doc.request.task !== null, 'a task is given exactly when the run gives one').toBe(run !== 'no task');
    const shown = shownHashes(doc);
    expect(shown[0], JSON.stringify(doc.error_patterns?.map((p) => `${p.error_type}: ${p.message_pattern}`))).toBe(hashOf(s, own));
    expect(doc.error_patterns?.[0]).toMatchObject({ failure_fault: true, matched_error: true, tier: 1 });
    // The others only share words: none of them is the failure's own.
    expect(doc.error_patterns?.slice(1).every((p) => p.failure_fault === undefined)).toBe(true);
    expect(knownIssues(block)[0]).toBe(`${own.type}: ${own.message}`);
  });

  it("two faults, one in the failures package (tsc) and one in qa_feedback (vitest): both patterns lead, before every decoy", () => {
    for (const run of RUNS) {
      const s = storeOnce();
      failuresPackage(s, 'tsc');
      const { doc } = assemble(s, argsOf(s, run, output.vitest));
      expect(new Set(shownHashes(doc).slice(0, 2)), run).toEqual(new Set([hashOf(s, OWN.tsc), hashOf(s, OWN.vitest)]));
    }
  });

  it("two faults in one params file (QA's vitest output, the tech lead's tsc output, joined): both patterns lead", () => {
    const s = storeOnce();
    const { doc } = assemble(s, ['--params-file', paramsFile(s, output.vitest, output.tsc)]);
    expect(doc.request.error).toContain('TS2554');
    expect(new Set(shownHashes(doc).slice(0, 2))).toEqual(new Set([hashOf(s, OWN.tsc), hashOf(s, OWN.vitest)]));
  });

  it('without a failure the same store shows the most confident patterns, none marked as the failure\'s own (the rule needs a failure)', () => {
    const s = storeOnce();
    const { doc } = assemble(s, FLAGS);
    const shown = shownHashes(doc);
    expect(shown).not.toContain(hashOf(s, OWN.tsc));
    expect(shown).not.toContain(hashOf(s, OWN.vitest));
    expect(doc.error_patterns?.every((p) => p.failure_fault === undefined)).toBe(true);
  });

  it('the failure\'s own pattern below the confidence threshold is not shown (the threshold still holds)', () => {
    const s = storeOnce();
    db(s.project, 'update-error-confidence', hashOf(s, OWN.tsc), 'shop', 'failure');
    failuresPackage(s, 'tsc');
    const { doc } = assemble(s, [...FLAGS, '--task', TASK]);
    expect(shownHashes(doc)).not.toContain(hashOf(s, OWN.tsc));
  });

  it('a real process (the tsx launcher) with --params-file gives the same first pattern', () => {
    const s = storeOnce();
    failuresPackage(s, 'tsc');
    const r = runProcess(path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts'), [
      '--project-root',
      s.project.root,
      '--now',
      NOW,
      '--dry-run',
      '--format',
      'json',
      '--params-file',
      paramsFile(s, output.vitest),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(new Set((r.json as AssemblyDoc).error_patterns?.slice(0, 2).map((p) => p.pattern_hash))).toEqual(new Set([hashOf(s, OWN.tsc), hashOf(s, OWN.vitest)]));
  });
});

describe('one fault signs once: a number that ends a sentence is a number', () => {
  it.each([
    { a: 'Expected 3 arguments, but got 2.', b: 'Expected 4 arguments, but got 1.' },
    { a: 'Expected 1 arguments, but got 0.\nmore', b: 'Expected 2 arguments, but got 3.\nmore' },
    { a: 'Retried 3 times, gave up after 2.', b: 'Retried 5 times, gave up after 12.' },
  ])('$a ~ $b', ({ a, b }) => {
    expect(faultSignature(a)).toEqual(faultSignature(b));
    expect(faultSignature(a).message_pattern).not.toMatch(/\d/);
  });

  it.each([
    { text: 'requires node 1.2.3.', pattern: 'requires node 1.2.3.' },
    { text: 'bad value 2.x', pattern: 'bad value 2.x' },
    { text: 'got 2.5.', pattern: 'got N.' },
    { text: 'got -7.', pattern: 'got N.' },
  ])('$text → $pattern (a dotted version or a word stays)', ({ text, pattern }) => {
    expect(faultSignature(text).message_pattern).toBe(pattern);
  });
});
