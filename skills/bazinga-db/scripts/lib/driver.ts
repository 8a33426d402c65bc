/** The driver and one connection: better-sqlite3 handed over by the scripts at load, or loaded on first use (its addon by path), a connection with its first wait armed, the wait budget started, what a missing native part means, whether a path can be written, and the open options. Part of opening a database (db.ts). */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { BazingaError } from './errors.ts';
import { setBusyBudget, type DB } from './statements.ts';

/**
 * The driver. This library (its errors, redaction, paths) can be imported where better-sqlite3 is
 * missing: doctor reports that instead of failing to start. The scripts that open a database
 * import better-sqlite3 up front and hand it over with useDriver (cli.ts, shell.ts): a missing
 * package stops them at load, where the launcher names the fix, and in their prebuilt bundles
 * better-sqlite3's JavaScript is bundled in, compiled code cached with the rest (only its native
 * addon is loaded from node_modules, by path). Anything else loads it on the first open.
 */
export let driver: { Database: typeof Database; options: Database.Options; packageDir: string } | undefined;

export function loadDriver(): { Database: typeof Database; options: Database.Options; packageDir: string } {
  return driver ?? useDriver(createRequire(import.meta.url)('better-sqlite3') as typeof Database);
}

/**
 * Makes `Driver` (better-sqlite3's export, as the caller imported it) the driver. Where the
 * package is not installed this throws MODULE_NOT_FOUND naming it, as its import would: a bundle
 * holds better-sqlite3's JavaScript but not its addon.
 */
export function useDriver(Driver: typeof Database): { Database: typeof Database; options: Database.Options; packageDir: string } {
  const require = createRequire(import.meta.url);
  const packageDir = path.resolve(path.dirname(require.resolve('better-sqlite3')), '..');
  // The addon's path given directly skips the `bindings` package's search of the file system on
  // every open (about 1.4 ms of a start, measured); an unusual build keeps the default lookup.
  const addon = path.join(packageDir, 'build', 'Release', 'better_sqlite3.node');
  const byPath = fs.existsSync(addon);
  // A bundle's copy of the JavaScript must match the installed addon, and the default lookup
  // (`bindings`, which searches from its caller's file) works only from the installed package: for
  // another installed version (node_modules changed after the build) or an addon elsewhere, the
  // JavaScript is loaded as installed.
  if (typeof __BUNDLED_BETTER_SQLITE3__ === 'string' && (!byPath || installedVersion(packageDir) !== __BUNDLED_BETTER_SQLITE3__)) {
    Driver = require('better-sqlite3') as typeof Database;
  }
  driver = { Database: Driver, options: byPath ? { nativeBinding: addon } : {}, packageDir };
  return driver;
}

/** The version of better-sqlite3 whose JavaScript the build bundled in (scripts/build.mjs defines it; absent in the sources). */
declare const __BUNDLED_BETTER_SQLITE3__: string | undefined;

function installedVersion(packageDir: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Whether the addon has read SQLITE_USE_URI (it does once, when the first connection is made). */
export let uriConfigured = false;

/** A connection through the loaded driver; a native part that is not built, or built for another Node, is DEPENDENCY. */
export function connect(dbPath: string, options: Database.Options): DB {
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
export const DEFAULT_RETRY_BACKOFF_MS: readonly number[] = [100, 250, 500];

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
  /**
   * Called with the one line a migration of this layer's own says of BAZINGA's rows (patternRestore.ts:
   * error patterns given their keys back, the rows merged); `notice` when not given. For a caller that
   * prints no other notice (the assembler).
   */
  onMigrated?: (line: string) => void;
  /** Create the database when the file is missing or empty (default true). When false, a missing file is DB_ERROR. */
  create?: boolean;
  /**
   * A file without tables (missing, empty, or being created) gets its schema inside a transaction
   * left open, in the rollback journal: the caller's work joins it, and settleFresh commits it all
   * (then switches to WAL) or rolls it back, which leaves the file as it was (an empty file empty).
   */
  holdFresh?: boolean;
  /** Pauses between busy retries of this connection (default 100, 250, 500 ms), within its budget. */
  retryBackoffMs?: readonly number[];
  /**
   * Open for reading only: the file must exist and hold a database (else NOT_FOUND naming the path
   * and create-session); nothing is created, switched to WAL or extended.
   */
  readOnly?: boolean;
  /**
   * A reader that uses this layer's derived tables (the assembler: search index, count cache) gets
   * those its file lacks in memory, for this connection alone, empty: a reader never builds an
   * index (a throw-away one cost seconds per dry run); what is not indexed ranks without relevance.
   * Without `derived` (bazinga-db's reads) a reader sees the file's own tables only.
   */
  derived?: boolean;
  /**
   * Make the extension objects a statement at a time, calling this between two (index-search: a
   * spawn's request to step aside is honoured there). Without it they are made in one transaction.
   */
  betweenSchemaSteps?: () => void;
  /**
   * A writer whose file or folder cannot be written (a read-only file, folder or mount) opens as a
   * reader instead and calls this, rather than failing. Without it such a writer fails as before.
   */
  onReadOnly?: () => void;
}

/** SQLite's wait for one statement at open: the per-statement timeout, never more than the budget. */
export function firstWait(opts: OpenOptions): number {
  const wait = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  return Math.min(wait, opts.busyBudgetMs ?? wait);
}

/** Starts the connection's wait deadline (see BusyBudget); `connect` armed SQLite with firstWait already. */
export function budgetBusy(db: DB, opts: OpenOptions, openedAt: number): void {
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
export function writable(dbPath: string): boolean {
  try {
    fs.accessSync(dbPath, fs.constants.W_OK);
    fs.accessSync(path.dirname(dbPath), fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
