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
import { RowFailure } from '../schemaSteps.ts';
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
 * The verdicts that followed the showing of items of one kind: of the project (of every project
 * with `wholeDatabase`), for the given ids, or (ids null) every item of the kind shown in
 * `sessionId` (packages and reasoning entries belong to one session). An error pattern's id is its
 * fault key (ca_pattern_faults.fault_hash): the verdicts of every row of the fault.
 */
export function listVerdicts(
  db: DB,
  q: { projectId: string; wholeDatabase?: boolean; sessionId: string; kind: string; ids: readonly (string | number)[] | null },
): ShownVerdict[] {
  if (!hasTable(db, 'ca_outcomes')) return [];
  // A session read as one project (repo/sessions.ts ProjectScope) counts the verdicts of every project's sessions.
  const project = q.wholeDatabase === true ? '1' : 'project_id = @projectId';
  if (q.ids === null) {
    return stmt(
      db,
      `SELECT kind, item_id AS id, day, helped, hurt, session_id FROM ca_outcomes WHERE session_id = @sessionId AND kind = @kind AND ${project}
       ORDER BY item_id, day, project_id`,
    ).all({ sessionId: q.sessionId, kind: q.kind, projectId: q.projectId }) as ShownVerdict[];
  }
  if (q.ids.length === 0) return [];
  return stmt(
    db,
    `SELECT kind, item_id AS id, day, helped, hurt, session_id FROM ca_outcomes
     WHERE ${project} AND kind = @kind AND item_id IN (SELECT CAST(value AS TEXT) FROM json_each(@ids))
     ORDER BY item_id, day, session_id, project_id`,
  ).all({ projectId: q.projectId, kind: q.kind, ids: JSON.stringify(q.ids) }) as ShownVerdict[];
}

/**
 * Renames items of one kind in the verdict rows (`map`: old id → new id; ids not in it stay),
 * adding up the counts of rows that meet under one id. A row SQLite refuses to move fails with its
 * key (RowFailure). In the caller's write transaction.
 */
export function renameOutcomeItems(db: DB, kind: string, map: ReadonlyMap<string, string>): number {
  if (map.size === 0 || !hasTable(db, 'ca_outcomes')) return 0;
  const rows = stmt(db, 'SELECT project_id, item_id, session_id, day, helped, hurt FROM ca_outcomes WHERE kind = ? ORDER BY project_id, item_id, session_id, day').all(kind) as {
    project_id: string;
    item_id: string;
    session_id: string;
    day: string;
    helped: number;
    hurt: number;
  }[];
  const drop = stmt(db, 'DELETE FROM ca_outcomes WHERE project_id = @project_id AND kind = @kind AND item_id = @item_id AND session_id = @session_id AND day = @day');
  const add = stmt(
    db,
    `INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt) VALUES (@project_id, @kind, @to, @session_id, @day, @helped, @hurt)
     ON CONFLICT (project_id, kind, item_id, session_id, day) DO UPDATE SET helped = helped + excluded.helped, hurt = hurt + excluded.hurt`,
  );
  let renamed = 0;
  for (const r of rows) {
    const to = map.get(r.item_id);
    if (to === undefined || to === r.item_id) continue;
    try {
      drop.run({ ...r, kind });
      add.run({ ...r, kind, to });
    } catch (err) {
      throw new RowFailure({ table: 'ca_outcomes', key: `${r.project_id}/${kind}/${r.item_id}/${r.session_id}/${r.day}` }, err);
    }
    renamed += 1;
  }
  return renamed;
}
