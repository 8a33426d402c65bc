/**
 * Repository: the full-text index (`ca_fts_*`) behind relevance. Derived data only.
 *
 * Kept in step without triggers on the original's tables: `syncSearchIndex` indexes whatever the
 * watermarks in `ca_meta` say is new — packages and reasoning by id (both tables only grow), error
 * patterns and strategies by id and by what a few index seeks say changed (see `LearningSeen`:
 * the original rewrites their rows in place). Every write command of this layer calls it in its
 * own transaction, and a reader calls it when `searchIndexBehind` says rows arrived from elsewhere
 * (the original Python tool), so an existing database gets relevance with no step by the user.
 * Neither the check nor the indexing of new or rewritten rows reads a source table whole.
 *
 * The index holds no text the database does not already hold, with one exception: the first
 * bytes of each package's artifact file, which are redacted with the widest engine before they
 * are indexed (summaries, reasoning, patterns and strategies were redacted when they were stored).
 * Package and reasoning entries hold terms only (contentless tables).
 */
import { monotonicMs } from '../clock.ts';
import { createHash } from 'node:crypto';
import { artifactHead, artifactsDir } from '../artifacts.ts';
import { getMeta, setMeta } from './meta.ts';
import type { ProjectScope } from './sessions.ts';
import { stmt, type DB } from '../statements.ts';
import type { TextMatch } from '../textMatch.ts';
import { redactText, type RedactionPolicy } from '../redact.ts';
import { scrubRows } from './redactExisting.ts';
import { SEARCH_TOKENIZER, countTokens, indexableText, pathsInText } from '../searchText.ts';
import { isNotBlank, withoutEndRun } from '../textScan.ts';
import { sessionIdRange } from './contextPackages.ts';
import { storedText } from '../storedText.ts';

export { DEFAULT_ARTIFACT_INDEX_BYTES, DEFAULT_INDEX_BUDGET_MS, MAX_ARTIFACT_INDEX_BYTES, MAX_INDEX_BUDGET_MS } from '../searchLimits.ts';

export interface IndexOptions {
  /** Where artifact paths are resolved from; null indexes no artifact text. */
  projectRoot: string | null;
  artifactBytes: number;
  /**
   * Stop indexing the backlog of older rows after about this long (the rest is indexed by later
   * calls, newest first); new rows and at least one batch are always indexed. Default: no limit.
   */
  budgetMs?: number;
  /** The clock the budget is measured with (tests pass a fake one). */
  clock?: () => number;
  /**
   * The most packages or reasoning rows one batch indexes (default: 1,000 packages and 5,000
   * reasoning rows, 250 of either when scrubbing). A batch is never cut short, so small ones keep
   * a transaction short (index-search: no spawn waits long for the write lock).
   */
  batch?: number;
  /**
   * A writer's policy: every row is redacted in place before it is first indexed (rows the
   * original tool or BAZINGA's own CLI wrote), in the same transaction; absent (tests, the bench's
   * copies), rows are indexed as stored.
   */
  scrub?: RedactionPolicy;
}

/**
 * Packages and reasoning rows only ever get new, larger ids. The index covers the id range
 * (lo, hi] of each: rows above hi are new and indexed first; rows at or below lo are the backlog of
 * a database that was never indexed, worked through downwards, newest first, in batches.
 */
const RANGES = {
  packages: { hi: 'search.packages.hi', lo: 'search.packages.lo', table: 'context_packages', batch: 1_000 },
  reasoning: { hi: 'search.logs.hi', lo: 'search.logs.lo', table: 'orchestration_logs', batch: 5_000 },
} as const;

type Part = keyof typeof RANGES | LearningPart;

/**
 * The part of a package's artifact file that is indexed: its first `bytes` bytes, redacted with
 * the widest engine and no allowlist ('' when the file is missing, unreadable or not allowed).
 */
export function indexedArtifactText(projectRoot: string | null, filePath: string, bytes: number, dir?: string): string {
  if (projectRoot === null || bytes <= 0) return '';
  // Read past the bound and redact before cutting: a secret the bound splits is no longer
  // recognisable, so it must be removed while it is whole.
  const raw = artifactHead(projectRoot, filePath, bytes + REDACTION_MARGIN_BYTES, dir ?? artifactsDir(projectRoot));
  if (raw === '') return '';
  const redacted = redactText(raw);
  if (Buffer.byteLength(raw) <= bytes) return redacted;
  // Cut at the bound and drop the last, possibly partial, word.
  return withoutEndRun(Buffer.from(redacted).subarray(0, bytes).toString('utf8'), isNotBlank);
}

/** How far past the indexing bound an artifact is read so that a secret across the bound is redacted whole. */
const REDACTION_MARGIN_BYTES = 4096;

function maxId(db: DB, table: string): number {
  return (stmt(db, `SELECT COALESCE(MAX(id), 0) AS n FROM ${table}`).get() as { n: number }).n;
}

/**
 * The indexed range of a part. A part without watermarks (never indexed, or its watermarks lost)
 * starts as the empty range at the current maximum, and `fresh` says its table must be emptied
 * first: a contentless table would silently take a second copy of every row.
 */
function range(db: DB, part: keyof typeof RANGES): { lo: number; hi: number; max: number; fresh: boolean } {
  const r = RANGES[part];
  const max = maxId(db, r.table);
  const hi = getMeta(db, r.hi);
  const lo = getMeta(db, r.lo);
  return hi === undefined || lo === undefined ? { lo: max, hi: max, max, fresh: true } : { lo: Number(lo), hi: Number(hi), max, fresh: false };
}

/** Empties one part of the index (its table, its document counts, for packages their paths). */
function clearPart(db: DB, part: keyof typeof RANGES): void {
  // Contentless tables are emptied by their 'delete-all' command.
  const table = part === 'packages' ? 'ca_fts_packages' : 'ca_fts_reasoning';
  db.prepare(`INSERT INTO ${table} (${table}) VALUES ('delete-all')`).run();
  db.prepare('DELETE FROM ca_term_df WHERE source = ?').run(part);
  if (part === 'packages') db.prepare('DELETE FROM ca_package_paths').run();
}

/** Which parts of the index lag behind their source tables (empty when it is current). Cheap: index seeks only. */
export function searchIndexBehind(db: DB): Part[] {
  const behind: Part[] = [];
  for (const part of ['packages', 'reasoning'] as const) {
    const r = range(db, part);
    if (r.hi < r.max || r.lo > 0) behind.push(part);
  }
  for (const part of ['patterns', 'strategies'] as const) {
    const m = readMark(db, part);
    if (m === undefined || m.lo > 0 || m.hi < m.seen.max || JSON.stringify(m.seen) !== JSON.stringify(learningSeen(db, part))) behind.push(part);
  }
  return behind;
}

export interface SyncReport {
  packages: number;
  reasoning: number;
  patterns: number;
  strategies: number;
  /** Older rows still to be indexed by later calls (0 when the index is complete). */
  backlog: number;
}

/**
 * What a package's `path` column holds: its artifact file's path, then the paths its artifact text
 * names (the code it is about), one per line. A task naming those paths' words matches there.
 */
export function packagePathText(filePath: string, namedPaths: readonly string[]): string {
  return namedPaths.length === 0 ? filePath : `${filePath}\n${namedPaths.join('\n')}`;
}

/** Indexes the packages with ids in (from, to]. */
function indexPackages(db: DB, from: number, to: number, opts: IndexOptions): number {
  const rows = stmt(db, 'SELECT id, summary, file_path FROM context_packages WHERE id > ? AND id <= ? ORDER BY id').all(from, to) as {
    id: number;
    summary: unknown;
    file_path: unknown;
  }[];
  const insert = stmt(db, 'INSERT INTO ca_fts_packages (rowid, summary, artifact, path) VALUES (?, ?, ?, ?)');
  const insertPaths = stmt(db, 'INSERT OR REPLACE INTO ca_package_paths (package_id, paths) VALUES (?, ?)');
  const dir = opts.projectRoot === null ? undefined : artifactsDir(opts.projectRoot);
  const df = new Map<string, number>();
  for (const r of rows) {
    // Another tool may have stored a BLOB in a text column: indexed as its text (storedText).
    const file = storedText(r.file_path);
    const artifact = dir === undefined ? '' : indexedArtifactText(opts.projectRoot, file, opts.artifactBytes, dir);
    const summary = indexableText(storedText(r.summary));
    const body = indexableText(artifact);
    const paths = pathsInText(artifact);
    const pathText = indexableText(packagePathText(file, paths));
    insert.run(r.id, summary, body, pathText);
    const seen = new Set<string>();
    for (const text of [summary, body, pathText]) countTokens(text, df, seen);
    if (paths.length > 0) insertPaths.run(r.id, paths.join('\n'));
  }
  addDocCounts(db, 'packages', df);
  return rows.length;
}

/** Adds a batch's document frequencies to `ca_term_df`. */
function addDocCounts(db: DB, source: 'packages' | 'reasoning', df: ReadonlyMap<string, number>): void {
  const add = stmt(db, 'INSERT INTO ca_term_df (source, term, docs) VALUES (?, ?, ?) ON CONFLICT (source, term) DO UPDATE SET docs = docs + excluded.docs');
  for (const [term, docs] of df) add.run(source, term, docs);
}

/** Indexes the reasoning rows with ids in (from, to], in one statement (there can be hundreds of thousands). */
function indexReasoning(db: DB, from: number, to: number): number {
  const df = registerFunctions(db);
  df.clear();
  const n = stmt(
    db,
    `INSERT INTO ca_fts_reasoning (rowid, content, refs)
     SELECT id, ca_indexable(content, 1), ca_indexable(COALESCE(references_json, ''), 0)
     FROM orchestration_logs WHERE id > ? AND id <= ? AND log_type = 'reasoning' ORDER BY id`,
  ).run(from, to).changes;
  addDocCounts(db, 'reasoning', df);
  return n;
}

/**
 * Brings the index up to its source tables: new rows first, oldest of them first, then the backlog
 * of older rows, newest first, all in batches and within the time budget (at least one batch per
 * call). Call inside a write transaction: the ranges are read and advanced in it, so two processes
 * never index a row twice. Returns what it indexed and what is left.
 */
/** Rows a scrubbing index run redacts and indexes at a time (each batch checks the time budget). */
const SCRUB_BATCH = 250;

export function syncSearchIndex(db: DB, opts: IndexOptions): SyncReport {
  const clock = opts.clock ?? (() => monotonicMs());
  const deadline = clock() + (opts.budgetMs ?? Infinity);
  const report: SyncReport = { packages: 0, reasoning: 0, patterns: 0, strategies: 0, backlog: 0 };
  // Rows scrubbed as they are first seen: the freed bytes are overwritten (secure_delete).
  if (opts.scrub) db.pragma('secure_delete = ON');
  const index = (part: keyof typeof RANGES, from: number, to: number) => {
    if (opts.scrub) scrubRows(db, part === 'packages' ? 'context_packages' : 'orchestration_logs', { from, to }, opts.scrub);
    return part === 'packages' ? indexPackages(db, from, to, opts) : indexReasoning(db, from, to);
  };
  let batches = 0;
  // Scrubbing redacts every row of a batch: smaller batches keep one within the time budget.
  const batchOf = (part: keyof typeof RANGES) => Math.min(opts.batch ?? Infinity, opts.scrub ? Math.min(RANGES[part].batch, SCRUB_BATCH) : RANGES[part].batch);
  for (const part of ['packages', 'reasoning'] as const) {
    const keys = RANGES[part];
    let { lo, hi, max, fresh } = range(db, part);
    if (fresh) clearPart(db, part);
    while (hi < max && (batches === 0 || clock() < deadline)) {
      const next = Math.min(max, hi + batchOf(part));
      report[part] += index(part, hi, next);
      hi = next;
      batches++;
    }
    while (lo > 0 && hi === max && (batches === 0 || clock() < deadline)) {
      const next = Math.max(0, lo - batchOf(part));
      report[part] += index(part, next, lo);
      lo = next;
      batches++;
    }
    setMeta(db, keys.hi, String(hi));
    setMeta(db, keys.lo, String(lo));
    const left = (from: number, to: number) => (stmt(db, `SELECT COUNT(*) AS n FROM ${keys.table} WHERE id > ? AND id <= ?`).get(from, to) as { n: number }).n;
    report.backlog += (lo > 0 ? left(0, lo) : 0) + (hi < max ? left(hi, max) : 0);
  }
  for (const part of ['patterns', 'strategies'] as const) {
    const r = syncLearning(db, part, () => clock() < deadline, opts.scrub);
    report[part] = r.indexed;
    report.backlog += r.backlog;
  }
  return report;
}

/**
 * Error patterns and strategies. Each entry of `ca_fts_patterns` / `ca_fts_strategies` carries its
 * source row's rowid (layout 2), so one row is re-indexed (INSERT OR REPLACE) or dropped by rowid.
 * As for packages, the entries cover the rowids in (lo, hi]: rows above hi are new and indexed
 * oldest first, a table never indexed works through (0, lo] newest first, both in batches within
 * the time budget. The mark in `ca_meta` (`search.patterns.mark`, `search.strategies.mark`) holds
 * lo, hi and what `learningSeen` read at the last sync; what changed since is found from it.
 */
type LearningPart = 'patterns' | 'strategies';

const LEARNING_LAYOUT = 2;
const LEARNING_BATCH = 1_000;
/** The most rows of the newest `last_seen` the check digests (one write's rows: normally one to a few). */
const NEWEST_ROWS = 256;

/** A learning row as it is indexed: rowid, id, project, and the two indexed texts. */
interface LearningRow {
  rid: number;
  id: string;
  project_id: string;
  first: string;
  second: string;
}

const LEARNING = {
  patterns: {
    table: 'error_patterns',
    fts: 'ca_fts_patterns',
    id: 'pattern_hash',
    mark: 'search.patterns.mark',
    /** The whole-table fingerprint of layout 1, dropped when the part is indexed again. */
    legacy: 'search.patterns.fingerprint',
    columns: 'rowid AS rid, pattern_hash AS id, project_id, signature_json AS first, solution AS second',
    firstColumn: 'signature_json',
    secondColumn: 'solution',
    insert: 'INSERT OR REPLACE INTO ca_fts_patterns (rowid, signature, solution, pattern_hash, project_id) VALUES (?, ?, ?, ?, ?)',
    /** The source row `e` is the one entry `f` was made from. */
    same: 'e.pattern_hash = f.pattern_hash AND e.project_id = f.project_id',
    first: (signatureJson: string) => signatureText(signatureJson),
  },
  strategies: {
    table: 'strategies',
    fts: 'ca_fts_strategies',
    id: 'strategy_id',
    mark: 'search.strategies.mark',
    legacy: 'search.strategies.fingerprint',
    columns: 'rowid AS rid, strategy_id AS id, project_id, topic AS first, insight AS second',
    firstColumn: 'topic',
    secondColumn: 'insight',
    insert: 'INSERT OR REPLACE INTO ca_fts_strategies (rowid, topic, insight, strategy_id, project_id) VALUES (?, ?, ?, ?, ?)',
    same: 'e.strategy_id = f.strategy_id AND e.project_id = f.project_id',
    first: (topic: string) => topic,
  },
} as const;

/**
 * What the freshness check reads of a learning table on every assembly: a few index seeks and
 * the rows they land on, never the table (the plans are pinned by test/query-plans.test.ts).
 *
 * Error patterns: MAX(rowid) (a seek on the table's b-tree); MAX(last_seen) (a seek on the
 * original's `idx_patterns_ttl`) with a digest of the indexed columns of the rows at it (at most
 * NEWEST_ROWS, through the same index); MIN(last_seen) with the first rowid at it. It changes when
 * - a row is added, by either tool or by any INSERT: it gets a rowid above all others, so
 *   MAX(rowid) grows; if the newest row was deleted first, the new row takes its rowid, and its
 *   last_seen (now, as both tools and the column default write it) moves MAX(last_seen) or joins
 *   the digested newest rows;
 * - a row is rewritten in place by either tool's upsert (a new occurrence, a longer solution, a
 *   confidence update): both set last_seen to now, which moves MAX(last_seen), or, within the
 *   second of the newest rows, adds the row to them or changes their digest when an indexed text
 *   changed (a same-second rewrite that leaves every indexed column as it was needs nothing);
 * - a row is deleted that was the newest row, one of the newest by last_seen, or the oldest: a
 *   cleanup of every project's expired rows deletes the oldest row whenever it deletes any (both
 *   tools write ttl_days 90; with equal TTLs the expired rows are the oldest). This layer's own
 *   cleanup-error-patterns sweeps the index itself (it may clean one project only).
 * When a deletion is seen, every entry whose row is gone is swept, and rows that took the rowids
 * of deleted ones are indexed (`rowsWithoutEntry`).
 * Not seen: the deletion of any other row (a hand-written DELETE; a cleanup of rows whose TTL is
 * shorter than the oldest row's); a change of an indexed column that does not move last_seen
 * forward (neither tool makes one; redact-existing empties the index itself); a row inserted with
 * an explicit past last_seen into the rowid of a deleted newest row when that row was neither
 * among the newest nor the oldest by last_seen; more than NEWEST_ROWS rows written within one
 * second and one of them rewritten within that second after a sync; a rewrite while some row's
 * last_seen lies in the future (a skewed clock), since now then reaches neither the newest
 * last_seen nor its second. A deleted row's entry is harmless while it stays: `matchLearning`
 * returns only entries whose source row (same rowid and key) still exists and counts the
 * project's rows in the source table, so relevance is what a fresh index gives; the entry is
 * removed by the next sweep.
 *
 * Strategies: MAX(rowid) with a digest of that row's indexed columns. It changes when a strategy
 * is added, and when the newest one is deleted, replaced, or has its text rewritten. Not seen: an
 * upsert of an existing strategy (save-strategy, update-strategy-helpfulness), which changes only
 * helpfulness and last_seen, neither of them indexed, so there is nothing to re-index; the deletion
 * of an older strategy (neither tool deletes strategies; harmless, as above); a hand-written change
 * of an older strategy's topic or insight (the table has no index on last_seen to find it by).
 */
interface LearningSeen {
  max: number;
  digest: string;
  newest?: string | number | null;
  at?: number[];
  oldest?: [string | number, number] | null;
}

interface LearningMark {
  v: number;
  lo: number;
  hi: number;
  seen: LearningSeen;
}

function learningSeen(db: DB, part: LearningPart): LearningSeen {
  const t = LEARNING[part];
  if (part === 'strategies') {
    const top = stmt(db, `SELECT ${t.columns} FROM strategies WHERE rowid = (SELECT MAX(rowid) FROM strategies)`).get() as LearningRow | undefined;
    return { max: top?.rid ?? 0, digest: digestRows(top ? [top] : []) };
  }
  // One scalar subquery per aggregate: each is a single seek (two aggregates in one SELECT are not).
  const b = stmt(
    db,
    'SELECT (SELECT MAX(rowid) FROM error_patterns) AS max, (SELECT MAX(last_seen) FROM error_patterns) AS newest, (SELECT MIN(last_seen) FROM error_patterns) AS oldest',
  ).get() as { max: number | null; newest: string | number | null; oldest: string | number | null };
  const at = b.newest === null ? [] : (stmt(db, `SELECT ${t.columns} FROM error_patterns WHERE last_seen = ? LIMIT ${NEWEST_ROWS}`).all(b.newest) as LearningRow[]);
  const first = b.oldest === null ? undefined : (stmt(db, 'SELECT rowid AS rid FROM error_patterns WHERE last_seen = ? LIMIT 1').get(b.oldest) as { rid: number } | undefined);
  return {
    max: b.max ?? 0,
    digest: digestRows(at),
    newest: b.newest,
    at: at.map((r) => r.rid).sort((x, y) => x - y),
    oldest: b.oldest === null || first === undefined ? null : [b.oldest, first.rid],
  };
}

function digestRows(rows: readonly LearningRow[]): string {
  const sorted = [...rows].sort((a, b) => a.rid - b.rid).map((r) => [r.rid, r.id, r.project_id, r.first, r.second]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

function readMark(db: DB, part: LearningPart): LearningMark | undefined {
  const raw = getMeta(db, LEARNING[part].mark);
  // A release before this layout rebuilds the table whole (its entries numbered from 1, not by
  // their rows) and writes its fingerprint key after it: such an index is rebuilt here too.
  if (raw === undefined || getMeta(db, LEARNING[part].legacy) !== undefined) return undefined;
  try {
    const m = JSON.parse(raw) as LearningMark;
    return m.v === LEARNING_LAYOUT && Number.isInteger(m.lo) && Number.isInteger(m.hi) && typeof m.seen?.max === 'number' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** True when the index has an entry at `rid` whose source row is gone or is another row now. */
function entryOrphaned(db: DB, part: LearningPart, rid: number): boolean {
  const t = LEARNING[part];
  return (
    stmt(db, `SELECT 1 AS x FROM ${t.fts} f WHERE f.rowid = ? AND NOT EXISTS (SELECT 1 FROM ${t.table} e WHERE e.rowid = f.rowid AND ${t.same})`).get(rid) !==
    undefined
  );
}

/** After this layer gave pattern rows their original keys back (patternRestore.ts): their part of the index is built again. */
export function resetPatternIndex(db: DB): void {
  db.prepare(`DELETE FROM ${LEARNING.patterns.fts}`).run();
  db.prepare('DELETE FROM ca_meta WHERE key IN (?, ?)').run(LEARNING.patterns.mark, LEARNING.patterns.legacy);
}

/**
 * Drops every entry whose source row is gone or is another row now. Reads the whole index (and
 * seeks each entry's source row): run only after the check saw a row deleted.
 */
/** After this layer deleted pattern rows itself (cleanup-error-patterns): their entries are dropped now. */
export function sweepPatternIndex(db: DB): void {
  sweepOrphans(db, 'patterns');
}

function sweepOrphans(db: DB, part: LearningPart): void {
  const t = LEARNING[part];
  const gone = stmt(db, `SELECT f.rowid AS rid FROM ${t.fts} f WHERE NOT EXISTS (SELECT 1 FROM ${t.table} e WHERE e.rowid = f.rowid AND ${t.same})`).all() as {
    rid: number;
  }[];
  const drop = stmt(db, `DELETE FROM ${t.fts} WHERE rowid = ?`);
  for (const g of gone) drop.run(g.rid);
}

/**
 * The rows in (lo, hi] that have no entry, from hi down to the first one that has: rows added
 * into the rowids of deleted ones. A new row always gets a rowid above every row then present,
 * so after a sweep every such row lies above every indexed one.
 */
function rowsWithoutEntry(db: DB, part: LearningPart, hi: number, lo: number): LearningRow[] {
  const t = LEARNING[part];
  const page = stmt(db, `SELECT ${t.columns} FROM ${t.table} WHERE rowid > ? AND rowid <= ? ORDER BY rowid DESC LIMIT 64`);
  const has = stmt(db, `SELECT 1 AS x FROM ${t.fts} WHERE rowid = ?`);
  const out: LearningRow[] = [];
  for (let top = hi; top > lo; ) {
    const rows = page.all(lo, top) as LearningRow[];
    if (rows.length === 0) break;
    for (const r of rows) {
      if (has.get(r.rid) !== undefined) return out;
      out.push(r);
    }
    top = (rows[rows.length - 1] as LearningRow).rid - 1;
  }
  return out;
}

/**
 * Brings one learning part up to its table (inside the caller's write transaction): orphaned
 * entries swept when a deletion was seen, rows rewritten since the last sync re-indexed, new rows
 * and the backlog indexed in batches (at least one per call). Reads rows by rowid ranges and by
 * last_seen through `idx_patterns_ttl`, never the whole table.
 */
function syncLearning(db: DB, part: LearningPart, inBudget: () => boolean, scrub: RedactionPolicy | undefined): { indexed: number; backlog: number } {
  const t = LEARNING[part];
  const seen = learningSeen(db, part);
  const insert = stmt(db, t.insert);
  let indexed = 0;
  const index = (rows: readonly LearningRow[]) => {
    // Scrubbed in place first (a row rewritten since is scrubbed again), and indexed as now stored.
    const scrubbed = scrub ? scrubRows(db, t.table, rows.map((r) => r.rid), scrub) : new Map<number, Record<string, string>>();
    for (const r of rows) {
      const now = scrubbed.get(r.rid) ?? {};
      const first = now[t.firstColumn] ?? r.first;
      const second = now[t.secondColumn] ?? r.second;
      insert.run(r.rid, indexableText(t.first(storedText(first))), indexableText(storedText(second)), r.id, r.project_id);
    }
    indexed += rows.length;
  };
  let mark = readMark(db, part);
  if (mark === undefined) {
    // Never indexed in this layout, or the mark was lost: start over, newest rows first.
    db.prepare(`DELETE FROM ${t.fts}`).run();
    stmt(db, 'DELETE FROM ca_meta WHERE key = ?').run(t.legacy);
    mark = { v: LEARNING_LAYOUT, lo: seen.max, hi: seen.max, seen };
  }
  const prev = mark.seen;
  // Rowids above the table's largest are free again: rows added later are new rows.
  let hi = Math.min(mark.hi, seen.max);
  let lo = Math.min(mark.lo, hi);
  if (JSON.stringify(prev) !== JSON.stringify(seen)) {
    const known = new Set([mark.hi, ...(prev.at ?? []), ...(prev.oldest ? [prev.oldest[1]] : [])]);
    if ([...known].some((rid) => rid > lo && entryOrphaned(db, part, rid))) {
      sweepOrphans(db, part);
      index(rowsWithoutEntry(db, part, hi, lo));
    }
    if (part === 'patterns' && prev.newest !== undefined && prev.newest !== null) {
      // Rewritten in place since: both tools move last_seen to now, at or after the newest seen then.
      // Read through idx_patterns_ttl (the unary + keeps the planner off the rowid range, which
      // can be the whole table).
      index(stmt(db, `SELECT ${t.columns} FROM error_patterns WHERE last_seen >= ? AND +rowid > ? AND +rowid <= ?`).all(prev.newest, lo, hi) as LearningRow[]);
    }
    if (part === 'strategies' && prev.digest !== seen.digest && seen.max > lo && seen.max <= hi) {
      index(stmt(db, `SELECT ${t.columns} FROM strategies WHERE rowid = ?`).all(seen.max) as LearningRow[]);
    }
  }
  const batch = stmt(db, `SELECT ${t.columns} FROM ${t.table} WHERE rowid > ? AND rowid <= ? ORDER BY rowid`);
  let batches = 0;
  while (hi < seen.max && (batches === 0 || inBudget())) {
    const next = Math.min(seen.max, hi + LEARNING_BATCH);
    index(batch.all(hi, next) as LearningRow[]);
    hi = next;
    batches++;
  }
  while (lo > 0 && hi === seen.max && (batches === 0 || inBudget())) {
    const next = Math.max(0, lo - LEARNING_BATCH);
    index(batch.all(next, lo) as LearningRow[]);
    lo = next;
    batches++;
  }
  setMeta(db, t.mark, JSON.stringify({ v: LEARNING_LAYOUT, lo, hi, seen } satisfies LearningMark));
  const left = (from: number, to: number) => (stmt(db, `SELECT COUNT(*) AS n FROM ${t.table} WHERE rowid > ? AND rowid <= ?`).get(from, to) as { n: number }).n;
  return { indexed, backlog: (lo > 0 ? left(0, lo) : 0) + (hi < seen.max ? left(hi, seen.max) : 0) };
}

/**
 * The mark of a package index built again since a package's path column also holds the paths its
 * artifact names (`packagePathText`, ca_schema 15): kept in `ca_meta` by the file it was built in.
 */
const PACKAGE_LAYOUT = { key: 'search.packages.layout', value: '2' } as const;

/**
 * In a file an earlier release wrote (`before`, its ca_schema, from 1 to 14), empties the package
 * part of the index (its watermarks forgotten: the next sync indexes every package again) and
 * marks it; true when it did. Once per file, whatever else an open does or fails to do (the
 * version is recorded only when every step succeeded; the mark is this step's own).
 */
export function upgradePackageIndex(db: DB, before: number): boolean {
  if (before === 0 || before >= 15 || getMeta(db, PACKAGE_LAYOUT.key) === PACKAGE_LAYOUT.value) return false;
  const built = getMeta(db, RANGES.packages.hi) !== undefined;
  if (built) {
    clearPart(db, 'packages');
    db.prepare('DELETE FROM ca_meta WHERE key IN (?, ?)').run(RANGES.packages.hi, RANGES.packages.lo);
  }
  setMeta(db, PACKAGE_LAYOUT.key, PACKAGE_LAYOUT.value);
  return built;
}

/** Empties the index and forgets its watermarks (it is rebuilt by the next sync). */
export function resetSearchIndex(db: DB): void {
  clearPart(db, 'packages');
  clearPart(db, 'reasoning');
  for (const part of ['patterns', 'strategies'] as const) db.prepare(`DELETE FROM ${LEARNING[part].fts}`).run();
  db.prepare("DELETE FROM ca_meta WHERE key LIKE 'search.%'").run();
}

const registered = new WeakMap<DB, Map<string, number>>();

/**
 * The SQL function the bulk insert of reasoning calls once per row and column: `indexableText`.
 * It also counts each row's distinct tokens into the map it returns (a row's content and
 * references are one document: `ca_indexable(content, 1)` starts it, `ca_indexable(refs, 0)`
 * continues it).
 */
function registerFunctions(db: DB): Map<string, number> {
  let df = registered.get(db);
  if (df) return df;
  const counts = new Map<string, number>();
  let seen = new Set<string>();
  db.function('ca_indexable', { deterministic: false }, (text: unknown, starts: unknown) => {
    const indexed = indexableText(storedText(text));
    if (starts === 1) seen = new Set();
    countTokens(indexed, counts, seen);
    return indexed;
  });
  registered.set(db, (df = counts));
  return df;
}

/** The searchable words of a stored signature: error type, message pattern, context hints. */
function signatureText(json: string): string {
  try {
    const s = JSON.parse(json) as Record<string, unknown>;
    const hints = Array.isArray(s.context_hints) ? s.context_hints.filter((h) => typeof h === 'string') : [];
    return [s.error_type, s.message_pattern, ...hints].filter((v) => typeof v === 'string').join('\n');
  } catch {
    return json;
  }
}

export interface Hit {
  /** Package or reasoning id. */
  id: number;
  /** BM25 as SQLite gives it: lower is better, never positive. */
  bm25: number;
}

/** Column weights of the package index: summary, artifact text, path. */
export interface PackageColumnWeights {
  summary: number;
  artifact: number;
  path: number;
}

/**
 * Reasoning entries of the session in the given groups by the given producers that match, best
 * first, at most `limit`. The match is held to the session's range of log ids (as for packages).
 */
export function searchReasoning(
  db: DB,
  q: { match: TextMatch; sessionId: string; groups: readonly string[]; agents: readonly string[]; limit: number },
): Hit[] {
  const range = sessionIdRange(db, 'orchestration_logs', q.sessionId);
  if (range === undefined) return [];
  return stmt(
    db,
    `SELECT f.rowid AS id, bm25(ca_fts_reasoning, 1.0, 0.5) AS bm25
     FROM ca_fts_reasoning f CROSS JOIN orchestration_logs l ON l.id = f.rowid
     WHERE ca_fts_reasoning MATCH @match AND f.rowid >= @lo AND f.rowid <= @hi AND l.session_id = @sessionId AND l.log_type = 'reasoning'
       AND COALESCE(l.group_id, 'global') IN (SELECT value FROM json_each(@groups))
       AND l.agent_type IN (SELECT value FROM json_each(@agents))
     ORDER BY bm25, f.rowid DESC LIMIT @limit`,
  ).all({ match: q.match, ...range, sessionId: q.sessionId, groups: JSON.stringify(q.groups), agents: JSON.stringify(q.agents), limit: q.limit }) as Hit[];
}

/**
 * For each MATCH expression (one query term each), the ids of the scope's error patterns or
 * strategies it matches (the project's, or every project's); and how many the scope has. These tables are small per project, where
 * BM25's IDF turns to nothing for any term in half the rows, so relevance is scored from the
 * per-term matches instead (core/relevance.ts `termScores`).
 */
export function matchLearning(
  db: DB,
  table: 'patterns' | 'strategies',
  scope: ProjectScope,
  termMatches: readonly TextMatch[],
): { total: number; perTerm: string[][] } {
  const t = LEARNING[table];
  // The whole database for a session read as one project (repo/sessions.ts ProjectScope).
  const project = (alias: string) => (scope.wholeDatabase ? '1' : `${alias}project_id = @projectId`);
  const total = (stmt(db, `SELECT COUNT(*) AS n FROM ${t.table} WHERE ${project('')}`).get({ projectId: scope.projectId }) as { n: number }).n;
  // Only entries whose source row still exists (a deleted row's entry may outlive it: see
  // LearningSeen), looked up by rowid and key; by key alone in an index of layout 1 that this
  // process could not rebuild (a read-only file).
  const exact = readMark(db, table) !== undefined;
  const find = stmt(
    db,
    `SELECT f.${t.id} AS id FROM ${t.fts} f WHERE ${t.fts} MATCH @match AND ${project('f.')}
       AND EXISTS (SELECT 1 FROM ${t.table} e WHERE ${exact ? 'e.rowid = f.rowid AND ' : ''}${t.same})`,
  );
  return { total, perTerm: termMatches.map((m) => (find.all({ match: m, projectId: scope.projectId }) as { id: string }[]).map((r) => r.id)) };
}

/** The paths named in each package's artifact text (what scope matching reads instead of the files). */
export function listPackagePaths(db: DB, ids: readonly number[]): Map<number, string[]> {
  if (ids.length === 0) return new Map();
  const rows = stmt(db, 'SELECT package_id AS id, paths FROM ca_package_paths WHERE package_id IN (SELECT value FROM json_each(?))').all(
    JSON.stringify(ids),
  ) as { id: number; paths: string }[];
  return new Map(rows.map((r) => [r.id, r.paths.split('\n')]));
}

export interface MatchableText {
  id: number;
  summary: string;
  artifact: string;
  path: string;
}

/**
 * Where a MATCH expression matches the given texts, token by token, as the index's tokenizer sees
 * them (the package index keeps no text, so --explain re-reads the few it explains into a
 * temporary table of this connection; nothing is written to the database file). Returns the same
 * texts with every matched token wrapped in \u0001…\u0002, per field.
 */
export function highlightTexts(db: DB, match: TextMatch, docs: readonly MatchableText[]): MatchableText[] {
  if (docs.length === 0) return [];
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.ca_explain USING fts5(summary, artifact, path, tokenize = '${SEARCH_TOKENIZER}')`);
  try {
    const insert = db.prepare('INSERT INTO temp.ca_explain (rowid, summary, artifact, path) VALUES (?, ?, ?, ?)');
    for (const d of docs) insert.run(d.id, indexableText(d.summary), indexableText(d.artifact), indexableText(d.path));
    return db
      .prepare(
        `SELECT rowid AS id, highlight(ca_explain, 0, char(1), char(2)) AS summary, highlight(ca_explain, 1, char(1), char(2)) AS artifact,
                highlight(ca_explain, 2, char(1), char(2)) AS path
         FROM temp.ca_explain WHERE ca_explain MATCH ? ORDER BY rowid`,
      )
      .all(match) as MatchableText[];
  } finally {
    db.exec('DROP TABLE IF EXISTS temp.ca_explain');
  }
}

/** BM25 of one package against a MATCH expression, or undefined when it does not match. */
export function scorePackage(db: DB, match: TextMatch, id: number, weights: PackageColumnWeights): number | undefined {
  // A rowid range, not `rowid = ?`: FTS5 seeks a range inside its doclists.
  const row = stmt(
    db,
    `SELECT bm25(ca_fts_packages, @ws, @wa, @wp) AS bm25 FROM ca_fts_packages
     WHERE ca_fts_packages MATCH @match AND rowid >= @id AND rowid <= @id`,
  ).get({ match, id, ws: weights.summary, wa: weights.artifact, wp: weights.path }) as { bm25: number } | undefined;
  return row?.bm25;
}

/** How many indexed packages (or reasoning entries) hold each token (0 for a token never indexed). */
export function tokenDocCounts(db: DB, source: 'packages' | 'reasoning', tokens: readonly string[]): Map<string, number> {
  const find = stmt(db, 'SELECT docs FROM ca_term_df WHERE source = ? AND term = ?');
  const out = new Map<string, number>();
  for (const t of new Set(tokens)) out.set(t, (find.get(source, t) as { docs: number } | undefined)?.docs ?? 0);
  return out;
}
