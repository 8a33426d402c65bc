/**
 * The assembler's vocabulary: the words every other module uses for zones, purposes, tiers, item
 * kinds and reasoning levels, declared once. No behaviour here (the rules that use them are
 * tables: core/zone.ts, core/tiers.ts), and no import: anything can depend on it without a circle.
 */

/** How full the orchestrator's window is, in order (config.zone_thresholds). */
export const ZONES = ['Normal', 'Soft_Warning', 'Conservative', 'Wrap-up', 'Emergency'] as const;
export type Zone = (typeof ZONES)[number];

/** What the agent's work is (--purpose, purposes.by_agent): the tiers' split and what is essential. */
export const PURPOSES = ['design', 'implementation', 'review', 'handoff', 'subagent'] as const;
export type Purpose = (typeof PURPOSES)[number];

/** How essential an item is: 1 never cut, 3 cut first. */
export type Tier = 1 | 2 | 3;
export const TIERS: readonly Tier[] = [1, 2, 3];

/** The kinds of item a block shows. */
export const ITEM_KINDS = ['package', 'reasoning', 'error_pattern', 'strategy', 'memory'] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

/** --reasoning-level: the reasoning budget (reasoning.level_budgets). */
export const REASONING_LEVELS = ['minimal', 'medium', 'full'] as const;
export type ReasoningLevel = (typeof REASONING_LEVELS)[number];

/**
 * What a block does with an item of a standing, per agent (config provenance.contradicted and
 * provenance.unreviewed; the rule: core/standing.ts standingBand).
 */
export const STANDING_CHOICES = ['shown', 'ranked', 'left_out'] as const;
export type StandingChoice = (typeof STANDING_CHOICES)[number];

export interface StandingRules {
  contradicted: StandingChoice;
  unreviewed: StandingChoice;
}
