/** validateDoc: a piped document is checked where a typo would otherwise change the block silently. */
import { describe, expect, it } from 'vitest';
import { BazingaError } from '../skills/bazinga-db/scripts/lib/index.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import { DOC_VERSION, validateDoc } from '../skills/context-assembler/scripts/lib/contract.ts';
import { upgradeDoc } from '../skills/context-assembler/scripts/lib/upgrade.ts';

const doc = (over: Record<string, unknown> = {}, request: Record<string, unknown> = {}) => ({
  step: 'zone',
  request: { session: 'S1', group: 'AUTH', agent: 'developer', model: 'sonnet', now: '2026-01-01T00:00:00.000Z', reasoning_level: 'medium', current_tokens: 0, iteration: 0, ...request },
  zone: 'Normal',
  usage_pct: 0,
  summary_cap: 400,
  remaining_budget: 1000,
  context_budget: 200,
  limit: 3,
  include_reasoning: false,
  ...over,
});

function refusal(value: unknown): string {
  try {
    validateDoc(value, 'stdin');
  } catch (err) {
    expect(err).toBeInstanceOf(BazingaError);
    expect((err as BazingaError).code).toBe('VALIDATION');
    return (err as Error).message;
  }
  throw new Error('expected a VALIDATION error');
}

describe('validateDoc', () => {
  it.each([
    ['a zone in the wrong case', doc({ zone: 'normal' }), 'field "zone" must be one of Normal, Soft_Warning, Conservative, Wrap-up, Emergency, got "normal"'],
    ['an unknown reasoning level', doc({}, { reasoning_level: 'huge' }), 'field "request.reasoning_level" must be one of minimal, medium, full, got "huge"'],
    ['an unknown agent', doc({}, { agent: 'intern' }), 'field "request.agent" must be one of'],
    ['a negative iteration', doc({}, { iteration: -1 }), 'field "request.iteration" must be an integer >= 0, got -1'],
    ['a fractional iteration', doc({}, { iteration: 1.5 }), 'field "request.iteration" must be an integer >= 0, got 1.5'],
    ['no summary cap in a zone that shows packages', doc({ summary_cap: null }), 'field "summary_cap" must be a number in zone Normal'],
  ])('refuses %s', (_label, value, says) => {
    expect(refusal(value)).toContain(says);
  });

  it('takes a document from an older version without summary_cap (upgradeDoc fills it from the config)', () => {
    const old = doc();
    delete (old as Record<string, unknown>).summary_cap;
    expect(validateDoc(old, 'stdin').summary_cap).toBeUndefined();
  });

  it.each([
    ['a newer version', 3, 'field "doc_version" must be an integer from 1 to 2, got 3 (written by a newer version of context-assembler'],
    ['version 0', 0, 'field "doc_version" must be an integer from 1 to 2, got 0'],
    ['a version as text', '2', 'field "doc_version" must be an integer from 1 to 2, got "2"'],
  ])('refuses %s', (_label, version, says) => {
    expect(refusal(doc({ doc_version: version }))).toContain(says);
  });
});

describe('upgradeDoc', () => {
  const pkg = (id: number, package_type: string, group_id: string | null) => ({
    id,
    priority: 'medium',
    package_type,
    file_path: `bazinga/artifacts/${id}.md`,
    summary: 's',
    group_id,
    created_at: null,
    score: 1,
    tokens: 10,
  });
  const truncation = { purpose: 'implementation', budget: 200, used: 50, overrun: 0, tiers: [], left_out: {}, most_relevant: [], shown: false };

  it('reads a version 1 zone document into this version: purpose, summary cap and the request\'s absent texts', () => {
    const old = doc();
    delete (old as Record<string, unknown>).summary_cap;
    const up = upgradeDoc(validateDoc(old, 'stdin'), DEFAULT_CONFIG);
    expect(up.doc_version).toBe(DOC_VERSION);
    expect(up.summary_cap).toBe(DEFAULT_CONFIG.summary_caps.Normal);
    expect(up.purpose).toBe('implementation');
    expect(up.request).toMatchObject({ purpose: null, task: null, error: null, scope: null, lang: null, framework: null });
    // The request's explicit purpose wins over the agent's.
    expect(upgradeDoc(validateDoc(doc({}, { purpose: 'review' }), 'stdin'), DEFAULT_CONFIG).purpose).toBe('review');
  });

  it('gives a version 1 packed document without its pool one, from what it kept, tiered by the tier table', () => {
    const packed = validateDoc(
      doc({ step: 'pack', packages: [pkg(1, 'failures', 'AUTH'), pkg(2, 'research', 'CART')], packages_tokens: 20, overflow_count: 0, truncation, total_available: 2, priority_used: null }),
      'stdin',
    );
    const up = upgradeDoc(packed, DEFAULT_CONFIG);
    expect(up.block_pool?.packages.map((p) => [p.id, p.tier])).toEqual([
      [1, 1],
      [2, 3],
    ]);
    expect(up.block_pool).toMatchObject({ error_patterns: [], strategies: [], memories: [], excluded: [] });
    expect(up).toMatchObject({ error_patterns: [], strategies: [], excluded: [] });
  });

  it('a hand-written rank document: without its count, what it holds was available; without candidates, none', () => {
    const ranked = upgradeDoc(validateDoc(doc({ step: 'rank', candidates: [pkg(1, 'failures', 'AUTH'), pkg(2, 'research', null)], priority_used: null }), 'stdin'), DEFAULT_CONFIG);
    expect(ranked.total_available).toBe(2);
    const packagesOnly = upgradeDoc(validateDoc(doc({ step: 'rank', packages: [pkg(1, 'failures', 'AUTH')], total_available: 13 }), 'stdin'), DEFAULT_CONFIG);
    expect(packagesOnly.candidates).toEqual([]);
    expect(packagesOnly.total_available).toBe(13);
  });

  it('leaves a current document as it is', () => {
    const once = upgradeDoc(validateDoc(doc({ step: 'rank', candidates: [pkg(1, 'failures', 'AUTH')], total_available: 1, priority_used: null }), 'stdin'), DEFAULT_CONFIG);
    expect(upgradeDoc(validateDoc(JSON.parse(JSON.stringify(once)), 'stdin'), DEFAULT_CONFIG)).toEqual(once);
  });
});
