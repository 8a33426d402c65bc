/**
 * Repository: the schema steps that failed at a writer's last open (`schema.failed` in ca_meta),
 * so that doctor, in another process, can say which step, why, and the row to fix. Written in the
 * open's own transaction when a step failed (with how many opens in a row have failed), removed
 * when every step succeeded.
 */
import type { StepFailure } from '../schemaSteps.ts';
import { hasTable, stmt, type DB } from '../statements.ts';
import { getMeta, setMeta } from './meta.ts';

const KEY = 'schema.failed';

/** What the last writer's open recorded: the version it migrated to, its failures, how many opens failed in a row, and when. */
export interface RecordedFailures {
  version: number;
  failures: StepFailure[];
  attempts: number;
  /** ca_meta's updated_at of the record (UTC, SQLite's datetime('now')). */
  at: string;
}

/** The recorded failures, or undefined when none are (or the record is not one this layer wrote). A read. */
export function findSchemaFailures(db: DB): RecordedFailures | undefined {
  if (!hasTable(db, 'ca_meta')) return undefined;
  const row = stmt(db, 'SELECT value, updated_at FROM ca_meta WHERE key = ?').get(KEY) as { value: unknown; updated_at: unknown } | undefined;
  if (row === undefined || typeof row.value !== 'string') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(row.value);
  } catch {
    return undefined;
  }
  const d = doc as Partial<RecordedFailures> | null;
  if (d === null || typeof d !== 'object' || !Array.isArray(d.failures) || d.failures.length === 0) return undefined;
  return {
    version: Number(d.version) || 0,
    failures: d.failures.filter((f): f is StepFailure => typeof f?.step === 'string' && typeof f.error === 'string'),
    attempts: Number(d.attempts) || 1,
    at: typeof row.updated_at === 'string' ? row.updated_at : '',
  };
}

/** Records this open's failures (one more failed open). In the caller's write transaction. */
export function recordSchemaFailures(db: DB, version: number, failures: readonly StepFailure[]): void {
  const attempts = (findSchemaFailures(db)?.attempts ?? 0) + 1;
  setMeta(db, KEY, JSON.stringify({ version, failures, attempts }));
}

/** Removes the record (every step succeeded). In the caller's write transaction. */
export function clearSchemaFailures(db: DB): void {
  if (getMeta(db, KEY) !== undefined) stmt(db, 'DELETE FROM ca_meta WHERE key = ?').run(KEY);
}
