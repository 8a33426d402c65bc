/**
 * Zones: how full the orchestrator's window is, how many tokens this agent's context may use, and
 * what each zone does (ZONE_RULES, the one place that says it). Pure.
 */
import { PRIORITY_ORDER } from '../../../../bazinga-db/scripts/lib/pure.ts';
import { lookupByModel, ZONES, type Config, type Zone } from '../config.ts';

/** What the assembly does in a zone. Every step and the renderer read this table, never the zone's name. */
export interface ZoneRules {
  /** Reads packages, reasoning, error patterns and strategies (false: the block says so and stops). */
  queries: boolean;
  /** Marks the delivered packages consumed for (agent, iteration). */
  recordsConsumption: boolean;
  /** Prints `📦 +N more packages available …` when the limit left some out. */
  showsOverflow: boolean;
  /** Fills the limit from these priorities in this order (never the others) instead of by score; null: by score. */
  ladder: readonly string[] | null;
  /** The banner under the heading, given the usage (one decimal) and the zone's summary cap; null: none. */
  banner: ((usage: string, summaryCap: number | null) => string) | null;
  /** Lines that replace the package, reasoning and learning sections; null: those sections. */
  body: readonly string[] | null;
}

export const ZONE_RULES: Readonly<Record<Zone, ZoneRules>> = {
  Normal: { queries: true, recordsConsumption: true, showsOverflow: true, ladder: null, banner: null, body: null },
  Soft_Warning: {
    queries: true,
    recordsConsumption: true,
    showsOverflow: true,
    ladder: null,
    banner: (usage, cap) => `🔶 **Token budget: Soft Warning (${usage}%) - Reduced summaries (${cap} char)**`,
    body: null,
  },
  Conservative: {
    queries: true,
    recordsConsumption: false,
    showsOverflow: false,
    ladder: PRIORITY_ORDER.filter((p) => p !== 'low'), // critical, high, medium: never low
    banner: (usage) => `🔶 **Token budget: Conservative (${usage}%)**`,
    body: null,
  },
  'Wrap-up': {
    queries: false,
    recordsConsumption: false,
    showsOverflow: false,
    ladder: null,
    banner: (usage) => `🔶 **Token budget: Wrap-up (${usage}%) - Completing current operation**`,
    body: ['### Essential Info Only', '', 'Minimal context mode active. Focus on completing current task.'],
  },
  Emergency: {
    queries: false,
    recordsConsumption: false,
    showsOverflow: false,
    ladder: null,
    banner: (usage) => `🚨 **Token budget: Emergency (${usage}%) - Checkpoint recommended**`,
    body: ['Context assembly skipped due to token budget constraints.', 'Suggest: Complete current operation and start new session.'],
  },
};

export interface ZoneResult {
  zone: Zone;
  /** Unrounded percentage of the effective limit already used. */
  usage_pct: number;
  effective_limit: number;
  remaining_budget: number;
  context_budget: number;
}

/** Zone of a usage percentage; thresholds are inclusive lower bounds on the unrounded value. */
export function zoneFor(usagePct: number, t: Config['zone_thresholds']): Zone {
  if (usagePct >= t.emergency) return 'Emergency';
  if (usagePct >= t.wrap_up) return 'Wrap-up';
  if (usagePct >= t.conservative) return 'Conservative';
  if (usagePct >= t.soft_warning) return 'Soft_Warning';
  return 'Normal';
}

/** The zone's summary cap (config.summary_caps); null in a zone that shows no package summaries. */
export function summaryCapOf(config: Config, zone: Zone): number | null {
  const caps: Readonly<Record<string, number>> = config.summary_caps;
  return ZONE_RULES[zone].queries ? (caps[zone] ?? null) : null;
}

/**
 * The cap a block under budget pressure shortens its summaries to: the next zone's, when that is
 * smaller than `cap` (Normal's 400 → Soft Warning's 200 → Conservative's 100); null when none is.
 * A block that cannot hold its candidates whole shows more of them, shorter, as the window filling
 * up would make it.
 */
export function tighterSummaryCap(config: Config, zone: Zone, cap: number): number | null {
  // ZONES lists them in the order the window fills: the first cap after this zone's below `cap`.
  for (const next of ZONES.slice(ZONES.indexOf(zone) + 1)) {
    const tighter = summaryCapOf(config, next);
    if (tighter !== null && tighter < cap) return tighter;
  }
  return null;
}

export function computeZone(model: string, currentTokens: number, agent: string, config: Config): ZoneResult {
  const window = lookupByModel(config.model_context_windows, model);
  const effective = Math.floor(window * (1 - config.token_safety_margin));
  // Multiply first: (current / effective) × 100 rounds twice and puts an exact threshold (57 %) just below it.
  const usage = effective > 0 ? (currentTokens * 100) / effective : 100;
  const remaining = Math.max(0, effective - currentTokens);
  const share = config.context_budget_share[agent] ?? config.context_budget_share.other;
  return {
    zone: zoneFor(usage, config.zone_thresholds),
    usage_pct: usage,
    effective_limit: effective,
    remaining_budget: remaining,
    context_budget: Math.floor(remaining * share),
  };
}
