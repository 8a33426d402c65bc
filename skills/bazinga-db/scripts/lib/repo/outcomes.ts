/**
 * What followed the spawns items were shown to: each item an assembly record lists as shown
 * (ca_assemblies detail.shown: kind and id), with the time of the spawn and the verdict of the
 * iteration it served, for one project. The verdict comes from the spawn's task group as BAZINGA
 * keeps it: an iteration before the group's revision_count went back for changes ('hurt'); the
 * current one is 'helped' once the group is approved (last_review_status APPROVED, or completed or
 * being merged) and 'hurt' when changes were requested; a spawn of an open iteration, or of no
 * group, has no verdict yet and is not listed.
 */
import { stmt, type DB } from '../statements.ts';
import { reviewPassed } from './taskGroups.ts';

export interface ShownVerdict {
  /** The item's kind as the record names it (package, reasoning, error_pattern, strategy, memory). */
  kind: string;
  /** Its id as text (a package's or entry's number, a pattern's hash, a strategy's id). */
  id: string;
  /** The spawn's time (the record's created_at: ISO). */
  at: string;
  verdict: 'helped' | 'hurt';
  session_id: string;
}

/** The newest this many records of a project are read (a spawn's cost stays bounded). */
export const OUTCOME_RECORDS_MAX = 2000;

export function listShownVerdicts(db: DB, projectId: string, limit = OUTCOME_RECORDS_MAX): ShownVerdict[] {
  if (stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ca_assemblies'").get() === undefined) return [];
  return stmt(
    db,
    `WITH spawns AS (
       SELECT a.id, a.created_at, a.session_id, a.detail,
              CASE
                WHEN a.iteration < COALESCE(g.revision_count, 0) THEN 'hurt'
                WHEN ${reviewPassed('g')} THEN 'helped'
                WHEN g.last_review_status = 'CHANGES_REQUESTED' THEN 'hurt'
              END AS verdict
       FROM ca_assemblies a
       JOIN sessions s ON s.session_id = a.session_id
       JOIN task_groups g ON g.session_id = a.session_id AND g.id = a.group_id
       WHERE COALESCE(NULLIF(CASE WHEN json_valid(s.metadata) THEN json_extract(s.metadata, '$.project_id') END, ''), 'default') = ?
         AND json_valid(a.detail)
       ORDER BY a.id DESC
       LIMIT ?)
     SELECT json_extract(j.value, '$.kind') AS kind, CAST(json_extract(j.value, '$.id') AS TEXT) AS id, spawns.created_at AS at,
            spawns.verdict AS verdict, spawns.session_id AS session_id
     FROM spawns, json_each(spawns.detail, '$.shown') j
     WHERE spawns.verdict IS NOT NULL AND json_type(j.value, '$.kind') = 'text'
     ORDER BY spawns.id, j.key`,
  ).all(projectId, limit) as ShownVerdict[];
}
