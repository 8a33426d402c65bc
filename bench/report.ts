/**
 * What `context-assembler report --format html` costs on a session of 1,000 assemblies: a copy of
 * the bundled v19 fixture whose first session gets 1,000 assembly records (each as a recording
 * call of a busy session leaves one: 14 items shown, 50 left out listed), then the real command,
 * timed from the timing helper (bench/timer.ts) beside `node -e 0`, five times; the file's size.
 *
 * Usage: a section of npm run bench
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Release } from './relevance.ts';
import { fakeAssemblies } from '../test/fakeAssemblies.ts';
import { timed } from './timer.ts';

export interface ReportCost {
  assemblies: number;
  runs: number;
  node_median_ms: number;
  median_ms: number;
  bytes: number;
}

/** The targets: one file under 2 MB, written in under 1 s. */
export const REPORT_TARGETS = { ms: 1000, bytes: 2 * 1024 * 1024 };

const SESSION = 'bazinga_20251201_090000';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

export async function benchReport(release: Release, repoRoot: string, assemblies = 1000, runs = 5): Promise<ReportCost> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-report-bench-'));
  try {
    fs.cpSync(path.join(repoRoot, 'test', 'fixtures', 'bazinga-v19'), root, { recursive: true });
    const lib = (await import(pathToFileURL(path.join(release.root, 'skills', 'bazinga-db', 'scripts', 'lib', 'index.ts')).href)) as {
      openDatabase: (o: { dbPath: string; create: boolean }) => { transaction: (f: () => void) => () => void; close: () => void };
      insertAssembly: (db: unknown, r: Record<string, unknown>) => number;
    };
    const db = lib.openDatabase({ dbPath: path.join(root, 'bazinga', 'bazinga.db'), create: false });
    db.transaction(() => {
      for (const r of fakeAssemblies(assemblies, SESSION, '0.1.0')) lib.insertAssembly(db, r);
    })();
    db.close();
    const out = path.join(root, 'report.html');
    const args = [release.bin, 'report', '--project-root', root, '--session', SESSION, '--format', 'html', '--out', out];
    const node: number[] = [];
    const ms: number[] = [];
    await timed(process.execPath, args, root); // untimed: the page cache and the code cache
    for (let i = 0; i < runs; i++) {
      node.push((await timed(process.execPath, ['-e', '0'], root)).ms);
      const r = await timed(process.execPath, args, root);
      if (r.status !== 0) throw new Error(`report failed (exit ${r.status}): ${r.stderr.slice(0, 300)}`);
      ms.push(r.ms);
    }
    return { assemblies, runs, node_median_ms: median(node), median_ms: median(ms), bytes: fs.statSync(out).size };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
