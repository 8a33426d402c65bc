/**
 * Repository: the full-text index (`ca_fts_*`) behind relevance. Derived data only.
 *
 * Kept in step without triggers on the original's tables: `syncSearchIndex` indexes whatever the
 * watermarks in `ca_meta` say is new — packages and reasoning by id (both tables only grow), error
 * patterns and strategies by a fingerprint of the table (small tables whose rows the original
 * updates in place; a changed fingerprint re-indexes them whole). Every write command of this
 * layer calls it in its own transaction, and a reader calls it when `searchIndexBehind` says rows
 * arrived from elsewhere (the original Python tool), so an existing database gets relevance with
 * no step by the user.
 *
 * The index holds no text the database does not already hold, with one exception: the first
 * bytes of each package's artifact file, which are redacted with the widest engine before they
 * are indexed (summaries, reasoning, patterns and strategies were redacted when they were stored).
 * Package and reasoning entries hold terms only (contentless tables).
 */
import { artifactHead, artifactsDir } from '../artifacts.ts';
import { stmt, type DB } from '../db.ts';
import { redactText } from '../redact.ts';
import { SEARCH_TOKENIZER, countTokens, indexableText, pathsInText } from '../searchText.ts';

/** How much of each artifact file is indexed unless the caller says otherwise (16 KiB). */
export const DEFAULT_ARTIFACT_INDEX_BYTES = 16_384;
/** The most of an artifact file that may be indexed (1 MiB). */
export const MAX_ARTIFACT_INDEX_BYTES = 1_048_576;
/** How long one call may spend on a backlog of older rows unless the caller says otherwise. */
export const DEFAULT_INDEX_BUDGET_MS = 1_000;

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

const FINGERPRINTS = {
  patterns: 'search.patterns.fingerprint',
  strategies: 'search.strategies.fingerprint',
} as const;

type Part = keyof typeof RANGES | keyof typeof FINGERPRINTS;

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
  return Buffer.from(redacted).subarray(0, bytes).toString('utf8').replace(/\S*$/, '');
}

/** How far past the indexing bound an artifact is read so that a secret across the bound is redacted whole. */
const REDACTION_MARGIN_BYTES = 4096;

function meta(db: DB, key: string): string | undefined {
  return (stmt(db, 'SELECT value FROM ca_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
}

function setMeta(db: DB, key: string, value: string): void {
  stmt(
    db,
    "INSERT INTO ca_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = datetime('now')",
  ).run(key, value);
}

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
  const hi = meta(db, r.hi);
  const lo = meta(db, r.lo);
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

/**
 * A summary of a small table that changes whenever a row is added or removed, or rewritten by an
 * upsert (both tools move `last_seen` forward when they rewrite a row). Read from indexes and
 * counts, never the rows' text: it is checked on every assembly.
 */
function fingerprint(db: DB, part: keyof typeof FINGERPRINTS): string {
  const sql =
    part === 'patterns'
      ? 'SELECT COUNT(*), MAX(rowid), MAX(last_seen), TOTAL(occurrences) FROM error_patterns'
      : 'SELECT COUNT(*), MAX(rowid), MAX(last_seen), TOTAL(helpfulness) FROM strategies';
  return JSON.stringify(Object.values(stmt(db, sql).get() as object));
}

/** Which parts of the index lag behind their source tables (empty when it is current). Cheap. */
export function searchIndexBehind(db: DB): Part[] {
  const behind: Part[] = [];
  for (const part of ['packages', 'reasoning'] as const) {
    const r = range(db, part);
    if (r.hi < r.max || r.lo > 0) behind.push(part);
  }
  for (const part of ['patterns', 'strategies'] as const) {
    if (meta(db, FINGERPRINTS[part]) !== fingerprint(db, part)) behind.push(part);
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

/** Indexes the packages with ids in (from, to]. */
function indexPackages(db: DB, from: number, to: number, opts: IndexOptions): number {
  const rows = stmt(db, 'SELECT id, summary, file_path FROM context_packages WHERE id > ? AND id <= ? ORDER BY id').all(from, to) as {
    id: number;
    summary: string;
    file_path: string;
  }[];
  const insert = stmt(db, 'INSERT INTO ca_fts_packages (rowid, summary, artifact, path) VALUES (?, ?, ?, ?)');
  const insertPaths = stmt(db, 'INSERT OR REPLACE INTO ca_package_paths (package_id, paths) VALUES (?, ?)');
  const dir = opts.projectRoot === null ? undefined : artifactsDir(opts.projectRoot);
  const df = new Map<string, number>();
  for (const r of rows) {
    const artifact = dir === undefined ? '' : indexedArtifactText(opts.projectRoot, r.file_path, opts.artifactBytes, dir);
    const summary = indexableText(r.summary);
    const body = indexableText(artifact);
    const filePath = indexableText(r.file_path);
    insert.run(r.id, summary, body, filePath);
    const seen = new Set<string>();
    for (const text of [summary, body, filePath]) countTokens(text, df, seen);
    const paths = pathsInText(artifact);
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
export function syncSearchIndex(db: DB, opts: IndexOptions): SyncReport {
  const clock = opts.clock ?? (() => performance.now());
  const deadline = clock() + (opts.budgetMs ?? Infinity);
  const report: SyncReport = { packages: 0, reasoning: 0, patterns: 0, strategies: 0, backlog: 0 };
  const index = (part: keyof typeof RANGES, from: number, to: number) =>
    part === 'packages' ? indexPackages(db, from, to, opts) : indexReasoning(db, from, to);
  let batches = 0;
  for (const part of ['packages', 'reasoning'] as const) {
    const keys = RANGES[part];
    let { lo, hi, max, fresh } = range(db, part);
    if (fresh) clearPart(db, part);
    while (hi < max && (batches === 0 || clock() < deadline)) {
      const next = Math.min(max, hi + keys.batch);
      report[part] += index(part, hi, next);
      hi = next;
      batches++;
    }
    while (lo > 0 && hi === max && (batches === 0 || clock() < deadline)) {
      const next = Math.max(0, lo - keys.batch);
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
    const now = fingerprint(db, part);
    if (meta(db, FINGERPRINTS[part]) === now) continue;
    report[part] = reindexLearning(db, part);
    setMeta(db, FINGERPRINTS[part], now);
  }
  return report;
}

/** The rows of the learning tables as they are indexed: id, project, and the two indexed texts. */
const LEARNING = {
  patterns: {
    select: 'SELECT pattern_hash AS id, project_id, signature_json AS first, solution AS second FROM error_patterns ORDER BY rowid',
    insert: 'INSERT INTO ca_fts_patterns (signature, solution, pattern_hash, project_id) VALUES (?, ?, ?, ?)',
    clear: 'DELETE FROM ca_fts_patterns',
    first: (signatureJson: string) => signatureText(signatureJson),
  },
  strategies: {
    select: 'SELECT strategy_id AS id, project_id, topic AS first, insight AS second FROM strategies ORDER BY rowid',
    insert: 'INSERT INTO ca_fts_strategies (topic, insight, strategy_id, project_id) VALUES (?, ?, ?, ?)',
    clear: 'DELETE FROM ca_fts_strategies',
    first: (topic: string) => topic,
  },
} as const;

/** Re-indexes a small learning table whole (its rows are rewritten in place); returns how many rows. */
function reindexLearning(db: DB, part: keyof typeof LEARNING): number {
  const t = LEARNING[part];
  stmt(db, t.clear).run();
  const rows = stmt(db, t.select).all() as { id: string; project_id: string; first: string; second: string }[];
  const insert = stmt(db, t.insert);
  for (const r of rows) insert.run(indexableText(t.first(r.first)), indexableText(r.second), r.id, r.project_id);
  return rows.length;
}

/** Empties the index and forgets its watermarks (it is rebuilt by the next sync). */
export function resetSearchIndex(db: DB): void {
  clearPart(db, 'packages');
  clearPart(db, 'reasoning');
  for (const part of ['patterns', 'strategies'] as const) db.prepare(LEARNING[part].clear).run();
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
    const indexed = indexableText(typeof text === 'string' ? text : '');
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
 * first, at most `limit`.
 */
export function searchReasoning(
  db: DB,
  q: { match: string; sessionId: string; groups: readonly string[]; agents: readonly string[]; limit: number },
): Hit[] {
  return stmt(
    db,
    `SELECT f.rowid AS id, bm25(ca_fts_reasoning, 1.0, 0.5) AS bm25
     FROM ca_fts_reasoning f JOIN orchestration_logs l ON l.id = f.rowid
     WHERE ca_fts_reasoning MATCH @match AND l.session_id = @sessionId AND l.log_type = 'reasoning'
       AND COALESCE(l.group_id, 'global') IN (SELECT value FROM json_each(@groups))
       AND l.agent_type IN (SELECT value FROM json_each(@agents))
     ORDER BY bm25, f.rowid DESC LIMIT @limit`,
  ).all({ match: q.match, sessionId: q.sessionId, groups: JSON.stringify(q.groups), agents: JSON.stringify(q.agents), limit: q.limit }) as Hit[];
}

/**
 * For each MATCH expression (one query term each), the ids of the project's error patterns or
 * strategies it matches; and how many the project has. These tables are small per project, where
 * BM25's IDF turns to nothing for any term in half the rows, so relevance is scored from the
 * per-term matches instead (core/relevance.ts `termScores`).
 */
export function matchLearning(
  db: DB,
  table: 'patterns' | 'strategies',
  projectId: string,
  termMatches: readonly string[],
): { total: number; perTerm: string[][] } {
  const [fts, source, id] =
    table === 'patterns' ? (['ca_fts_patterns', 'error_patterns', 'pattern_hash'] as const) : (['ca_fts_strategies', 'strategies', 'strategy_id'] as const);
  const total = (stmt(db, `SELECT COUNT(*) AS n FROM ${source} WHERE project_id = ?`).get(projectId) as { n: number }).n;
  const find = stmt(db, `SELECT ${id} AS id FROM ${fts} WHERE ${fts} MATCH ? AND project_id = ?`);
  return { total, perTerm: termMatches.map((m) => (find.all(m, projectId) as { id: string }[]).map((r) => r.id)) };
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
export function highlightTexts(db: DB, match: string, docs: readonly MatchableText[]): MatchableText[] {
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
export function scorePackage(db: DB, match: string, id: number, weights: PackageColumnWeights): number | undefined {
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
