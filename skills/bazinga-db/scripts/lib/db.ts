/**
 * Opening a BAZINGA database. A writer: one read-write connection per process, WAL, foreign keys,
 * synchronous NORMAL, a busy timeout, and a bounded retry with backoff around anything SQLite
 * refuses as busy; a missing or empty file gets the complete v19 schema in one transaction, an
 * existing file is checked (no integrity check on this path: it costs hundreds of milliseconds)
 * and only ever gains `ca_*` objects, each change a schema step that may fail without failing the
 * open (migrate.ts: tried once per process, recorded for doctor). A reader (`readOnly`): the file opened read-only, never
 * created, switched or extended; what it lacks of this layer's derived objects is worked around
 * for that connection only (see openReader), and leaves no `-wal`/`-shm` it made. The busy timeout
 * is the whole wait of a connection, retries included, as a deadline (see BusyBudget).
 */
import { monotonicMs } from './clock.ts';
import fs from 'node:fs';
import path from 'node:path';
import { BazingaError, toBazingaError } from './errors.ts';
import { SCHEMA_VERSION } from './schema.ts';
import { retryBusy, type DB } from './statements.ts';
import { connect, DEFAULT_BUSY_TIMEOUT_MS, OpenOptions, firstWait, budgetBusy, writable } from './driver.ts';
import { tableNames, createV19Schema, ensureExtensions, extensionsCurrent, checkSchema } from './migrate.ts';
import { makeReaderObjects, openReader } from './reader.ts';
import { indexerRunning } from './indexLock.ts';

export type { DB } from './statements.ts';
export { stmt, writeTransaction } from './statements.ts';
export { DEFAULT_BUSY_TIMEOUT_MS, nativeBindingError, useDriver, type OpenOptions } from './driver.ts';
export { inspectSchema } from './migrate.ts';

/**
 * Opens (creating when missing or empty) the database at `dbPath`, applies the connection
 * pragmas, checks the schema, and adds the `ca_*` extension objects when absent. With `readOnly`
 * it opens a reader instead (openReader); with `onReadOnly`, a file or folder that cannot be
 * written gives a reader too.
 */
export function openDatabase(opts: OpenOptions): DB {
  const notice = opts.notice ?? (() => {});
  const openedAt = monotonicMs();
  if (opts.readOnly) return openReader(opts, notice, openedAt);
  let size: number | undefined;
  try {
    size = fs.statSync(opts.dbPath).size;
  } catch {
    size = undefined;
  }
  const fresh = size === undefined || size === 0;
  if (fresh && opts.create === false) throw new BazingaError('DB_ERROR', `Database not found: ${opts.dbPath}`);
  if (!fresh && opts.onReadOnly && !writable(opts.dbPath)) {
    opts.onReadOnly();
    return openReader(opts, notice, openedAt);
  }
  let db: DB | undefined;
  try {
    if (fresh) fs.mkdirSync(path.dirname(opts.dbPath), { recursive: true });
    db = connect(opts.dbPath, { timeout: firstWait(opts) });
    const conn = db;
    budgetBusy(conn, opts, openedAt);
    retryBusy(conn, () => {
      conn.pragma('foreign_keys = ON');
      conn.pragma('synchronous = NORMAL');
    });
    const toWal = () => retryBusy(conn, () => conn.pragma('journal_mode = WAL'));
    const created = `✓ Created BAZINGA database (schema v${SCHEMA_VERSION}) at ${opts.dbPath}`;
    // A file with no tables at all is one being created (possibly by another process right now).
    if (fresh || retryBusy(conn, () => tableNames(conn).size === 0)) {
      if (opts.holdFresh) {
        // The schema and the caller's work in one transaction (settleFresh ends it).
        retryBusy(conn, () => conn.exec('BEGIN IMMEDIATE'));
        held.set(conn, { created: createV19Schema(conn) ? created : undefined, notice });
      } else {
        toWal();
        if (createV19Schema(conn)) notice(created);
      }
    }
    // Checked before anything persistent changes: a file that is refused is left as it was.
    retryBusy(conn, () => checkSchema(conn, opts.dbPath, notice));
    if (!held.has(conn)) toWal();
    // Checked once here (ensureExtensions checks again only when they are missing).
    if (!retryBusy(conn, () => extensionsCurrent(conn))) {
      if (opts.derived && indexerRunning(opts.dbPath) !== undefined) {
        // The background indexer is making them (on a large database, seconds of index builds): this
        // connection works around their absence as a reader does, instead of waiting to make them itself.
        retryBusy(conn, () => makeReaderObjects(conn, true));
      } else if (failedHere(opts.dbPath)) {
        // A step failed at an earlier open in this process: not tried again until the next process.
        retryBusy(conn, () => makeReaderObjects(conn, opts.derived));
      } else if (ensureExtensions(conn, opts.betweenSchemaSteps, opts.onMigrated ?? notice).length > 0) {
        // What a failed step left absent is worked around for this connection, as a reader does.
        rememberFailed(opts.dbPath);
        retryBusy(conn, () => makeReaderObjects(conn, opts.derived));
      }
    }
    return conn;
  } catch (err) {
    db?.close();
    if (!fresh && opts.onReadOnly && isReadOnlyError(err)) {
      opts.onReadOnly();
      return openReader(opts, notice, openedAt);
    }
    throw toBazingaError(err);
  }
}

/**
 * The files (by real path, device and inode) whose schema steps failed at an open in this process:
 * each is tried once per process, so a warm server or a run of many opens does not pay for (or
 * say) the same failure again; the next process tries again (and records the outcome for doctor).
 */
const failedFiles = new Set<string>();

function fileIdentity(dbPath: string): string | undefined {
  try {
    const real = fs.realpathSync(dbPath);
    const st = fs.statSync(real);
    return `${st.dev}:${st.ino}:${real}`;
  } catch {
    return undefined;
  }
}

function failedHere(dbPath: string): boolean {
  const id = fileIdentity(dbPath);
  return id !== undefined && failedFiles.has(id);
}

function rememberFailed(dbPath: string): void {
  const id = fileIdentity(dbPath);
  if (id !== undefined) failedFiles.add(id);
}

/** Connections whose schema was made in a transaction still open (holdFresh), and the notice it earns. */
const held = new WeakMap<DB, { created: string | undefined; notice: (line: string) => void }>();

/**
 * Ends the transaction a holdFresh open left open: committed when the caller's work succeeded
 * (then the file switches to WAL and the creation is announced), else rolled back, which leaves
 * the file as it was before the open (an empty file empty, SQLite's rollback journal restoring
 * it). A connection without one is left alone.
 */
export function settleFresh(db: DB, succeeded: boolean): void {
  const pending = held.get(db);
  if (pending === undefined) return;
  held.delete(db);
  if (!db.inTransaction) return;
  if (!succeeded) {
    db.exec('ROLLBACK');
    return;
  }
  retryBusy(db, () => db.exec('COMMIT'));
  // Committed: the command succeeded. A file another connection holds open cannot switch now; the
  // next writer's open switches it (every open does), so that is no failure of this command.
  try {
    retryBusy(db, () => db.pragma('journal_mode = WAL'));
  } catch {
    // left in the rollback journal until the next open
  }
  if (pending.created) pending.notice(pending.created);
}

/** SQLite (or the file system) refusing a write because the file, its folder or the mount is read-only. */
function isReadOnlyError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  return (
    code.startsWith('SQLITE_READONLY') || code === 'EACCES' || code === 'EROFS' || code === 'EPERM' ||
    (typeof e?.message === 'string' && e.message.includes('attempt to write a readonly database'))
  );
}

/**
 * A second, read-only connection for ad-hoc queries: nothing can be written through it
 * (`readonly` at open and `query_only` on).
 */
export function openReadOnly(dbPath: string, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS): DB {
  try {
    const db = connect(dbPath, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    db.pragma('query_only = ON');
    return db;
  } catch (err) {
    throw toBazingaError(err);
  }
}
