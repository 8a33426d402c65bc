/**
 * The engine's hand-written scanners find what the regexes they replace found: runs of token
 * characters (the entropy check's candidates), base64 runs with their padding, a value's quotes,
 * and the entropy of a string. Each is checked against the regex (or the plain formula) on
 * generated texts made of the characters that matter at run edges.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { charTable, forEachRun, range } from '../skills/bazinga-db/scripts/lib/redact/runs.ts';
import { BASE64_CHARACTERS, MIN_BASE64_RUN, paddedEnd } from '../skills/bazinga-db/scripts/lib/redact/base64.ts';
import { MIN_ENTROPY_TOKEN, TOKEN_CHARACTERS, shannonEntropy } from '../skills/bazinga-db/scripts/lib/redact/entropy.ts';
import { withoutQuotes } from '../skills/bazinga-db/scripts/lib/redact/values.ts';

/** Texts of the characters at run edges: token characters, padding, quotes, blanks, a backslash, a non-ASCII letter. */
const edgeText = (maxLength: number) =>
  fc.array(fc.constantFrom('a', 'Z', '7', '+', '/', '_', '-', '=', ' ', '\n', '"', "'", '`', '\\', ':', 'é', '😀'), { maxLength }).map((cs) => cs.join(''));
const SEED = { numRuns: 2000, seed: 41 };

function runs(text: string, table: Uint8Array, min: number): [number, number][] {
  const found: [number, number][] = [];
  forEachRun(text, table, min, (start, end) => {
    found.push([start, end]);
  });
  return found;
}

describe('forEachRun', () => {
  it('finds the runs the look-behind regex of the entropy check found', () => {
    fc.assert(
      fc.property(edgeText(80), (text) => {
        const regex = [...text.matchAll(/(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{20,}/g)].map((m) => [m.index, m.index + m[0].length]);
        expect(runs(text, TOKEN_CHARACTERS, MIN_ENTROPY_TOKEN)).toEqual(regex);
      }),
      SEED,
    );
  });

  it('finds the base64 runs, with their padding, that the regex of the base64 stage found', () => {
    fc.assert(
      fc.property(edgeText(80), (text) => {
        const regex = [...text.matchAll(/(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])/g)].map((m) => [m.index, m.index + m[0].length]);
        const scanned = runs(text, BASE64_CHARACTERS, MIN_BASE64_RUN)
          .map(([start, end]) => [start, paddedEnd(text, end)])
          .filter(([, end]) => end !== -1);
        expect(scanned).toEqual(regex);
      }),
      SEED,
    );
  });

  it('goes on from where the caller says, past what it read', () => {
    const text = 'a'.repeat(5) + ' ' + 'b'.repeat(5) + ' ' + 'c'.repeat(5);
    const seen: string[] = [];
    forEachRun(text, charTable(range('a', 'c')), 5, (start, end) => {
      seen.push(text.slice(start, end));
      return start === 0 ? 12 : undefined;
    });
    expect(seen).toEqual(['aaaaa', 'ccccc']);
  });

  it('refuses a table of characters that are not ASCII', () => {
    expect(() => charTable('aé')).toThrow(/"é" is not ASCII/);
  });
});

describe('withoutQuotes', () => {
  it('takes off the quotes the regex took off', () => {
    fc.assert(
      fc.property(edgeText(8), (value) => {
        expect(withoutQuotes(value)).toBe(value.replace(/^\\?["'`]|\\?["'`]$/g, ''));
      }),
      { numRuns: 5000, seed: 43 },
    );
  });
});

describe('shannonEntropy', () => {
  it('is the entropy of the code points, by the formula', () => {
    const byFormula = (s: string) => {
      const counts = new Map<string, number>();
      for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
      return [...counts.values()].reduce((h, n) => h - (n / s.length) * Math.log2(n / s.length), 0);
    };
    fc.assert(
      fc.property(fc.oneof(edgeText(40), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ maxLength: 40 })), (s) => {
        expect(shannonEntropy(s)).toBeCloseTo(byFormula(s), 10);
      }),
      SEED,
    );
    expect(shannonEntropy('abcd')).toBe(2);
    expect(shannonEntropy('')).toBe(0);
  });
});
