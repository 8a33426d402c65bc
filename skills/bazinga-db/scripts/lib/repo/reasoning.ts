/** Repository: reasoning rows of `orchestration_logs` (`log_type = 'reasoning'`). */
import { stmt, type DB } from '../statements.ts';

export interface ReasoningRow {
  id: number;
  session_id: string;
  group_id: string | null;
  agent_type: string;
  agent_id: string | null;
  iteration: number | null;
  reasoning_phase: string | null;
  confidence_level: string | null;
  content: string;
  redacted: number;
  timestamp: string | null;
  references_json: string | null;
}

export interface NewReasoning {
  sessionId: string;
  groupId: string;
  agentType: string;
  agentId: string | null;
  iteration: number | null;
  phase: string;
  confidence: string | null;
  content: string;
  referencesJson: string | null;
  redacted: boolean;
  /** SQLite time text; omitted → CURRENT_TIMESTAMP (only generators of test data set it). */
  timestamp?: string;
}

/** Inserts one reasoning row; returns its id and the timestamp SQLite gave it. */
export function insertReasoning(db: DB, r: NewReasoning): { id: number; timestamp: string } {
  const info = stmt(
    db,
    `INSERT INTO orchestration_logs (session_id, iteration, agent_type, agent_id, content, log_type, reasoning_phase,
                                     confidence_level, references_json, redacted, group_id, timestamp)
     VALUES (@sessionId, @iteration, @agentType, @agentId, @content, 'reasoning', @phase, @confidence,
             @referencesJson, @redacted, @groupId, COALESCE(@timestamp, CURRENT_TIMESTAMP))`,
  ).run({ ...r, redacted: r.redacted ? 1 : 0, timestamp: r.timestamp ?? null });
  const id = Number(info.lastInsertRowid);
  const row = stmt(db, 'SELECT timestamp FROM orchestration_logs WHERE id = ?').get(id) as { timestamp: string };
  return { id, timestamp: row.timestamp };
}

const COLUMNS = `id, session_id, group_id, agent_type, agent_id, iteration, reasoning_phase, confidence_level, content,
                 redacted, timestamp, references_json`;

/** Newest first; group, agent and phase filter exactly when given. */
export function listReasoning(
  db: DB,
  q: { sessionId: string; groupId: string | null; agentType: string | null; phase: string | null; limit: number },
): ReasoningRow[] {
  return stmt(
    db,
    `SELECT ${COLUMNS} FROM orchestration_logs
     WHERE session_id = @sessionId AND log_type = 'reasoning'
       AND (@groupId IS NULL OR group_id = @groupId)
       AND (@agentType IS NULL OR agent_type = @agentType)
       AND (@phase IS NULL OR reasoning_phase = @phase)
     ORDER BY timestamp DESC, id DESC LIMIT @limit`,
  ).all(q) as ReasoningRow[];
}

/** The group's most recent completion/decisions/approach rows, the source of extracted strategies. */
export function listStrategySourceReasoning(db: DB, sessionId: string, groupId: string): Pick<ReasoningRow, 'id' | 'reasoning_phase' | 'content'>[] {
  return stmt(
    db,
    `SELECT id, reasoning_phase, content FROM orchestration_logs
     WHERE session_id = ? AND group_id = ? AND log_type = 'reasoning'
       AND reasoning_phase IN ('completion', 'decisions', 'approach')
     ORDER BY timestamp DESC, id DESC LIMIT 5`,
  ).all(sessionId, groupId) as Pick<ReasoningRow, 'id' | 'reasoning_phase' | 'content'>[];
}

/** The newest `limit` reasoning rows of one producer in one group (`global` for session-wide rows). */
export function listRecentReasoningOf(db: DB, sessionId: string, groupId: string, agentType: string, limit: number): ReasoningRow[] {
  return stmt(
    db,
    `SELECT ${COLUMNS} FROM orchestration_logs INDEXED BY ca_idx_logs_producer_recent
     WHERE session_id = ? AND group_id = ? AND agent_type = ? AND log_type = 'reasoning'
     ORDER BY timestamp DESC, id DESC LIMIT ?`,
  ).all(sessionId, groupId, agentType, limit) as ReasoningRow[];
}

/** The reasoning rows with these ids (any order). */
export function listReasoningByIds(db: DB, ids: readonly number[]): ReasoningRow[] {
  if (ids.length === 0) return [];
  return stmt(
    db,
    `SELECT ${COLUMNS} FROM orchestration_logs WHERE id IN (SELECT value FROM json_each(?)) AND log_type = 'reasoning'`,
  ).all(JSON.stringify(ids)) as ReasoningRow[];
}
