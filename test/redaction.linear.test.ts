/**
 * The redaction engine runs in time linear in its input: on every hostile shape
 * (test/secrets/hostile.ts: long runs of key = value, quotes, base64, one huge token, many
 * "password" words, deep nesting, …) and on random shapes made of the fragments rules key on.
 *
 * What is compared is the engine with itself: the time for 1 MB against the time for 256 KB of
 * the same shape, measured in turns (small, large, small, large) so that a busy machine slows both
 * alike, the fastest of the runs of each. Linear work gives a ratio of about 4 and quadratic work
 * 16; the bound is 9, and a pair over it is measured again, with more runs, before it counts. A
 * generous bound on the time for 1 MB catches a shape that is slow at every size. Speed figures
 * belong in the bench (`npm run bench`, bench/redaction.ts), not here.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { HOSTILE_SHAPES, RANDOM_SHAPE, fill } from './secrets/hostile.ts';

/** Linear work gives about 4 (the inputs' ratio), quadratic 16. */
const RATIO_BOUND = 9;
/** Far above what 1 MB costs on a busy machine (the bench's figure is about a tenth of it). */
const LARGE_BOUND_MS = 4000;
/** A time below this is measured as this (a shape the engine passes over in a millisecond has no ratio to speak of). */
const FLOOR_MS = 3;

interface Timing {
  small: number;
  large: number;
  ratio: number;
}

function fastest(text: string, best: number): number {
  const start = performance.now();
  redact(text);
  return Math.min(best, performance.now() - start);
}

/** The fastest of `rounds` runs of each text, taken in turns. */
function measure(small: string, large: string, rounds: number): Timing {
  redact(small.slice(0, 16_384)); // the rules' regexes compiled and warm
  let s = Infinity;
  let l = Infinity;
  for (let i = 0; i < rounds; i++) {
    s = fastest(small, s);
    l = fastest(large, l);
  }
  return { small: s, large: l, ratio: l / Math.max(s, FLOOR_MS) };
}

/** Measured, and measured again with more runs when the first pair looks super-linear (a busy moment). */
function linearity(make: (bytes: number) => string, smallBytes: number): Timing {
  const small = make(smallBytes);
  const large = make(4 * smallBytes);
  const first = measure(small, large, 2);
  return first.ratio < RATIO_BOUND && first.large < LARGE_BOUND_MS ? first : measure(small, large, 5);
}

describe('every hostile shape: 1 MB costs about four times 256 KB', () => {
  it.each(Object.keys(HOSTILE_SHAPES))('%s', (name) => {
    const make = HOSTILE_SHAPES[name] as (bytes: number) => string;
    const t = linearity(make, 256 * 1024);
    const shown = `${name}: 256 KB ${t.small.toFixed(1)} ms, 1 MB ${t.large.toFixed(1)} ms`;
    expect(t.ratio, shown).toBeLessThan(RATIO_BOUND);
    expect(t.large, shown).toBeLessThan(LARGE_BOUND_MS);
  });
});

describe('random shapes of the fragments rules key on', () => {
  it('512 KB costs about four times 128 KB', () => {
    fc.assert(
      fc.property(RANDOM_SHAPE, (unit) => {
        const t = linearity((bytes) => fill(unit, bytes), 128 * 1024);
        expect(t.ratio, `${JSON.stringify(unit)}: 128 KB ${t.small.toFixed(1)} ms, 512 KB ${t.large.toFixed(1)} ms`).toBeLessThan(RATIO_BOUND);
      }),
      { numRuns: 12, seed: 37 },
    );
  });
});
