/**
 * The relevance part of `npm run bench`:
 *   - realistic orchestrator calls (iteration ≥ 1, prior consumption, recorded, never dry runs) on
 *     fresh copies of an indexed database, relevance off (enable_fts5 false), on with the implicit
 *     task (what a BAZINGA orchestrator passing session, group and agent gets) and on with --task,
 *     interleaved call by call so that all three see the same machine;
 *   - the first read of a database whose index was never built (the orchestrator's call, with the
 *     default indexing budget), and the whole build without a budget;
 *   - the size of the index.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase, writeTransaction } from '../skills/bazinga-db/scripts/lib/db.ts';
import { resetSearchIndex, syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import { BENCH_SESSION, GROUPS, type GeneratedDb } from './generate.ts';

export interface RelevanceBench {
  scale: number;
  off_ms: number;
  implicit_ms: number;
  explicit_ms: number;
}

export interface IndexBench {
  scale: number;
  first_read_ms: number;
  first_read_backlog: number;
  full_build_ms: number;
  rows: { packages: number; reasoning: number };
  index_mb: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** A project folder holding a copy of `db` (and nothing else). */
function projectWith(dbFile: string, dir: string): string {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, '.claude'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'bazinga', 'artifacts'), { recursive: true });
  fs.copyFileSync(dbFile, path.join(dir, 'bazinga', 'bazinga.db'));
  return dir;
}

/** The generated database with its index fully built (cached beside it). */
export function indexedCopy(g: GeneratedDb): string {
  const file = path.join(g.root, 'indexed.db');
  if (fs.existsSync(`${file}.complete`)) return file;
  fs.copyFileSync(g.dbPath, file);
  const db = openDatabase({ dbPath: file });
  writeTransaction(db, () => syncSearchIndex(db, { projectRoot: g.root, artifactBytes: DEFAULT_CONFIG.relevance.artifact_index_bytes }));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  fs.writeFileSync(`${file}.complete`, '');
  return file;
}

function timeCall(bin: string, args: string[]): { ms: number; stderr: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`call failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
  return { ms, stderr: r.stderr };
}

/** Realistic calls, relevance off / implicit / explicit, interleaved; medians. */
export function benchRelevanceCalls(g: GeneratedDb, bin: string, outDir: string, calls: number): RelevanceBench {
  const indexed = indexedCopy(g);
  const off = projectWith(indexed, path.join(outDir, 'series-off'));
  const implicit = projectWith(indexed, path.join(outDir, 'series-implicit'));
  const explicit = projectWith(indexed, path.join(outDir, 'series-explicit'));
  const offConfig = path.join(off, 'bazinga', 'skills_config.json');
  fs.writeFileSync(offConfig, JSON.stringify({ context_engineering: { enable_fts5: false } }));
  const samples = { off: [] as number[], implicit: [] as number[], explicit: [] as number[] };
  for (let i = 0; i < calls; i++) {
    // Each call hands out packages not given before: the same group and agent come back at the same
    // iteration (their earlier packages are consumed) or at the next one.
    const request = ['--session', BENCH_SESSION, '--group', GROUPS[i % GROUPS.length] as string, '--agent', 'developer', '--iteration', String(1 + Math.floor(i / 20))];
    const runs = [
      () => samples.off.push(timeCall(bin, ['--project-root', off, ...request]).ms),
      () => samples.implicit.push(timeCall(bin, ['--project-root', implicit, ...request]).ms),
      () => samples.explicit.push(timeCall(bin, ['--project-root', explicit, ...request, '--task', 'refresh token rotation in src/auth/session.ts fails with a 500']).ms),
    ];
    for (const run of i % 2 === 0 ? runs : [...runs].reverse()) run();
  }
  return { scale: g.packages, off_ms: median(samples.off), implicit_ms: median(samples.implicit), explicit_ms: median(samples.explicit) };
}

/** The first read of a database whose index was never built, and the whole build without a budget. */
export function benchIndexBuild(g: GeneratedDb, bin: string, outDir: string): IndexBench {
  const indexed = indexedCopy(g);
  const db = openDatabase({ dbPath: indexed, create: false });
  const size = db.prepare("SELECT TOTAL(pgsize) AS b FROM dbstat WHERE name LIKE 'ca_fts%' OR name = 'ca_package_paths'").get() as { b: number };
  db.close();
  // A copy without an index, as a database written only by the original tool would be.
  const fresh = projectWith(g.dbPath, path.join(outDir, 'first-read'));
  const conn = openDatabase({ dbPath: path.join(fresh, 'bazinga', 'bazinga.db') });
  writeTransaction(conn, () => resetSearchIndex(conn));
  conn.close();
  const first = timeCall(bin, ['--project-root', fresh, '--session', BENCH_SESSION, '--group', 'G00', '--agent', 'developer', '--iteration', '1']);
  const backlog = Number(/still has (\d+) rows/.exec(first.stderr)?.[1] ?? 0);
  const whole = projectWith(g.dbPath, path.join(outDir, 'full-build'));
  const full = openDatabase({ dbPath: path.join(whole, 'bazinga', 'bazinga.db') });
  writeTransaction(full, () => resetSearchIndex(full));
  const start = performance.now();
  const report = writeTransaction(full, () => syncSearchIndex(full, { projectRoot: whole, artifactBytes: DEFAULT_CONFIG.relevance.artifact_index_bytes }));
  const fullMs = performance.now() - start;
  full.close();
  return {
    scale: g.packages,
    first_read_ms: first.ms,
    first_read_backlog: backlog,
    full_build_ms: fullMs,
    rows: { packages: report.packages, reasoning: report.reasoning },
    index_mb: size.b / 1e6,
  };
}
