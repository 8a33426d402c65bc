/**
 * The builder's section is the floor, offline: spawns of the parity grid
 * (test/parity/grid.ts) on a project with the stand-in builder (the real builder's selection rules
 * and formats), every write through this product's bazinga-db, the prompt hook installed and run
 * as Claude Code runs it. Per spawn: every package, reasoning entry and error pattern the builder's
 * own section shows is in the product's block or named there as left out with a reason, and every
 * byte outside the markers is the builder's. `npm run eval:parity` measures the same against the
 * real BAZINGA. The first part checks the instrument itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, type Project } from './helpers.ts';
import { installStandInBuilder } from './standInBuilder.ts';
import { readBuilderSection, type FloorItem } from './parity/builderSection.ts';
import { GRID, OFFLINE_SPAWNS } from './parity/grid.ts';
import { measureSpawn, type SpawnMeasure } from './parity/measure.ts';
import { judge } from './parity/presence.ts';
import { installProduct } from './parity/project.ts';
import { runGrid } from './parity/run.ts';
import { productWriter } from './parity/writers.ts';

const pkg = (id: number): FloorItem => ({ kind: 'package', id, priority: 'critical', packageType: 'failures', filePath: 'f.md', summary: 's', groupId: 'AUTH', producer: 'qa_expert', consumers: ['developer'], line: '' });
const reasoning = (id: number, content: string): FloorItem => ({ kind: 'reasoning', id, agent: 'developer', phase: 'approach', content, groupId: 'AUTH', line: '' });
const pattern = (hash: string, messagePattern: string): FloorItem => ({ kind: 'error_pattern', hashes: [hash], projects: ['acme-web'], errorType: 'TypeError', messagePattern, line: '' });
const APPROACH = 'Add rotateRefreshToken() in auth/refresh.ts:\n1. look up the token hash\n2. issue the new pair\n3. mark the old one used';

describe('the instrument: presence, stated absence, silence', () => {
  it.each([
    { name: 'a package by its id mark', block: '**[CRITICAL]** f.md (id 12)\n> s', item: pkg(12), expected: 'present' },
    { name: 'another id is not it', block: '**[CRITICAL]** f.md (id 120)\n> s', item: pkg(12), expected: 'silent' },
    { name: 'a package left out with its reason', block: '### Left out\n\n- package 12 past the limit (5 shown)', item: pkg(12), expected: 'stated' },
    { name: 'a package named without a reason stays silent', block: '- Most relevant left out: package 12, package 14', item: pkg(12), expected: 'silent' },
    { name: 'a reasoning entry by its first 60 characters, whitespace collapsed', block: `**[developer] approach:** ${APPROACH.replace(/\n/g, ' ')}`, item: reasoning(7, APPROACH), expected: 'present' },
    { name: 'a reasoning entry named by id outside a list line', block: 'see reasoning 7 above', item: reasoning(7, 'x'.repeat(80)), expected: 'present' },
    { name: 'a reasoning entry named on a - line with a reason', block: '- reasoning 7 left out for budget (812 of 800 tokens)', item: reasoning(7, 'x'.repeat(80)), expected: 'stated' },
    { name: 'a pattern by the head of its message_pattern', block: '⚠️ **Known Issue**: "TypeError: Cannot read properties of undefined (reading \'...\') line N"', item: pattern('00497d12aa', "Cannot read properties of undefined (reading '...') line N"), expected: 'present' },
    { name: 'a pattern stated by the first 8 digits of its hash', block: '- error pattern 00497d12aa31 left out: tier share', item: pattern('00497d12aa', 'Cannot read'), expected: 'stated' },
    { name: 'a pattern nowhere', block: '## Context for developer', item: pattern('00497d12aa', 'Cannot read'), expected: 'silent' },
  ])('$name', ({ block, item, expected }) => {
    expect(judge(block, item).status).toBe(expected);
  });

  it("reads the builder's section into its rows and measures a replaced section byte for byte", () => {
    const line = '**[HIGH]** bazinga/artifacts/S/a.md\n> alpha\n\n';
    const section = `## Context from Prior Work\n\n### Relevant Context\n\n${line}`;
    const rest = '## Skills Checklist\n\n- [ ] lint-check\n';
    const builder = Buffer.from(`${section}\n\n${rest}`);
    const candidates = { package: [{ order: 0, item: { ...pkg(3), line } }], reasoning: [], error_pattern: [] };
    const read = readBuilderSection(builder.toString('utf8'), candidates);
    expect(read).toMatchObject({ found: true, end: section.length, ambiguous: [] });
    expect(read.unread).toBeUndefined();
    expect(read.items.map((i) => i.kind === 'package' && i.id)).toEqual([3]);
    const spawn = { id: 'X', scenario: 's', agent: 'developer', group: 'AUTH', what: 'w' };
    const block = '<!-- context-assembler:begin -->\n## Context for developer\n\n**[HIGH]** a.md (id 3)\n> alpha\n<!-- context-assembler:end -->\n\n';
    expect(measureSpawn(spawn, builder, read, Buffer.from(`${block}${rest}`))).toMatchObject({ outcome: 'replaced', identical: true, items: [{ verdict: { status: 'present' } }] });
    // One byte of the builder's rest changed: not identical.
    expect(measureSpawn(spawn, builder, read, Buffer.from(`${block}${rest.replace('lint', 'Lint')}`))).toMatchObject({ identical: false });
    // The builder's prompt as it was: every item counts as present.
    expect(measureSpawn(spawn, builder, read, builder)).toMatchObject({ outcome: 'kept', identical: true, items: [{ verdict: { status: 'present' } }] });
  });
});

let project: Project;
const measures = new Map<string, SpawnMeasure>();
const measureOf = (id: string): SpawnMeasure => {
  const m = measures.get(id);
  if (m === undefined) throw new Error(`spawn ${id} was not measured`);
  return m;
};

beforeAll(async () => {
  project = makeProject('ca-parity-');
  installStandInBuilder(project.root);
  installProduct(project.root);
  const env: NodeJS.ProcessEnv = { ...process.env, CONTEXT_ASSEMBLER_NO_SERVER: '1' };
  for (const k of ['CLAUDE_PROJECT_DIR', 'BAZINGA_ROOT', 'BAZINGA_PROMPT_FILE_LIMIT', 'BUILDER_TRIM']) delete env[k];
  const run = await runGrid({ root: project.root, writers: [productWriter(project.root)], wallClock: false, env }, GRID, { only: new Set(OFFLINE_SPAWNS) });
  for (const m of run.measures) measures.set(m.id, m);
}, 120_000);
afterAll(() => project?.cleanup());

describe("the builder's section is the floor (stand-in builder, this product's bazinga-db, the hook as Claude Code runs it)", () => {
  it.each(OFFLINE_SPAWNS)("%s: the builder's section is read to its end, and lists items", (id) => {
    const m = measureOf(id);
    expect(m.problems).toEqual([]);
    expect(m.items.length).toBeGreaterThan(0);
  });

  it.each(OFFLINE_SPAWNS)('%s: every builder item is in the block, or the block says why it is left out', (id) => {
    const m = measureOf(id);
    const silent = m.items.filter((i) => i.verdict.status === 'silent').map((i) => i.label);
    expect(silent, `${m.agent} ${m.group} (${m.what}), hook: ${m.outcome}\n${m.blockText ?? ''}`).toEqual([]);
  });

  it.each(OFFLINE_SPAWNS)("%s: every byte outside the markers is the builder's", (id) => {
    const m = measureOf(id);
    expect(m.identical, m.difference).toBe(true);
  });
});
