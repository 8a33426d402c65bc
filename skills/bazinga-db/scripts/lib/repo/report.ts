/**
 * The reads of context-assembler's `report` over BAZINGA's own tables (read-only): sessions, their
 * task groups, their packages with whether each was ever delivered, and the error patterns a
 * session reads (its project's, or every project's: repo/sessions.ts ProjectScope). The assembly record's own reads are in assemblies.ts.
 */
import { stmt, type DB } from '../statements.ts';
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
