/**
 * Recording that an agent was given a package: the shared rule behind `mark-context-consumed` and
 * the assembler's consumption step. Call inside a write transaction.
 */
import type { DB } from './db.ts';
import { CONSUMPTION_AGENTS, isOneOf } from './enums.ts';
import { consumptionScopeId } from './hashing.ts';
import { insertConsumptionScope } from './repo/consumption.ts';
import { markConsumerConsumed, type PackageRow } from './repo/contextPackages.ts';

export interface ConsumptionMark {
  /** The agent's pending consumer row was marked (false when it was consumed already). */
  consumer_row_updated: boolean;
  /** The iteration-aware scope id, or null for agents the consumption_scope table does not allow. */
  scope_id: string | null;
  scope_inserted: boolean;
}

/**
 * Marks `pkg` consumed by `agent` at `iteration`: the agent's lowest pending consumer row, and
 * (for the five consumption agents) the consumption_scope row keyed by session, the package's
 * group (`global` for a session-wide package), agent, iteration and package.
 */
export function markPackageConsumed(
  db: DB,
  pkg: Pick<PackageRow, 'id' | 'session_id' | 'group_id' | 'scope'>,
  agent: string,
  iteration: number,
): ConsumptionMark {
  const updated = markConsumerConsumed(db, pkg.id, agent, iteration);
  if (!isOneOf(CONSUMPTION_AGENTS, agent)) return { consumer_row_updated: updated, scope_id: null, scope_inserted: false };
  const groupId = pkg.scope === 'global' || pkg.group_id === null ? 'global' : pkg.group_id;
  const scopeId = consumptionScopeId(pkg.session_id, groupId, agent, iteration, pkg.id);
  const inserted = insertConsumptionScope(db, {
    scope_id: scopeId,
    session_id: pkg.session_id,
    group_id: groupId,
    agent_type: agent,
    iteration,
    package_id: pkg.id,
  });
  return { consumer_row_updated: updated, scope_id: scopeId, scope_inserted: inserted };
}
