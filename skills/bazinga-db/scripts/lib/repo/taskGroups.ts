/** Repository: `task_groups`. */
import { stmt, type DB } from '../statements.ts';

/**
 * A task group whose review passed, as a SQL condition on its columns (of the table aliased `alias`,
 * a constant): the tech lead approved it, or it is completed or being merged. The capture and
 * outcome feedback share it.
 */
export function reviewPassed(alias?: 'g'): string {
  const c = alias === undefined ? '' : `${alias}.`;
  return `(${c}last_review_status = 'APPROVED' OR ${c}status IN ('completed', 'approved_pending_merge', 'merging'))`;
}

export type TaskGroupRow = Record<string, unknown> & { id: string; session_id: string };

export interface TaskGroupUpsert {
  id: string;
  sessionId: string;
  name: string;
  /** Fields left undefined keep their stored value on conflict and take the column default on insert. */
  status?: string | undefined;
  assignedTo?: string | undefined;
  specializations?: string | undefined;
  itemCount?: number | undefined;
  componentPath?: string | undefined;
  initialTier?: string | undefined;
  complexity?: number | undefined;
}

export function findTaskGroup(db: DB, id: string, sessionId: string): TaskGroupRow | undefined {
  return stmt(db, 'SELECT * FROM task_groups WHERE id = ? AND session_id = ?').get(id, sessionId) as TaskGroupRow | undefined;
}

/** The group's revision count (how many times its work went back for changes); undefined for an unknown group. */
export function groupRevisionCount(db: DB, id: string, sessionId: string): number | undefined {
  const row = stmt(db, 'SELECT revision_count FROM task_groups WHERE id = ? AND session_id = ?').get(id, sessionId) as { revision_count: number | null } | undefined;
  return row === undefined ? undefined : Math.max(0, Number(row.revision_count ?? 0));
}

/** Inserts or updates on (id, session_id): name always replaced, other fields only when given. */
export function upsertTaskGroup(db: DB, g: TaskGroupUpsert): void {
  stmt(
    db,
    `INSERT INTO task_groups (id, session_id, name, status, assigned_to, specializations, item_count,
                              component_path, initial_tier, complexity)
     VALUES (@id, @sessionId, @name, COALESCE(@status, 'pending'), @assignedTo, @specializations,
             COALESCE(@itemCount, 1), @componentPath, COALESCE(@initialTier, 'Developer'), @complexity)
     ON CONFLICT (id, session_id) DO UPDATE SET
       name = excluded.name,
       status = COALESCE(@status, task_groups.status),
       assigned_to = COALESCE(@assignedTo, task_groups.assigned_to),
       specializations = COALESCE(@specializations, task_groups.specializations),
       item_count = COALESCE(@itemCount, task_groups.item_count),
       component_path = COALESCE(@componentPath, task_groups.component_path),
       initial_tier = COALESCE(@initialTier, task_groups.initial_tier),
       complexity = COALESCE(@complexity, task_groups.complexity),
       updated_at = CURRENT_TIMESTAMP`,
  ).run({
    id: g.id,
    sessionId: g.sessionId,
    name: g.name,
    status: g.status ?? null,
    assignedTo: g.assignedTo ?? null,
    specializations: g.specializations ?? null,
    itemCount: g.itemCount ?? null,
    componentPath: g.componentPath ?? null,
    initialTier: g.initialTier ?? null,
    complexity: g.complexity ?? null,
  });
}

/** Oldest first; `status` filters exactly when given. */
export function listTaskGroups(db: DB, sessionId: string, status: string | null): TaskGroupRow[] {
  return stmt(
    db,
    `SELECT * FROM task_groups WHERE session_id = @sessionId AND (@status IS NULL OR status = @status)
     ORDER BY created_at ASC, rowid ASC`,
  ).all({ sessionId, status }) as TaskGroupRow[];
}

/** Returns the number of rows changed (0 when the group does not exist). */
export function setContextReferences(db: DB, id: string, sessionId: string, referencesJson: string): number {
  return stmt(
    db,
    'UPDATE task_groups SET context_references = ?, updated_at = CURRENT_TIMESTAMP WHERE id = ? AND session_id = ?',
  ).run(referencesJson, id, sessionId).changes;
}
