/**
 * Packing (spec/assembler.md §3.5): greedy `pack` and the pack step's package path (packPackages
 * below: preparePackages, then the block's fit with the packages alone, all in one tier). A
 * fast-check property over random items and budgets: the emitted section, rendered exactly as
 * packPackages renders it and counted with the same counter, never exceeds the budget; admitted
 * items keep score order; every other item is excluded exactly once with its reason. Run with a
 * deterministic counter and once with the real cl100k counter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactText } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { DEFAULT_CONFIG, type Zone } from '../skills/context-assembler/scripts/lib/config.ts';
import type { RankedPackage } from '../skills/context-assembler/scripts/lib/contract.ts';
import { exactCounter, pack, type TokenCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';
import { fitBlock } from '../skills/context-assembler/scripts/lib/core/block.ts';
import { packageSectionTokens, preparePackages } from '../skills/context-assembler/scripts/lib/core/packages.ts';
import { availableText, renderPackageEntry, renderPackageHeader, renderPackageSection } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { countCl100k, makeTokenCounter } from '../skills/context-assembler/scripts/lib/tokens.ts';

/** Deterministic counter: one token per started group of four characters (code points). */
const quarter = exactCounter((text) => Math.ceil(Array.from(text).length / 4));
const redact = (text: string) => redactText(text);

const SECRET = 'sk-ant-api03-Zx9Qw7Er5Ty3Ui1Op8As6Df4Gh2Jk0LmNbVcXz';

function pkg(over: Partial<RankedPackage> & { id: number }): RankedPackage {
  return {
    priority: 'medium',
    package_type: 'research',
    file_path: `bazinga/artifacts/s1/p${over.id}.md`,
    summary: `Package ${over.id} summary`,
    group_id: null,
    created_at: '2025-12-01 10:00:00',
    score: 100 - over.id,
    ...over,
  };
}

interface PackPackagesInput {
  selected: readonly RankedPackage[];
  zone: Zone;
  totalAvailable: number;
  totalCapped?: boolean;
  priorityUsed: string | null;
  budget: number;
  summaryCap: number;
  redact: (text: string) => string;
  counter: TokenCounter;
}

/** The pack step for packages alone: prepared, then fitted as the block fits them (one tier: the whole budget is theirs). */
function packPackages(i: PackPackagesInput) {
  const prepared = preparePackages(i.selected, i.summaryCap, i.redact);
  const block = fitBlock({
    purpose: 'subagent',
    moreCommand: 'context-assembler assemble --more',
    split: [0.65, 0.25, 0.1],
    budget: i.budget,
    zone: i.zone,
    totalAvailable: i.totalAvailable,
    totalCapped: i.totalCapped ?? false,
    priorityUsed: i.priorityUsed,
    items: { package: prepared.packages.map((p) => ({ ...p, tier: 3 as const })), reasoning: [], error_pattern: [], strategy: [], memory: [] },
    excludedBefore: prepared.excluded,
    counter: i.counter,
  });
  const packages = block.items.package.map((p) => ({ ...p, tokens: block.tokensOf('package', p.id) }));
  const header = renderPackageHeader(i.zone, packages.length, availableText(i.totalAvailable, i.totalCapped), i.priorityUsed);
  const section = packageSectionTokens(header, packages, i.counter, i.budget);
  return { packages, tokens: section.tokens, exact: block.itemsExact && section.exact, excluded: block.excluded };
}

function input(over: Partial<PackPackagesInput>): PackPackagesInput {
  return {
    selected: [],
    zone: 'Normal',
    totalAvailable: 10,
    priorityUsed: null,
    budget: 10_000,
    summaryCap: 400,
    redact,
    counter: quarter,
    ...over,
  };
}

// ----------------------------------------------------------------------------------- pack()

describe('pack (greedy, skip not stop)', () => {
  const len = (s: string) => s.length;
  it.each([
    { name: 'all fit', sizes: [3, 4, 5], budget: 12, admitted: [3, 4, 5], used: 12 },
    { name: 'exact fit is admitted (≤, not <)', sizes: [6, 6], budget: 12, admitted: [6, 6], used: 12 },
    { name: 'a big item is skipped, a later small one still admitted', sizes: [5, 20, 4], budget: 10, admitted: [5, 4], used: 9 },
    { name: 'nothing fits', sizes: [11, 12], budget: 10, admitted: [], used: 0 },
    { name: 'zero budget admits empty items only', sizes: [0, 1, 0], budget: 0, admitted: [0, 0], used: 0 },
    { name: 'order is kept', sizes: [1, 9, 2, 8, 3], budget: 7, admitted: [1, 2, 3], used: 6 },
  ])('$name', ({ sizes, budget, admitted, used }) => {
    const items = sizes.map((n) => 'x'.repeat(n));
    const r = pack(items, budget, (s) => s, exactCounter(len));
    expect(r.admitted.map((a) => a.tokens)).toEqual(admitted);
    expect(r.used).toBe(used);
    expect(r.admitted.length + r.skipped.length).toBe(sizes.length);
    expect(r.skipped.every((s) => s.length + r.used > budget)).toBe(true);
  });
});

// ------------------------------------------------------------------------- the property test

const WORDS = ['cache', 'retry', 'timeout', 'the', 'database', 'migration', 'fails', 'on', 'ENOENT', 'é', '日本', 'x', 'src/app.ts', '—', 'a'];
const arbSummary = fc.oneof(
  { weight: 8, arbitrary: fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 120 }).map((w) => w.join(' ')) },
  // only a secret: redaction leaves nothing
  { weight: 1, arbitrary: fc.constant(SECRET) },
  // a secret inside ordinary text
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...WORDS), { maxLength: 10 }).map((w) => `${w.join(' ')} key ${SECRET} end`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 600 }) },
);
const arbItems = fc
  .array(
    fc.record({
      priority: fc.constantFrom('critical', 'high', 'medium', 'low'),
      path: fc.stringMatching(/^[a-z0-9_/.-]{1,60}$/),
      summary: arbSummary,
    }),
    { maxLength: 25 },
  )
  .map((rows) =>
    rows.map((r, i) => pkg({ id: i + 1, priority: r.priority, file_path: r.path, summary: r.summary, score: 1000 - i * 3 })),
  );
const arbZone = fc.constantFrom<Zone>('Normal', 'Soft_Warning', 'Conservative');

function checkPackInvariants(selected: RankedPackage[], budget: number, zone: Zone, extra: number, priorityUsed: string | null, counter: TokenCounter) {
  const count = (text: string) => counter.count(text);
  const totalAvailable = selected.length + extra;
  const summaryCap = DEFAULT_CONFIG.summary_caps[zone as keyof typeof DEFAULT_CONFIG.summary_caps];
  const out = packPackages(input({ selected, zone, budget, totalAvailable, priorityUsed, summaryCap, counter }));

  // The section as emitted, rendered the way packPackages renders it, counted with the same counter.
  const header = renderPackageHeader(zone, out.packages.length, totalAvailable, priorityUsed);
  const section = renderPackageSection(header, out.packages.map(renderPackageEntry));
  const counted = count(section);
  // A count, or (admitted without counting) an upper bound of it.
  if (out.exact) expect(out.tokens).toBe(counted);
  else expect(out.tokens).toBeGreaterThanOrEqual(counted);
  if (out.packages.length > 0) expect(counted).toBeLessThanOrEqual(budget);
  else expect(counted <= budget || count(header) > budget).toBe(true);

  // Admitted items keep score order (a subsequence of the input order).
  const order = new Map(selected.map((p, i) => [p.id, i]));
  const positions = out.packages.map((p) => order.get(p.id) as number);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  for (let i = 1; i < out.packages.length; i++) {
    expect((out.packages[i - 1] as RankedPackage).score).toBeGreaterThanOrEqual((out.packages[i] as RankedPackage).score);
  }

  // Every non-admitted item exactly once in `excluded`, with reason budget or redaction-emptied.
  const admitted = new Set(out.packages.map((p) => p.id));
  const excludedIds = out.excluded.map((e) => e.id);
  expect(new Set(excludedIds).size).toBe(excludedIds.length);
  expect([...excludedIds, ...admitted].sort((a, b) => (a as number) - (b as number))).toEqual(selected.map((p) => p.id).sort((a, b) => a - b));
  for (const e of out.excluded) {
    expect(e.kind).toBe('package');
    expect(['budget', 'redaction-emptied']).toContain(e.reason);
    if (e.reason === 'redaction-emptied') {
      const original = selected.find((p) => p.id === e.id) as RankedPackage;
      expect(redact(original.summary).replace(/\[REDACTED[^\]]*\]/g, '')).not.toMatch(/[\p{L}\p{N}]/u);
    }
  }

  // Emitted summaries: within the zone's cap, one line, no secret; per-entry tokens are as counted.
  for (const p of out.packages) {
    expect(Array.from(p.summary).length).toBeLessThanOrEqual(summaryCap);
    expect(p.summary).not.toContain('\n');
    expect(p.summary).not.toContain(SECRET);
    if (out.exact) expect(p.tokens).toBe(count(renderPackageEntry(p) + '\n\n'));
    else expect(p.tokens).toBeGreaterThanOrEqual(count(renderPackageEntry(p) + '\n\n'));
  }
  // When there is room for everything, nothing is left out for budget.
  return out;
}

describe('packPackages: property', () => {
  it('deterministic counter (chars/4, ceil): section ≤ budget, score order, exclusions complete', () => {
    fc.assert(
      fc.property(
        arbItems,
        fc.integer({ min: 0, max: 4000 }),
        arbZone,
        fc.nat({ max: 40 }),
        fc.constantFrom(null, 'critical', 'high', 'medium'),
        (selected, budget, zone, extra, priorityUsed) => {
          checkPackInvariants(selected, budget, zone, extra, priorityUsed, quarter);
        },
      ),
      { numRuns: 400, seed: 20251202 },
    );
  });

  it('real counter makeTokenCounter(1.2): the same invariants', () => {
    const real = makeTokenCounter(1.2);
    fc.assert(
      fc.property(arbItems, fc.integer({ min: 0, max: 3000 }), arbZone, fc.nat({ max: 40 }), (selected, budget, zone, extra) => {
        checkPackInvariants(selected, budget, zone, extra, zone === 'Conservative' ? 'high' : null, real);
      }),
      { numRuns: 60, seed: 7 },
    );
  });

  it('lazy counting (bounds first) admits exactly what counting every item admits', () => {
    const lazy = makeTokenCounter(1.2);
    const counting = exactCounter((t) => Math.ceil(countCl100k(t) * 1.2));
    let bounded = 0;
    fc.assert(
      fc.property(arbItems, fc.integer({ min: 0, max: 3000 }), arbZone, (selected, budget, zone) => {
        const summaryCap = DEFAULT_CONFIG.summary_caps[zone as keyof typeof DEFAULT_CONFIG.summary_caps];
        const a = packPackages(input({ selected, zone, budget, summaryCap, counter: lazy }));
        const b = packPackages(input({ selected, zone, budget, summaryCap, counter: counting }));
        expect(a.packages.map((p) => p.id)).toEqual(b.packages.map((p) => p.id));
        expect(a.excluded).toEqual(b.excluded);
        if (a.exact) expect(a.tokens).toBe(b.tokens);
        else bounded++;
      }),
      { numRuns: 150, seed: 11 },
    );
    // Not vacuous: some runs were decided on bounds alone.
    expect(bounded).toBeGreaterThan(0);
  });

  it('exact is never claimed over a bound: every budget from tight to ample, fresh counters', () => {
    const mk = (id: number, summary: string) => pkg({ id, priority: 'high', file_path: `a/f${id}.md`, summary });
    const items = [mk(1, 'the token refresh flow is described here in words'), mk(2, 'the token refresh flow is described here in many many many words and it goes on for a while more and more and more'), mk(3, 'ok')];
    let exactRuns = 0;
    for (let budget = 20; budget < 120; budget++) {
      const out = packPackages(input({ selected: items, budget, counter: makeTokenCounter(1) }));
      const section = renderPackageSection(renderPackageHeader('Normal', out.packages.length, 10, null), out.packages.map(renderPackageEntry));
      expect(out.tokens).toBeGreaterThanOrEqual(countCl100k(section));
      if (out.packages.length > 0) expect(out.tokens).toBeLessThanOrEqual(budget);
      if (!out.exact) continue;
      exactRuns++;
      expect(out.tokens).toBe(countCl100k(section));
      for (const p of out.packages) expect(p.tokens).toBe(countCl100k(renderPackageEntry(p) + '\n\n'));
    }
    expect(exactRuns).toBeGreaterThan(0);
  });

  it('the section figure is counted when its bound would exceed the budget (never reported above it)', () => {
    const items = [pkg({ id: 1, summary: 'the token refresh flow is described here in words' }), pkg({ id: 2, summary: 'families of refresh tokens rotate on reuse' })];
    const budget = countCl100k(renderPackageSection(renderPackageHeader('Normal', 2, 10, null), items.map(renderPackageEntry))) + 1;
    const counter = makeTokenCounter(1);
    const one = [items[1] as RankedPackage];
    const header = renderPackageHeader('Normal', 1, 9, null);
    const section = packageSectionTokens(header, one, counter, budget);
    expect(section.tokens).toBeLessThanOrEqual(budget);
    expect(section.tokens).toBeGreaterThanOrEqual(countCl100k(renderPackageSection(header, one.map(renderPackageEntry))));
  });

  it('a large budget admits every non-emptied item', () => {
    fc.assert(
      fc.property(arbItems, arbZone, (selected, zone) => {
        const out = checkPackInvariants(selected, 1_000_000, zone, 0, null, quarter);
        expect(out.excluded.filter((e) => e.reason === 'budget')).toEqual([]);
      }),
      { numRuns: 100, seed: 3 },
    );
  });
});

// ------------------------------------------------------------------------- fixed vectors

describe('packPackages: summary caps per zone', () => {
  const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' '); // ~1300 characters
  it.each([
    { zone: 'Normal' as Zone, cap: 400 },
    { zone: 'Soft_Warning' as Zone, cap: 200 },
    { zone: 'Conservative' as Zone, cap: 100 },
  ])('$zone: shortened to $cap characters, its beginning and end kept at word boundaries around " […] "', ({ zone, cap }) => {
    const caps = DEFAULT_CONFIG.summary_caps as Record<string, number>;
    expect(caps[zone]).toBe(cap);
    const out = packPackages(input({ zone, summaryCap: caps[zone] as number, selected: [pkg({ id: 1, summary: long })] }));
    const s = out.packages[0]?.summary as string;
    expect(s.length).toBeLessThanOrEqual(cap);
    expect(s.length).toBeGreaterThan(cap / 2);
    const [head, tail, ...more] = s.split(' […] ');
    expect(more).toEqual([]);
    expect(long.startsWith(head as string)).toBe(true);
    expect(long[(head as string).length]).toBe(' '); // ends on a whole word
    expect(long.endsWith(tail as string)).toBe(true);
    expect(long[long.length - (tail as string).length - 1]).toBe(' '); // starts on a whole word
    // The beginning gets about 3/5 of the room, the end the rest.
    expect((head as string).length).toBeGreaterThan((tail as string).length);
  });

  it('a summary within the cap is left as is (whitespace collapsed to one line)', () => {
    const out = packPackages(input({ summaryCap: 100, selected: [pkg({ id: 1, summary: 'line one\n\n  line   two' })] }));
    expect(out.packages[0]?.summary).toBe('line one line two');
  });

  it('exactly at the cap is not cut', () => {
    const s = 'a'.repeat(95) + ' bcde'; // 100 characters
    const out = packPackages(input({ summaryCap: 100, selected: [pkg({ id: 1, summary: s })] }));
    expect(out.packages[0]?.summary).toBe(s);
  });

  it('one character over the cap is cut', () => {
    const s = 'a'.repeat(95) + ' bcdef'; // 101 characters
    const out = packPackages(input({ summaryCap: 100, selected: [pkg({ id: 1, summary: s })] }));
    // One sentence with no room for it whole: its first and last words, around the marker.
    expect(out.packages[0]?.summary).toBe(`${'a'.repeat(57)} […] ${'a'.repeat(32)} bcdef`);
  });

  it('the cap applies after redaction (a secret cannot be half-cut into the output)', () => {
    const summary = `${'filler '.repeat(13)}token ${SECRET} tail`;
    const out = packPackages(input({ summaryCap: 100, selected: [pkg({ id: 1, summary })] }));
    const s = out.packages[0]?.summary as string;
    expect(s).not.toContain('sk-ant');
    expect(s.length).toBeLessThanOrEqual(100);
  });
});

describe('packPackages: redaction', () => {
  it.each([
    { name: 'a bare vendor key', summary: SECRET },
    { name: 'a PEM block', summary: '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----' },
    { name: 'a JWT and punctuation', summary: '  eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ; ' },
  ])('$name → excluded as redaction-emptied, not rendered', ({ summary }) => {
    const out = packPackages(input({ selected: [pkg({ id: 1, summary }), pkg({ id: 2 })], totalAvailable: 2 }));
    expect(out.packages.map((p) => p.id)).toEqual([2]);
    expect(out.excluded).toEqual([{ kind: 'package', id: 1, reason: 'redaction-emptied' }]);
  });

  it('a secret inside text is replaced, the package kept', () => {
    const out = packPackages(input({ selected: [pkg({ id: 1, summary: 'Set DB_PASSWORD=hunter2hunter2 in .env' })] }));
    expect(out.packages[0]?.summary).toBe('Set DB_PASSWORD=[REDACTED:password] in .env');
    expect(out.excluded).toEqual([]);
  });

  it('the file path is redacted too', () => {
    const out = packPackages(input({ selected: [pkg({ id: 1, file_path: `bazinga/artifacts/${SECRET}.md` })] }));
    expect(out.packages[0]?.file_path).not.toContain(SECRET);
  });
});

describe('packPackages: budget', () => {
  const three = [
    pkg({ id: 1, summary: 'x'.repeat(300) }),
    pkg({ id: 2, summary: 'y'.repeat(900) }),
    pkg({ id: 3, summary: 'z'.repeat(8) }),
  ];

  it('an item that does not fit even shortened is skipped, not a stop; the skip is reported', () => {
    // Fits 1 (~90) and 3 (~20) with the block's fixed lines and its `### Left out` report, not 2
    // (~240 whole, ~40 at its shortest: 80 characters of summary).
    const budget = 135;
    const out = packPackages(input({ selected: three, budget, summaryCap: 1000 }));
    expect(out.packages.map((p) => p.id)).toEqual([1, 3]);
    expect(out.excluded).toEqual([{ kind: 'package', id: 2, reason: 'budget', tier: 3 }]);
    expect(out.tokens).toBeLessThanOrEqual(budget);
    expect(out.tokens).toBe(quarter.count(renderPackageSection(renderPackageHeader('Normal', 2, 10, null), out.packages.map(renderPackageEntry))));
  });

  it('an item with no room for its whole summary takes the room left with a shortened one', () => {
    // 1 fits whole; 2 does not, but its shortened summary fills what the block has left, so 3
    // (which would have fitted in 2's place) is left out for budget: the rank decides, not the size.
    const budget = 200;
    const out = packPackages(input({ selected: three, budget, summaryCap: 1000 }));
    expect(out.packages.map((p) => p.id)).toEqual([1, 2]);
    const cut = out.packages[1]?.summary ?? '';
    expect(cut.length).toBeGreaterThanOrEqual(80);
    expect(cut.length).toBeLessThan(900);
    expect(cut.startsWith('yyyy')).toBe(true);
    expect(out.excluded).toEqual([{ kind: 'package', id: 3, reason: 'budget', tier: 3 }]);
    expect(out.tokens).toBe(quarter.count(renderPackageSection(renderPackageHeader('Normal', 2, 10, null), out.packages.map(renderPackageEntry))));
    // A larger budget gives the same package a longer summary, never a different choice.
    const wider = packPackages(input({ selected: three, budget: budget + 40, summaryCap: 1000 }));
    expect(wider.packages.map((p) => p.id)).toEqual([1, 2]);
    expect(wider.packages[1]?.summary.length).toBeGreaterThan(cut.length);
  });

  it('a budget too small for anything: every item excluded for budget, the section is the bare header', () => {
    const out = packPackages(input({ selected: three, budget: 12, summaryCap: 1000 }));
    expect(out.packages).toEqual([]);
    expect(out.excluded.map((e) => [e.id, e.reason])).toEqual([
      [1, 'budget'],
      [2, 'budget'],
      [3, 'budget'],
    ]);
    expect(out.tokens).toBe(quarter.count(renderPackageHeader('Normal', 0, 10, null)));
  });

  it('Conservative renders the priority header with the level', () => {
    const out = packPackages(input({ zone: 'Conservative', priorityUsed: 'high', selected: three.slice(0, 1), totalAvailable: 4, summaryCap: 100 }));
    expect(out.tokens).toBe(quarter.count(renderPackageSection('### Priority Packages (1/4) - high level', out.packages.map(renderPackageEntry))));
  });
});
