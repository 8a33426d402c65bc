/**
 * Repository: what today's BAZINGA prompt builder reads for its own `## Context from Prior Work`
 * section (../shared/bazinga-today.md, checked against its source), by the same rules: the floor a
 * context block must not fall below. Its budget cut is the assembler's (core/floor.ts).
 *
 * - packages: of the session, in the group or with no group, whatever their consumer list,
 *   superseded or not, critical → high → medium → low (any other last), newest first, at most
 *   `limit`; the builder then skips those with an empty summary;
 * - reasoning: `log_type = 'reasoning'` of the session in the group or `global`, by the given
 *   producers, newest first, at most `limit`;
 * - error patterns: confidence above `above`, of every project, most confident, then most seen, at
 *   most `limit`.
 * The builder's SQL names no tie-breaker; SQLite returns ties in row order (id ascending, checked
 * with its own statements), so that is the tie-breaker here.
 */
import { PRIORITY_ORDER } from '../enums.ts';
import { stmt, type DB } from '../statements.ts';
import type { PackageRow } from './contextPackages.ts';
import type { ErrorPatternRow } from './errorPatterns.ts';
import type { ReasoningRow } from './reasoning.ts';

const PRIORITY_RANK = `coalesce(nullif(instr(@priorityOrder, ',' || priority || ','), 0), 1e9)`;

export function listBuilderPackages(db: DB, q: { sessionId: string; groupId: string; limit: number }): PackageRow[] {
  return stmt(
    db,
    `SELECT * FROM context_packages
     WHERE session_id = @sessionId AND (group_id = @groupId OR group_id IS NULL OR group_id = '')
     ORDER BY ${PRIORITY_RANK}, created_at DESC, id ASC LIMIT @limit`,
  ).all({ ...q, priorityOrder: `,${PRIORITY_ORDER.join(',')},` }) as PackageRow[];
}

export function listBuilderReasoning(db: DB, q: { sessionId: string; groupId: string; producers: readonly string[]; limit: number }): ReasoningRow[] {
  if (q.producers.length === 0) return [];
  return stmt(
    db,
    `SELECT id, session_id, group_id, agent_type, agent_id, iteration, reasoning_phase, confidence_level, content, redacted, timestamp, references_json
     FROM orchestration_logs
     WHERE session_id = @sessionId AND (group_id = @groupId OR group_id = 'global') AND log_type = 'reasoning'
       AND agent_type IN (SELECT value FROM json_each(@producers))
     ORDER BY timestamp DESC, id ASC LIMIT @limit`,
  ).all({ sessionId: q.sessionId, groupId: q.groupId, producers: JSON.stringify(q.producers), limit: q.limit }) as ReasoningRow[];
}

export function listBuilderErrorPatterns(db: DB, q: { above: number; limit: number }): ErrorPatternRow[] {
  return stmt(
    db,
    `SELECT * FROM error_patterns WHERE confidence > @above ORDER BY confidence DESC, occurrences DESC, rowid ASC LIMIT @limit`,
  ).all(q) as ErrorPatternRow[];
}

/** The newest completion entry of the group by one of `producers` (the work a review is of), or undefined. */
export function findNewestCompletion(db: DB, q: { sessionId: string; groupId: string; producers: readonly string[] }): ReasoningRow | undefined {
  return stmt(
    db,
    `SELECT id, session_id, group_id, agent_type, agent_id, iteration, reasoning_phase, confidence_level, content, redacted, timestamp, references_json
     FROM orchestration_logs
     WHERE session_id = @sessionId AND group_id = @groupId AND log_type = 'reasoning' AND reasoning_phase = 'completion'
       AND agent_type IN (SELECT value FROM json_each(@producers))
     ORDER BY timestamp DESC, id DESC LIMIT 1`,
  ).get({ sessionId: q.sessionId, groupId: q.groupId, producers: JSON.stringify(q.producers) }) as ReasoningRow | undefined;
}
