/**
 * Recording that an agent was given a package: the shared rule behind `mark-context-consumed` and
 * the assembler's consumption step, and the claim that makes the assembler deliver a package at
 * most once per (agent, iteration). Call inside a write transaction.
 */
import type { DB } from './statements.ts';
import { CONSUMPTION_AGENTS, isOneOf } from './enums.ts';
import { consumptionScopeId } from './hashing.ts';
import { deleteConsumptionScope, insertConsumptionScope } from './repo/consumption.ts';
import { findPackage, isConsumedAtIteration, markConsumerConsumed, unmarkConsumerConsumed, type PackageRow } from './repo/contextPackages.ts';

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

/**
 * Takes back what markPackageConsumed recorded for `agent` at `iteration`: the scope row removed and
 * the agent's consumer row pending again. For a delivery whose block was never printed (the warm
 * assembler's, whose caller ran the request itself: the caller's run takes its place). Call inside
 * a write transaction.
 */
export function unmarkPackageConsumed(db: DB, pkg: Pick<PackageRow, 'id' | 'session_id' | 'group_id' | 'scope'>, agent: string, iteration: number): void {
  unmarkConsumerConsumed(db, pkg.id, agent, iteration);
  if (!isOneOf(CONSUMPTION_AGENTS, agent)) return;
  const groupId = pkg.scope === 'global' || pkg.group_id === null ? 'global' : pkg.group_id;
  deleteConsumptionScope(db, consumptionScopeId(pkg.session_id, groupId, agent, iteration, pkg.id));
}

export interface Claim {
  /** Ids marked consumed by this claim. */
  claimed: number[];
  /**
   * Ids free at this iteration that nothing could record: an agent without consumption_scope rows
   * (requirements_engineer) whose consumer rows are all consumed already. Delivered, not recorded.
   */
  unrecorded: number[];
  /** Ids the agent had already consumed at this iteration (recorded first by another run); left alone. */
  taken: number[];
}

/**
 * Claims packages for `agent` at `iteration`: each one not yet consumed at that iteration (by the
 * eligibility rule's own test) is marked as markPackageConsumed does; the others are reported as
 * taken. An id with no package is neither. Call inside a write transaction: SQLite's write lock
 * then serialises the claims, each sees the marks of those before it, and no package is claimed
 * twice at one iteration. (An agent without consumption_scope rows is only recorded at the first
 * iteration it consumes a package: later claims find nothing to mark and report it unrecorded.)
 */
export function claimPackages(db: DB, ids: readonly number[], agent: string, iteration: number): Claim {
  const claim: Claim = { claimed: [], unrecorded: [], taken: [] };
  for (const id of ids) {
    const pkg = findPackage(db, id);
    if (!pkg) continue;
    if (isConsumedAtIteration(db, id, agent, iteration)) {
      claim.taken.push(id);
    } else {
      const mark = markPackageConsumed(db, pkg, agent, iteration);
      (mark.consumer_row_updated || mark.scope_inserted ? claim.claimed : claim.unrecorded).push(id);
    }
  }
  return claim;
}
