/**
 * The labelled relevance set (test/relevance/cases, described in test/relevance/README.md), run as
 * `npm run eval` runs it, with floors that fail when relevance regresses: the combination must
 * beat the heuristic alone clearly on packages, with and without the explicit task, and lose
 * little in any section.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluate, loadCases, SECTIONS, type EvalResult, type ModeResult } from './relevance/eval.ts';

let result: EvalResult;
const mode = (name: string) => result.modes.find((m) => m.mode === name) as ModeResult;

beforeAll(() => {
  result = evaluate(loadCases());
}, 300_000);

describe('the labelled relevance set', () => {
  it('is the size the issue asks for, labelled in every case', () => {
    const cases = loadCases();
    expect(cases.length).toBeGreaterThanOrEqual(40);
    for (const c of cases) {
      const items = c.packages.length + c.reasoning.length + c.patterns.length + c.strategies.length;
      expect(items, c.name).toBeGreaterThanOrEqual(10);
      expect(items, c.name).toBeLessThanOrEqual(80);
      const keys = new Set([...c.packages, ...c.reasoning, ...c.patterns, ...c.strategies].map((i) => i.key));
      expect(keys.size, c.name).toBe(items);
      for (const k of c.relevant) expect(keys.has(k), `${c.name}: ${k}`).toBe(true);
    }
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it('the combination beats the heuristic alone clearly on packages and overall, and loses little anywhere', () => {
    const heuristic = mode('heuristic');
    const combined = mode('combined');
    expect(combined.sections.packages.recall).toBeGreaterThanOrEqual(heuristic.sections.packages.recall + 0.03);
    expect(combined.sections.packages.ndcg).toBeGreaterThanOrEqual(heuristic.sections.packages.ndcg + 0.04);
    expect(combined.overall.ndcg).toBeGreaterThanOrEqual(heuristic.overall.ndcg + 0.01);
    expect(combined.overall.recall).toBeGreaterThanOrEqual(heuristic.overall.recall + 0.01);
    for (const s of SECTIONS) expect(combined.sections[s].ndcg, s).toBeGreaterThanOrEqual(heuristic.sections[s].ndcg - 0.04);
  });

  it('the implicit task alone (no flag) already beats the heuristic on packages', () => {
    expect(mode('combined-implicit').sections.packages.ndcg).toBeGreaterThanOrEqual(mode('heuristic').sections.packages.ndcg + 0.03);
    expect(mode('combined-implicit').overall.ndcg).toBeGreaterThanOrEqual(mode('heuristic').overall.ndcg);
  });

  it('absolute floors', () => {
    expect(mode('combined').overall.ndcg).toBeGreaterThanOrEqual(0.88);
    expect(mode('combined').sections.packages.recall).toBeGreaterThanOrEqual(0.9);
  });
});
