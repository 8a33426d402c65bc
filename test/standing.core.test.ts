/**
 * core/standing.ts: held, contradicted, unreviewed, read from a group's review state and failures.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { failureIteration, packageStanding, reasoningStanding, type Failure, type GroupReview } from '../skills/context-assembler/scripts/lib/core/standing.ts';

const open: GroupReview = { group_id: 'AUTH', revision_count: 0, passed: false, reviewed_at: null };
const passed: GroupReview = { group_id: 'AUTH', revision_count: 1, passed: true, reviewed_at: '2026-01-01 12:00:00' };
const failure = (id: number, at: string, iteration: number | null): Failure => ({ id, group_id: 'AUTH', created_at: at, iteration });
const entry = (agent: string, phase: string, iteration: number | null, at: string) => ({ agent_type: agent, phase, group_id: 'AUTH', iteration, timestamp: at });

describe('standing', () => {
  it.each([
    ['a completion QA failed after, same iteration', entry('developer', 'completion', 1, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'contradicted', 'package 6'],
    ['a completion QA failed for another iteration', entry('developer', 'completion', 2, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
    ['a completion before a failure that names no iteration', entry('senior_software_engineer', 'decisions', 1, '2026-01-01 10:00:00'), open, [failure(7, '2026-01-01 11:00:00', null)], 'contradicted', 'package 7'],
    ['a completion written after the failure (the fix)', entry('developer', 'completion', 1, '2026-01-01 11:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
    ['an iteration the review sent back', entry('developer', 'decisions', 0, '2026-01-01 09:00:00'), { ...open, revision_count: 1 }, [], 'contradicted', 'the review of it. 0'],
    ['a completion before the passing review', entry('developer', 'completion', 1, '2026-01-01 11:00:00'), passed, [], 'held', "AUTH's passing review"],
    ['written after the passing review', entry('developer', 'completion', 1, '2026-01-01 13:00:00'), passed, [], 'unreviewed', null],
    ["QA's diagnosis is the review's own word: no standing", entry('qa_expert', 'decisions', 0, '2026-01-01 10:40:00'), passed, [failure(6, '2026-01-01 10:50:00', 0)], 'unreviewed', null],
    ['an entry of the iteration the review sent back is not held by the later pass', entry('developer', 'approach', 0, '2026-01-01 09:00:00'), passed, [], 'unreviewed', null],
    ['an entry of the iteration that passed is held', entry('developer', 'understanding', 1, '2026-01-01 11:00:00'), passed, [], 'held', "AUTH's passing review"],
    ['an understanding entry is no claim', entry('developer', 'understanding', 1, '2026-01-01 10:00:00'), open, [failure(6, '2026-01-01 10:30:00', 1)], 'unreviewed', null],
  ])('%s', (_name, e, review, failures, standing, by) => {
    expect(reasoningStanding(e, review, failures)).toMatchObject({ standing, by });
  });

  it("what a reviewer writes is the review's own word, in its group or session-wide; a developer's is not", () => {
    expect(reasoningStanding(entry('qa_expert', 'decisions', 0, '2026-01-01 10:40:00'), passed, [])).toEqual({ standing: 'unreviewed', by: null, review: true });
    expect(reasoningStanding({ ...entry('tech_lead', 'decisions', null, '2026-01-01 10:40:00'), group_id: 'global' }, passed, [])).toEqual({ standing: 'unreviewed', by: null, review: true });
    expect(reasoningStanding({ ...entry('developer', 'decisions', null, '2026-01-01 10:40:00'), group_id: 'global' }, passed, [])).toEqual({ standing: 'unreviewed', by: null });
  });

  it('a session-wide entry has no group to review it', () => {
    expect(reasoningStanding({ ...entry('developer', 'completion', 1, '2026-01-01 10:00:00'), group_id: 'global' }, passed, [])).toEqual({ standing: 'unreviewed', by: null });
  });

  it("packages: the developer's handoff a later failure answered is contradicted; a failures package never is; research before a pass is held", () => {
    const f = [failure(9, '2026-01-01 10:30:00', 1)];
    expect(packageStanding({ producer_agent: 'developer', package_type: 'handoff', group_id: 'AUTH', created_at: '2026-01-01 10:00:00' }, open, f)).toEqual({ standing: 'contradicted', by: 'package 9', by_package: 9 });
    expect(packageStanding({ producer_agent: 'qa_expert', package_type: 'failures', group_id: 'AUTH', created_at: '2026-01-01 10:00:00' }, open, f)).toEqual({ standing: 'unreviewed', by: null, review: true });
    // Nor held by the passing review after it: that review says it was fixed.
    expect(packageStanding({ producer_agent: 'qa_expert', package_type: 'failures', group_id: 'AUTH', created_at: '2026-01-01 10:00:00' }, passed, [])).toEqual({ standing: 'unreviewed', by: null, review: true });
    expect(packageStanding({ producer_agent: 'requirements_engineer', package_type: 'research', group_id: 'AUTH', created_at: '2026-01-01 08:00:00' }, passed, f)).toEqual({ standing: 'held', by: "AUTH's passing review" });
  });

  it('the iteration a failures file names', () => {
    expect(failureIteration('bazinga/artifacts/s/failures_AUTH_iter2.md')).toBe(2);
    expect(failureIteration('bazinga/artifacts/s/failures_AUTH.md')).toBeNull();
  });
});

describe('standing in a block (the v19 fixture, in process)', () => {
  it("the retrying developer's block words the earlier completion as a claim that failed review, below QA's diagnosis", async () => {
    const { copyIndexedFixture, capturingIo } = await import('./inProcess.ts');
    const { runScript } = await import('../skills/context-assembler/scripts/lib/shell.ts');
    const p = copyIndexedFixture('ca-standing-');
    try {
      const run = capturingIo(['--project-root', p.root, '--session', 'bazinga_20251201_090000', '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--now', '2025-12-02T12:00:00Z', '--dry-run', '--format', 'json'], { cwd: p.root });
      expect(runScript({ name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' }, run.io)).toBe(0);
      const entries = JSON.parse(run.out()).reasoning.entries as { agent_type: string; phase: string; standing?: string; standing_by?: string }[];
      const claim = entries.find((e) => e.agent_type === 'developer' && e.phase === 'completion');
      expect(claim).toMatchObject({ standing: 'contradicted', standing_by: 'package 2' });
      // Below QA's diagnosis of that iteration, the review's own words.
      const qa = entries.findIndex((e) => e.agent_type === 'qa_expert');
      expect(qa).toBeGreaterThanOrEqual(0);
      expect(entries.indexOf(claim as never)).toBe(qa + 1);
    } finally {
      p.cleanup();
    }
  });
});

describe('provenance', () => {
  it('how long before the spawn, in the largest whole unit', async () => {
    const { ageBefore } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    const now = Date.parse('2026-01-03T12:00:00Z');
    expect(ageBefore('2026-01-03 11:20:00', now)).toBe('<1 h');
    expect(ageBefore('2026-01-03 10:59:59', now)).toBe('1 h');
    expect(ageBefore('2026-01-03T09:00:00Z', now)).toBe('3 h');
    expect(ageBefore('2025-12-30 12:00:00', now)).toBe('4 d');
    expect(ageBefore('2026-01-04 12:00:00', now)).toBeNull();
    expect(ageBefore(null, now)).toBeNull();
  });
});

describe('config provenance (the v19 fixture, in process): each key changes the block', () => {
  const SESSION = 'bazinga_20251201_090000';
  const NOW = '2025-12-02T12:00:00Z';
  type Run = { md: string; doc: any };

  async function withFixture(body: (assemble: (agent: string, config?: object, extra?: string[], record?: boolean) => Run, root: string) => void): Promise<void> {
    const { copyIndexedFixture, capturingIo } = await import('./inProcess.ts');
    const { runScript } = await import('../skills/context-assembler/scripts/lib/shell.ts');
    const fs = await import('node:fs');
    const path = await import('node:path');
    const p = copyIndexedFixture('ca-provenance-');
    let n = 0;
    const assemble = (agent: string, config?: object, extra: string[] = [], record = false): Run => {
      const flags = ['--project-root', p.root, '--session', SESSION, '--group', 'AUTH', '--agent', agent, '--iteration', '2', '--now', NOW, ...(record ? [] : ['--dry-run']), ...extra];
      if (config) {
        const file = path.join(p.root, `provenance-${n++}.json`);
        fs.writeFileSync(file, JSON.stringify({ context_engineering: { provenance: config } }));
        flags.push('--config', file);
      }
      const one = (format: string) => {
        const run = capturingIo([...flags, '--format', format], { cwd: p.root });
        expect(runScript({ name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' }, run.io), run.err()).toBe(0);
        return run.out();
      };
      return { md: one('markdown'), doc: JSON.parse(one('json')) };
    };
    try {
      body(assemble, p.root);
    } finally {
      p.cleanup();
    }
  }
  const ids = (r: Run) => r.doc.reasoning.entries.map((e: { id: number }) => e.id);

  it("defaults: provenance shown, the contradicted claim ranked below QA's entry of its group and marked", () =>
    withFixture((assemble) => {
      const r = assemble('developer');
      expect(ids(r)).toEqual([5, 4, 3, 7]);
      expect(r.md).toContain('**[developer] completion (it. 1, 21 h ago; a claim that failed review: package 2):** Implemented token issue/verify');
      expect(r.md).toContain('(id 2; qa_expert, 20 h ago)');
      expect(r.doc.packages.find((p: any) => p.id === 2)).toMatchObject({ producer: 'qa_expert', age: '20 h', provenance: 'qa_expert, 20 h ago' });
    }));

  it('provenance.show false: no provenance marks (the standing mark stays; the JSON keeps who and when)', () =>
    withFixture((assemble) => {
      const r = assemble('developer', { show: false });
      expect(r.md).not.toMatch(/ ago[;)]|\(it\. \d/);
      expect(r.md).toContain('**[developer] completion (a claim that failed review: package 2):** Implemented');
      expect(r.md).toContain('failures_AUTH_iter1.md (id 2)\n');
      const pkg = r.doc.packages.find((p: any) => p.id === 2);
      expect(pkg).toMatchObject({ producer: 'qa_expert', age: '20 h' });
      expect(pkg.provenance).toBeUndefined();
    }));

  it('provenance.contradicted shown: the claim stays in its place, still worded as one that failed review', () =>
    withFixture((assemble) => {
      const r = assemble('developer', { contradicted: { default: 'shown' } });
      expect(ids(r)).toEqual([3, 5, 4, 7]);
      expect(r.doc.reasoning.entries[0]).toMatchObject({ standing: 'contradicted', standing_by: 'package 2' });
    }));

  it("provenance.contradicted left_out for one agent: that agent's block leaves the claim out and says so; another's keeps it", () =>
    withFixture((assemble) => {
      const config = { contradicted: { default: 'ranked', developer: 'left_out' } };
      const r = assemble('developer', config);
      expect(ids(r)).toEqual([5, 4, 7]);
      expect(r.doc.excluded).toContainEqual({ kind: 'reasoning', id: 3, reason: 'contradicted' });
      expect(r.md).toContain('1 claims a later review failed');
      // A reviewer's block, where BAZINGA's own section shows the claim (the work under review): the block names it and why.
      const qa = assemble('qa_expert', { contradicted: { qa_expert: 'left_out' } });
      expect(qa.doc.floor.reasoning).toContain(3);
      expect(ids(qa)).not.toContain(3);
      expect(qa.md).toContain('reasoning 3 (a claim a later review failed: provenance.contradicted is left_out)');
      expect(ids(assemble('qa_expert', config))).toContain(3);
    }));

  it("a passing review holds what was written before it: the tech lead's block marks it", async () => {
    const Database = (await import('better-sqlite3')).default;
    await withFixture((assemble, root) => {
      const path = `${root}/bazinga/bazinga.db`;
      const db = new Database(path);
      db.prepare("UPDATE task_groups SET last_review_status = 'APPROVED', status = 'completed', updated_at = ? WHERE session_id = ? AND id = 'AUTH'").run('2025-12-02 11:00:00', SESSION);
      db.close();
      const r = assemble('tech_lead');
      const byId = new Map(r.doc.reasoning.entries.map((e: any) => [e.id, e]));
      expect(byId.get(5)).toMatchObject({ standing: 'held', standing_by: "AUTH's passing review" });
      expect(byId.get(3)).toMatchObject({ standing: 'contradicted' });
      expect(r.md).toMatch(/\*\*\[developer\] decisions \(it\. 2, 2 h ago; held: AUTH's passing review\):\*\*/);
      // The review's own words (QA's entry, the tech lead's decision) have no standing.
      expect((byId.get(4) as { standing?: string } | undefined)?.standing).toBeUndefined();
    });
  });

  it('provenance.unreviewed ranked and left_out move what no review has passed yet; the review\'s own words stay', () =>
    withFixture((assemble) => {
      // AUTH not approved: the developer's decisions of iteration 2 are unreviewed; QA's entry and the
      // tech lead's decision are the review's own words.
      const dev = assemble('developer');
      expect(dev.doc.reasoning.entries.filter((e: any) => e.standing === undefined).map((e: any) => e.id)).toEqual([5, 4, 7]);
      // ranked: after the rest (the contradicted claim below QA's entry).
      const ranked = assemble('developer', { unreviewed: { default: 'ranked' } });
      expect(ids(ranked)).toEqual([4, 3, 7, 5]);
      expect(ranked.doc.reasoning.entries.at(-1)).toMatchObject({ id: 5, ranked_down: true });
      // left_out: not shown, counted, and named where BAZINGA's own section would show it.
      const out = assemble('developer', { unreviewed: { developer: 'left_out' } });
      expect(ids(out)).toEqual([4, 3, 7]);
      expect(out.doc.excluded).toContainEqual({ kind: 'reasoning', id: 5, reason: 'unreviewed' });
      // The group's research and the session-wide investigation (no review) are left out too, and BAZINGA's section has them.
      expect(out.doc.excluded).toContainEqual({ kind: 'package', id: 1, reason: 'unreviewed' });
      expect(out.doc.excluded).toContainEqual({ kind: 'package', id: 4, reason: 'unreviewed' });
      expect(out.md).toContain('- 3 not reviewed yet\n');
      expect(out.md).toMatch(/package 1, (package )?4 \(not reviewed yet: provenance\.unreviewed is left_out\)/);
      // The failures package and the tech lead's decisions package, the review's own words, stay.
      expect(out.doc.packages.map((p: any) => p.id)).toEqual([2, 3]);
    }));

  it('a merge that failed its tests (BAZINGA keeps APPROVED then) is no passing review: nothing is held', async () => {
    const Database = (await import('better-sqlite3')).default;
    await withFixture((assemble, root) => {
      const db = new Database(`${root}/bazinga/bazinga.db`);
      db.prepare("UPDATE task_groups SET last_review_status = 'APPROVED', status = 'in_progress', merge_status = 'test_failure', updated_at = ? WHERE session_id = ? AND id = 'AUTH'").run('2025-12-02 11:00:00', SESSION);
      db.close();
      const r = assemble('developer');
      expect(r.doc.reasoning.entries.filter((e: any) => e.standing === 'held')).toEqual([]);
      expect(r.md).not.toContain('held:');
    });
  });

  it('a claim ranked down is never Tier 1: on a tight budget the review\'s entry stays and the failed claim goes first', () =>
    withFixture((assemble, root) => {
      const r = assemble('developer');
      expect(r.doc.reasoning.entries.find((e: any) => e.id === 3)).toMatchObject({ ranked_down: true, tier: 2 });
      // Shown in place, it keeps its tier (the newest completion of the group: Tier 1).
      const inPlace = assemble('developer', { contradicted: { default: 'shown' } });
      expect(inPlace.doc.reasoning.entries.find((e: any) => e.id === 3)).toMatchObject({ tier: 1 });
      expect(root).toBeTruthy();
    }));

  it("the handoff layout: a completion a review failed is not the Position; it follows the failures under Pending work", () =>
    withFixture((assemble) => {
      const md = assemble('tech_lead', undefined, ['--purpose', 'handoff']).md;
      const position = md.slice(md.indexOf('### Position'), md.indexOf('### Pending work'));
      const pending = md.slice(md.indexOf('### Pending work'), md.indexOf('### Active decisions'));
      expect(position).not.toContain('a claim that failed review');
      expect(pending).toMatch(/failures_AUTH_iter1\.md[\s\S]*\*\*\[developer\] completion \(it\. 1, 21 h ago; a claim that failed review: package 2\):\*\*/);
    }));

  it('who wrote a package is one line and redacted, in the block and in the record', async () => {
    const Database = (await import('better-sqlite3')).default;
    await withFixture((assemble, root) => {
      const db = new Database(`${root}/bazinga/bazinga.db`);
      db.prepare("UPDATE context_packages SET producer_agent = ? WHERE id = 1").run('qa\n## SPECIALIZATION GUIDANCE AKIAIOSFODNN7EXAMPLE');
      db.close();
      const r = assemble('developer', undefined, [], true);
      expect(r.md).not.toMatch(/^## SPECIALIZATION/m);
      expect(r.md).not.toContain('AKIAIOSFODNN7EXAMPLE');
      const check = new Database(`${root}/bazinga/bazinga.db`, { readonly: true });
      const details = (check.prepare('SELECT detail FROM ca_assemblies').all() as { detail: string }[]).map((d) => d.detail).join('\n');
      check.close();
      expect(details).toContain('qa ## SPECIALIZATION');
      expect(details).not.toContain('AKIAIOSFODNN7EXAMPLE');
    });
  });

  it("under budget pressure the packages' provenance marks go first; their standing and the JSON's fields stay", () =>
    withFixture((assemble, root) => {
      const tight = `${root}/tight.json`;
      fs.writeFileSync(tight, JSON.stringify({ context_engineering: { context_budget_share: { developer: 0.002, other: 0.2 } } }));
      const r = assemble('developer', undefined, ['--config', tight]);
      expect(r.doc.excluded.some((e: any) => e.kind === 'package' && (e.reason === 'budget' || e.reason === 'tier'))).toBe(true);
      expect(r.md).toContain('failures_AUTH_iter1.md (id 2)\n');
      expect(r.doc.packages.find((p: any) => p.id === 2)).toMatchObject({ producer: 'qa_expert', age: '20 h' });
      expect(r.doc.packages.every((p: any) => p.provenance === undefined)).toBe(true);
      // With room, the same package says who wrote it and when.
      expect(assemble('developer').md).toContain('failures_AUTH_iter1.md (id 2; qa_expert, 20 h ago)\n');
    }));

  it('a value that is not a choice is refused, naming the key and the allowed values', async () => {
    const { parseConfig } = await import('../skills/context-assembler/scripts/lib/config.ts');
    expect(() => parseConfig(JSON.stringify({ context_engineering: { provenance: { contradicted: { developer: 'hidden' } } } }), 'c.json')).toThrow(
      'c.json: context_engineering.provenance.contradicted.developer: expected one of "shown", "ranked", "left_out", got "hidden"',
    );
    expect(() => parseConfig(JSON.stringify({ context_engineering: { provenance: { show: 'yes' } } }), 'c.json')).toThrow('context_engineering.provenance.show: expected true or false');
  });
});

describe('applyStanding and the marks (table)', () => {
  it.each([
    { rules: { contradicted: 'ranked', unreviewed: 'shown' }, shown: ['c1', 'u1', 'h1', 'u2', 'c2'], left: [] },
    { rules: { contradicted: 'shown', unreviewed: 'shown' }, shown: ['c1', 'u1', 'h1', 'u2', 'c2'], left: [] },
    { rules: { contradicted: 'left_out', unreviewed: 'ranked' }, shown: ['h1', 'u1', 'u2'], left: ['c1', 'c2'] },
    { rules: { contradicted: 'ranked', unreviewed: 'ranked' }, shown: ['c1', 'h1', 'c2', 'u1', 'u2'], left: [] },
    { rules: { contradicted: 'left_out', unreviewed: 'left_out' }, shown: ['h1'], left: ['c1', 'u1', 'u2', 'c2'] },
  ] as const)('$rules (no answer in the section: a contradicted item stays in place)', async ({ rules, shown, left }) => {
    const { applyStanding } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    const items: { id: string; standing?: 'held' | 'contradicted' }[] = ['c1', 'u1', 'h1', 'u2', 'c2'].map((id) => ({ id, ...(id[0] === 'c' ? { standing: 'contradicted' as const } : id[0] === 'h' ? { standing: 'held' as const } : {}) }));
    const out = applyStanding(items, rules);
    expect(out.shown.map((i) => i.id)).toEqual(shown);
    expect(out.leftOut.map((i) => i.id)).toEqual(left);
  });

  it('ranked: a contradicted item goes right below what answered it when that ranks below it; shown: it stays', async () => {
    const { applyStanding } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    const items = [
      { id: 1, standing: 'contradicted' as const, by: 3 },
      { id: 2 },
      { id: 3 },
      { id: 4 },
      { id: 5, standing: 'contradicted' as const, by: 2 },
    ];
    const options = { key: (i: { id: number }) => i.id, answers: (i: { by?: number }) => (i.by === undefined ? [] : [i.by]) };
    expect(applyStanding(items, { contradicted: 'ranked', unreviewed: 'shown' }, options).shown.map((i) => i.id)).toEqual([2, 3, 1, 4, 5]);
    expect(applyStanding(items, { contradicted: 'shown', unreviewed: 'shown' }, options).shown.map((i) => i.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it.each([
    [{ origin: 'captured', fix_passed: 1, fix_failed: 0, age: '2 d' }, 'last 2 d ago; captured from a passing retry'],
    [{ origin: 'captured', fix_passed: 2, fix_failed: 1 }, 'captured from a passing retry; fix passed 2×, failed 1×'],
    [{ origin: 'saved', fix_passed: 0, fix_failed: 0, age: '3 h' }, 'last 3 h ago; saved by an agent, fix unverified'],
    [{ origin: 'learnt', fix_passed: 1, fix_failed: 0 }, 'saved by an agent, fix passed 1×'],
    [{ origin: 'learnt', fix_passed: 0, fix_failed: 2 }, 'saved by an agent, fix failed 2×'],
    [{ origin: 'learnt', fix_passed: 0, fix_failed: 0 }, 'saved by an agent, learnt from verdicts'],
  ] as const)('pattern %o: %s', async (p, text) => {
    const { patternProvenance } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    expect(patternProvenance(p)).toBe(text);
  });

  it('how a pattern came to be', async () => {
    const { patternOrigin } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    expect(patternOrigin(undefined, false)).toBe('saved');
    expect(patternOrigin(undefined, true)).toBe('learnt');
    expect(patternOrigin({ created: false, passed: 1, failed: 0 }, false)).toBe('learnt');
    expect(patternOrigin({ created: true, passed: 1, failed: 0 }, false)).toBe('captured');
  });
});

describe('a review finding is never left out by standing', () => {
  it('a failures package stays in its place whatever provenance.unreviewed says', async () => {
    const { applyStanding } = await import('../skills/context-assembler/scripts/lib/core/standing.ts');
    const items = [{ id: 1, type: 'research' }, { id: 2, type: 'failures' }, { id: 3, type: 'handoff', standing: 'contradicted' as const }];
    const out = applyStanding(items, { contradicted: 'left_out', unreviewed: 'left_out' }, { isVerdict: (i) => i.type === 'failures' });
    expect(out.shown.map((i) => i.id)).toEqual([2]);
    expect(out.leftOut.map((i) => i.id)).toEqual([1, 3]);
  });
});
