/**
 * Opening a BAZINGA database. A writer: one read-write connection per process, WAL, foreign keys,
 * synchronous NORMAL, a busy timeout, and a bounded retry with backoff around anything SQLite
 * refuses as busy; a missing or empty file gets the complete v19 schema in one transaction, an
 * existing file is checked (no integrity check on this path: it costs hundreds of milliseconds)
 * and only ever gains `ca_*` objects. A reader (`readOnly`): the file opened read-only, never
 * created, switched or extended; what it lacks of this layer's derived objects is worked around
 * for that connection only (see openReader), and leaves no `-wal`/`-shm` it made. The busy timeout
 * is the whole wait of a connection, retries included, as a deadline (see BusyBudget).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';
import { BazingaError, isBusyError, toBazingaError } from './errors.ts';
import { resetSearchIndex, searchIndexBehind, syncSearchIndex, type IndexOptions } from './repo/searchIndex.ts';
import {
  CA_DDL,
  CA_OBJECTS,
  CA_SCHEMA_VERSION,
  CORE_TABLES,
  MEMORY_ADDED_COLUMNS,
  SCHEMA_VERSION,
  SCHEMA_VERSION_DESCRIPTION,
  SEARCH_TABLES,
  V19_DDL,
  searchDdl,
} from './schema.ts';
import { SEARCH_TOKENIZER } from './searchText.ts';

export type { DB } from './statements.ts';
import { holdingLock, retryBusy, setAbsentIndexes, setBusyBudget, stmt, writeTransaction, type DB } from './statements.ts';
export { stmt, writeTransaction } from './statements.ts';

/**
 * The driver, loaded when the first database is opened, so this library (its errors, redaction,
 * paths) can be imported where better-sqlite3 is missing: doctor reports that instead of failing
 * to start. The scripts that open a database import better-sqlite3 up front (cli.ts, shell.ts), so
 * a missing package still stops them at load, where the launcher names the fix.
 */
let driver: { Database: typeof Database; options: Database.Options; packageDir: string } | undefined;
function loadDriver(): { Database: typeof Database; options: Database.Options; packageDir: string } {
  if (driver) return driver;
  const require = createRequire(import.meta.url);
  const Driver = require('better-sqlite3') as typeof Database;
  const packageDir = path.resolve(path.dirname(require.resolve('better-sqlite3')), '..');
  // The addon's path given directly skips the `bindings` package's search of the file system on
  // every open (about 1.4 ms of a start, measured); an unusual build keeps the default lookup.
  const addon = path.join(packageDir, 'build', 'Release', 'better_sqlite3.node');
  driver = { Database: Driver, options: fs.existsSync(addon) ? { nativeBinding: addon } : {}, packageDir };
  return driver;
}

/** Whether the addon has read SQLITE_USE_URI (it does once, when the first connection is made). */
let uriConfigured = false;

/** A connection through the loaded driver; a native part that is not built, or built for another Node, is DEPENDENCY. */
function connect(dbPath: string, options: Database.Options): DB {
  const { Database: Driver, options: base, packageDir } = loadDriver();
  // URI file names ("file:…"): only openReader uses one, to read a WAL database on a read-only
  // mount; this layer's own paths are absolute, never "file:…". The addon reads the variable once,
  // at the first connection: it is set for that moment only, whatever the environment held, and
  // put back, so child processes and later code see the environment as it was.
  const previous = process.env.SQLITE_USE_URI;
  if (!uriConfigured) process.env.SQLITE_USE_URI = '1';
  try {
    return new Driver(dbPath, { ...base, ...options });
  } catch (err) {
    throw nativeBindingError(err, packageDir) ?? err;
  } finally {
    if (!uriConfigured) {
      uriConfigured = true;
      if (previous === undefined) delete process.env.SQLITE_USE_URI;
      else process.env.SQLITE_USE_URI = previous;
    }
  }
}

/**
 * The one-line DEPENDENCY error for a better-sqlite3 whose native part cannot load, with the
 * command that fixes it; undefined for any other error (a SQLite one). Claude Code installs a
 * plugin with `npm ci --ignore-scripts`: the package is there, its addon never compiled.
 */
export function nativeBindingError(err: unknown, packageDir: string): BazingaError | undefined {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const root = path.basename(path.dirname(packageDir)) === 'node_modules' ? path.dirname(path.dirname(packageDir)) : packageDir;
  // The plugin has a SessionStart hook that does it; a project's .claude/skills (install-skills) has none.
  const hook = fs.existsSync(path.join(root, 'hooks', 'bootstrap.mjs')) ? ", or start a new Claude Code session: the plugin's SessionStart hook does it" : '';
  const fix = `cd "${root}" && npm rebuild better-sqlite3 (it compiles, 1-3 minutes)${hook}`;
  if (/Could not locate the bindings file/.test(message) || (code === 'MODULE_NOT_FOUND' && /better_sqlite3\.node/.test(message))) {
    return new BazingaError('DEPENDENCY', `better-sqlite3's native part is not built (an install that skipped install scripts); fix: ${fix}`);
  }
  const abi = /NODE_MODULE_VERSION (\d+)[\s\S]*?NODE_MODULE_VERSION (\d+)/.exec(message);
  if (abi) {
    return new BazingaError(
      'DEPENDENCY',
      `better-sqlite3 was built for another Node.js (module version ${abi[1]}; this is Node ${process.version}, module version ${abi[2]}); fix: ${fix}`,
    );
  }
  if (code === 'ERR_DLOPEN_FAILED' || /invalid ELF header|wrong ELF class|cannot open shared object file|not a valid Win32 application/.test(message)) {
    return new BazingaError('DEPENDENCY', `better-sqlite3's native part does not load (${message.split('\n')[0]}); fix: ${fix}`);
  }
  return undefined;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/** Pauses between attempts when SQLite reports busy, while the connection's wait budget lasts. */
const DEFAULT_RETRY_BACKOFF_MS: readonly number[] = [100, 250, 500];

export interface OpenOptions {
  dbPath: string;
  /** The longest one statement waits for a lock (SQLite's busy timeout); default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * The whole wait of this connection for locks, as a deadline from the open: every statement's
   * wait, retries and pauses included, time holding a transaction's lock excluded (default
   * `busyTimeoutMs`). Passed, the next busy answer is BUSY at once.
   */
  busyBudgetMs?: number;
  /** Called with informational lines (`✓ …`, `⚠ …`); the CLI silences it under --quiet. */
  notice?: (line: string) => void;
  /** Create the database when the file is missing or empty (default true). When false, a missing file is DB_ERROR. */
  create?: boolean;
  /** Pauses between busy retries of this connection (default 100, 250, 500 ms), within its budget. */
  retryBackoffMs?: readonly number[];
  /**
   * Open for reading only: the file must exist and hold a database (else NOT_FOUND naming the path
   * and create-session); nothing is created, switched to WAL or extended.
   */
  readOnly?: boolean;
  /**
   * A reader that uses this layer's derived tables (the assembler: search index, count cache) gets
   * those its file lacks in memory, for this connection alone; with `searchIndex`, the index is
   * filled with these options (relevance ranks as a writer's would), else it starts empty. Without
   * `derived` (bazinga-db's reads) a reader sees the file's own tables only.
   */
  derived?: { searchIndex?: IndexOptions };
  /**
   * A writer whose file or folder cannot be written (a read-only file, folder or mount) opens as a
   * reader instead and calls this, rather than failing. Without it such a writer fails as before.
   */
  onReadOnly?: () => void;
}

function tableNames(db: DB): Set<string> {
  const rows = stmt(db, "SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

function currentSchemaVersion(db: DB, tables: Set<string>): number {
  if (!tables.has('schema_version')) return 0;
  const row = stmt(db, 'SELECT version FROM schema_version ORDER BY version DESC LIMIT 1').get() as
    | { version: number }
    | undefined;
  return row ? Number(row.version) : 0;
}

function createV19Schema(db: DB): boolean {
  return writeTransaction(db, () => {
    // Another process may have created it while we waited for the write lock.
    if (tableNames(db).has('sessions')) return false;
    for (const ddl of V19_DDL) db.exec(ddl);
    db.prepare('INSERT INTO schema_version (version, description) VALUES (?, ?)').run(
      SCHEMA_VERSION,
      SCHEMA_VERSION_DESCRIPTION,
    );
    return true;
  });
}

function ensureExtensions(db: DB): void {
  // Fast path: this version's objects are all there (the original's migrations may drop indexes).
  const present = db
    .prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN (${CA_OBJECTS.map(() => '?').join(', ')})`)
    .get(...CA_OBJECTS) as { n: number };
  const version =
    present.n === CA_OBJECTS.length
      ? (db.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").get() as { value: string } | undefined)
      : undefined;
  // A file a later release extended (a higher ca_schema) is left as it is when this release's objects are there.
  if (present.n === CA_OBJECTS.length && Number(version?.value) >= CA_SCHEMA_VERSION) return;
  writeTransaction(db, () => {
    // A search table made with another definition (an older tokenizer) is made again; one that has
    // to be (re)created starts empty, so the whole index and its watermarks start over.
    const stale = staleSearchTables(db);
    for (const t of stale) db.exec(`DROP TABLE IF EXISTS ${t}`);
    const searchObjects = [...SEARCH_TABLES, 'ca_term_df', 'ca_package_paths', 'ca_meta'];
    const searchTables = db
      .prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name IN (${searchObjects.map(() => '?').join(', ')})`)
      .get(...searchObjects) as { n: number };
    for (const ddl of CA_DDL) db.exec(ddl);
    // ca_memories made by an earlier definition gains the columns it lacks (this layer's own table).
    const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('ca_memories')").all() as { name: string }[]).map((c) => c.name));
    for (const [name, definition] of MEMORY_ADDED_COLUMNS) {
      if (!columns.has(name)) db.exec(`ALTER TABLE ca_memories ADD COLUMN ${name} ${definition}`);
    }
    if (searchTables.n < searchObjects.length) resetSearchIndex(db);
    db.prepare(
      `INSERT INTO ca_meta (key, value) VALUES ('ca_schema', ?) ON CONFLICT(key) DO UPDATE
       SET value = MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)), updated_at = datetime('now')`,
    ).run(String(CA_SCHEMA_VERSION));
  });
}

/** The search tables whose stored definition differs from this version's. */
function staleSearchTables(db: DB): string[] {
  const expected = new Map(searchDdl(SEARCH_TOKENIZER).map((ddl) => [/EXISTS (\S+)/.exec(ddl)?.[1] ?? '', ddl.replace(' IF NOT EXISTS', '')]));
  const rows = db.prepare(`SELECT name, sql FROM sqlite_master WHERE name IN (${SEARCH_TABLES.map(() => '?').join(', ')})`).all(...SEARCH_TABLES) as {
    name: string;
    sql: string;
  }[];
  return rows.filter((r) => expected.get(r.name) !== r.sql).map((r) => r.name);
}

/** The schema version (max of schema_version, 0 when absent) and the core tables it lacks. */
export function inspectSchema(db: DB): { version: number; missingCoreTables: string[] } {
  const tables = tableNames(db);
  return { version: currentSchemaVersion(db, tables), missingCoreTables: CORE_TABLES.filter((t) => !tables.has(t)) };
}

function checkSchema(db: DB, dbPath: string, notice: (line: string) => void): void {
  const tables = tableNames(db);
  if (!tables.has('sessions')) {
    throw new BazingaError('SCHEMA', `Not a BAZINGA database (table 'sessions' missing): ${dbPath}`);
  }
  const version = currentSchemaVersion(db, tables);
  if (version < SCHEMA_VERSION) {
    throw new BazingaError(
      'SCHEMA',
      `Database schema v${version} is older than v${SCHEMA_VERSION}; open it once with the original BAZINGA tool to migrate it`,
    );
  }
  const missing = CORE_TABLES.filter((t) => !tables.has(t));
  if (missing.length > 0) {
    throw new BazingaError('SCHEMA', `Database is missing core tables: ${missing.join(', ')}`);
  }
  if (version > SCHEMA_VERSION) {
    notice(`⚠ Database schema v${version} is newer than v${SCHEMA_VERSION}; continuing`);
  }
}

/**
 * Opens (creating when missing or empty) the database at `dbPath`, applies the connection
 * pragmas, checks the schema, and adds the `ca_*` extension objects when absent. With `readOnly`
 * it opens a reader instead (openReader); with `onReadOnly`, a file or folder that cannot be
 * written gives a reader too.
 */
export function openDatabase(opts: OpenOptions): DB {
  const notice = opts.notice ?? (() => {});
  const openedAt = performance.now();
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
    // A file with no tables at all is one being created (possibly by another process right now).
    if (fresh || retryBusy(conn, () => tableNames(conn).size === 0)) {
      toWal();
      if (createV19Schema(conn)) notice(`✓ Created BAZINGA database (schema v${SCHEMA_VERSION}) at ${opts.dbPath}`);
    }
    // Checked before anything persistent changes: a file that is refused is left as it was.
    retryBusy(conn, () => checkSchema(conn, opts.dbPath, notice));
    toWal();
    ensureExtensions(conn);
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

/** SQLite's wait for one statement at open: the per-statement timeout, never more than the budget. */
function firstWait(opts: OpenOptions): number {
  const wait = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  return Math.min(wait, opts.busyBudgetMs ?? wait);
}

/** Starts the connection's wait deadline (see BusyBudget); `connect` armed SQLite with firstWait already. */
function budgetBusy(db: DB, opts: OpenOptions, openedAt: number): void {
  const waitMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  setBusyBudget(db, {
    waitMs,
    deadline: openedAt + (opts.busyBudgetMs ?? waitMs),
    armedMs: firstWait(opts),
    holding: 0,
    backoffMs: opts.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS,
  });
}

/**
 * Whether this process may write the file and its folder (a writer needs both: the journal or the
 * write-ahead log lives beside the file). A read-only mount answers no even to root.
 */
function writable(dbPath: string): boolean {
  try {
    fs.accessSync(dbPath, fs.constants.W_OK);
    fs.accessSync(path.dirname(dbPath), fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
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

/** This layer's tables a reader needs for relevance; absent (or of another definition), it gets its own in memory. */
const SEARCH_OBJECTS: readonly string[] = ['ca_meta', ...SEARCH_TABLES, 'ca_term_df', 'ca_package_paths'];

/**
 * A reader: the existing file opened read-only, so nothing of it changes (no WAL switch, no `ca_*`
 * objects, no schema) and a read-only file, folder or mount can be read. A missing or empty file
 * is NOT_FOUND: a read never creates a database. What a database never opened by a writer of this
 * product lacks is worked around for this connection alone: hints naming absent `ca_idx_*`
 * indexes are left out of its statements (stmt), and the search index, the count cache and their
 * bookkeeping are made, when `opts.derived` asks, as TEMP tables (in memory, for this connection;
 * TEMP names are looked up first, so they stand in for the file's own when those are absent, stale
 * or behind), the index filled within its time budget. Writing anything but those fails: the file
 * is read-only.
 */
function openReader(opts: OpenOptions, notice: (line: string) => void, openedAt: number): DB {
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
function sidecarKeeper(dbPath: string): DB | undefined {
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
function withKeeper(reader: DB, keeper: DB | undefined): DB {
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
function isWalFile(dbPath: string): boolean {
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
function walUnreadableHere(err: unknown, dbPath: string): boolean {
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
function makeReaderObjects(db: DB, derived: OpenOptions['derived']): void {
  const present = new Set(
    (stmt(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')").all() as { name: string }[]).map((r) => r.name),
  );
  const absent = CA_OBJECTS.filter((name) => name.startsWith('ca_idx_') && !present.has(name));
  if (absent.length > 0) setAbsentIndexes(db, new Set(absent));
  if (!derived) return;
  const index = derived.searchIndex;
  // An index a writer made is used as that writer left it, also when rows were written since (by
  // the original tool, between two recording assemblies): rebuilding the whole index in memory on
  // every dry run or step would cost a second each, and a reader cannot bring it up to date. Those
  // newest rows then rank without relevance until the next recording assembly indexes them. Only a
  // database no writer of this product indexed (or one of another index definition) gets its own,
  // in memory, within the index budget.
  const searchUsable = SEARCH_OBJECTS.every((name) => present.has(name)) && staleSearchTables(db).length === 0;
  const temp: string[] = [];
  for (const ddl of CA_DDL) {
    const name = /^CREATE (?:VIRTUAL )?TABLE IF NOT EXISTS (\w+)/.exec(ddl)?.[1];
    if (name === undefined) continue; // an index on the original's tables: TEMP cannot hold one
    if (name === 'ca_token_counts' ? present.has(name) : searchUsable || !SEARCH_OBJECTS.includes(name)) continue;
    temp.push(ddl.replace(/^CREATE TABLE IF NOT EXISTS /, 'CREATE TEMP TABLE IF NOT EXISTS ').replace(/^CREATE VIRTUAL TABLE IF NOT EXISTS /, 'CREATE VIRTUAL TABLE IF NOT EXISTS temp.'));
  }
  if (temp.length === 0) return;
  // A read transaction: once its first read has the shared lock (a wait for it counts), the lock
  // is held throughout, so filling the index spends no wait.
  db.transaction(() => {
    stmt(db, 'SELECT count(*) FROM sqlite_master').get();
    holdingLock(db, () => {
      for (const ddl of temp) db.exec(ddl);
      if (!searchUsable && index) syncSearchIndex(db, index);
    });
  })();
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
