/**
 * What followed the spawns items were shown to. A spawn's verdict comes from its task group as
 * BAZINGA keeps it: an iteration before the group's revision_count went back for changes ('hurt');
 * the current one is 'helped' once the group's review passed (taskGroups.reviewPassed); until then
 * (changes requested raise revision_count), and for a spawn of no group, there is none yet. A verdict,
 * once known, does not change (revision_count only grows).
 *
 * `settleVerdicts` turns the assembly records whose verdict is now known (settleableRecords) into one `ca_outcomes` row
 * per item they list as shown (kind, id, project, session, verdict, the spawn's time) and marks them
 * settled; `listVerdicts` reads those rows for given items, so a spawn reads the few rows of its
 * candidates, never the whole record.
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import { reviewPassed } from './taskGroups.ts';

/** The verdicts that followed the showing of one item in one session on one day. */
export interface ShownVerdict {
  /** The item's kind as the record names it (package, reasoning, error_pattern, strategy, memory). */
  kind: string;
  /** Its id as text (a package's or entry's number, a pattern's hash, a strategy's id). */
  id: string;
  /** The UTC day of the spawns (YYYY-MM-DD). */
  day: string;
  /** Spawns it was shown to whose iteration was approved, and sent back. */
  helped: number;
  hurt: number;
  session_id: string;
}

/** The most records one spawn settles (the newest first; the rest at later spawns or capture-outcomes). */
export const SETTLE_PER_SPAWN = 100;

/**
 * A record's verdict: its iteration went back for changes (before the group's revision_count), or
 * the group's review passed at it. A last_review_status of CHANGES_REQUESTED decides nothing: it
 * may be the review of the iteration before (a retry's spawns run under it until their own review).
 */
const VERDICT = `CASE
  WHEN a.iteration < COALESCE(g.revision_count, 0) THEN 'hurt'
  WHEN ${reviewPassed('g')} THEN 'helped'
END`;

/** The session's project id as getProjectId reads it: a non-empty string, else 'default'. */
const PROJECT = `CASE WHEN json_valid(s.metadata) AND json_type(s.metadata, '$.project_id') = 'text' AND json_extract(s.metadata, '$.project_id') <> ''
  THEN json_extract(s.metadata, '$.project_id') ELSE 'default' END`;

/**
 * The newest `limit` unsettled records (all with -1) whose verdict is known now, and the unsettled
 * records that can never have one (no group, the session-wide group, a group that does not exist).
 * A read: the unsettled records are few (those of open iterations), read through their own index.
 */
export function settleableRecords(db: DB, limit = SETTLE_PER_SPAWN): { known: number[]; never: number[] } {
  if (!hasTable(db, 'ca_outcomes')) return { known: [], never: [] };
  const known = stmt(
    db,
    `SELECT a.id FROM ca_assemblies a
     JOIN task_groups g ON g.session_id = a.session_id AND g.id = a.group_id
     WHERE a.settled = 0 AND ${VERDICT} IS NOT NULL ORDER BY a.id DESC LIMIT ?`,
  ).all(limit) as { id: number }[];
  const never = stmt(
    db,
    `SELECT a.id FROM ca_assemblies a
     WHERE a.settled = 0 AND NOT EXISTS (SELECT 1 FROM task_groups g WHERE g.session_id = a.session_id AND g.id = a.group_id)
     ORDER BY a.id DESC LIMIT ?`,
  ).all(limit) as { id: number }[];
  return { known: known.map((r) => r.id).reverse(), never: never.map((r) => r.id) };
}

/**
 * Writes the verdict rows of the given records (settleableRecords) and marks them, and those that
 * can never have a verdict, settled. An item a record lists twice counts once. In the caller's
 * write transaction.
 */
export function settleVerdicts(db: DB, records: { known: readonly number[]; never: readonly number[] }): void {
  if (records.never.length > 0) stmt(db, 'UPDATE ca_assemblies SET settled = 1 WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(records.never));
  const ids = records.known;
  if (ids.length === 0) return;
  const list = JSON.stringify(ids);
  stmt(
    db,
    `INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt)
     SELECT project_id, kind, item_id, session_id, day, SUM(verdict = 'helped'), SUM(verdict = 'hurt') FROM (
       SELECT DISTINCT a.id AS assembly_id, ${PROJECT} AS project_id, a.session_id AS session_id, substr(a.created_at, 1, 10) AS day, ${VERDICT} AS verdict,
              -- An item is an object with a text kind and a text or integer id; a hand-edited detail may hold anything else.
              CASE WHEN j.type = 'object' THEN json_extract(j.value, '$.kind') END AS kind,
              CASE WHEN j.type = 'object' AND json_type(j.value, '$.id') IN ('text', 'integer') THEN CAST(json_extract(j.value, '$.id') AS TEXT) END AS item_id
       FROM ca_assemblies a
       JOIN sessions s ON s.session_id = a.session_id
       JOIN task_groups g ON g.session_id = a.session_id AND g.id = a.group_id,
       json_each(CASE WHEN json_valid(a.detail) AND json_type(a.detail, '$.shown') = 'array' THEN json_extract(a.detail, '$.shown') ELSE '[]' END) j
       WHERE a.id IN (SELECT value FROM json_each(?)) AND a.settled = 0)
     WHERE verdict IS NOT NULL AND typeof(kind) = 'text' AND item_id IS NOT NULL
     GROUP BY project_id, kind, item_id, session_id, day
     ON CONFLICT (project_id, kind, item_id, session_id, day) DO UPDATE SET helped = helped + excluded.helped, hurt = hurt + excluded.hurt`,
  ).run(list);
  stmt(db, 'UPDATE ca_assemblies SET settled = 1 WHERE id IN (SELECT value FROM json_each(?))').run(list);
}

/**
 * The verdicts that followed the showing of items of one kind: of the project, for the given ids,
 * or (ids null) every item of the kind shown in `sessionId` (packages and reasoning entries belong
 * to one session).
 */
export function listVerdicts(db: DB, q: { projectId: string; sessionId: string; kind: string; ids: readonly (string | number)[] | null }): ShownVerdict[] {
  if (!hasTable(db, 'ca_outcomes')) return [];
  if (q.ids === null) {
    return stmt(
      db,
      `SELECT kind, item_id AS id, day, helped, hurt, session_id FROM ca_outcomes WHERE session_id = ? AND kind = ? AND project_id = ? ORDER BY item_id, day`,
    ).all(q.sessionId, q.kind, q.projectId) as ShownVerdict[];
  }
  if (q.ids.length === 0) return [];
  return stmt(
    db,
    `SELECT kind, item_id AS id, day, helped, hurt, session_id FROM ca_outcomes
     WHERE project_id = ? AND kind = ? AND item_id IN (SELECT CAST(value AS TEXT) FROM json_each(?))
     ORDER BY item_id, day, session_id`,
  ).all(q.projectId, q.kind, JSON.stringify(q.ids)) as ShownVerdict[];
}
