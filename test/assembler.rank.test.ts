/**
 * Ranking (spec/assembler.md §3.3): hand-computed scores, explicit tie-breaks, consumed and
 * limit exclusions, the optional relevance term, the Conservative priority ladder, and the
 * zones that select nothing.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type Zone } from '../skills/context-assembler/scripts/lib/config.ts';
import { rankPackages, type Candidate, type RankInput } from '../skills/context-assembler/scripts/lib/core/rank.ts';

const NOW = Date.parse('2025-12-02T12:00:00Z');
/** SQLite UTC timestamp `hours` before NOW. */
const ago = (hours: number) => new Date(NOW - hours * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);

let nextId = 1;
function cand(over: Partial<Candidate>): Candidate {
  return {
    id: nextId++,
    priority: 'medium',
    package_type: 'research',
    file_path: `bazinga/artifacts/p${nextId}.md`,
    summary: 'a summary',
    group_id: null,
    created_at: ago(0),
    consumed: false,
    ...over,
  };
}

function rank(candidates: Candidate[], over: Partial<RankInput> = {}) {
  return rankPackages({
    candidates,
    group: 'g1',
    agent: 'developer',
    zone: 'Normal',
    limit: 50,
    nowMs: NOW,
    config: DEFAULT_CONFIG,
    explain: false,
    ...over,
  });
}

describe('score = 4·priority + 2·same_group + 1.5·affinity + 1·0.5^(age/72h)', () => {
  it.each([
    // critical 16 + same group 2 + failures→developer 1×1.5 + age 0 → 1
    { name: 'critical, same group, failures, fresh', c: { priority: 'critical', group_id: 'g1', package_type: 'failures', created_at: ago(0) }, agent: 'developer', score: 20.5 },
    // low 4 + global 0 + research→developer 1.5 + 72 h → 0.5
    { name: 'low, global, research, one half-life', c: { priority: 'low', group_id: null, package_type: 'research', created_at: ago(72) }, agent: 'developer', score: 6 },
    // medium 8 + other group 0 + decisions→developer 0.5×1.5 + 144 h → 0.25
    { name: 'medium, other group, decisions, two half-lives', c: { priority: 'medium', group_id: 'g2', package_type: 'decisions', created_at: ago(144) }, agent: 'developer', score: 9 },
    // high 12 + same group 2 + handoff→developer 0.25×1.5 + 36 h → 0.5^0.5
    { name: 'high, same group, handoff, half a half-life', c: { priority: 'high', group_id: 'g1', package_type: 'handoff', created_at: ago(36) }, agent: 'developer', score: 15.082107 },
    // high 12 + same group 2 + handoff→qa_expert 1×1.5 + 36 h → 0.707107
    { name: 'same package for qa_expert', c: { priority: 'high', group_id: 'g1', package_type: 'handoff', created_at: ago(36) }, agent: 'qa_expert', score: 16.207107 },
    // failures→requirements_engineer is 0
    { name: 'zero affinity', c: { priority: 'critical', group_id: null, package_type: 'failures', created_at: ago(0) }, agent: 'requirements_engineer', score: 17 },
    // unknown type → affinity 0; unknown priority → weight 0
    { name: 'unknown type and priority', c: { priority: 'urgent', group_id: null, package_type: 'misc', created_at: ago(0) }, agent: 'developer', score: 1 },
    // no created_at → recency 0
    { name: 'no timestamp', c: { priority: 'medium', group_id: null, package_type: 'misc', created_at: null }, agent: 'developer', score: 8 },
    // a timestamp in the future counts as age 0
    { name: 'future timestamp', c: { priority: 'medium', group_id: null, package_type: 'misc', created_at: ago(-48) }, agent: 'developer', score: 9 },
    // investigation→investigator 1.5, 216 h → 0.125
    { name: 'three half-lives', c: { priority: 'high', group_id: 'g1', package_type: 'investigation', created_at: ago(216) }, agent: 'investigator', score: 15.625 },
    // ISO timestamps are accepted as well
    { name: 'ISO timestamp', c: { priority: 'low', group_id: null, package_type: 'misc', created_at: '2025-11-29T12:00:00Z' }, agent: 'developer', score: 4.5 },
  ] as { name: string; c: Partial<Candidate>; agent: string; score: number }[])('$name → $score', ({ c, agent, score }) => {
    const out = rank([cand(c)], { agent });
    expect(out.selected).toHaveLength(1);
    expect(out.selected[0]?.score).toBe(score);
  });

  it('explain adds the components, which recombine to the score', () => {
    const out = rank([cand({ priority: 'high', group_id: 'g1', package_type: 'handoff', created_at: ago(36) })], { explain: true });
    const p = out.selected[0];
    expect(p?.components).toEqual({ priority: 3, same_group: 1, type_affinity: 0.25, recency: 0.707107, relevance: 0, scope: 0, paths: 0, match: 0, outcome: 0, designated: 0 });
    expect(rank([cand({})]).selected[0]?.components).toBeUndefined();
  });
});

describe('sort order and tie-breaks', () => {
  it('score desc', () => {
    const a = cand({ id: 101, priority: 'low' });
    const b = cand({ id: 102, priority: 'critical' });
    const c = cand({ id: 103, priority: 'medium' });
    expect(rank([a, b, c]).selected.map((p) => p.id)).toEqual([102, 103, 101]);
  });

  it('equal score → created_at desc, even against a higher id', () => {
    // high 12 + decisions→developer 0.75 + fresh 1 = 13.75
    const newer = cand({ id: 201, priority: 'high', package_type: 'decisions', created_at: ago(0) });
    // high 12 + failures→developer 1.5 + 144 h 0.25 = 13.75
    const older = cand({ id: 202, priority: 'high', package_type: 'failures', created_at: ago(144) });
    const out = rank([older, newer]);
    expect(out.selected.map((p) => p.score)).toEqual([13.75, 13.75]);
    expect(out.selected.map((p) => p.id)).toEqual([201, 202]);
  });

  it('equal score and created_at → id desc', () => {
    const t = ago(10);
    const rows = [301, 305, 303].map((id) => cand({ id, priority: 'medium', created_at: t }));
    expect(rank(rows).selected.map((p) => p.id)).toEqual([305, 303, 301]);
  });

  it('the same input in any order gives the same output', () => {
    const t = ago(5);
    const rows = [
      cand({ id: 401, priority: 'high', created_at: t }),
      cand({ id: 402, priority: 'high', created_at: t }),
      cand({ id: 403, priority: 'low', created_at: ago(1) }),
      cand({ id: 404, priority: 'critical', group_id: 'g1' }),
    ];
    const forward = rank(rows);
    const backward = rank([...rows].reverse());
    expect(backward).toEqual(forward);
    expect(forward.selected.map((p) => p.id)).toEqual([404, 402, 401, 403]);
  });
});

describe('exclusions', () => {
  it('consumed candidates are excluded with reason consumed and not counted as available', () => {
    const rows = [cand({ id: 501 }), cand({ id: 502, consumed: true }), cand({ id: 503 })];
    const out = rank(rows);
    expect(out.selected.map((p) => p.id).sort()).toEqual([501, 503]);
    expect(out.total_available).toBe(2);
    expect(out.excluded).toEqual([{ kind: 'package', id: 502, reason: 'consumed' }]);
  });

  it('the top `limit` are kept; the rest are excluded with reason limit', () => {
    const rows = [
      cand({ id: 601, priority: 'low' }),
      cand({ id: 602, priority: 'critical' }),
      cand({ id: 603, priority: 'high' }),
      cand({ id: 604, priority: 'medium' }),
      cand({ id: 605, consumed: true }),
    ];
    const out = rank(rows, { limit: 2 });
    expect(out.selected.map((p) => p.id)).toEqual([602, 603]);
    expect(out.total_available).toBe(4);
    expect(out.priority_used).toBeNull();
    expect(out.excluded).toEqual([
      { kind: 'package', id: 605, reason: 'consumed' },
      { kind: 'package', id: 604, reason: 'limit' },
      { kind: 'package', id: 601, reason: 'limit' },
    ]);
  });

  it('every candidate is either selected or excluded exactly once', () => {
    const rows = Array.from({ length: 12 }, (_, i) => cand({ id: 700 + i, priority: ['critical', 'high', 'medium', 'low'][i % 4] as string, consumed: i % 5 === 0 }));
    for (const zone of ['Normal', 'Soft_Warning', 'Conservative'] as Zone[]) {
      const out = rank(rows, { limit: 3, zone });
      const seen = [...out.selected.map((p) => p.id), ...out.excluded.map((e) => e.id)].sort();
      expect(seen).toEqual(rows.map((r) => r.id).sort());
    }
  });
});

describe('relevance', () => {
  const rows = () => [
    cand({ id: 801, priority: 'high', created_at: null, package_type: 'misc' }), // 12
    cand({ id: 802, priority: 'medium', group_id: 'g1', created_at: null, package_type: 'misc' }), // 8 + 2
  ];

  it('without a relevance map the score is exactly the heuristic', () => {
    expect(rank(rows()).selected.map((p) => [p.id, p.score])).toEqual([
      [801, 12],
      [802, 10],
    ]);
  });

  it('with a map, w_relevance 100 × relevance and w_match 30 for a match are added and can reorder', () => {
    const relevance = new Map([
      [802, 1],
      [801, 0.25],
    ]);
    const out = rank(rows(), { relevance, explain: true });
    expect(out.selected.map((p) => [p.id, p.score])).toEqual([
      [802, 10 + 100 + 30],
      [801, 12 + 25 + 30],
    ]);
    expect(out.selected.find((p) => p.id === 802)?.components).toMatchObject({ relevance: 1, match: 1 });
  });

  it('a package that matches nothing of the query ranks below every one that matches, whatever its priority and group', () => {
    const critical = cand({ id: 901, priority: 'critical', group_id: 'g1', package_type: 'failures', created_at: ago(0) }); // 16 + 2 + 1.5 + 1
    const weak = cand({ id: 902, priority: 'low', group_id: null, package_type: 'misc', created_at: null }); // 4
    const below = cand({ id: 903, priority: 'critical', group_id: 'g1', package_type: 'failures', created_at: ago(0) });
    // 902 matches at 0.15 of the best (at least match_threshold 0.1); 903 at 0.05, under it: no match.
    const out = rank([critical, weak, below, cand({ id: 904, priority: 'low', group_id: null, package_type: 'misc', created_at: null })], {
      relevance: new Map([
        [904, 1],
        [902, 0.15],
        [903, 0.05],
      ]),
      limit: 4,
    });
    expect(out.selected.map((p) => p.id)).toEqual([904, 902, 903, 901]);
  });

  it('with a scope map, w_scope 3 × scope is added (no relevance map needed)', () => {
    const out = rank(rows(), { scope: new Map([[802, 1]]), explain: true });
    expect(out.selected.map((p) => [p.id, p.score])).toEqual([
      [802, 13],
      [801, 12],
    ]);
    expect(out.selected.find((p) => p.id === 802)?.components?.scope).toBe(1);
  });

  it('a map without an entry for a package adds nothing to it', () => {
    const out = rank(rows(), { relevance: new Map([[999, 1]]) });
    expect(out.selected.map((p) => [p.id, p.score])).toEqual([
      [801, 12],
      [802, 10],
    ]);
  });

  it('without a map, relevance values are ignored even in the components', () => {
    const out = rank(rows(), { explain: true });
    expect(out.selected.every((p) => p.components?.relevance === 0)).toBe(true);
  });
});

describe('Conservative: the priority ladder', () => {
  const ladderRows = () => [
    cand({ id: 901, priority: 'low', group_id: 'g1', package_type: 'failures', created_at: ago(0) }), // 4+2+1.5+1 = 8.5
    cand({ id: 902, priority: 'low', created_at: ago(0) }),
    cand({ id: 903, priority: 'medium', group_id: 'g1', package_type: 'failures', created_at: ago(0) }), // 8+2+1.5+1 = 12.5
    cand({ id: 904, priority: 'medium', created_at: ago(200), package_type: 'misc' }), // ≈8.146
    cand({ id: 905, priority: 'high', created_at: ago(500), package_type: 'misc' }), // ≈12.008
    cand({ id: 906, priority: 'high', created_at: ago(1), group_id: 'g1' }),
    cand({ id: 907, priority: 'critical', created_at: ago(300), package_type: 'misc' }),
    cand({ id: 908, priority: 'critical', created_at: ago(2) }),
  ];

  it.each([
    { limit: 1, ids: [908], used: 'critical' },
    { limit: 2, ids: [908, 907], used: 'critical' },
    // a medium that outscores a high still comes after every high
    { limit: 3, ids: [908, 907, 906], used: 'high' },
    { limit: 4, ids: [908, 907, 906, 905], used: 'high' },
    { limit: 5, ids: [908, 907, 906, 905, 903], used: 'medium' },
    // never low, however high its score and however large the limit
    { limit: 50, ids: [908, 907, 906, 905, 903, 904], used: 'medium' },
  ])('limit $limit → $ids, priority_used $used', ({ limit, ids, used }) => {
    const out = rank(ladderRows(), { zone: 'Conservative', limit });
    expect(out.selected.map((p) => p.id)).toEqual(ids);
    expect(out.priority_used).toBe(used);
    expect(out.total_available).toBe(8);
    const reasons = new Map(out.excluded.map((e) => [e.id, e.reason]));
    expect(reasons.get(901)).toBe('zone');
    expect(reasons.get(902)).toBe('zone');
    for (const id of [903, 904, 905, 906, 907, 908].filter((i) => !ids.includes(i))) expect(reasons.get(id)).toBe('limit');
  });

  it('the medium really outscores the high it comes after (so the ladder, not the score, decided)', () => {
    const normal = rank(ladderRows(), { zone: 'Normal' });
    const score = (id: number) => normal.selected.find((p) => p.id === id)?.score ?? NaN;
    expect(score(903)).toBeGreaterThan(score(905));
    expect(score(901)).toBeGreaterThan(score(904));
  });

  it('only low packages → nothing selected, priority_used null, all excluded for zone', () => {
    const out = rank([cand({ id: 951, priority: 'low' }), cand({ id: 952, priority: 'low' })], { zone: 'Conservative' });
    expect(out.selected).toEqual([]);
    expect(out.priority_used).toBeNull();
    expect(out.excluded).toEqual([
      { kind: 'package', id: 952, reason: 'zone' },
      { kind: 'package', id: 951, reason: 'zone' },
    ]);
  });

  it('only critical → priority_used critical', () => {
    const out = rank([cand({ id: 961, priority: 'critical' })], { zone: 'Conservative' });
    expect(out.priority_used).toBe('critical');
  });

  it('consumed packages stay out of the ladder', () => {
    const out = rank([cand({ id: 971, priority: 'critical', consumed: true }), cand({ id: 972, priority: 'medium' })], { zone: 'Conservative' });
    expect(out.selected.map((p) => p.id)).toEqual([972]);
    expect(out.priority_used).toBe('medium');
    expect(out.excluded).toContainEqual({ kind: 'package', id: 971, reason: 'consumed' });
  });
});

describe('Wrap-up and Emergency select nothing', () => {
  it.each(['Wrap-up', 'Emergency'] as Zone[])('%s', (zone) => {
    const out = rank([cand({ priority: 'critical' }), cand({ priority: 'high', group_id: 'g1' })], { zone });
    expect(out.selected).toEqual([]);
    expect(out.total_available).toBe(0);
    expect(out.priority_used).toBeNull();
  });

  it.each(['Normal', 'Soft_Warning'] as Zone[])('%s selects (control)', (zone) => {
    const out = rank([cand({ priority: 'critical' }), cand({ priority: 'low' })], { zone });
    expect(out.selected).toHaveLength(2);
  });
});
