/**
 * core/standing.ts: held, contradicted, unreviewed, read from a group's review state and failures.
 */
import { describe, expect, it } from 'vitest';
import { failureIteration, packageStanding, reasoningStanding, type Failure, type GroupReview } from '../skills/context-assembler/scripts/lib/core/standing.ts';

const open: GroupReview = { group_id: 'AUTH', revision_count: 0, passed: false, reviewed_at: null };
const passed: GroupReview = { group_id: 'AUTH', revision_count: 1, passed: true, reviewed_at: '2026-01-01 12:00:00' };
const failure = (id: number, at: string, iteration: number | null): Failure => ({ id, group_id: 'AUTH', created_at: at, iteration });
const entry = (agent: string, phase: string, iteration: number | null, at: string) => ({ agent_type: agent, phase, group_id: 'AUTH', iteration, timestamp: at });

describe('standing', () => {
  it.each([
    ['a completion QA failed after, same iteration', entry('developer', 'completion', 1, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'contradicted', 'failures package 6'],
    ['a completion QA failed for another iteration', entry('developer', 'completion', 2, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
    ['a completion before a failure that names no iteration', entry('senior_software_engineer', 'decisions', 1, '2026-01-01 10:00:00'), open, [failure(7, '2026-01-01 11:00:00', null)], 'contradicted', 'failures package 7'],
    ['a completion written after the failure (the fix)', entry('developer', 'completion', 1, '2026-01-01 11:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
    ['an iteration the review sent back', entry('developer', 'decisions', 0, '2026-01-01 09:00:00'), { ...open, revision_count: 1 }, [], 'contradicted', 'the review that sent iteration 0 back'],
    ['a completion before the passing review', entry('developer', 'completion', 1, '2026-01-01 11:00:00'), passed, [], 'held', 'the passing review of AUTH'],
    ['written after the passing review', entry('developer', 'completion', 1, '2026-01-01 13:00:00'), passed, [], 'unreviewed', null],
    ["QA's diagnosis is no claim: held by the passing review", entry('qa_expert', 'decisions', 0, '2026-01-01 10:40:00'), passed, [failure(6, '2026-01-01 10:50:00', 0)], 'held', 'the passing review of AUTH'],
    ['an understanding entry is no claim', entry('developer', 'understanding', 1, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
  ])('%s', (_name, e, review, failures, standing, by) => {
    expect(reasoningStanding(e, review, failures)).toEqual({ standing, by });
  });

  it('a session-wide entry has no group to review it', () => {
    expect(reasoningStanding({ ...entry('developer', 'completion', 1, '2026-01-01 10:00:00'), group_id: 'global' }, passed, [])).toEqual({ standing: 'unreviewed', by: null });
  });

  it("packages: the developer's handoff a later failure answered is contradicted; a failures package never is; research before a pass is held", () => {
    const f = [failure(9, '2026-01-01 10:30:00', 1)];
    expect(packageStanding({ producer_agent: 'developer', package_type: 'handoff', group_id: 'AUTH', created_at: '2026-01-01 10:00:00' }, open, f)).toEqual({ standing: 'contradicted', by: 'failures package 9' });
    expect(packageStanding({ producer_agent: 'qa_expert', package_type: 'failures', group_id: 'AUTH', created_at: '2026-01-01 10:00:00' }, open, f)).toEqual({ standing: 'unreviewed', by: null });
    expect(packageStanding({ producer_agent: 'requirements_engineer', package_type: 'research', group_id: 'AUTH', created_at: '2026-01-01 08:00:00' }, passed, f)).toEqual({ standing: 'held', by: 'the passing review of AUTH' });
  });

  it('the iteration a failures file names', () => {
    expect(failureIteration('bazinga/artifacts/s/failures_AUTH_iter2.md')).toBe(2);
    expect(failureIteration('bazinga/artifacts/s/failures_AUTH.md')).toBeNull();
  });
});

describe('standing in a block (the v19 fixture, in process)', () => {
  it("the retrying developer's block words the earlier completion as a claim that failed review, after the rest", async () => {
    const { copyIndexedFixture, capturingIo } = await import('./inProcess.ts');
    const { runScript } = await import('../skills/context-assembler/scripts/lib/shell.ts');
    const p = copyIndexedFixture('ca-standing-');
    try {
      const run = capturingIo(['--project-root', p.root, '--session', 'bazinga_20251201_090000', '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--now', '2025-12-02T12:00:00Z', '--dry-run', '--format', 'json'], { cwd: p.root });
      expect(runScript({ name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' }, run.io)).toBe(0);
      const entries = JSON.parse(run.out()).reasoning.entries as { agent_type: string; phase: string; standing?: string; standing_by?: string }[];
      const claim = entries.find((e) => e.agent_type === 'developer' && e.phase === 'completion');
      expect(claim).toMatchObject({ standing: 'contradicted', standing_by: 'failures package 2' });
      expect(entries.at(-1)).toBe(claim);
    } finally {
      p.cleanup();
    }
  });
});

describe('provenance', () => {
  it('how long before the spawn, in the largest whole unit', async () => {
    const { ageBefore } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    const now = Date.parse('2026-01-03T12:00:00Z');
    expect(ageBefore('2026-01-03 11:20:00', now)).toBe('40 min');
    expect(ageBefore('2026-01-03T09:00:00Z', now)).toBe('3 h');
    expect(ageBefore('2025-12-30 12:00:00', now)).toBe('4 d');
    expect(ageBefore('2026-01-04 12:00:00', now)).toBeNull();
    expect(ageBefore(null, now)).toBeNull();
  });
});
