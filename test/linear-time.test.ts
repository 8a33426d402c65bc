/**
 * Linear time on any text: the fault signature and every other pattern pass over stored or tool
 * text take time in proportion to the text, whatever its shape (test/textShapes.ts, and random
 * shapes made of the pieces these passes look for). Each pass is timed on texts of one shape of
 * 1 Ki, 4 Ki, 16 Ki … characters up to its top size (each time the least of three calls: a busy
 * machine slows one call, never all of them), and fails when
 *
 * - one size takes longer than its budget: 2 s for 1 Mi characters, in proportion below it, never
 *   less than 100 ms. The bench measures what it really takes (npm run bench, bench/signature.ts;
 *   its target is 200 ms for 1 MB): ten times that is room for a busy machine, and a quadratic pass
 *   (seconds at 64 Ki characters) fails it all the same;
 * - sixteen times the text takes more than MAX_RATIO times as long (linear: 16, quadratic: 256):
 *   three times the linear ratio leaves room for a busy machine and the garbage a larger text
 *   makes, and none for a quadratic pass. Judged only where the smaller text takes RATIO_FLOOR_MS
 *   or more (below, a collection of garbage or a busy core is most of the time) and up to RATIO_TOP
 *   characters (beyond, the text and the strings made of it outgrow the processor's caches and the
 *   young generation of garbage, and a linear pass takes longer per character: the budget still
 *   holds it); a ratio over the limit is measured again twice, the least of the three counting.
 *
 * The fault signature is timed up to 1 Mi characters, what the capture and a stored row's key do
 * with it up to 256 Ki, the other passes up to 64 Ki: each of the quadratic passes this guards
 * against took seconds there.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultSignature } from '../skills/bazinga-db/scripts/lib/faultSignature.ts';
import { capturedPatternOf, faultKeyOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { indexedArtifactText } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { indexableText, pathsInText, queryTerms } from '../skills/bazinga-db/scripts/lib/searchText.ts';
import { shorten, truncateAtWord } from '../skills/bazinga-db/scripts/lib/shown.ts';
import { groupRequirements } from '../skills/context-assembler/scripts/lib/core/groupTask.ts';
import { markedTerms } from '../skills/context-assembler/scripts/lib/core/relevance.ts';
import { isRedactionEmptied, withConclusion } from '../skills/context-assembler/scripts/lib/core/text.ts';
import { makeProject, type Project } from './helpers.ts';
import { fill, lines, TEXT_SHAPES } from './textShapes.ts';

const KI = 1024;
const MI = 1024 * KI;
/** What 1 Mi characters may take, in ms (budgets below scale with the size). */
const BUDGET_MS_PER_MI = 2000;
/** No size's budget is smaller (timers, compiling and collecting garbage cost a little whatever the size). */
const FLOOR_MS = 100;
/** Sixteen times the text may take at most this many times as long. */
const MAX_RATIO = 48;
/** Below this many ms for the smaller text, the ratio is noise and not judged. */
const RATIO_FLOOR_MS = 2;
/** The largest text whose ratio is judged. */
const RATIO_TOP = 256 * KI;
const RUNS = 3;

const budgetMs = (chars: number) => Math.max(FLOOR_MS, (BUDGET_MS_PER_MI * chars) / MI);

/**
 * The least time of RUNS calls of `run` on `input`, in ms (a busy machine slows one call, never all
 * of them). When only the budget is judged, the first call within `budget` is enough.
 */
function fastest<T>(run: (input: T) => unknown, input: T, budget = Infinity, budgetOnly = false): number {
  let best = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    run(input);
    best = Math.min(best, performance.now() - start);
    if (budgetOnly && best <= budget) break;
  }
  return best;
}

/**
 * How `run` grows on the inputs `make` gives for 1 Ki, 4 Ki, … up to `top` characters: undefined
 * when it stays within every budget and ratio, else what went wrong (with the times measured).
 */
function growthProblem<T>(run: (input: T) => unknown, make: (chars: number) => T, top: number): string | undefined {
  const times: string[] = [];
  const measured: { chars: number; input: T; ms: number }[] = [];
  run(make(KI)); // compiled before it is timed
  for (let chars = KI; chars <= top; chars *= 4) {
    const input = make(chars);
    const ms = fastest(run, input, budgetMs(chars), chars > RATIO_TOP);
    times.push(`${chars / KI} Ki: ${ms.toFixed(1)} ms`);
    if (ms > budgetMs(chars)) return `${chars / KI} Ki characters took ${ms.toFixed(0)} ms, over the ${budgetMs(chars).toFixed(0)} ms budget (${times.join(', ')})`;
    const smaller = measured.at(-2);
    if (smaller !== undefined && chars <= RATIO_TOP && smaller.ms >= RATIO_FLOOR_MS && ms / smaller.ms > MAX_RATIO) {
      // Measured again (a busy machine slows one run, never all of them): the least ratio counts.
      let ratio = ms / smaller.ms;
      for (let again = 0; again < 2 && ratio > MAX_RATIO; again++) {
        ratio = Math.min(ratio, fastest(run, input) / fastest(run, smaller.input));
      }
      if (ratio > MAX_RATIO) return `${chars / KI} Ki characters took ${ratio.toFixed(1)} times as long as ${smaller.chars / KI} Ki (at most ${MAX_RATIO}; ${times.join(', ')})`;
    }
    measured.push({ chars, input, ms });
  }
  return undefined;
}

/** Every shape's problem (those with one), as `shape: problem` lines. */
function problemsOver(run: (text: string) => unknown, top: number, shapes: readonly string[] = Object.keys(TEXT_SHAPES)): string[] {
  return shapes.flatMap((name) => {
    const problem = growthProblem(run, TEXT_SHAPES[name] as (chars: number) => string, top);
    return problem === undefined ? [] : [`${name}: ${problem}`];
  });
}

/** A pattern of a stored row (a crafted or BAZINGA-written one may hold any text). */
const stored = (text: string) => ({ error_type: 'Error', message_pattern: text });

/** A summary the store cut at 200 characters (what withConclusion adds an artifact's conclusion to). */
const CUT_SUMMARY = `${fill('Refresh tokens rotate on every login; ', 197)}...`;

describe('linear time on any text: each pass on each shape, up to its top size', () => {
  const passes: { name: string; run: (text: string) => unknown; top: number }[] = [
    { name: 'fault signature of a tool output (faultSignature)', run: faultSignature, top: MI },
    { name: "fault key of a stored pattern (faultKeyOf): a row's message_pattern of any length", run: (t) => faultKeyOf(stored(t)), top: 256 * KI },
    { name: 'what the capture signs of a failure text (capturedPatternOf; redaction has its own bench)', run: (t) => capturedPatternOf(t), top: 256 * KI },
    { name: 'search index text (indexableText)', run: indexableText, top: 64 * KI },
    { name: 'query terms (queryTerms, 32)', run: (t) => queryTerms(t, 32), top: 64 * KI },
    { name: 'paths in a text (pathsInText)', run: pathsInText, top: 64 * KI },
    { name: 'shortened to half its length (shorten)', run: (t) => shorten(t, t.length >> 1), top: 64 * KI },
    { name: 'cut at a word near its end (truncateAtWord)', run: (t) => truncateAtWord(t, t.length - 8), top: 64 * KI },
    { name: 'a cut summary with a conclusion as long as the text (withConclusion)', run: (t) => withConclusion(CUT_SUMMARY, t, t.length), top: 64 * KI },
    { name: 'nothing left but redaction markers? (isRedactionEmptied)', run: isRedactionEmptied, top: 64 * KI },
    { name: "the words FTS5's highlight marked (markedTerms)", run: markedTerms, top: 64 * KI },
  ];
  it.each(passes)('$name', ({ run, top }) => {
    expect(problemsOver(run, top)).toEqual([]);
  });
});

describe("a group's share of the session's requirements (groupRequirements), on every shape and on a request's own", () => {
  /** Thirty groups, each with words of its own (the request's words are matched against all of them). */
  const GROUPS = Array.from({ length: 30 }, (_, i) => ({ id: `G${i}`, name: `widget${i} handler`, componentPath: `src/part${i}/` }));
  const share = (text: string) => groupRequirements(text, GROUPS, 'G3');
  /** What the clause split and the attribution look at: conjunctions, clause marks, brackets, headings, list items, group words. */
  const REQUEST_SHAPES: Record<string, (chars: number) => string> = {
    'clauses joined by and, naming no group': (n) => fill(' and', n),
    'clauses joined by and, the last naming a group': (n) => `${fill(' and x', n - 16)} and widget3 x`,
    'commas inside one bracket': (n) => `(${fill(', x', n - 1)}`,
    'headings naming a group, each with a list item': (n) => fill('# widget3\n- x, y and z\n', n),
    'sentences naming every group': (n) => lines((i) => `Add widget${i % 30} handler, then x. `, n),
  };
  it.each(Object.keys(REQUEST_SHAPES))('%s', (name) => {
    expect(growthProblem(share, REQUEST_SHAPES[name] as (chars: number) => string, 64 * KI)).toBeUndefined();
  });
  it('every failure-text shape', () => {
    expect(problemsOver(share, 64 * KI)).toEqual([]);
  });
});

describe("an artifact's indexed head, cut at its bound without its last word (indexedArtifactText)", () => {
  let project: Project;
  beforeAll(() => {
    project = makeProject('ca-linear-');
  });
  afterAll(() => project.cleanup());

  it('a long word before the bound is stepped over once, not from each of its characters', () => {
    const rel = path.join('bazinga', 'artifacts', 'long-word.md');
    // The bound falls just after the long word's end: what is dropped is the one character after it.
    const make = (chars: number) => {
      fs.writeFileSync(path.join(project.root, rel), `${fill('a', chars)} b${fill('c', chars)}`);
      return chars + 2;
    };
    expect(growthProblem((bytes) => indexedArtifactText(project.root, rel, bytes), make, 64 * KI)).toBeUndefined();
    expect(indexedArtifactText(project.root, rel, make(KI))).toBe(`${fill('a', KI)} `);
  });
});

describe('random shapes made of the pieces the signature looks for', () => {
  /** What the fault signature, BAZINGA's normalisation and the capture treat specially. */
  const PIECES = [
    'a', 'Z', '1', '0x', 'f', '.', '..', '~', '/', '\\', 'C:', ':', '-', '@', '+', '_', ' ', '  ', '\t', '\n', '\r\n', '\u2028',
    'at ', 'in ', 'error', 'Error', 'TypeError: ', '  1:2  error  ', 'no-unused-vars', '.ts', '.d.ts', '.py', 'ms', ':12', '(1,2)',
    '[', ']', '[REDACTED:', '\u001b[31m', 'E   ', 'FAILED ', ' - ', '====', 'npm ERR! code ', 'gyp ERR! stack ', 'FAIL ', 'expect(',
    '❯', '2024-01-01T10:00:00Z', '3f2b8c1e-1d2a-4c7b-9e8f-0a1b2c3d4e5f', 'deadbeefdeadbeef', "'", '"', '(', ')', 'line 1', 'é', '\u0301', '👍',
  ];
  const piecesOf = (min: number, max: number) => fc.array(fc.constantFrom(...PIECES), { minLength: min, maxLength: max }).map((p) => p.join(''));
  /** A shape: a head and a tail once, and a unit repeated between them to the size asked for. */
  const shape = fc.record({ head: piecesOf(0, 4), unit: piecesOf(1, 6), tail: piecesOf(0, 3) });
  /** The signature's work on a text: as a tool output the capture signs, and as a stored row's pattern. */
  const sign = (text: string) => {
    capturedPatternOf(text);
    faultKeyOf(stored(text));
  };

  it('every random shape stays within its budgets and ratios up to 256 Ki characters', () => {
    fc.assert(
      fc.property(shape, ({ head, unit, tail }) => {
        const problem = growthProblem(sign, (chars) => `${head}${fill(unit, Math.max(1, chars - head.length - tail.length))}${tail}`, 256 * KI);
        if (problem !== undefined) throw new Error(`head ${JSON.stringify(head)}, unit ${JSON.stringify(unit)}, tail ${JSON.stringify(tail)}: ${problem}`);
      }),
      // Seeded: the same shapes on every run. No shrinking: a slow shape is reported as found.
      { seed: 37, numRuns: 30, endOnFailure: true },
    );
  });
});
