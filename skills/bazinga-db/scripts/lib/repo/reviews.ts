/**
 * Repository: what a session's reviews said, as BAZINGA records them (read-only): each task
 * group's review state (task_groups) and its failures packages (context_packages). The assembler
 * reads an item's standing from them (context-assembler core/standing.ts).
 */
import { hasColumn, stmt, type DB } from '../statements.ts';
import { reviewPassed } from './taskGroups.ts';

export interface GroupReviewRow {
  id: string;
  revision_count: number;
  /**
   * 1 when its review passed and nothing since sent it back: approved, completed or being merged
   * (taskGroups.ts reviewPassed), not back in progress and no merge that failed its tests or
   * conflicted (BAZINGA keeps last_review_status APPROVED then).
   */
  passed: number;
  updated_at: string | null;
}

export interface ReviewFailureRow {
  id: number;
  group_id: string | null;
  created_at: string;
  file_path: string;
}

/** Each group of the session with its review state. */
export function listGroupReviews(db: DB, sessionId: string): GroupReviewRow[] {
  const merge = hasColumn(db, 'task_groups', 'merge_status') ? "AND COALESCE(merge_status, '') NOT IN ('conflict', 'test_failure')" : '';
  return stmt(
    db,
    `SELECT id, COALESCE(revision_count, 0) AS revision_count,
       (${reviewPassed()} AND COALESCE(status, '') NOT IN ('pending', 'in_progress', 'failed') ${merge}) AS passed, updated_at
     FROM task_groups WHERE session_id = ? ORDER BY id`,
  ).all(sessionId) as GroupReviewRow[];
}

/** The session's failures packages (not superseded), oldest first. */
export function listSessionFailures(db: DB, sessionId: string): ReviewFailureRow[] {
  return stmt(
    db,
    "SELECT id, group_id, created_at, file_path FROM context_packages WHERE session_id = ? AND package_type = 'failures' AND supersedes_id IS NULL ORDER BY created_at, id",
  ).all(sessionId) as ReviewFailureRow[];
}

/** Who wrote each of the given packages (their producer agent), by id. */
export function listPackageProducers(db: DB, ids: readonly number[]): Map<number, string> {
  if (ids.length === 0) return new Map();
  const rows = stmt(db, 'SELECT id, producer_agent FROM context_packages WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as { id: number; producer_agent: string }[];
  return new Map(rows.map((r) => [r.id, r.producer_agent]));
}
