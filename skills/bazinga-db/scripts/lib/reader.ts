/** The read-only reader: the file opened read-only and never changed; what it lacks of this layer's derived objects worked around for that connection alone (in memory), and no -wal/-shm of its own left behind (a query_only keeper). Part of opening a database (db.ts). */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { BazingaError, toBazingaError } from './errors.ts';
import { CA_DDL, CA_OBJECTS, SEARCH_TABLES } from './schema.ts';
import { retryBusy, setAbsentIndexes, stmt, type DB } from './statements.ts';
import { connect, OpenOptions, firstWait, budgetBusy, writable } from './driver.ts';
import { tableNames, staleSearchTables, checkSchema } from './migrate.ts';

/** The caches a reader consults (token counts, texts found settled), made empty in memory where the file lacks them. */
const CACHE_TABLES: readonly string[] = ['ca_token_counts', 'ca_redaction_settled'];

/** This layer's tables a reader needs for relevance; absent (or of another definition), it gets its own in memory. */
export const SEARCH_OBJECTS: readonly string[] = ['ca_meta', ...SEARCH_TABLES, 'ca_term_df', 'ca_package_paths'];

/**
 * A reader: the existing file opened read-only, so nothing of it changes (no WAL switch, no `ca_*`
 * objects, no schema) and a read-only file, folder or mount can be read. A missing or empty file
 * is NOT_FOUND: a read never creates a database. What a database never opened by a writer of this
 * product lacks is worked around for this connection alone: hints naming absent `ca_idx_*`
 * indexes are left out of its statements (stmt), and the search index, the count cache and their
 * bookkeeping are made, when `opts.derived` asks, as empty TEMP tables (in memory, for this
 * connection; TEMP names are looked up first, so they stand in for the file's own when those are
 * absent or stale). Writing anything but those fails: the file is read-only.
 */
export function openReader(opts: OpenOptions, notice: (line: string) => void, openedAt: number): DB {
  let size: number | undefined;
  try {
    size = fs.statSync(opts.dbPath).size;
  } catch {
    size = undefined;
  }
  if (size === undefined) {
    throw new BazingaError('NOT_FOUND', `Database not found: ${opts.dbPath} (a read never creates one; create-session creates it)`);
  }
  if (size === 0) {
    throw new BazingaError('NOT_FOUND', `Database file is empty: ${opts.dbPath} (a read never initialises it; create-session does)`);
  }
  const open = (file: string): DB => {
    let db: DB | undefined;
    try {
      db = connect(file, { readonly: true, fileMustExist: true, timeout: firstWait(opts) });
      const conn = db;
      budgetBusy(conn, opts, openedAt);
      // The TEMP tables live in memory; the reader enforces no foreign keys (it changes no row).
      conn.pragma('temp_store = MEMORY');
      conn.pragma('foreign_keys = OFF');
      retryBusy(conn, () => {
        // No table at all: a database still being created (by a writer, right now) or never made.
        if (tableNames(conn).size === 0) {
          throw new BazingaError('NOT_FOUND', `Database has no tables yet: ${opts.dbPath} (a read never creates them; create-session does)`);
        }
        checkSchema(conn, opts.dbPath, notice);
      });
      retryBusy(conn, () => makeReaderObjects(conn, opts.derived));
      return conn;
    } catch (err) {
      db?.close();
      throw err;
    }
  };
  try {
    const keeper = sidecarKeeper(opts.dbPath);
    try {
      return withKeeper(open(opts.dbPath), keeper);
    } catch (err) {
      keeper?.close();
      throw err;
    }
  } catch (err) {
    if (!walUnreadableHere(err, opts.dbPath)) throw toBazingaError(err);
    try {
      // Nothing has it open (no -shm) and no write is outside the file (no -wal frames): the file
      // alone is the database, read as it is, without the shared-memory index it cannot create.
      return open(`${pathToFileURL(opts.dbPath).href}?immutable=1`);
    } catch (again) {
      throw toBazingaError(again);
    }
  }
}

/**
 * A reader leaves no file behind. A read-only connection to a WAL database creates the `-wal` and
 * `-shm` files SQLite needs beside it but, unlike a read-write one, never removes them. So where
 * this reader is the one creating them (a WAL database, no `-wal` or `-shm` yet) and the file and
 * folder are writable, a second connection is opened first, read-write with `query_only` on, and
 * read once (so it is the one making them); the reader closes it right after itself: the last read-write connection to close
 * removes both, as SQLite does for any writer. It changes no row, and no byte of the file when
 * nothing else wrote meanwhile (a checkpoint of an empty log writes nothing); when another process
 * wrote during the read and closed first, that close moves its committed writes from the log into
 * the file, as the next writer would have. A connection still open at the end (another process,
 * an overlapping read) keeps both files, by SQLite's own locks. A read-only file, folder or mount, or a rollback-journal database,
 * gets none (the reader alone leaves nothing there).
 */
export function sidecarKeeper(dbPath: string): DB | undefined {
  if (!isWalFile(dbPath) || fs.existsSync(`${dbPath}-wal`) || fs.existsSync(`${dbPath}-shm`) || !writable(dbPath)) return undefined;
  let keeper: DB | undefined;
  try {
    keeper = connect(dbPath, { fileMustExist: true, timeout: 0 });
    keeper.pragma('query_only = ON');
    keeper.prepare('SELECT count(*) FROM sqlite_master').get();
    return keeper;
  } catch {
    keeper?.close();
    return undefined; // the files stay, as they would without a keeper; the read goes on
  }
}

/** The reader, closing `keeper` (when there is one) right after itself. */
export function withKeeper(reader: DB, keeper: DB | undefined): DB {
  if (!keeper) return reader;
  const closeReader = reader.close.bind(reader);
  reader.close = () => {
    try {
      closeReader();
    } finally {
      keeper.close();
    }
    return reader;
  };
  return reader;
}

/** Whether the file's header says WAL (its read and write versions are 2). */
export function isWalFile(dbPath: string): boolean {
  const header = Buffer.alloc(20);
  let fd: number | undefined;
  try {
    fd = fs.openSync(dbPath, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    return fs.readSync(fd, header, 0, 20, 0) === 20 && header[18] === 2 && header[19] === 2;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * A WAL database in a folder this process cannot write, that no process has open: SQLite cannot
 * create the shared-memory file a reader of a WAL database needs (a read-only mount, typically).
 */
export function walUnreadableHere(err: unknown, dbPath: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'SQLITE_READONLY_DIRECTORY' && code !== 'SQLITE_READONLY_CANTINIT' && code !== 'SQLITE_CANTOPEN') return false;
  const size = (file: string) => {
    try {
      return fs.statSync(file).size;
    } catch {
      return undefined;
    }
  };
  const wal = size(`${dbPath}-wal`);
  return size(`${dbPath}-shm`) === undefined && (wal === undefined || wal === 0);
}

/** What the reader's database lacks of this layer's objects, made for this connection (see openReader). */
export function makeReaderObjects(db: DB, derived: OpenOptions['derived']): void {
  const present = new Set(
    (stmt(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string }[]).map((r) => r.name),
  );
  const absent = CA_OBJECTS.filter((name) => name.startsWith('ca_idx_') && !present.has(name));
  if (absent.length > 0) setAbsentIndexes(db, new Set(absent));
  if (!derived) return;
  // An index a writer made is used as that writer left it, also when rows were written since (by
  // the original tool, between two recording assemblies): a reader cannot bring it up to date, and
  // building one in memory cost seconds on every dry run or step. Those rows, and every row of a
  // database no writer of this product indexed (or one of another index definition, whose tables
  // are stood in for by empty ones here), rank without relevance, and the assembler says so; the
  // index is built by `bazinga-db index-search` (started in the background by the plugin's hook
  // and by install-skills) or a recording assembly.
  const searchUsable = SEARCH_OBJECTS.every((name) => present.has(name)) && staleSearchTables(db).length === 0;
  const temp: string[] = [];
  for (const ddl of CA_DDL) {
    const name = /^CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)/.exec(ddl)?.[1];
    if (name === undefined) continue; // an index on the original's tables: TEMP cannot hold one
    if (CACHE_TABLES.includes(name) ? present.has(name) : searchUsable || !SEARCH_OBJECTS.includes(name)) continue;
    temp.push(ddl.replace(/^CREATE TABLE IF NOT EXISTS /, 'CREATE TEMP TABLE IF NOT EXISTS ').replace(/^CREATE VIRTUAL TABLE IF NOT EXISTS /, 'CREATE VIRTUAL TABLE IF NOT EXISTS temp.'));
  }
  for (const ddl of temp) db.exec(ddl);
}
