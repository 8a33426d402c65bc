/**
 * The index side of `npm run bench`:
 *   - indexedCopy: the generated database with its full-text index fully built by a given
 *     release's own code (cached beside the database, keyed by a hash of that release's indexing
 *     sources), the state of a database that release has kept in step all along;
 *   - benchIndexBuild: the first orchestrator call on a database whose index was never built (the
 *     default indexing budget), the whole build without a budget, and the index's size.
 * Relevance on/off itself is measured by the realistic series (bench/series.ts), with
 * `enable_fts5` false in the project's bazinga/skills_config.json for "off".
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { timed } from './timer.ts';
import { BENCH_GROUPS, BENCH_HISTORY, BENCH_SESSION, type BenchDb } from './generate.ts';

/** A release of the product: a folder holding skills/ (with built bundles) and node_modules. */
export interface Release {
  key: 'current' | 'previous';
  label: string;
  root: string;
  bin: string;
  /** The commit (and, for the working tree, whether files differ from it). */
  commit: string;
}

export interface IndexBench {
  scale: number;
  first_read_ms: number;
  first_read_backlog: number;
  full_build_ms: number;
  rows: { packages: number; reasoning: number };
  index_mb: number;
}

/** Sources whose change changes what the index holds. */
const INDEX_SOURCES = ['schema.ts', 'searchText.ts', 'artifacts.ts', 'repo/searchIndex.ts'];
/** Sources whose change changes what the CLI stores beside a reasoning entry. */
const WRITE_SOURCES = ['cli.ts', 'commands/learning.ts', 'tokens.ts', 'repo/tokenCounts.ts', 'repo/reasoning.ts', 'redact.ts'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mod = any;
const load = (release: Release, rel: string): Promise<Mod> => import(pathToFileURL(path.join(release.root, 'skills', 'bazinga-db', 'scripts', 'lib', rel)).href);

function sourcesKey(release: Release, sources: readonly string[]): string {
  const h = createHash('sha256');
  for (const rel of sources) {
    const file = path.join(release.root, 'skills', 'bazinga-db', 'scripts', 'lib', rel);
    h.update(rel).update(fs.existsSync(file) ? fs.readFileSync(file) : 'missing');
  }
  return h.digest('hex').slice(0, 10);
}

/** The settings the release's CLI indexes with (artifact bytes), without a time budget. */
async function indexOptions(release: Release, projectRoot: string): Promise<{ projectRoot: string; artifactBytes: number }> {
  const settings = await load(release, 'settings.ts');
  const s = typeof settings.indexSettings === 'function' ? settings.indexSettings(projectRoot) : { artifactBytes: 16384 };
  return { projectRoot, artifactBytes: s.artifactBytes };
}

/**
 * The generated database with its index fully built by `release` (cached beside the database).
 * Returns the file, how long building took and whether it was cached.
 */
export async function indexedCopy(release: Release, g: BenchDb): Promise<{ file: string; ms: number; cached: boolean }> {
  const file = path.join(g.root, `indexed-${sourcesKey(release, INDEX_SOURCES)}.db`);
  const marker = `${file}.complete.json`;
  if (fs.existsSync(marker)) return { file, ms: (JSON.parse(fs.readFileSync(marker, 'utf8')) as { ms: number }).ms, cached: true };
  const started = performance.now();
  fs.rmSync(file, { force: true });
  fs.copyFileSync(g.dbPath, file);
  const { openDatabase, writeTransaction } = await load(release, 'db.ts');
  const { syncSearchIndex } = await load(release, 'repo/searchIndex.ts');
  const db = openDatabase({ dbPath: file });
  const opts = await indexOptions(release, g.root);
  writeTransaction(db, () => syncSearchIndex(db, opts));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const ms = Math.round(performance.now() - started);
  fs.writeFileSync(marker, JSON.stringify({ ms, release: release.commit }) + '\n');
  return { file, ms, cached: false };
}

type RunCli = (argv: readonly string[], io: { cwd: string; env: NodeJS.ProcessEnv; stdout: (t: string) => void; stderr: (t: string) => void }) => number;

/**
 * What `release`'s own bazinga-db CLI stores beside the bench session's generated reasoning entries
 * when it writes them (this release: the token count of each entry as an assembly shows it), found
 * by writing the same entries through that CLI (runCli in process) into a scratch database and
 * reading its ca_token_counts. The generator writes rows directly, so without this the session
 * would look as if an older tool had written it. Cached in bench/out/, keyed by a hash of the
 * release's write-path sources and of the entries.
 */
export async function cliStoredCounts(release: Release, g: BenchDb): Promise<{ rows: [string, number][]; ms: number; cached: boolean }> {
  const { openDatabase } = await load(release, 'db.ts');
  const src = openDatabase({ dbPath: g.dbPath, create: false });
  const entries = src
    .prepare(
      `SELECT group_id, agent_type, reasoning_phase, content, iteration, confidence_level, references_json FROM orchestration_logs
       WHERE session_id = ? AND log_type = 'reasoning' ORDER BY id`,
    )
    .all(BENCH_SESSION) as { group_id: string; agent_type: string; reasoning_phase: string; content: string; iteration: number | null; confidence_level: string | null; references_json: string | null }[];
  src.close();
  // The bench session is the same at every scale where it has the same size: one replay serves them.
  const entriesKey = createHash('sha256').update(JSON.stringify(entries)).digest('hex').slice(0, 10);
  const file = path.join(path.dirname(g.root), `cli-counts-${sourcesKey(release, WRITE_SOURCES)}-${entriesKey}.json`);
  if (fs.existsSync(file)) {
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as { rows: [string, number][]; ms: number };
    return { ...c, cached: true };
  }
  const started = performance.now();
  const { runCli } = (await load(release, 'cli.ts')) as { runCli: RunCli };
  const scratch = path.join(path.dirname(g.root), 'run', `cli-counts-${release.key}`);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(path.join(scratch, '.claude'), { recursive: true });
  fs.mkdirSync(path.join(scratch, 'bazinga'), { recursive: true });
  const run = (argv: string[]) => {
    let err = '';
    const code = runCli(['--project-root', scratch, '--quiet', ...argv], { cwd: scratch, env: {}, stdout: () => {}, stderr: (t) => (err += t) });
    if (code !== 0) throw new Error(`${release.label}: bazinga-db ${argv[0]} failed: ${err.slice(0, 300)}`);
  };
  run(['create-session', BENCH_SESSION, 'parallel', 'Benchmark session']);
  for (const e of entries) {
    const argv = ['save-reasoning', BENCH_SESSION, e.group_id, e.agent_type, e.reasoning_phase, e.content];
    if (e.iteration !== null) argv.push('--iteration', String(e.iteration));
    if (e.confidence_level !== null) argv.push('--confidence', e.confidence_level);
    if (e.references_json !== null) argv.push('--references', e.references_json);
    run(argv);
  }
  const db = openDatabase({ dbPath: path.join(scratch, 'bazinga', 'bazinga.db'), create: false });
  const rows = (db.prepare('SELECT text_hash, tokens FROM ca_token_counts ORDER BY text_hash').all() as { text_hash: string; tokens: number }[]).map(
    (r) => [r.text_hash, r.tokens] as [string, number],
  );
  db.close();
  fs.rmSync(scratch, { recursive: true, force: true });
  const ms = Math.round(performance.now() - started);
  fs.writeFileSync(file, JSON.stringify({ ms, release: release.commit, entries: entries.length, rows }) + '\n');
  return { rows, ms, cached: false };
}

/**
 * A project folder holding a copy of `dbFile` (plus `counts` added to its ca_token_counts) and the
 * bench session's artifact files; `config` becomes its bazinga/skills_config.json.
 */
export function projectWith(g: BenchDb, dbFile: string, dir: string, config?: unknown, counts: readonly [string, number][] = []): string {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, '.claude'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'bazinga', 'artifacts'), { recursive: true });
  fs.cpSync(path.join(g.root, 'bazinga', 'artifacts', BENCH_SESSION), path.join(dir, 'bazinga', 'artifacts', BENCH_SESSION), { recursive: true });
  const dbPath = path.join(dir, 'bazinga', 'bazinga.db');
  fs.copyFileSync(dbFile, dbPath);
  if (counts.length > 0) {
    const db = new Database(dbPath);
    const insert = db.prepare('INSERT OR IGNORE INTO ca_token_counts (text_hash, tokens) VALUES (?, ?)');
    db.transaction(() => {
      for (const [hash, tokens] of counts) insert.run(hash, tokens);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  if (config !== undefined) fs.writeFileSync(path.join(dir, 'bazinga', 'skills_config.json'), JSON.stringify(config, null, 2) + '\n');
  return dir;
}

async function timeCall(bin: string, args: string[], cwd: string): Promise<{ ms: number; stderr: string }> {
  const r = await timed(process.execPath, [bin, ...args], cwd);
  if (r.status !== 0) throw new Error(`call failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  return { ms: r.ms, stderr: r.stderr };
}

/** The first read of a database whose index was never built, and the whole build without a budget. */
export async function benchIndexBuild(release: Release, g: BenchDb, outDir: string): Promise<IndexBench> {
  const { openDatabase, writeTransaction } = await load(release, 'db.ts');
  const { resetSearchIndex, syncSearchIndex } = await load(release, 'repo/searchIndex.ts');
  const indexed = await indexedCopy(release, g);
  const db = openDatabase({ dbPath: indexed.file, create: false });
  const size = db.prepare("SELECT TOTAL(pgsize) AS b FROM dbstat WHERE name LIKE 'ca_fts%' OR name = 'ca_package_paths' OR name = 'ca_term_df'").get() as { b: number };
  db.close();
  // A copy without an index, as a database written only by the original tool would be.
  const fresh = projectWith(g, g.dbPath, path.join(outDir, 'first-read'));
  const conn = openDatabase({ dbPath: path.join(fresh, 'bazinga', 'bazinga.db') });
  writeTransaction(conn, () => resetSearchIndex(conn));
  conn.close();
  const group = BENCH_GROUPS[0] as string;
  const first = await timeCall(
    release.bin,
    ['--project-root', fresh, '--session', BENCH_SESSION, '--group', group, '--agent', 'developer', '--iteration', String((BENCH_HISTORY[group] ?? 1) + 1), '--format', 'json'],
    fresh,
  );
  const backlog = Number(/still has (\d+) rows/.exec(first.stderr)?.[1] ?? 0);
  const whole = projectWith(g, g.dbPath, path.join(outDir, 'full-build'));
  const full = openDatabase({ dbPath: path.join(whole, 'bazinga', 'bazinga.db') });
  writeTransaction(full, () => resetSearchIndex(full));
  const opts = await indexOptions(release, whole);
  const start = performance.now();
  const report = writeTransaction(full, () => syncSearchIndex(full, opts)) as { packages: number; reasoning: number };
  const fullMs = performance.now() - start;
  full.close();
  fs.rmSync(outDir, { recursive: true, force: true });
  return {
    scale: g.packages,
    first_read_ms: first.ms,
    first_read_backlog: backlog,
    full_build_ms: fullMs,
    rows: { packages: report.packages, reasoning: report.reasoning },
    index_mb: size.b / 1e6,
  };
}
