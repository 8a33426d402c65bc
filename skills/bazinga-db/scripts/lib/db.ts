/**
 * Opening a BAZINGA database. One read-write connection per process: WAL, foreign keys,
 * synchronous NORMAL, a busy timeout, and a bounded retry with backoff around anything SQLite
 * refuses as busy. A missing or empty file gets the complete v19 schema in one transaction; an
 * existing file is checked (no integrity check on this path: it costs hundreds of milliseconds)
 * and only ever gains `ca_*` objects.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { BazingaError, isBusyError, toBazingaError } from './errors.ts';
import { resetSearchIndex } from './repo/searchIndex.ts';
import {
  CA_DDL,
  CA_OBJECTS,
  CA_SCHEMA_VERSION,
  CORE_TABLES,
  SCHEMA_VERSION,
  SCHEMA_VERSION_DESCRIPTION,
  SEARCH_TABLES,
  V19_DDL,
  searchDdl,
} from './schema.ts';
import { SEARCH_TOKENIZER } from './searchText.ts';

export type DB = Database.Database;

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

/** A connection through the loaded driver; a native part that is not built, or built for another Node, is DEPENDENCY. */
function connect(dbPath: string, options: Database.Options): DB {
  const { Database: Driver, options: base, packageDir } = loadDriver();
  try {
    return new Driver(dbPath, { ...base, ...options });
  } catch (err) {
    throw nativeBindingError(err, packageDir) ?? err;
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
/** Pauses between attempts when SQLite still reports busy after its own timeout. */
const DEFAULT_RETRY_BACKOFF_MS: readonly number[] = [100, 250, 500];

export interface OpenOptions {
  dbPath: string;
  busyTimeoutMs?: number;
  /** Called with informational lines (`✓ …`, `⚠ …`); the CLI silences it under --quiet. */
  notice?: (line: string) => void;
  /** Create the database when the file is missing or empty (default true). When false, a missing file is DB_ERROR. */
  create?: boolean;
  /** Pauses between busy retries of this connection's writes (default 100, 250, 500 ms). */
  retryBackoffMs?: readonly number[];
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn`, retrying a bounded number of times with growing pauses while SQLite reports the
 * database busy or locked. The last failure surfaces as BUSY ("database is locked").
 */
function withBusyRetry<T>(fn: () => T, backoffMs: readonly number[] = DEFAULT_RETRY_BACKOFF_MS): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      const pause = backoffMs[attempt];
      if (!isBusyError(err) || pause === undefined) throw toBazingaError(err);
      sleepSync(pause);
    }
  }
}

/** Runs `fn` in one BEGIN IMMEDIATE transaction (the write lock taken up front), with busy retry. */
export function writeTransaction<T>(db: DB, fn: () => T): T {
  return withBusyRetry(() => db.transaction(fn).immediate(), retryBackoff.get(db));
}

const retryBackoff = new WeakMap<DB, readonly number[]>();

const statementCache = new WeakMap<DB, Map<string, Database.Statement>>();

/** The prepared statement for `sql` on this connection, prepared once and reused. */
export function stmt(db: DB, sql: string): Database.Statement {
  let cache = statementCache.get(db);
  if (!cache) {
    cache = new Map();
    statementCache.set(db, cache);
  }
  let s = cache.get(sql);
  if (!s) {
    s = db.prepare(sql);
    cache.set(sql, s);
  }
  return s;
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
 * pragmas, checks the schema, and adds the `ca_*` extension objects when absent.
 */
export function openDatabase(opts: OpenOptions): DB {
  const notice = opts.notice ?? (() => {});
  const timeout = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  let size: number | undefined;
  try {
    size = fs.statSync(opts.dbPath).size;
  } catch {
    size = undefined;
  }
  const fresh = size === undefined || size === 0;
  const backoff = opts.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS;
  if (fresh && opts.create === false) throw new BazingaError('DB_ERROR', `Database not found: ${opts.dbPath}`);
  let db: DB | undefined;
  try {
    if (fresh) fs.mkdirSync(path.dirname(opts.dbPath), { recursive: true });
    db = connect(opts.dbPath, { timeout });
    const conn = db;
    retryBackoff.set(conn, backoff);
    withBusyRetry(() => {
      conn.pragma('foreign_keys = ON');
      conn.pragma('synchronous = NORMAL');
    }, backoff);
    const toWal = () => withBusyRetry(() => conn.pragma('journal_mode = WAL'), backoff);
    // A file with no tables at all is one being created (possibly by another process right now).
    if (fresh || withBusyRetry(() => tableNames(conn).size === 0, backoff)) {
      toWal();
      if (createV19Schema(conn)) notice(`✓ Created BAZINGA database (schema v${SCHEMA_VERSION}) at ${opts.dbPath}`);
    }
    // Checked before anything persistent changes: a file that is refused is left as it was.
    withBusyRetry(() => checkSchema(conn, opts.dbPath, notice), backoff);
    toWal();
    ensureExtensions(conn);
    return conn;
  } catch (err) {
    db?.close();
    throw toBazingaError(err);
  }
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
