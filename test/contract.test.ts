/** validateDoc: a piped document is checked where a typo would otherwise change the block silently. */
import { describe, expect, it } from 'vitest';
import { BazingaError } from '../skills/bazinga-db/scripts/lib/index.ts';
import { validateDoc } from '../skills/context-assembler/scripts/lib/contract.ts';

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

  it('takes a document from an older version without summary_cap (the shell fills it from the config)', () => {
    const old = doc();
    delete (old as Record<string, unknown>).summary_cap;
    expect(validateDoc(old, 'stdin').summary_cap).toBeUndefined();
  });
});
