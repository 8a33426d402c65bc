/**
 * Statements and waits for locks, per connection: the prepared-statement cache every repository
 * uses (`stmt`), the connection's wait for locks as one deadline (BusyBudget: SQLite's busy timeout
 * re-armed before each statement, retries within it), the write transaction, and the index hints a
 * reader's file lacks. No module here opens a database (db.ts does, and registers a connection's
 * budget and absent indexes here), so every repository can depend on this without a circle.
 */
import { monotonicMs } from './clock.ts';
import type Database from 'better-sqlite3';
import { isBusyError, toBazingaError } from './errors.ts';

export type DB = Database.Database;

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A connection's wait for locks, as a deadline: every statement's own wait (SQLite's busy timeout)
 * is set to what is left before it runs, and retries pause only within it, so the whole wait of a
 * command stays within its budget also when several statements each wait and then succeed. Time
 * spent holding a transaction's lock (a write's body, a reader's in-memory index) cannot be a wait
 * and moves the deadline back by as much.
 */
export interface BusyBudget {
  /** The longest one statement waits (the per-statement timeout). */
  waitMs: number;
  /** monotonicMs() by which every wait of this connection ends. */
  deadline: number;
  /** The busy timeout last given to SQLite, so the pragma is set only when it moved. */
  armedMs: number;
  /** Depth of holdingLock calls running: inside one nothing waits, so nothing is re-armed. */
  holding: number;
  backoffMs: readonly number[];
}

const busyBudgets = new WeakMap<DB, BusyBudget>();

/** Registers a connection's wait budget (db.ts, at the open). */
export function setBusyBudget(db: DB, budget: BusyBudget): void {
  busyBudgets.set(db, budget);
}

/** Below this much drift the armed timeout is left as it is (setting a pragma per statement costs more than it saves). */
const REARM_SLACK_MS = 20;

/**
 * SQLite's busy timeout for the next statement: never more than the per-statement wait or what the
 * deadline leaves (raised again once a held lock moved the deadline back). Left alone while a
 * lock is held.
 */
function armBusy(db: DB, budget: BusyBudget): number {
  const leftMs = Math.max(0, Math.floor(budget.deadline - monotonicMs()));
  if (budget.holding > 0) return leftMs;
  const want = Math.min(budget.waitMs, leftMs);
  if (Math.abs(want - budget.armedMs) > REARM_SLACK_MS || (want === 0 && budget.armedMs !== 0) || (want === budget.waitMs && budget.armedMs !== want)) {
    // PRAGMA takes no bound parameters: the value is an integer computed here, never input.
    db.pragma(`busy_timeout = ${want}`);
    budget.armedMs = want;
  }
  return leftMs;
}

/**
 * Runs `fn`, retrying with the connection's pauses while SQLite reports the database busy or
 * locked and the connection's deadline has not passed; each attempt waits at most what is left.
 * Errors are rethrown as they are (the last busy one too).
 */
export function retryBusy<T>(db: DB, fn: () => T): T {
  const budget = busyBudgets.get(db);
  for (let attempt = 0; ; attempt++) {
    if (budget) armBusy(db, budget);
    try {
      return fn();
    } catch (err) {
      if (!budget || !isBusyError(err)) throw err;
      const pause = budget.backoffMs[attempt];
      const leftMs = armBusy(db, budget);
      if (pause === undefined || leftMs <= 0) throw err;
      sleepSync(Math.min(pause, leftMs));
    }
  }
}

/**
 * Runs `fn`, which holds a transaction's lock throughout (so nothing in it waits), without
 * spending the connection's wait: the deadline moves back by its time, once for nested calls.
 */
export function holdingLock<T>(db: DB, fn: () => T): T {
  const budget = busyBudgets.get(db);
  if (!budget) return fn();
  const started = monotonicMs();
  budget.holding++;
  try {
    return fn();
  } finally {
    budget.holding--;
    if (budget.holding === 0) budget.deadline += monotonicMs() - started;
  }
}

/**
 * `fn` with busy retry within the connection's wait budget; a failure surfaces as a BazingaError
 * (busy: BUSY, "database is locked"). Reads are safe to retry whole.
 */
function withBusyRetry<T>(db: DB, fn: () => T): T {
  try {
    return retryBusy(db, fn);
  } catch (err) {
    throw toBazingaError(err);
  }
}

/**
 * Runs `fn` in one BEGIN IMMEDIATE transaction (the write lock taken up front), with busy retry.
 * On a reader only its in-memory objects can be written: anything else fails as read-only.
 */
export function writeTransaction<T>(db: DB, fn: () => T): T {
  return withBusyRetry(db, () => db.transaction(() => holdingLock(db, fn)).immediate());
}

const statementCache = new WeakMap<DB, Map<string, Database.Statement>>();

/** Whether the file holds table `name` (this layer's tables exist once a writer of their version opened it). */
export function hasTable(db: DB, name: string): boolean {
  return stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** Whether table `table` has column `column` (a database an older BAZINGA wrote may lack one it added later). */
export function hasColumn(db: DB, table: string, column: string): boolean {
  return stmt(db, 'SELECT 1 FROM pragma_table_info(?) WHERE name = ?').get(table, column) !== undefined;
}

/** The prepared statement for `sql` on this connection, prepared once and reused. */
export function stmt(db: DB, sql: string): Database.Statement {
  let cache = statementCache.get(db);
  if (!cache) {
    cache = new Map();
    statementCache.set(db, cache);
  }
  const budget = busyBudgets.get(db);
  if (budget) armBusy(db, budget);
  let s = cache.get(sql);
  if (!s) {
    s = db.prepare(withoutAbsentIndexHints(db, sql));
    cache.set(sql, s);
  }
  return s;
}

/** Per reader: this layer's indexes its database lacks (never opened by a writer of this product). */
const absentIndexes = new WeakMap<DB, ReadonlySet<string>>();

/** Registers the indexes a reader's file lacks (db.ts, at the open). */
export function setAbsentIndexes(db: DB, names: ReadonlySet<string>): void {
  absentIndexes.set(db, names);
}

/**
 * The statement without the `INDEXED BY` hints that name an index the reader's database lacks:
 * the same query, planned by SQLite from what is there (same rows, maybe slower).
 */
function withoutAbsentIndexHints(db: DB, sql: string): string {
  const absent = absentIndexes.get(db);
  if (!absent) return sql;
  return sql.replace(/\s+INDEXED BY (\w+)/g, (hint, name: string) => (absent.has(name) ? '' : hint));
}
