/**
 * Purpose-driven tiers (core/tiers.ts, core/block.ts): the tier table, the fit by tier, and the
 * whole block with its truncation report. Properties over random stores and budgets (fast-check,
 * seeded): Tier 1 is always present whole; Tier 3 never takes room Tier 2 could use; lazy
 * counting admits what counting everything admits; the report lists exactly what is missing; the
 * block as rendered stays within its budget unless Tier 1 alone overran it, which it then states.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, splitOf } from '../skills/context-assembler/scripts/lib/config.ts';
import type { AssemblyDoc, ErrorPatternItem, RankedPackage, ReasoningItem, StrategyItem } from '../skills/context-assembler/scripts/lib/contract.ts';
import { fitBlock, type BlockInput } from '../skills/context-assembler/scripts/lib/core/block.ts';
import { exactCounter, type TokenCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';
import { DEFAULT_LAUNCHER, moreCommand, renderFloorLeftOut, renderMarkdown } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { fitOrder, fitTiers, PURPOSES, tierOf, type FitItem, type Purpose, type Split, type Tier, type TierSubject } from '../skills/context-assembler/scripts/lib/core/tiers.ts';
import { countCl100k, makeTokenCounter } from '../skills/context-assembler/scripts/lib/tokens.ts';

/** One token per started group of four characters. */
const quarter = exactCounter((text) => Math.ceil(Array.from(text).length / 4));

describe('the tier table', () => {
  const pkg = (over: Partial<TierSubject>): TierSubject => ({ kind: 'package', sameGroup: true, packageType: 'research', priority: 'medium', ...over });
  const why = (over: Partial<TierSubject>): TierSubject => ({ kind: 'reasoning', sameGroup: true, phase: 'understanding', latestOfPhase: false, iterationsBack: 0, ...over });
  it.each([
    { name: 'the newest failures of this group', s: pkg({ packageType: 'failures', priority: 'low', latestOfType: true }), tier: 1 },
    { name: 'an older failures package of this group', s: pkg({ packageType: 'failures', priority: 'medium', latestOfType: false }), tier: 2 },
    { name: 'decisions of this group', s: pkg({ packageType: 'decisions' }), tier: 1 },
    { name: 'a critical package of this group', s: pkg({ priority: 'critical' }), tier: 1 },
    { name: 'failures of another group', s: pkg({ sameGroup: false, packageType: 'failures', priority: 'medium' }), tier: 3 },
    { name: 'a high package of another group', s: pkg({ sameGroup: false, priority: 'high' }), tier: 2 },
    { name: 'a low session-wide package', s: pkg({ sameGroup: false, priority: 'low' }), tier: 3 },
    { name: 'a medium research package of this group', s: pkg({}), tier: 2 },
    { name: 'a low research package of this group', s: pkg({ priority: 'low' }), tier: 3 },
    { name: 'the error pattern matching --error', s: { kind: 'error_pattern', sameGroup: false, matchedError: true } as TierSubject, tier: 1 },
    { name: 'another error pattern', s: { kind: 'error_pattern', sameGroup: false, matchedError: false } as TierSubject, tier: 2 },
    { name: 'a strategy', s: { kind: 'strategy', sameGroup: false } as TierSubject, tier: 2 },
    { name: 'the newest completion of this group (the current state)', s: why({ phase: 'completion', latestOfPhase: true }), tier: 1 },
    { name: 'the newest decisions of this group', s: why({ phase: 'decisions', latestOfPhase: true }), tier: 1 },
    { name: 'an older completion, two iterations back', s: why({ phase: 'completion', iterationsBack: 2 }), tier: 2 },
    { name: 'reasoning three iterations back', s: why({ iterationsBack: 3 }), tier: 3 },
    { name: 'session-wide reasoning with no iteration', s: why({ sameGroup: false, phase: 'decisions', latestOfPhase: false, iterationsBack: null }), tier: 3 },
    // A session-wide spawn has no group's work to pin: its packages compete on rank from Tier 2.
    { name: 'a session-wide spawn: the newest failures', s: pkg({ packageType: 'failures', latestOfType: true, groupSpawn: false }), tier: 2 },
    { name: 'a session-wide spawn: decisions', s: pkg({ packageType: 'decisions', groupSpawn: false }), tier: 2 },
    { name: 'a session-wide spawn: a critical package', s: pkg({ priority: 'critical', groupSpawn: false }), tier: 2 },
    { name: 'a session-wide spawn: a low package', s: pkg({ priority: 'low', groupSpawn: false }), tier: 3 },
  ])('$name → Tier $tier (implementation)', ({ s, tier }) => {
    expect(tierOf(s, 'implementation')).toBe(tier);
  });

  it('a session-wide spawn pins none of its packages for any purpose', () => {
    for (const purpose of PURPOSES) {
      for (const packageType of ['failures', 'decisions', 'research', 'handoff']) {
        expect(tierOf(pkg({ packageType, priority: 'critical', latestOfType: true, groupSpawn: false }), purpose)).toBe(2);
        expect(tierOf(pkg({ packageType, priority: 'critical', latestOfType: true, groupSpawn: true }), purpose)).toBe(1);
      }
    }
  });

  it.each([
    { purpose: 'design', s: pkg({}), tier: 1 },
    { purpose: 'implementation', s: pkg({}), tier: 2 },
    { purpose: 'review', s: pkg({ packageType: 'handoff' }), tier: 1 },
    { purpose: 'handoff', s: pkg({ packageType: 'handoff' }), tier: 1 },
    { purpose: 'subagent', s: pkg({ packageType: 'handoff' }), tier: 2 },
  ] as const)('purpose decides what is essential: $purpose', ({ purpose, s, tier }) => {
    expect(tierOf(s, purpose)).toBe(tier);
  });
});

// ------------------------------------------------------------------------------- fitTiers

const arbText = fc.string({ minLength: 1, maxLength: 240, unit: fc.constantFrom('a', 'b', ' ', 'token', 'refresh ', '.', '\n', 'é') });
const arbItems = fc.array(fc.record({ tier: fc.constantFrom<Tier>(1, 2, 3), kind: fc.constantFrom('package', 'reasoning', 'error_pattern', 'strategy' as const), text: arbText }), {
  minLength: 0,
  maxLength: 14,
});
const arbSplit = fc
  .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }))
  .map(([a, b]): Split => {
    const t1 = Math.min(a, 100);
    const t2 = Math.min(b, 100 - t1);
    return [t1 / 100, t2 / 100, (100 - t1 - t2) / 100];
  });

function items(raw: { tier: Tier; kind: FitItem['kind']; text: string }[], purpose: Purpose): FitItem[] {
  return fitOrder(
    raw.map((r, i) => ({ ...r, key: `${r.kind}:${i}` })),
    purpose,
  );
}

describe('fitTiers: property', () => {
  it('Tier 1 bounded (its count and share; the first item whole); within budget unless that item overran; Tier 3 never takes room Tier 2 could use; every item admitted or left out once', () => {
    let demotions = 0;
    fc.assert(
      fc.property(arbItems, fc.integer({ min: 0, max: 600 }), arbSplit, fc.constantFrom(...PURPOSES), fc.constantFrom(1, 2, 4, Infinity), (raw, budget, split, purpose, maxItems) => {
        const list = items(raw, purpose);
        const out = fitTiers(list, budget, split, quarter, maxItems);
        const size = (i: FitItem) => quarter.count(i.text);
        // The tier each item was fitted as: a Tier 1 item past Tier 1's bound competes as Tier 2.
        const as = (i: FitItem): Tier => (i.tier === 1 && out.demoted.has(i.key) ? 2 : i.tier);
        const of = (tier: Tier) => list.filter((i) => as(i) === tier);
        const used = (tier: Tier) => of(tier).filter((i) => out.admitted.has(i.key)).reduce((s, i) => s + size(i), 0);
        const rulesTier1 = list.filter((i) => i.tier === 1);
        demotions += out.demoted.size;
        // Only Tier 1 items are demoted, and only after the ones kept (Tier 1 closes at the first it has no room for).
        for (const key of out.demoted) expect(rulesTier1.some((i) => i.key === key)).toBe(true);
        const kept = rulesTier1.filter((i) => !out.demoted.has(i.key));
        expect(rulesTier1.slice(0, kept.length)).toEqual(kept);
        // What stays in Tier 1 is admitted whole: the first item always, the others within the count and the share.
        if (rulesTier1.length > 0) expect(kept[0]).toBe(rulesTier1[0]);
        for (const i of kept) expect(out.admitted.has(i.key)).toBe(true);
        expect(kept.length).toBeLessThanOrEqual(Math.max(1, maxItems));
        const tier1 = used(1);
        if (kept.length > 1) expect(tier1).toBeLessThanOrEqual(split[0] * budget + 1e-9);
        expect(out.overrun).toBe(Math.max(0, tier1 - budget));
        // An overrun only when the first Tier 1 item alone passes the budget.
        if (out.overrun > 0) expect(kept.length).toBe(1);
        expect(out.used).toBe(used(1) + used(2) + used(3));
        if (out.overrun === 0) expect(out.used).toBeLessThanOrEqual(budget);
        else expect(used(2) + used(3)).toBe(0);
        // Tier 2 within its share plus what Tier 1 left of its own; Tier 3 only what is left.
        const allowance2 = Math.min(budget - tier1, split[1] * budget + Math.max(0, split[0] * budget - tier1));
        expect(used(2)).toBeLessThanOrEqual(Math.max(0, allowance2) + 1e-9);
        // A Tier 2 item left out could not fit in Tier 2's room as it ended (Tier 3 took none of it).
        const room2 = allowance2 - used(2);
        for (const i of of(2).filter((i) => out.leftOut.has(i.key))) expect(size(i)).toBeGreaterThan(room2 - 1e-9);
        const room3 = budget - out.used;
        for (const i of of(3).filter((i) => out.leftOut.has(i.key))) expect(size(i)).toBeGreaterThan(room3);
        // Each item once: admitted or left out with a reason.
        for (const i of list) expect(Number(out.admitted.has(i.key)) + Number(out.leftOut.has(i.key))).toBe(1);
        for (const reason of out.leftOut.values()) expect(['budget', 'tier']).toContain(reason);
        expect(out.tiers.map((t) => t.items + t.left_out)).toEqual([of(1).length, of(2).length, of(3).length]);
      }),
      { numRuns: 400, seed: 13 },
    );
    // Not vacuous: the bound was reached.
    expect(demotions).toBeGreaterThan(20);
  });

  it('lazy counting (bounds first) admits exactly what counting every item admits', () => {
    const counting = exactCounter((t) => Math.ceil(countCl100k(t) * 1.2));
    let bounded = 0;
    fc.assert(
      fc.property(arbItems, fc.integer({ min: 0, max: 400 }), arbSplit, (raw, budget, split) => {
        const list = items(raw, 'review');
        const lazy = fitTiers(list, budget, split, makeTokenCounter(1.2));
        const all = fitTiers(list, budget, split, counting);
        expect([...lazy.admitted.keys()]).toEqual([...all.admitted.keys()]);
        expect([...lazy.leftOut]).toEqual([...all.leftOut]);
        expect(lazy.overrun).toBe(all.overrun);
        if (!lazy.exact) bounded++;
      }),
      { numRuns: 150, seed: 17 },
    );
    expect(bounded).toBeGreaterThan(0);
  });

  it('over budget, Tier 1 takes what it needs out of Tier 3 first, then Tier 2', () => {
    const t = (tier: Tier, n: number, chars: number): FitItem[] =>
      Array.from({ length: n }, (_, i) => ({ key: `${tier}:${i}`, kind: 'package' as const, tier, text: 'x'.repeat(chars) }));
    // Budget 100, split 60/25/15; Tier 1 needs 70: 10 beyond its share, taken from Tier 3's 15.
    const out = fitTiers([...t(1, 1, 280), ...t(2, 5, 20), ...t(3, 5, 20)], 100, [0.6, 0.25, 0.15], quarter);
    expect(out.tiers.map((x) => x.used)).toEqual([70, 25, 5]);
    expect(out.tiers.map((x) => x.allowance)).toEqual([null, 25, 5]);
    // Tier 1 needs 90: 30 beyond its share, Tier 3's 15 and 15 of Tier 2's 25.
    const tight = fitTiers([...t(1, 1, 360), ...t(2, 5, 20), ...t(3, 5, 20)], 100, [0.6, 0.25, 0.15], quarter);
    expect(tight.tiers.map((x) => x.used)).toEqual([90, 10, 0]);
    // Unused Tier 1 share flows down to Tier 2, then Tier 2's to Tier 3.
    const ample = fitTiers([...t(2, 10, 20), ...t(3, 10, 20)], 100, [0.6, 0.25, 0.15], quarter);
    expect(ample.tiers.map((x) => x.used)).toEqual([0, 50, 50]);
    expect(ample.tiers.map((x) => x.left_out)).toEqual([0, 0, 0]);
    const crowded = fitTiers([...t(2, 20, 20), ...t(3, 20, 20)], 100, [0.6, 0.25, 0.15], quarter);
    expect(crowded.tiers.map((x) => x.used)).toEqual([0, 85, 15]);
    // A Tier 2 item that the block could still hold is left out for its tier's share.
    expect([...crowded.leftOut.entries()].filter(([k]) => k.startsWith('2:'))[0]).toEqual(['2:17', 'tier']);
  });

  it('an item with no room for its whole text takes the room left with a shorter one; one whose shortest does not fit is skipped, not a stop', () => {
    // a: 50 tokens; b: 100 whole, any size from `least` tokens up when shortened; c: 10.
    const list = (least: number): FitItem[] => [
      { key: 'a', kind: 'package', tier: 2, text: 'x'.repeat(200) },
      { key: 'b', kind: 'package', tier: 2, text: 'y'.repeat(400), shorter: (max) => (max >= least ? 'y'.repeat(max * 4) : undefined) },
      { key: 'c', kind: 'package', tier: 2, text: 'z'.repeat(40) },
    ];
    const cut = fitTiers(list(20), 100, [0, 1, 0], quarter);
    expect([...cut.admitted.entries()].map(([k, s]) => [k, s.tokens])).toEqual([
      ['a', 50],
      ['b', 50],
    ]);
    expect(cut.shortened).toEqual(new Map([['b', 'y'.repeat(200)]]));
    expect(cut.leftOut).toEqual(new Map([['c', 'budget']]));
    expect(cut.used).toBe(100);
    const skipped = fitTiers(list(60), 100, [0, 1, 0], quarter);
    expect([...skipped.admitted.keys()]).toEqual(['a', 'c']);
    expect(skipped.shortened.size).toBe(0);
    expect(skipped.leftOut).toEqual(new Map([['b', 'budget']]));
    // A tier's share bounds the shortened text as it bounds a whole one.
    const shared = fitTiers(list(20), 100, [0, 0.7, 0.3], quarter);
    expect(shared.admitted.get('b')?.tokens).toBe(20);
  });

  it("the builder's items (the floor) go in tier and rank order, admitted on the block's room alone", () => {
    const list = fitOrder(
      [
        { key: 'floor', kind: 'package', tier: 3, text: 'f'.repeat(120), floor: true },
        { key: 'one', kind: 'package', tier: 1, text: 'o'.repeat(120) },
        { key: 'two', kind: 'package', tier: 2, text: 't'.repeat(120) },
      ] as FitItem[],
      'implementation',
    );
    expect(list.map((i) => i.key)).toEqual(['one', 'two', 'floor']);
    // Tier 3 has no share of its own here: the floor item is admitted on the block's room.
    const out = fitTiers(list, 100, [0.5, 0.5, 0], quarter);
    expect([...out.admitted.keys()]).toEqual(['one', 'two', 'floor']);
    // With no room left it is left out for budget (the block names it: core/floor.ts).
    const full = fitTiers(list, 70, [0.5, 0.5, 0], quarter);
    expect(full.leftOut.get('floor')).toBe('budget');
  });

  it('Tier 1 alone over the whole budget: emitted whole, the overrun stated, nothing else admitted', () => {
    const list: FitItem[] = [
      { key: 'a', kind: 'package', tier: 1, text: 'x'.repeat(400) },
      { key: 'b', kind: 'reasoning', tier: 2, text: 'y' },
    ];
    const out = fitTiers(list, 50, [0.6, 0.25, 0.15], quarter);
    expect([...out.admitted.keys()]).toEqual(['a']);
    expect(out.overrun).toBe(50);
    expect(out.leftOut.get('b')).toBe('budget');
  });
});

// ------------------------------------------------------------------------------- fitBlock

const arbPackage = (id: number) =>
  fc.record({
    tier: fc.constantFrom<Tier>(1, 2, 3),
    priority: fc.constantFrom('critical', 'high', 'medium', 'low'),
    package_type: fc.constantFrom('research', 'failures', 'decisions', 'handoff', 'investigation'),
    summary: fc.string({ minLength: 1, maxLength: 300, unit: fc.constantFrom('a', 'b', ' ', 'token ', '.', 'é') }).map((s) => `s${id} ${s}`),
  }).map((r): RankedPackage & { tier: Tier } => ({ id, file_path: `bazinga/artifacts/s/p${id}.md`, group_id: 'AUTH', created_at: null, score: 100 - id, ...r }));

const arbStore = fc.record({
  packages: fc.integer({ min: 0, max: 6 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbPackage(i + 1)))),
  reasoning: fc.array(fc.record({ tier: fc.constantFrom<Tier>(1, 2, 3), phase: fc.constantFrom('completion', 'decisions', 'understanding', 'blockers'), content: arbText.map((t) => t.replace(/\s+/g, ' ').trim() || 'x') }), { maxLength: 5 }),
  patterns: fc.array(fc.record({ tier: fc.constantFrom<Tier>(1, 2), solution: arbText.map((t) => t.replace(/\s+/g, ' ').trim() || 'x') }), { maxLength: 3 }),
  strategies: fc.array(fc.record({ tier: fc.constantFrom<Tier>(2, 3), insight: arbText.map((t) => t.replace(/\s+/g, ' ').trim() || 'x') }), { maxLength: 3 }),
  limitLeftOut: fc.integer({ min: 0, max: 3 }),
  // The first n packages are the builder's own items (the floor): admitted on the block's room alone, named when not shown.
  floorCount: fc.integer({ min: 0, max: 3 }),
});

type Store = typeof arbStore extends fc.Arbitrary<infer T> ? T : never;

function blockInput(store: Store, budget: number, purpose: Purpose, counter: TokenCounter): BlockInput {
  return {
    purpose,
    // The command the rendered line names (renderMarkdown): at its widest, and for the packages a fit shows.
    moreCommand: moreCommand(DEFAULT_LAUNCHER, REQUEST, store.packages.map((p) => p.id)),
    moreCommandOf: (shown) => moreCommand(DEFAULT_LAUNCHER, REQUEST, shown),
    split: splitOf(DEFAULT_CONFIG, purpose),
    budget,
    zone: 'Normal',
    totalAvailable: store.packages.length + store.limitLeftOut,
    totalCapped: false,
    priorityUsed: null,
    items: {
      package: store.packages,
      reasoning: store.reasoning.map((r, i): Omit<ReasoningItem, 'tokens'> & { tier: Tier } => ({
      id: 100 + i,
      agent_type: 'developer',
      phase: r.phase,
      content: r.content,
      confidence: null,
      timestamp: null,
      tier: r.tier,
    })),
    error_pattern: store.patterns.map((p, i): ErrorPatternItem & { tier: Tier } => ({
      pattern_hash: `h${i}`,
      fault_hash: `h${i}`,
      error_type: 'E',
      message_pattern: 'boom',
      solution: p.solution,
      confidence: 0.8,
      occurrences: 1,
      last_seen: '2025-12-01',
      matched_error: p.tier === 1,
      relevance: 0,
      tier: p.tier,
    })),
    strategy: store.strategies.map((s, i): StrategyItem & { tier: Tier } => ({ strategy_id: `st${i}`, topic: 't', insight: s.insight, helpfulness: 1, relevance: 0, tier: s.tier })),
      memory: [],
    },
    excludedBefore: Array.from({ length: store.limitLeftOut }, (_, i) => ({ kind: 'package' as const, id: 50 + i, reason: 'limit' as const })),
    floor: new Set(floorOf(store).packages.map((id) => `package:${id}`)),
    // The line naming the builder's items a fit leaves unshown, as the pipeline makes it (renderFloorLeftOut at the budget's figures).
    floorLine: (shown, excluded, navigation) =>
      renderFloorLeftOut({
        ...docOf(budget, purpose, store.packages.length + store.limitLeftOut),
        floor: floorOf(store),
        packages: shown.package.map((p) => ({ ...p, tokens: 0 })),
        excluded: [...excluded],
        truncation: { purpose, budget, used: budget, overrun: 0, tiers: [], left_out: {}, most_relevant: [], shown: false, ...(navigation ? { navigation } : {}) },
      }),
    counter,
  };
}

const floorOf = (store: Store) => ({ packages: store.packages.slice(0, store.floorCount).map((p) => p.id), reasoning: [], error_patterns: [], under_review: { packages: [], reasoning: [] } });

const REQUEST: AssemblyDoc['request'] = { session: 's', group: 'AUTH', agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: 1, limit: 3, include_reasoning: true, reasoning_level: 'medium', now: '2025-12-02T12:00:00Z', task: null, error: null, scope: null, lang: null, framework: null };

/** A document holding the fit's output, rendered as the assembler renders it. */
/** How many items a fit shows, of every kind. */
const shownCount = (out: ReturnType<typeof fitBlock>) => out.items.package.length + out.items.reasoning.length + out.items.error_pattern.length + out.items.strategy.length + out.items.memory.length;

function docOf(budget: number, purpose: Purpose, totalAvailable: number): AssemblyDoc {
  return {
    doc_version: 2,
    step: 'reasoning',
    request: REQUEST,
    zone: 'Normal',
    usage_pct: 0,
    summary_cap: 400,
    effective_limit: 170000,
    remaining_budget: 170000,
    context_budget: budget,
    limit: 3,
    include_reasoning: true,
    purpose,
    total_available: totalAvailable,
  } as AssemblyDoc;
}

function rendered(input: BlockInput, out: ReturnType<typeof fitBlock>, store: Store): string {
  const doc: AssemblyDoc = {
    ...docOf(input.budget, input.purpose, input.totalAvailable),
    floor: floorOf(store),
    packages: out.items.package.map((p) => ({ ...p, tokens: out.tokensOf('package', p.id) })),
    error_patterns: out.items.error_pattern,
    strategies: out.items.strategy,
    reasoning: { included: true, level: 'medium', budget: 800, used_tokens: 0, entries: out.items.reasoning.map((e) => ({ ...e, tokens: out.tokensOf('reasoning', e.id) })) },
    overflow_count: input.totalAvailable - out.items.package.length,
    excluded: out.excluded,
    truncation: out.report,
  };
  return renderMarkdown(doc);
}

describe('fitBlock: property', () => {
  it('Tier 1 whole, the report lists exactly what is missing, and the rendered sections fit the budget unless Tier 1 overran it', () => {
    let shown = 0;
    let overran = 0;
    let floorNamed = 0;
    let ownLines = 0;
    fc.assert(
      fc.property(arbStore, fc.integer({ min: 0, max: 900 }), fc.constantFrom(...PURPOSES), (store, budget, purpose) => {
        const input = blockInput(store, budget, purpose, quarter);
        const out = fitBlock(input);
        const kept = new Set([
          ...out.items.package.map((p) => `package:${p.id}`),
          ...out.items.reasoning.map((e) => `reasoning:${e.id}`),
          ...out.items.error_pattern.map((p) => `error_pattern:${p.pattern_hash}`),
          ...out.items.strategy.map((s) => `strategy:${s.strategy_id}`),
        ]);
        const all = [
          ...input.items.package.map((p) => ({ key: `package:${p.id}`, tier: p.tier, text: p.summary })),
          ...input.items.reasoning.map((e) => ({ key: `reasoning:${e.id}`, tier: e.tier, text: e.content })),
          ...input.items.error_pattern.map((p) => ({ key: `error_pattern:${p.pattern_hash}`, tier: p.tier, text: p.solution })),
          ...input.items.strategy.map((s) => ({ key: `strategy:${s.strategy_id}`, tier: s.tier, text: s.insight })),
        ];
        // Tier 1's first item always there, and whole (the fit never changes an item's text); one
        // past Tier 1's bound is shown or left out as Tier 2.
        const shownTier = new Map([...out.items.package.map((p) => [`package:${p.id}`, p.tier] as const), ...out.items.reasoning.map((e) => [`reasoning:${e.id}`, e.tier] as const)]);
        const firstTier1 = all.find((i) => i.tier === 1);
        if (firstTier1 && input.budget >= 0) expect(kept.has(firstTier1.key) || out.excluded.some((e) => `${e.kind}:${e.id}` === firstTier1.key && e.tier === 2)).toBe(true);
        // (A builder's item is admitted on the block's room alone, whatever Tier 1's count: one with no room keeps Tier 1.)
        const floorKeys = new Set(floorOf(store).packages.map((id) => `package:${id}`));
        for (const item of all.filter((i) => i.tier === 1 && !kept.has(i.key))) {
          expect(floorKeys.has(item.key) ? [1, 2] : [2]).toContain(out.excluded.find((e) => `${e.kind}:${e.id}` === item.key)?.tier);
        }
        for (const [key, tier] of shownTier) expect([tier === 2 ? 1 : tier, tier]).toContain(all.find((i) => i.key === key)?.tier);
        const md = rendered(input, out, store);
        for (const p of out.items.package) expect(md).toContain(`> ${p.summary}\n`);
        // The report: exactly the missing items, with the rank's exclusions, counted per reason.
        const missing = all.filter((i) => !kept.has(i.key)).map((i) => i.key).sort();
        const fitExcluded = out.excluded.filter((e) => e.reason === 'budget' || e.reason === 'tier');
        expect(fitExcluded.map((e) => `${e.kind}:${e.id}`).sort()).toEqual(missing);
        for (const e of fitExcluded) {
          const tier = all.find((i) => i.key === `${e.kind}:${e.id}`)?.tier;
          // Left out as the tier it was fitted as: its own, or Tier 2 for a Tier 1 item past Tier 1's bound.
          expect(e.tier === tier || (tier === 1 && e.tier === 2)).toBe(true);
        }
        const counts = (reason: string) => out.excluded.filter((e) => e.reason === reason).length;
        expect(out.report.left_out).toEqual(Object.fromEntries(['budget', 'tier', 'limit'].map((r) => [r, counts(r)]).filter(([, n]) => (n as number) > 0)));
        // Shown in the markdown exactly when the report says so (or a builder's item is not shown:
        // its line stands under the heading all the same), and then it names the best left out.
        const floorMissing = floorOf(store).packages.filter((id) => !out.items.package.some((p) => p.id === id));
        expect(md.includes('\n### Left out\n')).toBe(out.report.shown || floorMissing.length > 0);
        // Every builder's item not shown is named, in the layout's form.
        if (floorMissing.length > 0) {
          const line = md.split('\n').find((l) => l.startsWith("- Also in BAZINGA's own ")) ?? '';
          expect(line.startsWith(out.report.navigation === undefined ? "- Also in BAZINGA's own context section, not shown here: " : "- Also in BAZINGA's own section: ")).toBe(true);
          for (const id of floorMissing) expect(line).toMatch(new RegExp(`\\b${id}\\b`));
          floorNamed++;
        }
        if (out.report.shown) shown++;
        // The sections below the heading, as emitted, within the budget; over it only by Tier 1's stated overrun.
        const body = md.slice(md.indexOf('\n') + 1);
        if (out.report.overrun === 0) expect(quarter.count(body)).toBeLessThanOrEqual(budget);
        else {
          overran++;
          const tier1 = out.report.tiers[0]!.used > 0;
          expect(md).toContain(`- Over budget by ${out.report.overrun} tokens (${out.report.used} of ${budget}): ${tier1 ? 'Tier 1 is never cut' : "the block's own lines alone pass the budget"}`);
          // Past the budget only by Tier 1's one item or by the headings: nothing else is admitted then.
          if (tier1) {
            expect(out.report.tiers[1]!.used + out.report.tiers[2]!.used).toBe(0);
            expect(out.report.tiers[0]!.items).toBe(1);
          } else {
            // The block's own lines: no item is shown, and what is printed does pass the budget.
            expect(shownCount(out)).toBe(0);
            expect(quarter.count(body)).toBeGreaterThan(budget);
            ownLines++;
          }
          expect(out.report.overrun).toBe(out.report.used - budget);
        }
      }),
      { numRuns: 300, seed: 23 },
    );
    // Not vacuous: the runs reached both the report and the overrun.
    expect(shown).toBeGreaterThan(20);
    expect(overran).toBeGreaterThan(5);
    expect(floorNamed).toBeGreaterThan(20);
    expect(ownLines).toBeGreaterThan(0);
  });
});
