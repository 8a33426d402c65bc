/**
 * The outcome-feedback evaluation (test/outcomes/simulate.ts) on fewer seeds than
 * `npm run eval:outcomes` runs: the default world must need fewer iterations to approval with
 * feedback than without (the 95 % interval of the per-seed difference above zero), show more keys
 * and fewer look-alikes, and beat popularity on average; in the null world (verdicts ignore what
 * was shown) feedback must not lose: the same iterations (the same draws decide them), and no
 * fewer keys shown. The table is printed.
 */
import { describe, expect, it } from 'vitest';
import { TABLE_HEAD, simulateWorld, summarise, summaryRow } from './outcomes/simulate.ts';

describe('outcome feedback in simulated sessions (held-out sessions, real assemblies)', () => {
  it('default world: fewer iterations to approval with feedback, more keys shown, fewer look-alikes; null world: no loss', () => {
    const world = summarise({}, [1000, 1001, 1002, 1003, 1004]);
    const nullWorld = summarise({ nullWorld: true }, [1000, 1001]);
    process.stdout.write(`${[...TABLE_HEAD, summaryRow('default (5 seeds)', world), summaryRow('null world (2 seeds)', nullWorld)].join('\n')}\n`);
    expect(world.gain.lo).toBeGreaterThan(0);
    expect(world.arms.with.recall).toBeGreaterThan(world.arms.without.recall);
    expect(world.arms.with.lookalikeRate).toBeLessThan(world.arms.without.lookalikeRate);
    expect(world.gainOverPopularity.mean).toBeGreaterThan(0);
    // Null world: the verdict ignores the block, so with the same draws every arm takes the same
    // iterations (by construction); what feedback could lose there is the text ranking's keys.
    expect(nullWorld.arms.with.iterations).toBe(nullWorld.arms.without.iterations);
    expect(nullWorld.arms.with.recall).toBeGreaterThanOrEqual(nullWorld.arms.without.recall - 0.05);
  }, 240_000);

  it('a seed gives the same world and the same results every run', () => {
    expect(simulateWorld(1007, { trainSessions: 3, testSessions: 2 })).toEqual(simulateWorld(1007, { trainSessions: 3, testSessions: 2 }));
  }, 120_000);
});
