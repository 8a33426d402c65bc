/**
 * What summarise-session reads of one session to turn into memories, and the continuity figures
 * rehydrate prints. Reads only; values bound, never interpolated.
 */
import type { DB } from '../statements.ts';
import { hasTable, stmt } from '../statements.ts';
import type { ErrorPatternRow } from '../patternRow.ts';
import { withLearning } from './patternLearning.ts';
import type { ProjectScope } from './sessions.ts';

export interface SourceSession {
  session_id: string;
  start_time: string | null;
  end_time: string | null;
  status: string | null;
  project_id: string;
}

/** The session with its project (metadata.project_id, else `default`); undefined when there is none. */
export function sourceSession(db: DB, sessionId: string): SourceSession | undefined {
  return stmt(
    db,
    `SELECT session_id, start_time, end_time, status,
       COALESCE(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.project_id') END, 'default') AS project_id
     FROM sessions WHERE session_id = ?`,
  ).get(sessionId) as SourceSession | undefined;
}

export interface SourceGroup {
  id: string;
  name: string;
  status: string | null;
  revision_count: number | null;
}

export function sourceGroups(db: DB, sessionId: string): SourceGroup[] {
  return stmt(db, 'SELECT id, name, status, revision_count FROM task_groups WHERE session_id = ? ORDER BY id').all(sessionId) as SourceGroup[];
}

export interface SourcePackage {
  id: number;
  group_id: string | null;
  package_type: string;
  priority: string;
  summary: string;
  producer_agent: string | null;
  created_at: string | null;
}

/** The session's packages of one type, oldest first. */
export function sourcePackages(db: DB, sessionId: string, type: string): SourcePackage[] {
  return stmt(
    db,
    `SELECT id, group_id, package_type, priority, summary, producer_agent, created_at FROM context_packages
     WHERE session_id = ? AND package_type = ? AND supersedes_id IS NULL ORDER BY created_at, id`,
  ).all(sessionId, type) as SourcePackage[];
}

export interface SourceReasoning {
  id: number;
  group_id: string | null;
  agent_type: string;
  iteration: number | null;
  reasoning_phase: string | null;
  content: string;
  timestamp: string | null;
}

/** The session's reasoning of one phase, oldest first. */
export function sourceReasoning(db: DB, sessionId: string, phase: string): SourceReasoning[] {
  return stmt(
    db,
    `SELECT id, group_id, agent_type, iteration, reasoning_phase, content, timestamp FROM orchestration_logs
     WHERE session_id = ? AND log_type = 'reasoning' AND reasoning_phase = ? ORDER BY timestamp, id`,
  ).all(sessionId, phase) as SourceReasoning[];
}

export interface SourceStrategy {
  strategy_id: string;
  topic: string;
  insight: string;
  helpfulness: number;
  lang: string | null;
  framework: string | null;
}

/** The scope's strategies (its project's, or every project's) that helped (helpfulness ≥ 1) and were known by `until`, most helpful first. */
export function helpfulStrategies(db: DB, scope: ProjectScope, until: string): SourceStrategy[] {
  return stmt(
    db,
    `SELECT strategy_id, topic, insight, helpfulness, lang, framework FROM strategies
     WHERE ${scope.wholeDatabase ? '1' : 'project_id = @projectId'} AND helpfulness >= 1 AND COALESCE(created_at, last_seen) <= @until
     ORDER BY helpfulness DESC, strategy_id`,
  ).all({ projectId: scope.projectId, until }) as SourceStrategy[];
}

export interface SourcePattern {
  pattern_hash: string;
  signature_json: string;
  solution: string;
  confidence: number;
  occurrences: number;
  lang: string | null;
}

/** The scope's error patterns (its project's, or every project's) seen between `from` and `until` (last_seen), confident ones first. */
export function patternsSeen(db: DB, scope: ProjectScope, from: string, until: string): SourcePattern[] {
  const inScope = scope.wholeDatabase ? '1' : 'project_id = @projectId';
  // Seen in the window by their writer, or by this layer's capture (kept beside the row: repo/patternLearning.ts).
  const learntIn = hasTable(db, 'ca_pattern_learning')
    ? `OR EXISTS (SELECT 1 FROM ca_pattern_learning l WHERE l.project_id = error_patterns.project_id AND l.pattern_hash = error_patterns.pattern_hash
         AND l.last_seen >= @from AND l.last_seen <= @until)`
    : '';
  const rows = stmt(
    db,
    `SELECT * FROM error_patterns WHERE ${inScope} AND ((last_seen >= @from AND last_seen <= @until) ${learntIn})`,
  ).all({ projectId: scope.projectId, from, until }) as ErrorPatternRow[];
  return withLearning(db, rows)
    .sort((a, b) => b.confidence - a.confidence || b.occurrences - a.occurrences || (a.pattern_hash < b.pattern_hash ? -1 : a.pattern_hash > b.pattern_hash ? 1 : a.project_id < b.project_id ? -1 : 1))
    .map(({ pattern_hash, signature_json, solution, confidence, occurrences, lang }) => ({ pattern_hash, signature_json, solution, confidence, occurrences, lang }));
}

export interface Continuity {
  sessions: number;
  /** The latest end (or, for a session still open, its latest activity) of the project's sessions. */
  last_session_end: string | null;
}

/** How many sessions the project has had, and when the last one ended (or was last active). */
export function continuity(db: DB, projectId: string): Continuity {
  return stmt(
    db,
    `SELECT COUNT(*) AS sessions,
       MAX(COALESCE(end_time, (SELECT MAX(timestamp) FROM orchestration_logs o WHERE o.session_id = s.session_id), start_time)) AS last_session_end
     FROM sessions s
     WHERE COALESCE(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.project_id') END, 'default') = ?`,
  ).get(projectId) as Continuity;
}

/** The project of the most recently started session (the session-start hook's project), or undefined. */
export function latestProject(db: DB): string | undefined {
  const row = stmt(
    db,
    `SELECT COALESCE(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.project_id') END, 'default') AS project_id
     FROM sessions ORDER BY start_time DESC, created_at DESC LIMIT 1`,
  ).get() as { project_id: string } | undefined;
  return row?.project_id;
}
