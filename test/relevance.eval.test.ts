/**
 * The labelled relevance set (test/relevance/cases, described in test/relevance/README.md), run as
 * `npm run eval` runs it, with floors that fail when relevance regresses: the combination must
 * beat the heuristic alone clearly on packages, with and without the explicit task, and lose
 * little in any section.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { budgetEvaluation, crowdedEvaluation, crowdedLeads, evaluate, loadCases, SECTIONS, type EvalResult, type ModeResult } from './relevance/eval.ts';

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
    // The builder's floor lifts the heuristic too: its reasoning recall rose from 0.905 to 0.913 (the
    // builder's newest entries are shown whatever ranks them), so the overall margin is 0.009 now.
    expect(combined.overall.recall).toBeGreaterThanOrEqual(heuristic.overall.recall + 0.005);
    for (const s of SECTIONS) expect(combined.sections[s].ndcg, s).toBeGreaterThanOrEqual(heuristic.sections[s].ndcg - 0.04);
  });

  it('the implicit task alone (no flag) already beats the heuristic on packages', () => {
    expect(mode('combined-implicit').sections.packages.ndcg).toBeGreaterThanOrEqual(mode('heuristic').sections.packages.ndcg + 0.03);
    // (Overall the heuristic mode keeps the explicit task's words for the learnings: relevance off still matches them.)
    expect(mode('combined-implicit').overall.ndcg).toBeGreaterThanOrEqual(0.88);
  });

  it("the implicit task of a group is its own: the learnings it finds are nearly those the explicit task finds", () => {
    // With every group's requirements in each group's query, error patterns stood at 0.809 nDCG and
    // strategies at 0.915 (explicit: 0.935 and 0.952); with the group's own passages, 0.910 and 0.962.
    const implicit = mode('combined-implicit');
    expect(implicit.sections.patterns.ndcg).toBeGreaterThanOrEqual(mode('combined').sections.patterns.ndcg - 0.05);
    expect(implicit.sections.strategies.ndcg).toBeGreaterThanOrEqual(mode('combined').sections.strategies.ndcg - 0.02);
    expect(implicit.overall.ndcg).toBeGreaterThanOrEqual(0.92);
  });

  it('absolute floors', () => {
    expect(mode('combined').overall.ndcg).toBeGreaterThanOrEqual(0.88);
    expect(mode('combined').sections.packages.recall).toBeGreaterThanOrEqual(0.9);
  });
});

describe('crowded stores and a tight budget', () => {
  const cases = loadCases();

  it('the product puts the labelled packages first as often as BM25 over the task and error text on plain stores, more often on crowded ones and overall', () => {
    const r = crowdedEvaluation(cases);
    const product = r['this product'];
    const bm25 = r['BM25 (task + error text)'];
    // BM25 asks for the same terms (inflections included): on the plain stores both put 0.932 of the
    // labelled packages first (one case each goes the other's way); the crowded stores tell them apart.
    expect(product.plain.recall).toBeGreaterThanOrEqual(bm25.plain.recall);
    expect(product.crowded.recall).toBeGreaterThan(bm25.crowded.recall);
    expect(product.plain.recall + product.crowded.recall).toBeGreaterThan(bm25.plain.recall + bm25.crowded.recall);
    expect((product.plain.recall + product.crowded.recall) / 2).toBeGreaterThanOrEqual(0.4);
    // The crowding is real: a random order loses far more on it.
    expect(r.random.crowded.recall).toBeLessThan(r.random.plain.recall - 0.1);
  }, 300_000);

  it('on crowded stores another task\'s error pattern or strategy seldom leads, with relevance on or off', () => {
    for (const row of crowdedLeads(cases)) {
      expect(row.cases).toBe(cases.length);
      // (Before the task and the group decided their order: 24–33 patterns and 7–27 strategies of 44.)
      expect(row.patterns, `${row.mode} patterns`).toBeLessThanOrEqual(4);
      expect(row.strategies, `${row.mode} strategies`).toBeLessThanOrEqual(4);
    }
  }, 300_000);

  it('every block at a 400-token budget fits it (no block past it without a stated one-item Tier 1 overrun), plain and crowded, group and session-wide', () => {
    const r = budgetEvaluation(cases);
    for (const store of [r.plain, r.crowded]) {
      expect(store.blocks).toBe(cases.length * 2);
      expect(store.unstated).toBe(0);
      expect(store.tokens).toBeLessThanOrEqual(400);
    }
  }, 300_000);
});
