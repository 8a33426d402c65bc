/** Repository: `sessions`. */
import { stmt, type DB } from '../statements.ts';

export interface SessionRow {
  session_id: string;
  start_time: string | null;
  end_time: string | null;
  mode: string | null;
  original_requirements: string | null;
  status: string | null;
  initial_branch: string | null;
  metadata: string | null;
  created_at: string | null;
}

const COLUMNS =
  'session_id, start_time, end_time, mode, original_requirements, status, initial_branch, metadata, created_at';

export function findSession(db: DB, sessionId: string): SessionRow | undefined {
  return stmt(db, `SELECT ${COLUMNS} FROM sessions WHERE session_id = ?`).get(sessionId) as SessionRow | undefined;
}

export function sessionExists(db: DB, sessionId: string): boolean {
  return stmt(db, 'SELECT 1 FROM sessions WHERE session_id = ?').get(sessionId) !== undefined;
}

/**
 * Ids of the `limit` most recently created sessions, newest first: in rowid order (the order they
 * were inserted), which walks the table's own b-tree from its end instead of sorting every session.
 */
export function listRecentSessionIds(db: DB, limit: number): string[] {
  return (stmt(db, 'SELECT session_id FROM sessions ORDER BY rowid DESC LIMIT ?').all(limit) as { session_id: string }[]).map((r) => r.session_id);
}

/** The number of sessions, counted up to `cap` (a count of `cap` means "cap or more"). */
export function countSessions(db: DB, cap: number): number {
  return (stmt(db, 'SELECT COUNT(*) AS n FROM (SELECT 1 FROM sessions LIMIT ?)').get(cap) as { n: number }).n;
}

export function insertSession(
  db: DB,
  s: { sessionId: string; mode: string; requirements: string; initialBranch: string; metadata: string | null },
): void {
  stmt(
    db,
    `INSERT INTO sessions (session_id, mode, original_requirements, status, initial_branch, metadata)
     VALUES (@sessionId, @mode, @requirements, 'active', @initialBranch, @metadata)`,
  ).run(s);
}

/** Newest first; a negative limit means no limit (SQLite LIMIT semantics). */
export function listSessions(db: DB, limit: number): SessionRow[] {
  return stmt(db, `SELECT ${COLUMNS} FROM sessions ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(limit) as SessionRow[];
}

/** Returns the number of rows changed (0 when the session does not exist). */
export function setSessionStatus(db: DB, sessionId: string, status: string, endTime: string | null): number {
  return stmt(db, 'UPDATE sessions SET status = ?, end_time = ? WHERE session_id = ?').run(status, endTime, sessionId).changes;
}

/**
 * What a session reads of the project-scoped tables (error patterns, strategies, their outcome
 * verdicts, project memory): its project's rows, or, when its metadata records no project id,
 * every project's, the database read as one project. BAZINGA's own create-session records none,
 * while its agents save patterns and strategies under the project id they pass, and its prompt
 * builder shows those of every project: a session of BAZINGA's sees them all, as there. A session
 * whose metadata records a project id keeps to it. `projectId` is what such a session writes under
 * (`default` when it records none).
 */
export interface ProjectScope {
  projectId: string;
  wholeDatabase: boolean;
}

/** One project's scope (a command given a project id). */
export const projectScope = (projectId: string): ProjectScope => ({ projectId, wholeDatabase: false });

/** The session's `metadata.project_id`, or `default` when absent or unreadable: the project a session writes under. */
export function getProjectId(db: DB, sessionId: string): string {
  return getProjectScope(db, sessionId).projectId;
}

/**
 * The session's scope (ProjectScope): a non-empty string `metadata.project_id` keeps to it; a
 * session that records none (no metadata, unreadable metadata, no such key, another type) reads
 * the whole database. A session the database does not hold is known by nothing: it reads project
 * `default` alone, as before (an unknown session's block stays the empty one).
 */
export function getProjectScope(db: DB, sessionId: string): ProjectScope {
  const row = stmt(
    db,
    `SELECT CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.project_id') END AS pid
     FROM sessions WHERE session_id = ?`,
  ).get(sessionId) as { pid: unknown } | undefined;
  if (row === undefined) return projectScope('default');
  return typeof row.pid === 'string' && row.pid !== '' ? projectScope(row.pid) : { projectId: 'default', wholeDatabase: true };
}
