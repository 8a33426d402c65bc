/**
 * The one-off cost of the search index, as `npm run bench` reports it, on a copy of a generated
 * database as BAZINGA itself leaves it (none of this product's `ca_*` objects: no index, no schema
 * step done):
 *   - the whole build in the foreground (`bazinga-db index-search`: the schema step, then every row
 *     in short transactions), its wall time and transactions;
 *   - how the user sees it: `bazinga-db index-search --background`, what the plugin's SessionStart
 *     hook and install-skills run, returns at once; while the detached build runs, recording spawns
 *     (developer → QA → tech lead) are timed, each beside a `node -e 0`, answered by the warm
 *     assembler the same hook starts (`context-assembler serve`);
 *   - a dry run on the never-indexed database (a read never indexes: it ranks without relevance).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BENCH_GROUPS, BENCH_HISTORY, BENCH_SESSION, type BenchDb } from './generate.ts';
import { projectWith, type Release } from './relevance.ts';
import { median, startServer, stopServer } from './series.ts';
import { timed } from './timer.ts';

export interface IndexingBench {
  scale: number;
  /** The foreground build: wall time, transactions, rows indexed. */
  build_ms: number;
  transactions: number;
  indexed: { packages: number; reasoning: number };
  /** `index-search --background`: the command's own wall time (it returns once the job is started). */
  background_start_ms: number;
  /** Recording spawns timed while the background build ran, each as a ratio to the `node -e 0` beside it. */
  spawns_during_build: { ms: number; x_node: number; warned: boolean; served: boolean }[];
  /** Whether the background build was still running when the last timed spawn ended. */
  build_outlasted_spawns: boolean;
  /** Dry runs on the never-indexed database, and the `node -e 0` runs beside them. */
  dry_run_ms: number[];
  dry_run_node_ms: number[];
}

/** Drops every object of this product from a database file: the state of one only BAZINGA ever wrote. */
export function asBazingaLeftIt(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    const objects = (db.prepare("SELECT type, name FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\'").all() as { type: string; name: string }[])
      // FTS5's shadow tables go with their table.
      .filter((o) => !/^ca_fts_[a-z]+_(data|idx|content|docsize|config)$/.test(o.name));
    for (const o of objects.filter((x) => x.type === 'index')) db.exec(`DROP INDEX IF EXISTS "${o.name}"`);
    for (const o of objects.filter((x) => x.type === 'table')) db.exec(`DROP TABLE IF EXISTS "${o.name}"`);
    // BAZINGA's own files are in rollback-journal mode.
    db.pragma('journal_mode = DELETE');
    db.exec('VACUUM');
  } finally {
    db.close();
  }
}

async function run(file: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv) {
  const r = await timed(file, args, cwd, env);
  if (r.status !== 0) throw new Error(`${path.basename(args[0] ?? file)} ${args.slice(1, 4).join(' ')} failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  return r;
}

const nodeMs = async (cwd: string) => (await run(process.execPath, ['-e', '0'], cwd)).ms;

/** Whether an index-search job holds the database's lock (its process alive). */
function buildRunning(dbPath: string): boolean {
  try {
    process.kill(Number(fs.readFileSync(`${dbPath}.index-search.pid`, 'utf8').trim()), 0);
    return true;
  } catch {
    return false;
  }
}

export async function benchIndexing(release: Release, g: BenchDb, outDir: string, log: (line: string) => void): Promise<IndexingBench> {
  const db = path.join(release.root, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
  const group = BENCH_GROUPS[0] as string;
  const base = (BENCH_HISTORY[group] ?? 1) + 1;
  const fresh = (name: string) => {
    const root = projectWith(g, g.dbPath, path.join(outDir, name));
    asBazingaLeftIt(path.join(root, 'bazinga', 'bazinga.db'));
    return root;
  };
  try {
    // The foreground build.
    const fg = fresh('foreground');
    const built = await run(process.execPath, [db, '--project-root', fg, 'index-search', '--max-ms', '3600000'], fg);
    const report = JSON.parse(built.stdout) as { complete: boolean; rounds: number; indexed: { packages: number; reasoning: number } };
    if (!report.complete) throw new Error('the foreground build did not complete');
    log(`    ${g.packages} packages: index-search built the index in ${(built.ms / 1000).toFixed(1)} s (${report.rounds} transactions)`);

    // A dry run on the never-indexed database, beside node -e 0.
    const dry = fresh('dry-run');
    const dryMs: number[] = [];
    const dryNode: number[] = [];
    for (let i = 0; i < 11; i++) {
      dryNode.push(await nodeMs(dry));
      const r = await run(process.execPath, [release.bin, '--project-root', dry, '--session', BENCH_SESSION, '--group', group, '--agent', 'developer', '--iteration', String(base), '--dry-run', '--format', 'json'], dry);
      dryMs.push(r.ms);
    }

    // The background build, and recording spawns meanwhile.
    const bg = fresh('background');
    const dbPath = path.join(bg, 'bazinga', 'bazinga.db');
    const server = await startServer(release);
    const spawns: IndexingBench['spawns_during_build'] = [];
    let started: Awaited<ReturnType<typeof run>>;
    try {
      started = await run(process.execPath, [db, '--project-root', bg, 'index-search', '--background'], bg);
      const agents = ['developer', 'qa_expert', 'tech_lead'];
      for (let i = 0; i < 30 && (i < 3 || buildRunning(dbPath)); i++) {
        const node = await nodeMs(bg);
        const r = await run(
          process.execPath,
          [release.bin, '--project-root', bg, '--session', BENCH_SESSION, '--group', BENCH_GROUPS[i % BENCH_GROUPS.length] as string, '--agent', agents[i % 3] as string, '--iteration', String(base + Math.floor(i / 3)), '--format', 'json'],
          bg,
          { ...process.env, CONTEXT_ASSEMBLER_NO_SERVER: '0', CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1' },
        );
        spawns.push({ ms: r.ms, x_node: r.ms / node, warned: /being built in the background/.test(r.stderr), served: /answered by the warm assembler/.test(r.stderr) });
      }
    } finally {
      await stopServer(server);
    }
    const outlasted = buildRunning(dbPath);
    // Let the detached build finish before its folder is removed.
    for (let waited = 0; buildRunning(dbPath) && waited < 600_000; waited += 250) await new Promise((r) => setTimeout(r, 250));
    return {
      scale: g.packages,
      build_ms: built.ms,
      transactions: report.rounds,
      indexed: report.indexed,
      background_start_ms: started.ms,
      spawns_during_build: spawns,
      build_outlasted_spawns: outlasted,
      dry_run_ms: dryMs,
      dry_run_node_ms: dryNode,
    };
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

/** The figures of one scale, for the tables. */
export function indexingRatios(b: IndexingBench): { dryX: number; worstSpawnX: number; medianSpawnX: number } {
  const dryX = median(b.dry_run_ms) / median(b.dry_run_node_ms);
  const xs = b.spawns_during_build.map((s) => s.x_node);
  return { dryX, worstSpawnX: xs.length ? Math.max(...xs) : NaN, medianSpawnX: median(xs) };
}
