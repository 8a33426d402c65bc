/** Commands: read-only query, integrity check, path detection, re-redaction of stored rows. */
import { monotonicMs } from '../clock.ts';
import fs from 'node:fs';
import path from 'node:path';
import { BazingaError, invalid, notFound, usage } from '../errors.ts';
import { stmt, writeTransaction, type DB } from '../statements.ts';
import { openDatabase } from '../db.ts';
import { redactExistingRows } from '../repo/redactExisting.ts';
import { resetSearchIndex, searchIndexBehind, syncSearchIndex } from '../repo/searchIndex.ts';
import { SEARCH_TABLES } from '../schema.ts';
import { rejectProblem, Relayed, type Command, type CommandContext } from './types.ts';
import type { ChildRun } from '../relaunch.ts';
import { isChild, watchOver } from '../relaunch.ts';
import { indexerShouldYield, releaseIndexLock, takeIndexLock, touchIndexLock } from '../indexLock.ts';
import { sidecarKeeper } from '../reader.ts';
import { indexSettings, redactionPolicy, relevanceEnabled } from '../settings.ts';
import { parseInteger } from '../validate.ts';

type Bindable = string | number | bigint | null;

function parseParams(text: string): Bindable[] {
  const message = '--params must be a JSON array of strings, numbers, booleans or null';
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid(message);
  }
  if (!Array.isArray(parsed)) throw invalid(message);
  return parsed.map((v) => {
    if (v === null || typeof v === 'string') return v;
    // better-sqlite3 binds every JS number as REAL; a bigint binds as INTEGER.
    if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
    if (typeof v === 'boolean') return v ? 1n : 0n;
    throw invalid(message);
  });
}

/** What `query` prints at most unless raised: rows, and bytes of the printed JSON (UTF-8, as indented; a blob as printed, up to 12 bytes a byte). */
export const QUERY_MAX_ROWS = 1000;
export const QUERY_MAX_BYTES = 10_000_000;
/** How long the statement may run unless raised (--max-ms). */
export const QUERY_MAX_MS = 10_000;

/**
 * The bytes a row takes in the printed document (UTF-8, escaped, indented as cli.ts prints it, one
 * level into the array), without printing a blob: a blob is printed as a list of byte values, one
 * per indented line, so it is counted at its most, 12 bytes a byte.
 */
function printedSize(row: unknown): number {
  if (row === null || typeof row !== 'object') return Buffer.byteLength(JSON.stringify(row) ?? 'null') + 4;
  let blobs = 0;
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (Buffer.isBuffer(v)) blobs += 12 * v.length + 40;
    else rest[k] = v;
  }
  const text = JSON.stringify(rest, null, 2);
  return Buffer.byteLength(text) + 2 * (text.split('\n').length + 1) + blobs;
}

/**
 * The rows of a SELECT, read one by one and stopped at the caps (the whole result is never built):
 * the rows read so far are printed, and a warning on stderr says which cap stopped it and the flag
 * that raises it.
 */
function boundedRows(prepared: { iterate: (...p: Bindable[]) => IterableIterator<unknown> }, params: Bindable[], caps: { rows: number; bytes: number }, warn: (line: string) => void): unknown[] {
  const rows: unknown[] = [];
  let bytes = 2;
  const it = prepared.iterate(...params);
  try {
    for (const row of it) {
      if (rows.length === caps.rows) {
        warn(`⚠ query stopped at ${caps.rows} row${caps.rows === 1 ? "" : "s"}, the row cap (raise it with --max-rows N)`);
        break;
      }
      const size = printedSize(row) + 1;
      if (bytes + size > caps.bytes) {
        warn(`⚠ query stopped at row ${rows.length + 1}: printing it would pass ${caps.bytes} bytes, the byte cap (raise it with --max-bytes N)`);
        break;
      }
      bytes += size;
      rows.push(row);
    }
  } finally {
    it.return?.();
  }
  return rows;
}

/** A cap flag's value: the project's one integer rule (validate.ts), at least 1; absent, the default. */
function capFlag(args: { values: Map<string, string> }, flag: string, fallback: number): number {
  const text = args.values.get(flag);
  return text === undefined ? fallback : parseInteger(flag, text, 1);
}

const query: Command = {
  name: 'query',
  synopsis: `query <SELECT sql…> [--param V]… [--params JSON] [--max-rows N (${QUERY_MAX_ROWS})] [--max-bytes N (${QUERY_MAX_BYTES})] [--max-ms N (${QUERY_MAX_MS})]`,
  flags: { '--param': 'multi', '--params': 'value', '--max-rows': 'value', '--max-bytes': 'value', '--max-ms': 'value' },
  maxPositionals: Infinity,
  run(args, ctx) {
    rejectProblem(args);
    const sql = args.positionals.join(' ');
    if (sql.trim() === '') throw usage('query command requires SQL statement');
    const textParams = args.multi.get('--param');
    const jsonParams = args.values.get('--params');
    if (textParams && jsonParams !== undefined) throw usage('use either --param or --params, not both');
    if (!sql.trim().toUpperCase().startsWith('SELECT')) throw invalid('Only SELECT queries allowed');
    const params: Bindable[] = jsonParams !== undefined ? parseParams(jsonParams) : (textParams ?? []);
    const caps = { rows: capFlag(args, '--max-rows', QUERY_MAX_ROWS), bytes: capFlag(args, '--max-bytes', QUERY_MAX_BYTES) };
    const maxMs = capFlag(args, '--max-ms', QUERY_MAX_MS);
    // SQLite cannot be stopped from JavaScript: the statement runs in this invocation run again as
    // a child (relaunch.ts), stopped when the bound passes; the child prints what this would.
    if (!isChild(ctx.env)) return boundedInTime(ctx, maxMs);
    // The child ends itself should its parent be gone or fail to stop it.
    watchOver(maxMs);
    const db = ctx.readOnlyDb();
    let prepared;
    try {
      prepared = db.prepare(sql);
    } catch (err) {
      if (err instanceof RangeError || /more than one statement/i.test((err as Error).message)) {
        throw invalid('You can only execute one statement at a time.');
      }
      throw new BazingaError('SQL_ERROR', (err as Error).message);
    }
    if (!prepared.reader) throw new BazingaError('SQL_ERROR', 'attempt to write a readonly database');
    try {
      return boundedRows(prepared as never, params, caps, ctx.warn);
    } catch (err) {
      if (err instanceof RangeError || err instanceof TypeError) throw invalid((err as Error).message);
      throw new BazingaError('SQL_ERROR', (err as Error).message);
    }
  },
};

function boundedInTime(ctx: CommandContext, maxMs: number): Relayed {
  // A WAL database without -wal and -shm: this process makes them (a keeper, as a reader would) and
  // removes them when it closes, so a child stopped at the bound leaves none behind.
  let keeper: ReturnType<typeof sidecarKeeper>;
  try {
    keeper = sidecarKeeper(ctx.paths().dbPath);
  } catch {
    keeper = undefined; // no project or no database here: the child says so
  }
  let run: ChildRun;
  try {
    run = ctx.again({ timeoutMs: maxMs });
  } finally {
    keeper?.close();
  }
  if (run.code === null) throw new BazingaError('SQL_ERROR', `query stopped after ${maxMs} ms, the time bound (raise it with --max-ms N)`);
  // A child that ended without its error line (killed by a signal, out of memory) is said so.
  if (run.code !== 0 && !run.stderr.includes('"success":false')) {
    throw new BazingaError('SQL_ERROR', `query's child process ended ${run.signal ? `by signal ${run.signal}` : `with exit code ${run.code}`} and no error line`);
  }
  return new Relayed({ ...run, code: run.code });
}

const integrityCheck: Command = {
  name: 'integrity-check',
  synopsis: 'integrity-check',
  flags: {},
  maxPositionals: 0,
  run(args, ctx) {
    rejectProblem(args);
    const rows = stmt(ctx.db(), 'PRAGMA integrity_check').all() as { integrity_check: string }[];
    const first = rows[0]?.integrity_check ?? 'no result';
    if (rows.length === 1 && first === 'ok') return { ok: true, details: 'Database integrity check passed' };
    throw new BazingaError('INTEGRITY', `Integrity issues found: ${first}`);
  },
};

const detectPaths: Command = {
  name: 'detect-paths',
  synopsis: 'detect-paths',
  flags: {},
  maxPositionals: 0,
  run(args, ctx) {
    rejectProblem(args);
    const p = ctx.paths();
    return {
      project_root: p.projectRoot,
      detection_source: p.detectionSource,
      db_path: p.dbPath,
      skills_dir: path.join(p.projectRoot, '.claude', 'skills'),
      artifacts_dir: path.join(p.projectRoot, 'bazinga', 'artifacts'),
      agents_dir: path.join(p.projectRoot, 'agents'),
      cwd: ctx.cwd,
      env_var_set: Boolean(ctx.env.BAZINGA_ROOT),
    };
  },
};

const redactExisting: Command = {
  name: 'redact-existing',
  synopsis: 'redact-existing [--dry-run]',
  flags: { '--dry-run': 'bool' },
  maxPositionals: 0,
  run(args, ctx) {
    rejectProblem(args);
    const dryRun = args.bools.has('--dry-run');
    const policy = redactionPolicy(ctx.paths().projectRoot);
    const db = ctx.db();
    // Overwritten and freed content is zeroed, so the old text does not linger in free pages.
    if (!dryRun) db.pragma('secure_delete = ON');
    const result = writeTransaction(db, () => {
      const r = redactExistingRows(db, policy, { dryRun });
      // The index holds the words of the old text: rebuilt from the redacted rows.
      if (!dryRun && r.rows_changed > 0) {
        resetSearchIndex(db);
        // A deleted FTS5 row stays in the index segments until they are merged.
        for (const table of SEARCH_TABLES) db.prepare(`INSERT INTO ${table}(${table}) VALUES ('optimize')`).run();
      }
      return r;
    });
    // Pages b-tree rebalancing moved or freed may still hold the old text: the file is rebuilt,
    // and nothing of the old pages stays in the write-ahead log either.
    if (!dryRun && result.rows_changed > 0) {
      db.exec('VACUUM');
      db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return { success: true, dry_run: dryRun, ...result, search_index_reset: !dryRun && result.rows_changed > 0 };
  },
};

/**
 * How long one transaction of a whole-index run may index, and the most rows of a batch (a batch
 * is never cut short): short transactions, so that a spawn's claim of its packages waits for the
 * lock only briefly while the index is built in the background.
 */
const INDEX_SLICE_MS = 25;
const INDEX_BATCH = 50;
/** How often a yielding indexer looks whether the spawn is done. */
const YIELD_POLL_MS = 10;

/** Sleeps the thread (the indexer has nothing else to do meanwhile). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const indexSearch: Command = {
  name: 'index-search',
  synopsis: 'index-search [--max-ms N] [--background]',
  flags: { '--max-ms': 'value', '--background': 'bool' },
  maxPositionals: 0,
  run(args, ctx) {
    rejectProblem(args);
    const maxMs = capFlag(args, '--max-ms', Infinity);
    const dbPath = ctx.paths().dbPath;
    const root = ctx.paths().projectRoot;
    // Nothing to index where relevance is off, or no database (or an empty file) is.
    const idle = !relevanceEnabled(root)
      ? 'relevance is off (context_engineering.enable_fts5: false)'
      : !fs.existsSync(dbPath) || fs.statSync(dbPath).size === 0
        ? `no database at ${dbPath}`
        : undefined;
    if (args.bools.has('--background')) {
      if (idle !== undefined) return { success: true, started: false, reason: idle };
      // The started process does the rest (the schema step too).
      const pid = ctx.detach('--background');
      return pid > 0 ? { success: true, started: true, pid } : { success: true, started: false, reason: 'the process could not be started' };
    }
    if (idle !== undefined && !fs.existsSync(dbPath)) throw notFound(`Database not found: ${dbPath} (create-session creates it)`);
    if (idle !== undefined) return { success: true, complete: false, skipped: idle };
    if (!takeIndexLock(dbPath)) return { success: true, complete: false, skipped: 'another index-search is running on this database' };
    // A spawn's request to step aside is honoured between any two transactions: the schema step's
    // (one per index it builds) and the indexing's.
    const opened = monotonicMs();
    const stepAside = () => {
      while (indexerShouldYield(dbPath) && monotonicMs() - opened < maxMs) {
        pause(YIELD_POLL_MS);
        touchIndexLock(dbPath);
      }
    };
    let db: DB | undefined;
    try {
      const conn = openDatabase({
        dbPath,
        create: false,
        betweenSchemaSteps: () => {
          touchIndexLock(dbPath);
          stepAside();
        },
      });
      db = conn;
      const settings = indexSettings(root);
      const policy = redactionPolicy(root);
      const started = monotonicMs();
      const indexed = { packages: 0, reasoning: 0, patterns: 0, strategies: 0 };
      let rounds = 0;
      let backlog = 0;
      do {
        const r = writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: root, artifactBytes: settings.artifactBytes, budgetMs: INDEX_SLICE_MS, batch: INDEX_BATCH, scrub: policy }));
        for (const part of Object.keys(indexed) as (keyof typeof indexed)[]) indexed[part] += r[part];
        backlog = r.backlog;
        rounds++;
        touchIndexLock(dbPath);
        // A spawn asked for the lock: no new transaction until it is done (its request expires).
        stepAside();
      } while (searchIndexBehind(conn).length > 0 && monotonicMs() - opened < maxMs);
      const complete = searchIndexBehind(conn).length === 0;
      return { success: true, complete, indexed, backlog: complete ? 0 : backlog, rounds, ms: Math.round(monotonicMs() - started) };
    } finally {
      db?.close();
      releaseIndexLock(dbPath);
    }
  },
};

export const utilityCommands: Command[] = [query, integrityCheck, detectPaths, redactExisting, indexSearch];
