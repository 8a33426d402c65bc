/**
 * Secrets by class, not by example: for each class of secret that reached a store or a print raw
 * (a Django secret key, a quoted password holding a quote, a password whose key name appears twice
 * on its line, a GitHub token wrapped over lines, base64 of an env line holding an AWS secret
 * access key, a password in a sentence), fast-check generates the spellings a person or a tool
 * writes (test/secrets/classes.ts: key names and cases, separators, quoting and escaping, file
 * syntaxes, wrap positions and joints, encodings, the sentence around it) and none of the secret's
 * pieces may survive the engine, in either mode that runs the patterns. The other way round, what
 * agents write most (test results, counts, coverage, ratios, durations, versions, short commit ids)
 * comes back byte-identical.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, type RedactionPolicy } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { BENIGN_RESULTS, SECRET_CLASSES, survivors } from './secrets/classes.ts';

const BOTH: RedactionPolicy = { mode: 'both', allowlist: [] };
const PATTERNS: RedactionPolicy = { mode: 'pattern_only', allowlist: [] };

/**
 * Outside CI a new seed on every run, so that each run tries spellings no earlier run tried; it is
 * printed, and `SECRETS_SEED=<seed>` runs the same spellings again (fast-check's failure report
 * names it too). In CI (`CI` set) one fixed seed, so that a run's verdict is the code's, not the draw's.
 */
const SEED = Number(process.env.SECRETS_SEED ?? (process.env.CI ? 37 : Math.floor(Math.random() * 2 ** 31)));
console.info(`secrets.classes: seed ${SEED} (SECRETS_SEED=${SEED} repeats this run)`);

/** Spellings generated per class on each run (the README states the total). */
export const RUNS_PER_CLASS = 1000;
/** Benign result texts generated on each run. */
export const BENIGN_RUNS = 1000;

describe('every generated spelling of a leaked class is redacted', () => {
  it.each(Object.keys(SECRET_CLASSES))('%s', (name) => {
    const arb = SECRET_CLASSES[name] as fc.Arbitrary<{ text: string; secrets: string[] }>;
    fc.assert(
      fc.property(arb, (g) => {
        // The generator is checked too: a spelling whose pieces are not in its text could not fail.
        expect(g.secrets.length).toBeGreaterThan(0);
        for (const s of g.secrets) expect(g.text).toContain(s);
        for (const policy of [BOTH, PATTERNS]) {
          const out = redact(g.text, policy);
          expect(survivors(out.text, g.secrets), `${JSON.stringify(g.text)} → ${JSON.stringify(out.text)}`).toEqual([]);
          expect(out.redacted).toBe(true);
          expect(redact(out.text, policy).text).toBe(out.text);
        }
      }),
      { numRuns: RUNS_PER_CLASS, seed: SEED },
    );
  });
});

describe('test results, counts, coverage, ratios and versions stay byte-identical', () => {
  it('generated result texts', () => {
    fc.assert(
      fc.property(BENIGN_RESULTS, (text) => {
        for (const policy of [BOTH, PATTERNS]) {
          const out = redact(text, policy);
          expect(out.text).toBe(text);
          expect(out.hits).toEqual({});
        }
      }),
      { numRuns: BENIGN_RUNS, seed: SEED },
    );
  });

  it("QA's completion reaches the tech lead as written", () => {
    const text = 'PASS: 18/18 tests, coverage 91%';
    expect(redact(text).text).toBe(text);
  });
});
