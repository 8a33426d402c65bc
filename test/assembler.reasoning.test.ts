/**
 * Prior agents' reasoning (spec/assembler.md §3.6): relevant producers per recipient, at most 2
 * most recent per producer and 5 in total, phase order then newest first, content shortened to 300
 * characters, packed within the level budget with every skip reported.
 */
import { describe, expect, it } from 'vitest';
import { expectShortened } from './helpers.ts';
import { redactText } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import { SPAWNED_AGENTS as AGENTS } from '../skills/bazinga-db/scripts/lib/enums.ts';
import { exactCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';
import { selectReasoning, type ReasoningRowInput, type SelectReasoningInput } from '../skills/context-assembler/scripts/lib/core/reasoning.ts';
import { renderReasoningEntry } from '../skills/context-assembler/scripts/lib/core/render.ts';

const quarter = exactCounter((text) => Math.ceil(Array.from(text).length / 4));
const redact = (text: string) => redactText(text);
const cfg = DEFAULT_CONFIG.reasoning;

let nextId = 1;
/** A row `minute` minutes after 10:00 on 2025-12-01 (larger = newer). */
function row(agent: string, phase: string | null, minute: number, content?: string): ReasoningRowInput {
  const id = nextId++;
  const mm = String(minute).padStart(2, '0');
  return {
    id,
    agent_type: agent,
    reasoning_phase: phase,
    content: content ?? `${agent} ${phase ?? 'none'} at ${mm} (row ${id})`,
    confidence_level: 'high',
    timestamp: `2025-12-01 10:${mm}:00`,
  };
}

function select(recipient: string, rows: ReasoningRowInput[], over: Partial<SelectReasoningInput> = {}) {
  return selectReasoning({
    rows,
    producers: cfg.relevant_producers[recipient] ?? [],
    maxPerProducer: cfg.max_per_producer,
    maxTotal: cfg.max_total,
    contentChars: cfg.content_chars,
    budget: cfg.level_budgets.full as number,
    redact,
    counter: quarter,
    ...over,
  });
}

describe('relevant producers per recipient (DEFAULT_CONFIG)', () => {
  it('the configured table is the spec table', () => {
    expect(cfg.relevant_producers).toEqual({
      qa_expert: ['developer', 'senior_software_engineer'],
      tech_lead: ['developer', 'senior_software_engineer', 'qa_expert'],
      senior_software_engineer: ['developer'],
      investigator: ['developer', 'senior_software_engineer', 'qa_expert'],
      developer: ['developer', 'qa_expert', 'tech_lead'],
      requirements_engineer: ['developer', 'tech_lead'],
    });
    expect([cfg.max_per_producer, cfg.max_total, cfg.content_chars]).toEqual([2, 5, 300]);
  });

  const producers = [...AGENTS, 'project_manager', 'orchestrator'];
  it.each(AGENTS.map((recipient) => ({ recipient, expected: [...(cfg.relevant_producers[recipient] ?? [])].sort() })))(
    '$recipient hears only from $expected',
    ({ recipient, expected }) => {
      const rows = producers.map((p, i) => row(p, 'completion', i));
      const out = select(recipient, rows);
      expect([...new Set(out.entries.map((e) => e.agent_type))].sort()).toEqual(expected);
    },
  );

  it('an unknown recipient (no producers) gets nothing', () => {
    const out = select('project_manager', [row('developer', 'completion', 1)]);
    expect(out.entries).toEqual([]);
  });
});

describe('limits and order', () => {
  it('at most 2 most recent per producer', () => {
    const rows = [row('developer', 'completion', 1), row('developer', 'completion', 3), row('developer', 'completion', 2), row('developer', 'completion', 0)];
    const out = select('senior_software_engineer', rows);
    expect(out.entries.map((e) => e.timestamp)).toEqual(['2025-12-01 10:03:00', '2025-12-01 10:02:00']);
  });

  it('the per-producer cut is by recency, before the phase order (an old completion loses to newer other phases)', () => {
    const rows = [row('developer', 'completion', 1), row('developer', 'risks', 5), row('developer', 'approach', 6)];
    const out = select('senior_software_engineer', rows);
    expect(out.entries.map((e) => e.phase)).toEqual(['approach', 'risks']);
  });

  it('at most 5 in total, cut after ordering by phase', () => {
    // tech_lead hears from 3 producers × 2 = 6 candidates; the last one in phase order is dropped.
    const rows = [
      row('developer', 'understanding', 10),
      row('developer', 'risks', 11),
      row('senior_software_engineer', 'completion', 12),
      row('senior_software_engineer', 'decisions', 13),
      row('qa_expert', 'completion', 14),
      row('qa_expert', 'blockers', 15),
    ];
    const out = select('tech_lead', rows);
    expect(out.entries).toHaveLength(5);
    expect(out.entries.map((e) => [e.agent_type, e.phase])).toEqual([
      ['qa_expert', 'completion'],
      ['senior_software_engineer', 'completion'],
      ['senior_software_engineer', 'decisions'],
      ['developer', 'understanding'],
      ['qa_expert', 'blockers'],
    ]);
    // The dropped one is a count cut, not a budget skip.
    expect(out.excluded).toEqual([]);
  });

  it('phase order completion > decisions > understanding > others; newest first within a phase', () => {
    const rows = [
      row('developer', 'approach', 50),
      row('qa_expert', 'understanding', 40),
      row('developer', 'decisions', 10),
      row('tech_lead', 'completion', 5),
      row('tech_lead', 'completion', 30),
    ];
    const out = select('developer', rows);
    expect(out.entries.map((e) => `${e.phase}@${e.timestamp?.slice(14, 16)}`)).toEqual([
      'completion@30',
      'completion@05',
      'decisions@10',
      'understanding@40',
      'approach@50',
    ]);
  });

  it('phases outside the three come after them; a missing phase is shown as unknown and comes last', () => {
    const rows = [row('developer', null, 59), row('developer', 'pivot', 58), row('qa_expert', 'blockers', 1), row('qa_expert', 'understanding', 0)];
    const out = select('developer', rows);
    expect(out.entries.map((e) => e.phase)).toEqual(['understanding', 'blockers', 'pivot', 'unknown']);
  });

  it('equal timestamps: higher id first', () => {
    const a = row('developer', 'completion', 7);
    const b = row('developer', 'completion', 7);
    expect(select('senior_software_engineer', [a, b]).entries.map((e) => e.id)).toEqual([b.id, a.id]);
  });
});

describe('content', () => {
  it.each([
    { name: 'short content unchanged', content: 'Implemented the cache layer.', expected: 'Implemented the cache layer.' },
    { name: 'multi-line collapsed', content: 'line one\n\n   line two\tend', expected: 'line one line two end' },
    { name: 'exactly 300 characters kept', content: 'a'.repeat(296) + ' bcd', expected: 'a'.repeat(296) + ' bcd' },
  ])('$name', ({ content, expected }) => {
    const out = select('qa_expert', [row('developer', 'completion', 1, content)]);
    expect(out.entries[0]?.content).toBe(expected);
  });

  it('long content shortened to at most 300 characters: its beginning and end, on whole words, around " […] "', () => {
    const content = Array.from({ length: 100 }, (_, i) => `step${i}`).join(' ');
    const out = select('qa_expert', [row('developer', 'completion', 1, content)]);
    const c = out.entries[0]?.content as string;
    expect(c.length).toBeGreaterThan(250);
    expectShortened(content, c, 300);
  });

  it('secrets in content are redacted', () => {
    const out = select('qa_expert', [row('developer', 'completion', 1, 'Used password: "correct horse battery" to log in')]);
    expect(out.entries[0]?.content).not.toContain('correct horse');
    expect(out.entries[0]?.content).toContain('password');
  });
});

describe('level budgets', () => {
  // Five entries of ~300 characters each (content is cut to 300).
  const long = (tag: string) => `${tag} ` + Array.from({ length: 80 }, (_, i) => `w${i}`).join(' ');
  const rows = () => [
    row('developer', 'completion', 1, long('A')),
    row('developer', 'decisions', 2, long('B')),
    row('qa_expert', 'completion', 3, long('C')),
    row('qa_expert', 'understanding', 4, long('D')),
    row('tech_lead', 'approach', 5, long('E')),
  ];

  // A dense counter (one token per character) makes each ~300-character entry cost ~320 tokens,
  // so all three level budgets bind.
  const perChar = (text: string) => Array.from(text).length;
  it.each([
    { level: 'minimal', budget: 400, admitted: 1 },
    { level: 'medium', budget: 800, admitted: 2 },
    { level: 'full', budget: 1200, admitted: 3 },
  ])('$level: within $budget tokens as counted ($admitted admitted); skips reported', ({ level, budget, admitted }) => {
    const budgets = cfg.level_budgets as Record<string, number>;
    expect(budgets[level]).toBe(budget);
    const out = select('developer', rows(), { budget: budgets[level] as number, counter: exactCounter(perChar) });
    const sum = out.entries.reduce((n, e) => n + perChar(renderReasoningEntry(e) + '\n'), 0);
    expect(out.entries).toHaveLength(admitted);
    expect(out.used_tokens).toBe(sum);
    expect(out.used_tokens).toBeLessThanOrEqual(budget);
    expect(perChar(out.entries.map(renderReasoningEntry).join('\n'))).toBeLessThanOrEqual(budget);
    for (const e of out.entries) expect(e.tokens).toBe(perChar(renderReasoningEntry(e) + '\n'));
    // Everything selected is either admitted or skipped for budget.
    expect(out.entries.length + out.excluded.length).toBe(5);
    expect(out.excluded.every((x) => x.kind === 'reasoning' && x.reason === 'budget')).toBe(true);
    expect(new Set([...out.entries.map((e) => e.id), ...out.excluded.map((x) => x.id)]).size).toBe(5);
  });

  it.each([
    { budget: 400, admitted: 4 },
    { budget: 800, admitted: 5 },
    { budget: 1200, admitted: 5 },
    { budget: 100, admitted: 1 },
    { budget: 50, admitted: 0 },
  ])('chars/4 counter, budget $budget (~85-token entries) → $admitted admitted', ({ budget, admitted }) => {
    const out = select('developer', rows(), { budget });
    expect(out.entries).toHaveLength(admitted);
    expect(out.excluded).toHaveLength(5 - admitted);
    expect(out.used_tokens).toBeLessThanOrEqual(budget);
  });

  it('a long entry that does not fit is skipped and a later short one still admitted', () => {
    const input = [row('developer', 'completion', 1, long('big')), row('developer', 'decisions', 2, 'short note')];
    const out = select('senior_software_engineer', input, { budget: 30 });
    expect(out.entries.map((e) => e.phase)).toEqual(['decisions']);
    expect(out.excluded).toEqual([{ kind: 'reasoning', id: input[0]?.id, reason: 'budget' }]);
  });
});
