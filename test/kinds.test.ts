/**
 * The item-kinds table (core/kinds.ts): every kind has one row, the renderer shows each kind's
 * section exactly as its row says (heading, entries, separator: the text the fit sizes), and a kind
 * the tier rules and the purposes' kind orders do not name still has a place (Tier 3, last in it).
 */
import { describe, expect, it } from 'vitest';
import type { AssemblyDoc, ErrorPatternItem, MemoryItem, ReasoningItem, StrategyItem } from '../skills/context-assembler/scripts/lib/contract.ts';
import { KINDS, kindRow } from '../skills/context-assembler/scripts/lib/core/kinds.ts';
import { renderMarkdown, verificationCommands } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { fitOrder, ITEM_KINDS, PURPOSES, tierOf, type ItemKind } from '../skills/context-assembler/scripts/lib/core/tiers.ts';

const reasoning = (id: number, content: string): ReasoningItem => ({ id, agent_type: 'developer', phase: 'completion', content, confidence: null, timestamp: null, tokens: 5 });
const pattern = (hash: string, solution: string): ErrorPatternItem => ({
  pattern_hash: hash,
  fault_hash: `fault-${hash}`,
  error_type: 'TypeError',
  message_pattern: 'x is undefined',
  solution,
  confidence: 0.9,
  occurrences: 2,
  last_seen: '2025-12-01',
  matched_error: false,
  relevance: 0,
});
const strategy = (id: string, insight: string): StrategyItem => ({ strategy_id: id, topic: 'auth', insight, helpfulness: 3, relevance: 0 });
const memory = (id: number, line: string): MemoryItem => ({ id, type: 'decision', title: 't', line, relevance: 1, score: 1 });

function doc(over: Partial<AssemblyDoc>): AssemblyDoc {
  return {
    doc_version: 2,
    step: 'reasoning',
    request: { session: 's', group: 'AUTH', agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: 1, limit: 3, include_reasoning: true, reasoning_level: 'medium', now: '2025-12-02T12:00:00Z', task: null, error: null, scope: null, lang: null, framework: null },
    zone: 'Normal',
    usage_pct: 0,
    summary_cap: 400,
    effective_limit: 170000,
    remaining_budget: 170000,
    context_budget: 5000,
    limit: 3,
    include_reasoning: true,
    purpose: 'implementation',
    total_available: 0,
    packages: [],
    ...over,
  };
}

describe('the item-kinds table', () => {
  it('has one row a kind, each named apart in the report', () => {
    expect(Object.keys(KINDS).sort()).toEqual([...ITEM_KINDS].sort());
    const labels = ITEM_KINDS.map((k) => KINDS[k].label);
    expect(new Set(labels).size).toBe(labels.length);
  });

  // Two items of one kind in a document: its section is the row's heading, then the entries joined by the row's separator.
  it.each([
    { kind: 'reasoning', doc: doc({ reasoning: { included: true, level: 'medium', budget: 800, used_tokens: 10, entries: [reasoning(1, 'first'), reasoning(2, 'second')] } }) },
    { kind: 'error_pattern', doc: doc({ error_patterns: [pattern('a'.repeat(64), 'run it again'), pattern('b'.repeat(64), 'clear the cache')] }) },
    { kind: 'strategy', doc: doc({ strategies: [strategy('s1', 'rotate tokens'), strategy('s2', 'pin the clock')] }) },
    { kind: 'memory', doc: doc({ memories: [memory(1, '- [decision] one'), memory(2, '- [decision] two')] }) },
  ] as const)('the $kind section is rendered from its row', ({ kind, doc: d }) => {
    const row = kindRow(kind);
    const items = row.shown(d);
    expect(items).toHaveLength(2);
    const section = `${(row.header as (n: number) => string)(2)}\n\n${row.entry(items[0])}${row.separator}${row.entry(items[1])}`;
    expect(renderMarkdown(d)).toContain(`\n\n${section}\n`);
  });

  it('memories ranked but not yet fitted (the rank step) are not shown', () => {
    const d = doc({ step: 'rank', memories: [memory(1, '- [decision] one')] });
    expect(KINDS.memory.shown(d)).toEqual([]);
    expect(renderMarkdown(d)).not.toContain('### Project Memory');
  });

  it('the report names an error pattern by the first 12 digits of its hash, other kinds by id', () => {
    expect(KINDS.error_pattern.shortId('0123456789abcdef'.repeat(4))).toBe('0123456789ab');
    expect(KINDS.package.shortId(42)).toBe('42');
  });

  it('the reasoning row tells the tier rules which entry is the newest of its phase in the group', () => {
    const entries = [
      { ...reasoning(1, 'old'), timestamp: '2025-12-01 10:00:00', group_id: 'AUTH', iteration: 0 },
      { ...reasoning(2, 'new'), timestamp: '2025-12-01 11:00:00', group_id: 'AUTH', iteration: 1 },
      { ...reasoning(3, 'other group'), timestamp: '2025-12-01 12:00:00', group_id: 'CART', iteration: 1 },
    ];
    const subjects = KINDS.reasoning.subjects(entries, { group: 'AUTH', error: null, iteration: 1 });
    expect(subjects.map((s) => s.latestOfPhase)).toEqual([false, true, false]);
    expect(subjects.map((s) => tierOf(s, 'implementation'))).toEqual([2, 1, 2]);
  });

  it('the package row tells the tier rules which failures package is the newest of the group (only that one is Tier 1)', () => {
    const pkg = (id: number, created_at: string, group_id: string | null) => ({
      id,
      priority: 'high',
      package_type: 'failures',
      file_path: `f${id}.md`,
      summary: 's',
      group_id,
      created_at,
      score: 1,
    });
    const items = [pkg(1, '2025-12-01 10:00:00', 'AUTH'), pkg(2, '2025-12-01 12:00:00', 'AUTH'), pkg(3, '2025-12-01 13:00:00', 'CART')];
    const subjects = KINDS.package.subjects(items, { group: 'AUTH', error: null, iteration: 1 });
    expect(subjects.map((s) => s.latestOfType)).toEqual([false, true, false]);
    expect(subjects.map((s) => tierOf(s, 'implementation'))).toEqual([2, 1, 2]);
  });

  it('a bounded Tier 1 keeps what the tier table puts first: the group\'s newest failures before decisions ranked above it', () => {
    const items = [
      { kind: 'package' as const, tier: 1 as const, key: 'package:10' }, // a decisions package, ranked first
      { kind: 'package' as const, tier: 1 as const, key: 'package:11' }, // another decisions package
      { kind: 'reasoning' as const, tier: 1 as const, key: 'reasoning:5' }, // the newest completion
      { kind: 'package' as const, tier: 1 as const, key: 'package:2' }, // the newest failures, ranked last
    ];
    const essential = new Map([
      ['package:10', 1],
      ['package:11', 1],
      ['reasoning:5', 4],
      ['package:2', 0],
    ]);
    expect(fitOrder(items, 'review', essential).map((i) => i.key)).toEqual(['package:2', 'package:10', 'package:11', 'reasoning:5']);
    // Without the rules, Tier 1 goes by kind and rank.
    expect(fitOrder(items, 'review').map((i) => i.key)).toEqual(['package:10', 'package:11', 'package:2', 'reasoning:5']);
  });

  it('a kind no rule and no kind order names is Tier 3 and goes last within its tier', () => {
    const imaginary = 'test_result' as ItemKind;
    expect(tierOf({ kind: imaginary, sameGroup: true }, 'implementation')).toBe(3);
    for (const purpose of PURPOSES) {
      const items = [
        { kind: imaginary, tier: 3 as const, key: 'new' },
        { kind: 'memory' as const, tier: 3 as const, key: 'memory' },
        { kind: 'package' as const, tier: 3 as const, key: 'package' },
      ];
      expect(fitOrder(items, purpose).map((i) => i.key).at(-1)).toBe('new');
    }
  });
});

describe('a package shortened to fit the room left', () => {
  const pkg = (summary: string) => ({ id: 1, priority: 'high', package_type: 'research', file_path: 'p.md', summary, group_id: null, created_at: null, score: 1 });
  it('a summary a cap already cut is cut again in its beginning: one gap marked once, never a marker inside a sentence', () => {
    const shorten = KINDS.package.shorten;
    expect(shorten).toBeDefined();
    const capped = 'Finding one about the token refresh path. Finding two about the clock skew window and what it means for users. […] Fixed it.';
    for (const max of [60, 80, 100, 120]) {
      const out = shorten!(pkg(capped), max).summary;
      expect(out).not.toContain('[…] […]');
      expect(out.startsWith('Finding one')).toBe(true);
      expect(out.endsWith('[…]')).toBe(true);
    }
    // A summary never cut keeps its beginning and its end.
    const whole = 'First sentence here about tokens. Second one. Third one about skew. Last sentence with the fix.';
    const cut = shorten!(pkg(whole), 60).summary;
    expect(cut).toContain(' […] ');
    expect(cut.startsWith('First')).toBe(true);
  });

  it('a command a shortened text cut through is not listed as a verification command', () => {
    const commands = verificationCommands({
      packages: [{ ...pkg('Run `npm test -- --grep refresh […] while` and then `npx vitest run test/auth.test.ts`'), tier: 2 } as never],
      reasoning: [],
      errorPatterns: [],
      strategies: [],
    });
    expect(commands.map((c) => c.command)).toEqual(['npx vitest run test/auth.test.ts']);
  });
});
