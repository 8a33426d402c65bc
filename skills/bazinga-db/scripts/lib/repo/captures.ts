/**
 * What the capture (capture.ts) reads of a group's retries and what it writes: the failure texts
 * of a group (its failures packages, and the review feedback its retry spawns were given, as the
 * assembly record keeps it), what the fixing agents wrote (their completion or decisions reasoning,
 * their handoff packages), how the group ended, and the ledger `ca_captures` (schema.ts CAPTURE_DDL).
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import { RowFailure } from '../schemaSteps.ts';
import { reviewPassed } from './taskGroups.ts';
import { PRIORITIES } from '../enums.ts';
import type { ProjectScope } from './sessions.ts';

/** A text that says the group's work failed review. */
export interface FailureRow {
  /** `package:<id>` (a failures package) or `assembly:<id>` (a spawn given review feedback). */
  ref: string;
  at: string;
  /** The iteration that failed, when the source says (a retry spawn's iteration less one). */
  iteration: number | null;
  text: string;
  file_path: string | null;
}

/**
 * A text the fixing agent wrote: its reasoning (any phase: the work between two failures) or a
 * handoff package. The solution of a failure is one of kind completion, decisions or handoff.
 */
export interface FixRow {
  /** `reasoning:<id>` or `package:<id>`. */
  ref: string;
  at: string;
  /** The reasoning phase, or 'handoff'. */
  kind: string;
  text: string;
}

/** Agents whose work a review passes or fails: what they write after a failure is its fix. */
export const FIXING_AGENTS = ['developer', 'senior_software_engineer'] as const;

/** A group's records read per feedback text wanted (its spawns between two reviews: developer, QA, tech lead, and their repeats). */
const RECORDS_PER_FEEDBACK = 25;

/** The most failure texts (and fixes) of each source read for one group at a session's end: a group's retries are few. */
export const GROUP_ROWS_MAX = 200;

export function hasCaptureLedger(db: DB): boolean {
  return hasTable(db, 'ca_captures');
}

/**
 * The newest `limit` packages of a type in a group (not superseded), newest first: one read per
 * priority, each through the group's bucket index, so a group with many packages costs `limit` rows.
 */
function newestOfType(db: DB, sessionId: string, groupId: string, type: string, limit: number): { id: number; created_at: string; summary: string; file_path: string; producer_agent: string }[] {
  const bucket = `SELECT * FROM (SELECT id, created_at, summary, file_path, producer_agent FROM context_packages
     WHERE session_id = @sessionId AND group_id = @groupId AND priority = ? AND package_type = @type AND supersedes_id IS NULL
     ORDER BY created_at DESC, id DESC LIMIT @limit)`;
  return stmt(db, `SELECT * FROM (${PRIORITIES.map(() => bucket).join(' UNION ALL ')}) ORDER BY created_at DESC, id DESC LIMIT @limit`).all(
    ...PRIORITIES,
    { sessionId, groupId, type, limit },
  ) as { id: number; created_at: string; summary: string; file_path: string; producer_agent: string }[];
}

/** A group's newest `limit` failures packages and newest `limit` spawns given review feedback (the failure texts). */
export function groupFailures(db: DB, sessionId: string, groupId: string, withRecord: boolean, limit = GROUP_ROWS_MAX): FailureRow[] {
  const packages = newestOfType(db, sessionId, groupId, 'failures', limit).map(
    (p): FailureRow => ({ ref: `package:${p.id}`, at: p.created_at, iteration: null, text: p.summary, file_path: p.file_path }),
  );
  if (!withRecord) return packages;
  // Among the group's newest records only (a retry's feedback is on the records of its own spawns):
  // the details of a long session are not all parsed.
  const feedback = stmt(
    db,
    `SELECT 'assembly:' || id AS ref, created_at AS at, iteration - 1 AS iteration, json_extract(detail, '$.error') AS text, NULL AS file_path
     FROM (SELECT id, created_at, iteration, detail FROM ca_assemblies WHERE session_id = ? AND group_id = ? ORDER BY id DESC LIMIT ?)
     WHERE json_valid(detail) AND json_type(detail, '$.error') = 'text'
     ORDER BY id DESC LIMIT ?`,
  ).all(sessionId, groupId, limit * RECORDS_PER_FEEDBACK, limit) as FailureRow[];
  return [...packages, ...feedback];
}

/**
 * What the fixing agents of a group wrote since `since` (SQLite time; null: all): their reasoning
 * entries of any phase and their handoff packages, at most `limit` of each agent and of the handoffs
 * (the newest).
 */
export function groupFixes(db: DB, sessionId: string, groupId: string, since: string | null, limit = GROUP_ROWS_MAX): FixRow[] {
  const newest = stmt(
    db,
    `SELECT 'reasoning:' || id AS ref, timestamp AS at, COALESCE(reasoning_phase, 'unknown') AS kind, content AS text
     FROM orchestration_logs
     WHERE session_id = @sessionId AND group_id = @groupId AND agent_type = @agent AND log_type = 'reasoning' AND (@since IS NULL OR timestamp >= @since)
     ORDER BY timestamp DESC, id DESC LIMIT @limit`,
  );
  const reasoning = FIXING_AGENTS.flatMap((agent) => newest.all({ sessionId, groupId, agent, since, limit }) as FixRow[]);
  const fixers = new Set<string>(FIXING_AGENTS);
  const handoffs = newestOfType(db, sessionId, groupId, 'handoff', limit)
    .filter((p) => fixers.has(p.producer_agent) && (since === null || p.created_at >= since))
    .map((p): FixRow => ({ ref: `package:${p.id}`, at: p.created_at, kind: 'handoff', text: p.summary }));
  return [...reasoning, ...handoffs];
}

/** The groups of a session with a failure text (a failures package, or feedback on record). */
export function groupsWithFailures(db: DB, sessionId: string, withRecord: boolean): string[] {
  const rows = stmt(
    db,
    `SELECT DISTINCT group_id AS g FROM context_packages WHERE session_id = ? AND package_type = 'failures' AND group_id IS NOT NULL
     ${withRecord ? "UNION SELECT DISTINCT group_id FROM ca_assemblies WHERE session_id = ? AND group_id IS NOT NULL AND json_valid(detail) AND json_type(detail, '$.error') = 'text'" : ''}`,
  ).all(...(withRecord ? [sessionId, sessionId] : [sessionId])) as { g: string }[];
  return rows.map((r) => r.g).sort();
}

/** Whether a group's review passed (reviewPassed). */
export function groupPassed(db: DB, sessionId: string, groupId: string): boolean {
  return stmt(db, `SELECT 1 FROM task_groups WHERE session_id = ? AND id = ? AND ${reviewPassed()}`).get(sessionId, groupId) !== undefined;
}

/** The session's groups that passed review, by id. */
export function passedGroups(db: DB, sessionId: string): string[] {
  const rows = stmt(
    db,
    `SELECT id FROM task_groups WHERE session_id = ? AND ${reviewPassed()} ORDER BY id`,
  ).all(sessionId) as { id: string }[];
  return rows.map((r) => r.id);
}

export interface CaptureEntry {
  project_id: string;
  session_id: string;
  group_id: string;
  failure_ref: string;
  fail_iteration: number | null;
  outcome: 'passed' | 'failed';
  /** The fault key of the pattern it created or moved (ca_pattern_faults): it keeps naming the pattern whichever row of the fault stands for it. */
  fault_hash: string;
  operation: 'created' | 'raised' | 'lowered' | 'no-solution' | 'unknown-failed';
  solution_ref: string | null;
  created_at: string;
  /** Every failure text the decision covered (JSON array; failure_ref is the first). */
  refs: string;
}

/** The failure texts of a group already decided (every text of each decided failure). */
export function decidedFailures(db: DB, sessionId: string, groupId: string): Set<string> {
  const rows = stmt(db, 'SELECT failure_ref, refs FROM ca_captures WHERE session_id = ? AND group_id = ?').all(sessionId, groupId) as { failure_ref: string; refs: string }[];
  const out = new Set<string>();
  for (const r of rows) {
    out.add(r.failure_ref);
    try {
      for (const ref of JSON.parse(r.refs) as unknown[]) if (typeof ref === 'string') out.add(ref);
    } catch {
      // the first text alone
    }
  }
  return out;
}

/** Records a decided failure; false when it was decided already (another run got there first). */
export function insertCapture(db: DB, e: CaptureEntry): boolean {
  return (
    stmt(
      db,
      `INSERT OR IGNORE INTO ca_captures (project_id, session_id, group_id, failure_ref, refs, fail_iteration, outcome, fault_hash, operation, solution_ref, created_at)
       VALUES (@project_id, @session_id, @group_id, @failure_ref, @refs, @fail_iteration, @outcome, @fault_hash, @operation, @solution_ref, @created_at)`,
    ).run(e).changes === 1
  );
}

export type CaptureRow = CaptureEntry & { id: number };

/** A session's ledger in the order it was written. */
export function listCaptures(db: DB, sessionId: string): CaptureRow[] {
  return stmt(db, 'SELECT * FROM ca_captures WHERE session_id = ? ORDER BY id').all(sessionId) as CaptureRow[];
}

/** Where a fault's captures came from (newest first), for a pattern's provenance: by its fault key. */
export function capturesOfFault(db: DB, projectId: string, faultHash: string, limit: number): CaptureRow[] {
  return stmt(db, 'SELECT * FROM ca_captures WHERE project_id = ? AND fault_hash = ? ORDER BY id DESC LIMIT ?').all(projectId, faultHash, limit) as CaptureRow[];
}

/**
 * What the ledger saw of each given fault's fix: created by the capture (from a retry that passed
 * with it), retries that passed with it (created or raised) and failed with it (lowered).
 */
export function fixTallies(db: DB, scope: ProjectScope, faultHashes: readonly string[]): Map<string, { created: boolean; passed: number; failed: number }> {
  if (faultHashes.length === 0 || !hasTable(db, 'ca_captures')) return new Map();
  const rows = stmt(
    db,
    `SELECT fault_hash, MAX(operation = 'created') AS created, SUM(operation IN ('created', 'raised')) AS passed, SUM(operation = 'lowered') AS failed
     FROM ca_captures WHERE fault_hash IN (SELECT value FROM json_each(@faults)) AND (@whole = 1 OR project_id = @projectId) GROUP BY fault_hash`,
  ).all({ faults: JSON.stringify(faultHashes), whole: scope.wholeDatabase ? 1 : 0, projectId: scope.projectId }) as { fault_hash: string; created: number; passed: number; failed: number }[];
  return new Map(rows.map((r) => [r.fault_hash, { created: r.created === 1, passed: r.passed, failed: r.failed }]));
}

/**
 * A ledger an earlier build wrote names its patterns by a re-keyed hash in a column pattern_hash:
 * the column is named for what it holds now (fault_hash). In the caller's write transaction.
 */
export function renameCaptureColumn(db: DB): void {
  if (!hasCaptureLedger(db)) return;
  const columns = new Set((stmt(db, "SELECT name FROM pragma_table_info('ca_captures')").all() as { name: string }[]).map((c) => c.name));
  if (columns.has('pattern_hash') && !columns.has('fault_hash')) db.exec('ALTER TABLE ca_captures RENAME COLUMN pattern_hash TO fault_hash');
}

/**
 * Gives each ledger row the fault key of the pattern it names (`map`: old value → fault key;
 * others stay). A row SQLite refuses to change fails with its id (RowFailure). In the caller's
 * write transaction, after renameCaptureColumn.
 */
export function rekeyCaptureLedger(db: DB, map: ReadonlyMap<string, string>): void {
  if (!hasCaptureLedger(db) || map.size === 0) return;
  const rows = stmt(db, 'SELECT id, fault_hash FROM ca_captures ORDER BY id').all() as { id: number; fault_hash: string }[];
  const set = stmt(db, 'UPDATE ca_captures SET fault_hash = ? WHERE id = ?');
  for (const r of rows) {
    const to = map.get(r.fault_hash);
    if (to === undefined || to === r.fault_hash) continue;
    try {
      set.run(to, r.id);
    } catch (err) {
      throw new RowFailure({ table: 'ca_captures', rowid: r.id }, err);
    }
  }
}
