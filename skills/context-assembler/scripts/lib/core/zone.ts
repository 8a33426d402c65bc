/** Zone and budget: how full the orchestrator's window is, and how many tokens this agent's context may use. Pure. */
import { lookupByModel, type Config, type Zone } from '../config.ts';

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

export function computeZone(model: string, currentTokens: number, agent: string, config: Config): ZoneResult {
  const window = lookupByModel(config.model_context_windows, model, 200000);
  const effective = Math.floor(window * (1 - config.token_safety_margin));
  // Multiply first: (current / effective) × 100 rounds twice and puts an exact threshold (57 %) just below it.
  const usage = effective > 0 ? (currentTokens * 100) / effective : 100;
  const remaining = Math.max(0, effective - currentTokens);
  const share = config.context_budget_share[agent] ?? config.context_budget_share.other ?? 0.2;
  return {
    zone: zoneFor(usage, config.zone_thresholds),
    usage_pct: usage,
    effective_limit: effective,
    remaining_budget: remaining,
    context_budget: Math.floor(remaining * share),
  };
}
