/**
 * The handoff layout (--purpose handoff): Position → Pending work → Active decisions → Key
 * learnings → Verification commands, each filled only from the records: the newest completion
 * reasoning, the failures packages, the decisions, the learnings, and the test commands the
 * delivered packages (their artifacts included) and entries quote. Nothing is invented: a section
 * with nothing to show says so. On a project built with bazinga-db's own commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { capturingIo, runBazingaDbInProcess } from './inProcess.ts';
import { makeProject, writeArtifact, type Project } from './helpers.ts';

const S = 'bazinga_20251210_100000';
const NOW = '2025-12-10T12:00:00Z';
const ASSEMBLE = { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' } as const;

let project: Project;
const db = (...args: string[]) => {
  const r = runBazingaDbInProcess(['--quiet', '--project-root', project.root, ...args], { cwd: project.root, env: {} });
  expect(r.code, r.stderr).toBe(0);
  return r.json;
};
const assemble = (...args: string[]) => {
  const run = capturingIo(['--project-root', project.root, '--session', S, '--group', 'PAY', '--now', NOW, '--dry-run', ...args], { cwd: project.root, env: {} });
  expect(runScript(ASSEMBLE, run.io), run.err()).toBe(0);
  return run.out();
};

beforeAll(() => {
  project = makeProject('ca-handoff-');
  db('create-session', S, 'simple', 'Payments');
  db('create-task-group', 'PAY', S, 'Payments API', '--component_path', 'src/pay/');
  const failures = writeArtifact(project, S, 'failures_PAY_iter1.md', '# Failing\n\nRefund rounding is off by one cent.\n\nReproduce:\n\n```bash\n$ npm test -- src/pay/refund\n```\n');
  db('save-context-package', S, 'PAY', 'failures', failures, 'qa_expert', '["developer","tech_lead"]', 'critical', 'Refund rounding off by one cent');
  const decisions = writeArtifact(project, S, 'decisions_PAY.md', '# Decisions\nAmounts are integer cents everywhere.\n');
  db('save-context-package', S, 'PAY', 'decisions', decisions, 'tech_lead', '["developer","tech_lead"]', 'high', 'Amounts are integer cents; never floats');
  const research = writeArtifact(project, S, 'research_PAY.md', '# Research\nStripe idempotency keys.\n');
  db('save-context-package', S, 'PAY', 'research', research, 'investigator', '["developer","tech_lead"]', 'medium', 'Use idempotency keys on every Stripe call; check with `npm run lint`');
  // In the order an agent writes them (a block keeps the newest two of each producer).
  db('save-reasoning', S, 'PAY', 'qa_expert', 'understanding', 'Refunds go through the same ledger as charges', '--iteration', '1');
  db('save-reasoning', S, 'PAY', 'developer', 'decisions', 'Chose banker rounding for refunds to match the ledger', '--iteration', '1');
  db('save-reasoning', S, 'PAY', 'developer', 'completion', 'Refund endpoint done; rounding test still red', '--iteration', '1');
});
afterAll(() => project?.cleanup());

describe('purpose handoff', () => {
  it('orders the block Position → Pending work → Active decisions → Key learnings → Verification commands, from the records', () => {
    const md = assemble('--agent', 'tech_lead', '--purpose', 'handoff', '--iteration', '1');
    const headings = ['### Position', '### Pending work', '### Active decisions', '### Key learnings', '### Verification commands'];
    const at = headings.map((h) => md.indexOf(`\n${h}\n`));
    expect(at.every((i) => i > 0), md).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const section = (i: number) => md.slice(at[i] as number, i + 1 < at.length ? at[i + 1] : undefined);
    // Each entry and package with its provenance marks (its iteration, its author).
    expect(section(0)).toMatch(/\*\*\[developer\] completion \(it\. 1[^)]*\):\*\* Refund endpoint done; rounding test still red/);
    expect(section(1)).toMatch(/\*\*\[CRITICAL\]\*\* bazinga\/artifacts\/bazinga_20251210_100000\/failures_PAY_iter1\.md \(id 1; qa_expert[^)]*\)/);
    expect(section(2)).toMatch(/\*\*\[developer\] decisions \(it\. 1[^)]*\):\*\* Chose banker rounding/);
    expect(section(2)).toContain('> Amounts are integer cents; never floats');
    expect(section(3)).toContain('> Use idempotency keys on every Stripe call');
    expect(section(3)).toMatch(/\*\*\[qa_expert\] understanding \(it\. 1[^)]*\):\*\* Refunds go through the same ledger/);
    // From the failures artifact's fenced block and the research summary's backticks, with where each was found.
    expect(section(4)).toContain('- `npm test -- src/pay/refund` (from package 1)\n- `npm run lint` (from package 3)');
    expect(md).not.toContain('### Relevant Packages');
  });

  it('a section with nothing in the records says so, nothing is invented', () => {
    // A developer's first attempt: no reasoning, so no position; the commands are exactly those the
    // delivered packages quote, each with where it was found. The explicit limit of 2 leaves the
    // research package out (the prompt builder would show it: the block names it), and its command too.
    const md = assemble('--agent', 'developer', '--purpose', 'handoff', '--limit', '2');
    expect(md).toContain('\n### Position\n\n_None recorded._\n');
    expect(md).toContain('\n### Verification commands\n\n- `npm test -- src/pay/refund` (from package 1)\n');
    expect(md).not.toContain('npm run lint');
    expect(md).toContain("Also in BAZINGA's own context section, not shown here: package 3 (past the limit)");
    expect(md.split('\n').filter((l) => l.startsWith('- `'))).toHaveLength(1);
  });

  it('the JSON carries the commands with their source, and every other purpose leaves them out', () => {
    const doc = JSON.parse(assemble('--agent', 'tech_lead', '--purpose', 'handoff', '--iteration', '1', '--format', 'json'));
    expect(doc.verification_commands).toEqual([
      { command: 'npm test -- src/pay/refund', source: 'package 1' },
      { command: 'npm run lint', source: 'package 3' },
    ]);
    const review = JSON.parse(assemble('--agent', 'tech_lead', '--iteration', '1', '--format', 'json'));
    expect(review.purpose).toBe('review');
    expect(review.verification_commands).toBeUndefined();
  });
});
