/**
 * The reads of context-assembler's `report` over BAZINGA's own tables (read-only): sessions, their
 * task groups, their packages with whether each was ever delivered, and the error patterns a
 * session reads (its project's, or every project's: repo/sessions.ts ProjectScope). The assembly record's own reads are in assemblies.ts.
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import type { ErrorPatternRow } from './errorPatterns.ts';
import type { ProjectScope } from './sessions.ts';

export interface ReportSessionRow {
  session_id: string;
  start_time: string | null;
  status: string | null;
  metadata: string | null;
}

export interface ReportGroupRow {
  id: string;
  name: string;
  status: string | null;
  revision_count: number;
  last_review_status: string | null;
  qa_attempts: number;
  tl_review_attempts: number;
}

export interface ReportPackageRow {
  id: number;
  group_id: string | null;
  package_type: string;
  priority: string;
  file_path: string;
  summary: string;
  /** 1 when a consumption row names it, or a consumer row of it is marked consumed. */
  delivered: number;
}

/** The newest `last` sessions by start time (newest first). */
export function listLatestSessionIds(db: DB, last: number): string[] {
  return (stmt(db, 'SELECT session_id FROM sessions ORDER BY COALESCE(start_time, created_at) DESC, rowid DESC LIMIT ?').all(last) as { session_id: string }[]).map(
    (r) => r.session_id,
  );
}

export function findReportSession(db: DB, sessionId: string): ReportSessionRow | undefined {
  return stmt(db, 'SELECT session_id, start_time, status, metadata FROM sessions WHERE session_id = ?').get(sessionId) as ReportSessionRow | undefined;
}

export function listReportGroups(db: DB, sessionId: string): ReportGroupRow[] {
  return stmt(
    db,
    `SELECT id, name, status, COALESCE(revision_count, 0) AS revision_count, last_review_status,
            COALESCE(qa_attempts, 0) AS qa_attempts, COALESCE(tl_review_attempts, 0) AS tl_review_attempts
     FROM task_groups WHERE session_id = ? ORDER BY created_at, id`,
  ).all(sessionId) as ReportGroupRow[];
}

/** The session's packages (not superseded), each with whether it was delivered to any agent. */
export function listReportPackages(db: DB, sessionId: string): ReportPackageRow[] {
  return stmt(
    db,
    `SELECT cp.id, cp.group_id, cp.package_type, cp.priority, cp.file_path, cp.summary,
            (EXISTS (SELECT 1 FROM consumption_scope s WHERE s.package_id = cp.id)
             OR EXISTS (SELECT 1 FROM context_package_consumers c WHERE c.package_id = cp.id AND c.consumed_at IS NOT NULL)) AS delivered
     FROM context_packages cp WHERE cp.session_id = ? AND cp.supersedes_id IS NULL ORDER BY cp.id`,
  ).all(sessionId) as ReportPackageRow[];
}

/** The error patterns of a scope (one project's, or every project's), in the order they were written. */
export function listScopePatterns(db: DB, scope: ProjectScope): ErrorPatternRow[] {
  return stmt(db, `SELECT * FROM error_patterns WHERE ${scope.wholeDatabase ? '1' : 'project_id = ?'} ORDER BY rowid`).all(
    ...(scope.wholeDatabase ? [] : [scope.projectId]),
  ) as ErrorPatternRow[];
}

/** The rows behind the items a report names, looked up by the ids its records keep (see listItemRows). */
export interface ItemRows {
  packages: { id: number; package_type: string; priority: string; summary: string }[];
  reasoning: { id: number; agent_type: string; reasoning_phase: string | null; iteration: number | null; content: string }[];
  /** Keyed by the id a record keeps for a pattern: its fault key (the block's id), or a row's own hash (the builder's); the most confident row first. */
  patterns: { key: string; signature_json: string; solution: string }[];
  strategies: { strategy_id: string; topic: string; insight: string }[];
  memories: { id: number; type: string; title: string }[];
}

export interface ItemIds {
  packages: readonly number[];
  reasoning: readonly number[];
  patterns: readonly string[];
  strategies: readonly string[];
  memories: readonly number[];
}

/**
 * The rows of the items the report names (what each spawn was shown and left out), each list of
 * ids passed as one JSON array (json_each): one statement per kind, whatever the count. This
 * product's tables (fault keys, memories) are read where they exist.
 */
export function listItemRows(db: DB, ids: ItemIds): ItemRows {
  const json = (xs: readonly unknown[]) => JSON.stringify(xs);
  const out: ItemRows = { packages: [], reasoning: [], patterns: [], strategies: [], memories: [] };
  if (ids.packages.length > 0) {
    out.packages = stmt(db, 'SELECT id, package_type, priority, summary FROM context_packages WHERE id IN (SELECT value FROM json_each(?))').all(json(ids.packages)) as ItemRows['packages'];
  }
  if (ids.reasoning.length > 0) {
    out.reasoning = stmt(db, "SELECT id, agent_type, reasoning_phase, iteration, content FROM orchestration_logs WHERE log_type = 'reasoning' AND id IN (SELECT value FROM json_each(?))").all(
      json(ids.reasoning),
    ) as ItemRows['reasoning'];
  }
  if (ids.patterns.length > 0) {
    const byFault = hasTable(db, 'ca_pattern_faults')
      ? (stmt(
          db,
          `SELECT f.fault_hash AS key, e.signature_json, e.solution FROM ca_pattern_faults f
           JOIN error_patterns e ON e.project_id = f.project_id AND e.pattern_hash = f.pattern_hash
           WHERE f.fault_hash IN (SELECT value FROM json_each(?)) ORDER BY e.confidence DESC, e.occurrences DESC, e.pattern_hash`,
        ).all(json(ids.patterns)) as ItemRows['patterns'])
      : [];
    const byRow = stmt(
      db,
      'SELECT pattern_hash AS key, signature_json, solution FROM error_patterns WHERE pattern_hash IN (SELECT value FROM json_each(?)) ORDER BY confidence DESC, occurrences DESC, project_id',
    ).all(json(ids.patterns)) as ItemRows['patterns'];
    out.patterns = [...byFault, ...byRow];
  }
  if (ids.strategies.length > 0) {
    out.strategies = stmt(db, 'SELECT strategy_id, topic, insight FROM strategies WHERE strategy_id IN (SELECT value FROM json_each(?))').all(json(ids.strategies)) as ItemRows['strategies'];
  }
  if (ids.memories.length > 0 && hasTable(db, 'ca_memories')) {
    out.memories = stmt(db, 'SELECT id, type, title FROM ca_memories WHERE id IN (SELECT value FROM json_each(?))').all(json(ids.memories)) as ItemRows['memories'];
  }
  return out;
}
