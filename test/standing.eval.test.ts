/**
 * The standing evaluation (test/outcomes/standing.ts) on a few seeds: where a retry's reasoning
 * budget holds about three entries and the review has said which claims were wrong, ranking those
 * claims after the rest shows the retry more of QA's findings and fewer wrong claims, and it reaches
 * approval in fewer iterations.
 * `npm run eval:standing` runs the whole grid on ten seeds.
 */
import { describe, expect, it } from 'vitest';
import { simulateStandingWorld } from './outcomes/standing.ts';

describe('standing-aware ranking beside standing-blind ranking (simulated retries)', () => {
  it('default world: more of the review shown, fewer wrong claims, fewer iterations to approval; a seed gives the same result twice', () => {
    const worlds = [1, 2, 3, 4].map((seed) => simulateStandingWorld(seed, { groups: 6 }));
    const sum = (arm: 'before' | 'blind' | 'aware', key: 'iterations' | 'usefulRecall' | 'wrongRate') => worlds.reduce((a, w) => a + w[arm][key], 0);
    expect(sum('aware', 'usefulRecall')).toBeGreaterThan(sum('blind', 'usefulRecall'));
    expect(sum('aware', 'wrongRate')).toBeLessThan(sum('blind', 'wrongRate'));
    expect(sum('aware', 'iterations')).toBeLessThan(sum('blind', 'iterations'));
    // Per world never more iterations than either other arm (the same draws decide every arm).
    for (const w of worlds) {
      expect(w.aware.iterations).toBeLessThanOrEqual(w.blind.iterations);
      expect(w.aware.iterations).toBeLessThanOrEqual(w.before.iterations);
      expect(w.aware.retries).toBeGreaterThan(0);
    }
    expect(simulateStandingWorld(1, { groups: 6 })).toEqual(worlds[0]);
  }, 120_000);
});
