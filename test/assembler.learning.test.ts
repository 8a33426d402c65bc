/**
 * Error patterns and strategies (spec/assembler.md §3.4): confidence threshold on the rounded
 * value, TTL by UTC date against an injected clock, `--error` matches first, the order, the cap,
 * the language filter with NULL fallback; strategies redacted and cut.
 */
import { describe, expect, it } from 'vitest';
import { expectShortened } from './helpers.ts';
import { redactText } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import {
  isExpired,
  prepareStrategies,
  selectErrorPatterns,
  type ErrorPatternRowInput,
  type SelectPatternsInput,
} from '../skills/context-assembler/scripts/lib/core/learning.ts';

const redact = (text: string) => redactText(text);
const NOW = Date.parse('2025-12-02T12:00:00Z');

let n = 0;
function pattern(over: Partial<ErrorPatternRowInput> & { message?: string; type?: string } = {}): ErrorPatternRowInput {
  const { message, type, ...rest } = over;
  n++;
  const hash = rest.pattern_hash ?? `h${String(n).padStart(3, '0')}`;
  return {
    pattern_hash: hash,
    // A fault of one row, keyed by its hash (the maps below key patterns by their fault).
    fault_hash: hash,
    signature_json: JSON.stringify({ error_type: type ?? 'Error', message_pattern: message ?? `message ${n}`, context_hints: [], stack_pattern: [] }),
    solution: `solution ${n}`,
    confidence: 0.9,
    occurrences: 1,
    lang: null,
    last_seen: '2025-12-01 09:00:00',
    ttl_days: 90,
    ...rest,
  };
}

function select(rows: ErrorPatternRowInput[], over: Partial<SelectPatternsInput> = {}) {
  const ep = DEFAULT_CONFIG.error_patterns;
  return selectErrorPatterns({
    rows,
    nowMs: NOW,
    minConfidence: ep.min_confidence,
    max: ep.max,
    solutionChars: ep.solution_chars,
    lang: null,
    error: null,
    redact,
    ...over,
  });
}

describe('confidence threshold (inclusive, on the value rounded to 2 decimals)', () => {
  it.each([
    { confidence: 0.7, included: true, shown: 0.7 },
    { confidence: 0.6999999, included: true, shown: 0.7 },
    { confidence: 0.695001, included: true, shown: 0.7 },
    { confidence: 0.694999, included: false, shown: null },
    { confidence: 0.69, included: false, shown: null },
    { confidence: 0.7000001, included: true, shown: 0.7 },
    { confidence: 1, included: true, shown: 1 },
    { confidence: 0, included: false, shown: null },
  ])('$confidence → included $included', ({ confidence, included, shown }) => {
    const out = select([pattern({ confidence })]);
    expect(out.length).toBe(included ? 1 : 0);
    if (shown !== null) expect(out[0]?.confidence).toBe(shown);
  });

  it('min_confidence defaults to 0.7 and is configurable', () => {
    expect(DEFAULT_CONFIG.error_patterns.min_confidence).toBe(0.7);
    expect(select([pattern({ confidence: 0.75 })], { minConfidence: 0.8 })).toEqual([]);
  });
});

describe('TTL by UTC date against the injected clock', () => {
  // last_seen 2025-11-02 + 30 days = 2025-12-02: still valid on 12-02, expired from 12-03.
  it.each([
    { name: 'the boundary day, first second', lastSeen: '2025-11-02 23:59:59', ttl: 30, now: '2025-12-02T00:00:00Z', expired: false },
    { name: 'the boundary day, last second', lastSeen: '2025-11-02 00:00:00', ttl: 30, now: '2025-12-02T23:59:59Z', expired: false },
    { name: 'the day after the boundary', lastSeen: '2025-11-02 23:59:59', ttl: 30, now: '2025-12-03T00:00:00Z', expired: true },
    { name: 'one day before the boundary', lastSeen: '2025-11-02 12:00:00', ttl: 30, now: '2025-12-01T23:59:59Z', expired: false },
    { name: 'ttl 0, same day', lastSeen: '2025-12-02 08:00:00', ttl: 0, now: '2025-12-02T23:00:00Z', expired: false },
    { name: 'ttl 0, next day', lastSeen: '2025-12-02 23:59:59', ttl: 0, now: '2025-12-03T00:00:01Z', expired: true },
    { name: 'a year-end boundary', lastSeen: '2025-12-31 22:00:00', ttl: 1, now: '2026-01-01T23:59:59Z', expired: false },
    { name: 'a year-end boundary, expired', lastSeen: '2025-12-31 22:00:00', ttl: 1, now: '2026-01-02T00:00:00Z', expired: true },
    { name: 'last seen in the future', lastSeen: '2026-01-10 00:00:00', ttl: 1, now: '2025-12-02T00:00:00Z', expired: false },
  ])('$name → expired $expired', ({ lastSeen, ttl, now, expired }) => {
    expect(isExpired(lastSeen, ttl, Date.parse(now))).toBe(expired);
    const out = select([pattern({ last_seen: lastSeen, ttl_days: ttl })], { nowMs: Date.parse(now) });
    expect(out.length).toBe(expired ? 0 : 1);
  });

  it('the clock is the injected one, not the machine clock', () => {
    const row = pattern({ last_seen: '2020-01-01 00:00:00', ttl_days: 10 });
    expect(select([row], { nowMs: Date.parse('2020-01-05T00:00:00Z') })).toHaveLength(1);
    expect(select([row], { nowMs: Date.parse('2020-01-12T00:00:00Z') })).toHaveLength(0);
  });
});

describe('order and cap', () => {
  it('confidence desc, then occurrences desc, then last_seen desc; at most 3', () => {
    const rows = [
      pattern({ pattern_hash: 'a', confidence: 0.8, occurrences: 9 }),
      pattern({ pattern_hash: 'b', confidence: 0.95, occurrences: 1 }),
      pattern({ pattern_hash: 'c', confidence: 0.8, occurrences: 9, last_seen: '2025-12-02 01:00:00' }),
      pattern({ pattern_hash: 'd', confidence: 0.8, occurrences: 12 }),
      pattern({ pattern_hash: 'e', confidence: 0.75, occurrences: 100 }),
    ];
    expect(select(rows).map((p) => p.pattern_hash)).toEqual(['b', 'd', 'c']);
    expect(select(rows, { max: 10 }).map((p) => p.pattern_hash)).toEqual(['b', 'd', 'c', 'a', 'e']);
  });

  it('confidence is compared rounded: 0.801 and 0.799 tie, occurrences decide', () => {
    const rows = [pattern({ pattern_hash: 'x', confidence: 0.801, occurrences: 1 }), pattern({ pattern_hash: 'y', confidence: 0.799, occurrences: 2 })];
    expect(select(rows).map((p) => p.pattern_hash)).toEqual(['y', 'x']);
  });

  it('full ties are broken by pattern_hash, so the order never depends on input order', () => {
    const rows = [pattern({ pattern_hash: 'q' }), pattern({ pattern_hash: 'p' }), pattern({ pattern_hash: 'r' })];
    expect(select(rows).map((p) => p.pattern_hash)).toEqual(['p', 'q', 'r']);
    expect(select([...rows].reverse()).map((p) => p.pattern_hash)).toEqual(['p', 'q', 'r']);
  });

  it('max comes from config (3)', () => {
    expect(DEFAULT_CONFIG.error_patterns.max).toBe(3);
    expect(select(Array.from({ length: 6 }, () => pattern()))).toHaveLength(3);
  });
});

describe('--error text: matching patterns first', () => {
  const rows = () => [
    pattern({ pattern_hash: 'top', confidence: 0.99, occurrences: 50, message: 'Connection refused' }),
    pattern({ pattern_hash: 'mod', confidence: 0.72, occurrences: 1, message: "Cannot find module '...'", type: 'Error' }),
    pattern({ pattern_hash: 'mid', confidence: 0.9, occurrences: 5, message: 'Timeout exceeded' }),
    pattern({ pattern_hash: 'low', confidence: 0.8, occurrences: 5, message: 'Out of memory' }),
  ];

  it.each([
    { name: 'no error text → plain order', error: null, expected: ['top', 'mid', 'low'], matched: [] as string[] },
    { name: 'an error normalised to the stored pattern comes first', error: "Cannot find module 'lodash'", expected: ['mod', 'top', 'mid'], matched: ['mod'] },
    { name: 'the pattern contained in a longer error (paths normalised)', error: "Error: Cannot find module 'x' imported from /home/u/app/src/index.ts", expected: ['mod', 'top', 'mid'], matched: ['mod'] },
    { name: 'case-insensitive', error: 'TIMEOUT EXCEEDED after 30s', expected: ['mid', 'top', 'low'], matched: ['mid'] },
    { name: 'no match → plain order', error: 'segfault', expected: ['top', 'mid', 'low'], matched: [] },
  ])('$name', ({ error, expected, matched }) => {
    const out = select(rows(), { error });
    expect(out.map((p) => p.pattern_hash)).toEqual(expected);
    expect(out.filter((p) => p.matched_error).map((p) => p.pattern_hash)).toEqual(matched);
  });

  it('a matching pattern still needs the confidence threshold', () => {
    const out = select([pattern({ pattern_hash: 'weak', confidence: 0.5, message: 'Timeout exceeded' })], { error: 'Timeout exceeded' });
    expect(out).toEqual([]);
  });

  it('an empty stored pattern never matches', () => {
    const out = select([pattern({ pattern_hash: 'empty', message: '' })], { error: 'anything' });
    expect(out[0]?.matched_error).toBe(false);
  });
});

describe("the failure's own faults first", () => {
  const rows = () => [
    pattern({ pattern_hash: 'top', confidence: 0.99, occurrences: 50, message: 'Connection refused' }),
    pattern({ pattern_hash: 'exact', confidence: 0.9, message: 'Timeout exceeded' }),
    pattern({ pattern_hash: 'words', confidence: 0.95, message: 'Timeout of the cart' }),
    pattern({ pattern_hash: 'own', confidence: 0.7, occurrences: 1, message: 'Expected N arguments, but got N.' }),
    pattern({ pattern_hash: 'own2', confidence: 0.8, occurrences: 1, message: 'expected N to be N' }),
  ];
  const relevance = new Map([['words', 1], ['exact', 0.6], ['top', 0.2]]);

  it.each([
    { name: 'no failure: the exact match, then relevance', failure: [] as string[], expected: ['exact', 'words', 'top'] },
    { name: 'before an exact match, a more relevant and a more confident pattern', failure: ['own'], expected: ['own', 'exact', 'words'] },
    { name: 'two own faults: both first, in the usual order between them (confidence)', failure: ['own', 'own2'], expected: ['own2', 'own', 'exact'] },
    { name: 'a fault of the failure that no row stands for changes nothing', failure: ['elsewhere'], expected: ['exact', 'words', 'top'] },
  ])('$name', ({ failure, expected }) => {
    const out = select(rows(), { error: 'Timeout exceeded', relevance, errorMatched: new Set(['words']), failureFaults: new Set(failure) });
    expect(out.map((p) => p.pattern_hash)).toEqual(expected);
    for (const p of out) {
      expect(p.failure_fault, p.pattern_hash).toBe(failure.includes(p.pattern_hash) ? true : undefined);
      if (p.failure_fault) expect(p).toMatchObject({ matched_error: true, relevance: 1 });
    }
  });

  it('also without an error text (the failure only in a failures report) and past max', () => {
    const many = [...Array.from({ length: 5 }, (_, i) => pattern({ pattern_hash: `c${i}`, confidence: 0.95 })), pattern({ pattern_hash: 'own', confidence: 0.7 })];
    expect(select(many, { failureFaults: new Set(['own']) }).map((p) => p.pattern_hash)).toEqual(['own', 'c0', 'c1']);
  });

  it('the confidence threshold, TTL and language still hold for it', () => {
    const failureFaults = new Set(['weak', 'old', 'py']);
    const out = select(
      [
        pattern({ pattern_hash: 'weak', confidence: 0.5 }),
        pattern({ pattern_hash: 'old', last_seen: '2020-01-01 00:00:00', ttl_days: 30 }),
        pattern({ pattern_hash: 'py', lang: 'python' }),
        pattern({ pattern_hash: 'other' }),
      ],
      { failureFaults, lang: 'typescript' },
    );
    expect(out.map((p) => p.pattern_hash)).toEqual(['other']);
  });
});

describe('language filter with NULL fallback', () => {
  const rows = () => [
    pattern({ pattern_hash: 'py', lang: 'python', confidence: 0.95 }),
    pattern({ pattern_hash: 'ts', lang: 'typescript', confidence: 0.9 }),
    pattern({ pattern_hash: 'any', lang: null, confidence: 0.8 }),
  ];
  it.each([
    { lang: null, expected: ['py', 'ts', 'any'] },
    { lang: 'python', expected: ['py', 'any'] },
    { lang: 'typescript', expected: ['ts', 'any'] },
    { lang: 'go', expected: ['any'] },
  ])('lang $lang → $expected', ({ lang, expected }) => {
    expect(select(rows(), { lang }).map((p) => p.pattern_hash)).toEqual(expected);
  });
});

describe('emitted pattern text', () => {
  it('solution redacted, one line, shortened to 300 characters (beginning and end kept)', () => {
    const long = 'Run npm ci\nthen export API_TOKEN=ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 and ' + 'retry '.repeat(100);
    const out = select([pattern({ solution: long })]);
    const s = out[0]?.solution as string;
    expect(s).not.toContain('ghp_A1b2');
    expect(s).not.toContain('\n');
    expect(s.length).toBeLessThanOrEqual(300);
    expect(s.startsWith('Run npm ci then export API_TOKEN=')).toBe(true);
    expect(s).toContain(' […] ');
    expect(s.endsWith('retry retry')).toBe(true);
  });

  it('signature fields are parsed and redacted; broken JSON gives Unknown', () => {
    const rows = [
      pattern({ pattern_hash: 'a', type: 'AuthError', message: 'bad password=hunter2hunter2 for user' }),
      { ...pattern({ pattern_hash: 'b' }), signature_json: '{not json' },
    ];
    const out = select(rows);
    const a = out.find((p) => p.pattern_hash === 'a');
    expect(a?.error_type).toBe('AuthError');
    expect(a?.message_pattern).not.toContain('hunter2');
    expect(a?.message_pattern).toContain('password=');
    expect(out.find((p) => p.pattern_hash === 'b')).toMatchObject({ error_type: 'Unknown', message_pattern: '' });
  });
});

describe('prepareStrategies', () => {
  const insightChars = DEFAULT_CONFIG.strategies.insight_chars;
  it.each([
    { name: 'short insight unchanged', insight: 'Use WAL mode for concurrent readers.', expected: 'Use WAL mode for concurrent readers.' },
    { name: 'multi-line collapsed', insight: 'Pin versions.\n\nThen   run tests.', expected: 'Pin versions. Then run tests.' },
    { name: 'exactly at the cap', insight: 'b'.repeat(296) + ' end', expected: 'b'.repeat(296) + ' end' },
    { name: 'secret removed', insight: 'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', expected: 'export AWS_SECRET_ACCESS_KEY=[REDACTED:secret]' },
  ])('$name', ({ insight, expected }) => {
    const out = prepareStrategies([{ strategy_id: 's1', topic: 't', insight, helpfulness: 3 }], { max: 3, insightChars, redact });
    expect(out[0]?.insight).toBe(expected);
  });

  it('a long insight is shortened to at most 300 characters: its beginning and end, on whole words, around " […] "', () => {
    const insight = Array.from({ length: 90 }, (_, i) => `idea${i}`).join(' ');
    const out = prepareStrategies([{ strategy_id: 's1', topic: 't', insight, helpfulness: 3 }], { max: 3, insightChars, redact });
    const s = out[0]?.insight as string;
    expect(insightChars).toBe(300);
    expectShortened(insight, s, 300);
  });

  it('the topic is an emitted string too: redacted', () => {
    const out = prepareStrategies([{ strategy_id: 's1', topic: 'token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8', insight: 'ok', helpfulness: 1 }], { max: 3, insightChars, redact });
    expect(out[0]?.topic).not.toContain('ghp_A1b2');
  });

  it('order and other fields are kept', () => {
    const rows = [
      { strategy_id: 'b', topic: 'testing', insight: 'one', helpfulness: 9 },
      { strategy_id: 'a', topic: 'build', insight: 'two', helpfulness: 2 },
    ];
    expect(prepareStrategies(rows, { max: 3, insightChars: 10, redact })).toEqual(rows.map((r) => ({ ...r, relevance: 0 })));
  });

  it('at most max are kept', () => {
    const rows = ['a', 'b', 'c', 'd'].map((id, i) => ({ strategy_id: id, topic: 't', insight: id, helpfulness: 9 - i }));
    expect(prepareStrategies(rows, { max: 2, insightChars: 10, redact }).map((s) => s.strategy_id)).toEqual(['a', 'b']);
  });

  it('with relevance, the most relevant come first; equal relevance keeps the helpfulness order', () => {
    const rows = ['a', 'b', 'c', 'd'].map((id, i) => ({ strategy_id: id, topic: 't', insight: id, helpfulness: 9 - i }));
    const relevance = new Map([['c', 1], ['d', 0.5], ['b', 0.5]]);
    const out = prepareStrategies(rows, { max: 3, insightChars: 10, redact, relevance });
    expect(out.map((s) => [s.strategy_id, s.relevance])).toEqual([['c', 1], ['b', 0.5], ['d', 0.5]]);
  });
});
