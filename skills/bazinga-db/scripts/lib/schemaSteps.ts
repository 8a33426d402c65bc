/**
 * The steps of a writer's schema migration (migrate.ts ensureExtensions), each in a savepoint of
 * its own: a step SQLite or this layer refuses (a row another tool wrote that a step cannot
 * handle, a trigger that aborts, an object of the same name) is rolled back and listed, and the
 * open goes on without it. What the database itself cannot do (busy, read-only, full, corrupt, an
 * I/O error) is no step's failure: it fails the open, as before, so a read-only file still gets
 * its reader and a busy one its retry.
 */
import type { DB } from './statements.ts';

/** The row a failed step could not get past, when the step knows it: what to look at and fix. */
export interface FailedRow {
  table: string;
  rowid?: number;
  /** The row's key as its table names it (a pattern's project and hash, an item id). */
  key?: string;
}

/** One step that failed: its name (references/schema-steps.md lists them), SQLite's or the step's message, and the row when known. */
export interface StepFailure {
  step: string;
  error: string;
  row?: FailedRow;
}

/** An error of one row: the step that meets it says which row (table and rowid or key) to fix. SQLite's code, if any, is kept. */
export class RowFailure extends Error {
  readonly code: string | undefined;
  constructor(
    readonly row: FailedRow,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    const code = (cause as { code?: unknown } | null)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/** SQLite result codes that say the database cannot be written or read now, not that a step's content is refused. */
const ENVIRONMENT_CODES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_READONLY', 'SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_NOMEM', 'SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CANTOPEN', 'SQLITE_INTERRUPT', 'SQLITE_PERM', 'SQLITE_AUTH'];

/**
 * Whether `err` is a refusal of what a step does (a constraint, a trigger's RAISE, a statement
 * that does not fit the file's objects, a value this layer's code cannot read) rather than the
 * database being unavailable (ENVIRONMENT_CODES), which no step can go on without.
 */
export function isContentError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return true;
  return !ENVIRONMENT_CODES.some((c) => code === c || code.startsWith(`${c}_`));
}

/**
 * Runs `fn` as the step `name` in a savepoint of the caller's transaction: true when it
 * succeeded; false when it was refused (it is rolled back and added to `failures`). Errors of the
 * database itself are rethrown (isContentError).
 */
export function runStep(db: DB, failures: StepFailure[], name: string, fn: () => void): boolean {
  try {
    db.transaction(fn)();
    return true;
  } catch (err) {
    if (!isContentError(err)) throw err;
    failures.push(failureOf(name, err));
    return false;
  }
}

/**
 * Writes data this layer derives beside BAZINGA's rows (fault keys, token counts, sweeps of them)
 * as part of a command, in a savepoint: refused (a trigger, a row it cannot handle), it is left
 * unwritten and the command goes on; what reads it computes it again. Returns `fn`'s result, or
 * `otherwise` when it was refused. Errors of the database itself are rethrown.
 */
export function writeDerived<T>(db: DB, fn: () => T, otherwise: T): T {
  try {
    return db.transaction(fn)();
  } catch (err) {
    if (!isContentError(err)) throw err;
    return otherwise;
  }
}

/** The failure of step `name` from what it threw (a RowFailure names its row). */
export function failureOf(step: string, err: unknown): StepFailure {
  const error = firstLine(err instanceof Error ? err.message : String(err));
  return err instanceof RowFailure ? { step, error, row: err.row } : { step, error };
}

const firstLine = (text: string) => (text.split('\n')[0] ?? '').slice(0, 500);

/** A failed row as people read it: `error_patterns rowid 7 (acme/3f2a…)`. */
export function describeRow(row: FailedRow): string {
  const id = row.rowid !== undefined ? ` rowid ${row.rowid}` : '';
  return `${row.table}${id}${row.key !== undefined ? ` (${row.key})` : ''}`;
}

/** The open's one line about steps that failed. */
export function failureNotice(failures: readonly StepFailure[]): string {
  const first = failures[0] as StepFailure;
  const more = failures.length > 1 ? ` (and ${failures.length - 1} more)` : '';
  const row = first.row ? `; row to fix: ${describeRow(first.row)}` : '';
  return `⚠ schema step '${first.step}' failed: ${first.error}${row}${more}; the database is used without it (context-assembler doctor shows what to fix)`;
}
