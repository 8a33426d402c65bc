/**
 * Zone and budget (spec/assembler.md §3.1): thresholds on the unrounded usage percentage with
 * inclusive lower bounds, per-agent budget shares, longest-key model lookup, remaining ≥ 0.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, lookupByModel, parseConfig, ZONES, type Config, type Zone } from '../skills/context-assembler/scripts/lib/config.ts';
import { computeZone, summaryCapOf, ZONE_RULES, zoneFor } from '../skills/context-assembler/scripts/lib/core/zone.ts';
import { renderMarkdown } from '../skills/context-assembler/scripts/lib/core/render.ts';
import type { AssemblyDoc } from '../skills/context-assembler/scripts/lib/contract.ts';

/** sonnet: floor(200000 × (1 − 0.15)). */
const EFFECTIVE = 170_000;
/** Tokens that are exactly `pct` % of the effective limit (all of these are whole numbers). */
const at = (pct: number) => (EFFECTIVE * pct) / 100;

const withConfig = (over: Partial<Config>): Config => ({ ...DEFAULT_CONFIG, ...over });

describe('zone boundaries (sonnet, effective limit 170000)', () => {
  it('effective limit is floor(window × (1 − margin))', () => {
    expect(computeZone('sonnet', 0, 'developer', DEFAULT_CONFIG).effective_limit).toBe(EFFECTIVE);
  });

  it.each([
    { name: '0 %', current: 0, expected: 'Normal' },
    { name: '59.99 %', current: at(59.99), expected: 'Normal' },
    { name: 'just under 60 % (fractional tokens)', current: at(60) - 0.001, expected: 'Normal' },
    { name: '60 %', current: at(60), expected: 'Soft_Warning' },
    { name: '74.99 %', current: at(74.99), expected: 'Soft_Warning' },
    { name: 'just under 75 % (fractional tokens)', current: at(75) - 0.001, expected: 'Soft_Warning' },
    { name: '75 %', current: at(75), expected: 'Conservative' },
    { name: '84.99 %', current: at(84.99), expected: 'Conservative' },
    { name: 'just under 85 % (fractional tokens)', current: at(85) - 0.001, expected: 'Conservative' },
    { name: '85 %', current: at(85), expected: 'Wrap-up' },
    { name: '94.99 %', current: at(94.99), expected: 'Wrap-up' },
    { name: 'just under 95 % (fractional tokens)', current: at(95) - 0.001, expected: 'Wrap-up' },
    { name: '95 %', current: at(95), expected: 'Emergency' },
    { name: '100 %', current: EFFECTIVE, expected: 'Emergency' },
    { name: 'over the limit', current: EFFECTIVE * 2, expected: 'Emergency' },
  ] as { name: string; current: number; expected: Zone }[])('$name → $expected', ({ current, expected }) => {
    const z = computeZone('sonnet', current, 'developer', DEFAULT_CONFIG);
    expect(z.zone).toBe(expected);
    // Unrounded: the percentage is the plain ratio, not rounded to any number of decimals.
    expect(z.usage_pct).toBeCloseTo((current / EFFECTIVE) * 100, 9);
  });

  it('the whole-number test inputs are whole numbers (the table above really sits on the bounds)', () => {
    for (const p of [59.99, 60, 74.99, 75, 84.99, 85, 94.99, 95]) expect(Number.isInteger(at(p))).toBe(true);
  });

  it('59.999 % is not rounded up to 60 %', () => {
    const z = computeZone('sonnet', at(59.999), 'developer', DEFAULT_CONFIG);
    expect(z.usage_pct).toBeLessThan(60);
    expect(z.zone).toBe('Normal');
  });

  it.each([
    { name: 'soft warning 57', thresholds: { emergency: 95, wrap_up: 85, conservative: 75, soft_warning: 57 }, pct: 57, expected: 'Soft_Warning' },
    { name: 'conservative 29', thresholds: { emergency: 95, wrap_up: 85, conservative: 29, soft_warning: 7 }, pct: 29, expected: 'Conservative' },
    { name: 'soft warning 7', thresholds: { emergency: 95, wrap_up: 85, conservative: 29, soft_warning: 7 }, pct: 7, expected: 'Soft_Warning' },
    { name: 'wrap-up 58', thresholds: { emergency: 95, wrap_up: 58, conservative: 29, soft_warning: 7 }, pct: 58, expected: 'Wrap-up' },
  ] as { name: string; thresholds: Config['zone_thresholds']; pct: number; expected: Zone }[])(
    'configured threshold $name is inclusive at exactly that percentage',
    ({ thresholds, pct, expected }) => {
      // A window with no margin of 100000 tokens: pct % is exactly pct × 1000 tokens.
      const config = withConfig({ token_safety_margin: 0, model_context_windows: { default: 100_000 }, zone_thresholds: thresholds });
      const z = computeZone('sonnet', pct * 1000, 'developer', config);
      expect(z.effective_limit).toBe(100_000);
      expect(z.usage_pct).toBe(pct);
      expect(z.zone).toBe(expected);
      expect(computeZone('sonnet', pct * 1000 - 1, 'developer', config).zone).not.toBe(expected);
    },
  );

  it.each([
    { usage: 59.99, expected: 'Normal' },
    { usage: 60, expected: 'Soft_Warning' },
    { usage: 74.99, expected: 'Soft_Warning' },
    { usage: 75, expected: 'Conservative' },
    { usage: 84.99, expected: 'Conservative' },
    { usage: 85, expected: 'Wrap-up' },
    { usage: 94.99, expected: 'Wrap-up' },
    { usage: 95, expected: 'Emergency' },
  ] as { usage: number; expected: Zone }[])('zoneFor($usage) = $expected', ({ usage, expected }) => {
    expect(zoneFor(usage, DEFAULT_CONFIG.zone_thresholds)).toBe(expected);
  });
});

describe('budget shares per agent', () => {
  const current = 20_000; // remaining 150000
  it.each([
    { agent: 'developer', share: 0.2, expected: 30_000 },
    { agent: 'senior_software_engineer', share: 0.25, expected: 37_500 },
    { agent: 'qa_expert', share: 0.3, expected: 45_000 },
    { agent: 'tech_lead', share: 0.4, expected: 60_000 },
    { agent: 'investigator', share: 0.35, expected: 52_500 },
    { agent: 'requirements_engineer', share: 0.3, expected: 45_000 },
    { agent: 'project_manager', share: 0.2, expected: 30_000 },
  ])('$agent gets $share of the remaining budget', ({ agent, share, expected }) => {
    expect(DEFAULT_CONFIG.context_budget_share[agent] ?? DEFAULT_CONFIG.context_budget_share.other).toBe(share);
    const z = computeZone('sonnet', current, agent, DEFAULT_CONFIG);
    expect(z.remaining_budget).toBe(150_000);
    expect(z.context_budget).toBe(expected);
  });

  it('the budget is a whole number of tokens (floored)', () => {
    const z = computeZone('sonnet', 3, 'investigator', DEFAULT_CONFIG); // 169997 × 0.35 = 59498.95
    expect(z.context_budget).toBe(59_498);
  });
});

describe('model lookup: the longest matching key wins', () => {
  const config = withConfig({
    token_safety_margin: 0,
    model_context_windows: { haiku: 200_000, sonnet: 200_000, opus: 200_000, 'opus-1m': 1_000_000, default: 150_000 },
  });
  it.each([
    { model: 'opus', window: 200_000 },
    { model: 'claude-opus-4-5', window: 200_000 },
    { model: 'claude-opus-1m', window: 1_000_000 },
    { model: 'CLAUDE-OPUS-1M-20260101', window: 1_000_000 },
    { model: 'sonnet', window: 200_000 },
    { model: 'gpt-something', window: 150_000 },
  ])('$model → $window', ({ model, window }) => {
    expect(lookupByModel(config.model_context_windows, model)).toBe(window);
    expect(computeZone(model, 0, 'developer', config).effective_limit).toBe(window);
  });

  it('key order in the table does not matter', () => {
    const a = lookupByModel({ 'opus-1m': 1_000_000, opus: 200_000, default: 1 }, 'opus-1m');
    const b = lookupByModel({ opus: 200_000, 'opus-1m': 1_000_000, default: 1 }, 'opus-1m');
    expect(a).toBe(1_000_000);
    expect(b).toBe(1_000_000);
  });

  it('no match → the default entry (parseConfig keeps it: a file cannot remove it)', () => {
    expect(lookupByModel({ opus: 5, default: 42 }, 'haiku')).toBe(42);
    const config = parseConfig(JSON.stringify({ context_engineering: { model_context_windows: { opus: 1_000_000 } } }), 'x.json');
    expect(config.model_context_windows.default).toBe(200_000);
    expect(lookupByModel(config.model_context_windows, 'haiku')).toBe(200_000);
  });

  it('a 1M window changes the zone for the same usage', () => {
    const tokens = 500_000;
    expect(computeZone('opus', tokens, 'developer', config).zone).toBe('Emergency');
    expect(computeZone('opus-1m', tokens, 'developer', config).zone).toBe('Normal');
  });
});

describe('remaining is never negative', () => {
  it.each([
    { current: EFFECTIVE, remaining: 0 },
    { current: EFFECTIVE + 1, remaining: 0 },
    { current: 10 * EFFECTIVE, remaining: 0 },
    { current: EFFECTIVE - 1, remaining: 1 },
  ])('current $current → remaining $remaining', ({ current, remaining }) => {
    const z = computeZone('sonnet', current, 'tech_lead', DEFAULT_CONFIG);
    expect(z.remaining_budget).toBe(remaining);
    expect(z.context_budget).toBeGreaterThanOrEqual(0);
    expect(z.context_budget).toBe(Math.floor(remaining * 0.4));
  });
});

describe('ZONE_RULES: what each zone does, in one table', () => {
  const doc = (zone: Zone, summaryCap: number | null) =>
    ({
      step: 'pack',
      request: { agent: 'developer' },
      zone,
      usage_pct: 61.25,
      summary_cap: summaryCap,
      effective_limit: 170000,
      remaining_budget: 1000,
      context_budget: 200,
      limit: 3,
      include_reasoning: false,
      packages: [],
      total_available: 5,
      overflow_count: 2,
    }) as unknown as AssemblyDoc;

  it('the Soft Warning banner names the configured cap, not a fixed one', () => {
    const config = parseConfig(JSON.stringify({ context_engineering: { summary_caps: { Soft_Warning: 150 } } }), 'x.json');
    expect(summaryCapOf(config, 'Soft_Warning')).toBe(150);
    expect(renderMarkdown(doc('Soft_Warning', 150))).toContain('🔶 **Token budget: Soft Warning (61.2%) - Reduced summaries (150 char)**');
  });

  it('zones that show no summaries have no cap; a cap for them is reported as unknown', () => {
    expect(summaryCapOf(DEFAULT_CONFIG, 'Wrap-up')).toBeNull();
    expect(summaryCapOf(DEFAULT_CONFIG, 'Emergency')).toBeNull();
    const warnings: string[] = [];
    parseConfig(JSON.stringify({ context_engineering: { summary_caps: { 'Wrap-up': 60 } } }), 'x.json', (m) => warnings.push(m));
    expect(warnings).toEqual(['x.json: unknown key context_engineering.summary_caps.Wrap-up (ignored)']);
  });

  it.each(ZONES.map((z) => [z]))('%s: the renderer follows the table (overflow line, ladder header, body)', (zone) => {
    const rules = ZONE_RULES[zone];
    const text = renderMarkdown(doc(zone, summaryCapOf(DEFAULT_CONFIG, zone)));
    expect(text.includes('📦 +2 more packages available')).toBe(rules.showsOverflow);
    if (rules.body) expect(text).toContain(rules.body.join('\n'));
    else expect(text).toContain(rules.ladder ? '### Priority Packages (0/5)' : '### Relevant Packages (0/5)');
    expect(text.includes('Token budget')).toBe(rules.banner !== null);
  });
});
