/** Repository: `consumption_scope` (iteration-aware record of what an agent was given). */
import { stmt, type DB } from '../statements.ts';

export interface ConsumptionRow {
  scope_id: string;
  session_id: string;
  group_id: string;
  agent_type: string;
  iteration: number;
  package_id: number;
  consumed_at: string | null;
}

/** Inserts the row unless its scope already exists; returns whether it was inserted. */
export function insertConsumptionScope(db: DB, row: Omit<ConsumptionRow, 'consumed_at'>): boolean {
  return (
    stmt(
      db,
      `INSERT INTO consumption_scope (scope_id, session_id, group_id, agent_type, iteration, package_id, consumed_at)
       VALUES (@scope_id, @session_id, @group_id, @agent_type, @iteration, @package_id, datetime('now'))
       ON CONFLICT DO NOTHING`,
    ).run(row).changes > 0
  );
}

/** Removes the scope row `scopeId`; returns whether there was one. */
export function deleteConsumptionScope(db: DB, scopeId: string): boolean {
  return stmt(db, 'DELETE FROM consumption_scope WHERE scope_id = ?').run(scopeId).changes > 0;
}

/** Newest first; group and agent filter exactly when given. */
export function listConsumption(
  db: DB,
  q: { sessionId: string; groupId: string | null; agentType: string | null; limit: number },
): ConsumptionRow[] {
  return stmt(
    db,
    `SELECT scope_id, session_id, group_id, agent_type, iteration, package_id, consumed_at FROM consumption_scope
     WHERE session_id = @sessionId AND (@groupId IS NULL OR group_id = @groupId)
       AND (@agentType IS NULL OR agent_type = @agentType)
     ORDER BY consumed_at DESC, rowid DESC LIMIT @limit`,
  ).all(q) as ConsumptionRow[];
}
