/**
 * The reads of context-assembler's `report` over BAZINGA's own tables (read-only): sessions, their
 * task groups, their packages with whether each was ever delivered, and a project's error patterns
 * seen more than once. The assembly record's own reads are in assemblies.ts.
 */
import { stmt, type DB } from '../statements.ts';

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

/** A project's error patterns seen twice or more, most often first (at most `limit`). */
export function listRepeatedPatterns(db: DB, projectId: string, limit: number): { pattern_hash: string; signature_json: string; occurrences: number; last_seen: string | null }[] {
  return stmt(
    db,
    `SELECT pattern_hash, signature_json, occurrences, last_seen FROM error_patterns
     WHERE project_id = ? AND occurrences >= 2 ORDER BY occurrences DESC, last_seen DESC, pattern_hash LIMIT ?`,
  ).all(projectId, limit) as { pattern_hash: string; signature_json: string; occurrences: number; last_seen: string | null }[];
}

/** How many error patterns a project has, and how many of them were seen twice or more. */
export function countPatternRecurrence(db: DB, projectId: string): { patterns: number; repeated: number } {
  const row = stmt(db, 'SELECT COUNT(*) AS patterns, COALESCE(SUM(occurrences >= 2), 0) AS repeated FROM error_patterns WHERE project_id = ?').get(projectId) as {
    patterns: number;
    repeated: number;
  };
  return { patterns: Number(row.patterns), repeated: Number(row.repeated) };
}
