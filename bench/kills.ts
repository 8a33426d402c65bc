/**
 * A round of kills: recording calls of the orchestrator (`context-assembler --format json`, each
 * at an iteration of its own, so each must record) and bazinga-db writers (`save-context-package`,
 * `save-reasoning`) run together against a real warm assembler on a copy of the test fixture,
 * while the server or a writer is SIGKILLed at a random moment (seeded: the same seed, the same
 * plan). The callers are never killed: every one must print a block. Afterwards:
 *
 * - corruptions: `PRAGMA integrity_check` and `foreign_key_check` say nothing is wrong;
 * - duplicates: no iteration has more than one delivery record, no package is recorded consumed
 *   twice for one iteration;
 * - records of undelivered blocks: every record is of the block its caller printed (the same
 *   packages), and a caller that printed no block (the fallback) has no record;
 * - lost writes: every writer that said it saved (exit 0 and an id) finds its row; a killed writer
 *   left its row whole or not at all.
 *
 * Usage: tsx bench/kills.ts [--rounds N] [--seed S]   (default 30 rounds, seed 1; run node
 * scripts/build.mjs first: the server runs the bundles). Exit 1 when any count above is not 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { copyIndexedFixture } from '../test/inProcess.ts';
import { S1 } from '../test/helpers.ts';
import { rng } from './generate.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = path.join(REPO, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const DB_BIN = path.join(REPO, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
const CALLERS_PER_ROUND = 3;
const WRITERS_PER_ROUND = 2;
/** Kills land within this many ms of a round's start (a call takes 0.1–1 s). */
const KILL_WINDOW_MS = 600;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv, cwd: string): { child: ChildProcess; done: Promise<Finished> } {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const done = new Promise<Finished>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

async function waitFor(ok: () => boolean, ms = 15_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 25))) if (ok()) return true;
  return ok();
}

export interface KillRound {
  rounds: number;
  seed: number;
  calls: number;
  served: number;
  unanswered: number;
  own: number;
  server_kills: number;
  writer_kills: number;
  writes_saved: number;
  corruptions: string[];
  duplicates: string[];
  undelivered_records: string[];
  lost_writes: string[];
  half_written: string[];
  fallbacks: number;
}

export async function killRound(rounds = 30, seed = 1): Promise<KillRound> {
  const random = rng(seed);
  const runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-kills-run-'));
  fs.chmodSync(runtime, 0o700);
  const project = copyIndexedFixture('ca-kills-');
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: runtime, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1' };
  delete env.CONTEXT_ASSEMBLER_NO_SERVER;
  delete env.CLAUDE_PROJECT_DIR;
  const warm = createRequire(import.meta.url)(path.join(REPO, 'skills', 'bazinga-db', 'bin', 'warmServer.cjs')) as { socketPath: (b: string) => string | undefined; SERVER_NODE_FLAGS: string[] };
  const saved = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runtime;
  const socket = warm.socketPath(path.join(REPO, 'skills', 'context-assembler', 'dist', 'assemble.cjs'));
  if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = saved;
  if (socket === undefined) throw new Error('no socket for the warm assembler here');
  const artifacts = path.join(project.root, 'bazinga', 'artifacts', S1);
  fs.mkdirSync(artifacts, { recursive: true });

  let server: ChildProcess | undefined;
  const serverUp = () => server !== undefined && server.exitCode === null && server.signalCode === null;
  const startServer = async () => {
    for (const f of [socket, `${socket}.pid`]) fs.rmSync(f, { force: true });
    const s = spawn(process.execPath, [...warm.SERVER_NODE_FLAGS, LAUNCHER, 'serve', '--idle-ms', '120000'], { env, stdio: 'ignore' });
    server = s;
    if (!(await waitFor(() => fs.existsSync(`${socket}.pid`) && fs.readFileSync(`${socket}.pid`, 'utf8') === String(s.pid)))) throw new Error('the warm assembler did not start');
  };

  const out: KillRound = { rounds, seed, calls: 0, served: 0, unanswered: 0, own: 0, server_kills: 0, writer_kills: 0, writes_saved: 0, corruptions: [], duplicates: [], undelivered_records: [], lost_writes: [], half_written: [], fallbacks: 0 };
  /** What each call printed, by its iteration (undefined: the fallback, no block). */
  const printed = new Map<number, number[] | undefined>();
  /** Each writer's marker, whether it said it saved, and its kind. */
  const writes: { marker: string; kind: 'package' | 'reasoning'; saved: boolean; killed: boolean }[] = [];
  let iteration = 1000;
  try {
    for (let round = 0; round < rounds; round++) {
      if (!serverUp()) await startServer();
      const callers = Array.from({ length: CALLERS_PER_ROUND }, () => {
        const it = iteration++;
        const args = [LAUNCHER, '--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', String(it), '--format', 'json'];
        return { iteration: it, ...run(args, env, project.root) };
      });
      const writers = Array.from({ length: WRITERS_PER_ROUND }, (_, w) => {
        const marker = `kills-${seed}-${round}-${w}`;
        const kind: 'package' | 'reasoning' = w % 2 === 0 ? 'package' : 'reasoning';
        const file = path.join(artifacts, `${marker}.md`);
        fs.writeFileSync(file, `# ${marker}\n\nFindings of round ${round}.\n`);
        const args =
          kind === 'package'
            ? [DB_BIN, '--quiet', '--db', project.dbPath, 'save-context-package', S1, 'AUTH', 'research', path.relative(project.root, file), 'developer', '["qa_expert"]', 'medium', `Research ${marker}: token rotation notes`]
            : [DB_BIN, '--quiet', '--db', project.dbPath, 'save-reasoning', S1, 'AUTH', 'developer', 'understanding', `Reasoning ${marker}: the refresh token rotates on every use`];
        return { marker, kind, ...run(args, env, project.root) };
      });
      // The plan: kill the server, a writer, or nothing, at a random moment of the round.
      const pick = random();
      const delay = Math.floor(random() * KILL_WINDOW_MS);
      const victim = pick < 0.5 ? 'server' : pick < 0.8 ? 'writer' : 'none';
      const killedWriter = victim === 'writer' ? Math.floor(random() * writers.length) : -1;
      const killer = setTimeout(() => {
        if (victim === 'server' && server !== undefined && serverUp()) {
          server.kill('SIGKILL');
          out.server_kills++;
        }
        const w = writers[killedWriter];
        if (w !== undefined && w.child.exitCode === null && w.child.signalCode === null) {
          w.child.kill('SIGKILL');
          out.writer_kills++;
        }
      }, delay);
      const [calls, written] = await Promise.all([Promise.all(callers.map((c) => c.done)), Promise.all(writers.map((w) => w.done))]);
      clearTimeout(killer);
      calls.forEach((r, i) => {
        const it = (callers[i] as { iteration: number }).iteration;
        out.calls++;
        if (r.stderr.includes('answered by the warm assembler')) out.served++;
        else if (r.stderr.includes('gave no answer')) out.unanswered++;
        else out.own++;
        let doc: { fallback?: boolean; packages?: { id: number }[]; consumption?: string } | undefined;
        try {
          doc = JSON.parse(r.stdout);
        } catch {
          doc = undefined;
        }
        if (r.code !== 0 || doc === undefined || doc.fallback === true || doc.consumption !== 'recorded') {
          out.fallbacks++;
          printed.set(it, undefined);
        } else printed.set(it, (doc.packages ?? []).map((p) => p.id).sort((a, b) => a - b));
      });
      written.forEach((r, i) => {
        const w = writers[i] as { marker: string; kind: 'package' | 'reasoning' };
        writes.push({ marker: w.marker, kind: w.kind, saved: r.code === 0, killed: r.signal === 'SIGKILL' });
      });
    }
  } finally {
    if (server !== undefined && serverUp()) {
      server.kill('SIGTERM');
      await waitFor(() => !serverUp(), 5_000);
    }
  }

  const db = new Database(project.dbPath, { readonly: true });
  try {
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    if (integrity.join() !== 'ok') out.corruptions.push(...integrity);
    for (const row of db.pragma('foreign_key_check') as unknown[]) out.corruptions.push(`foreign key: ${JSON.stringify(row)}`);
    const records = db.prepare("SELECT iteration, outcome, detail FROM ca_assemblies WHERE session_id = ? AND agent_type = 'qa_expert' AND iteration >= 1000").all(S1) as { iteration: number; outcome: string; detail: string }[];
    const byIteration = new Map<number, number[][]>();
    for (const r of records) {
      if (r.outcome !== 'recorded') continue;
      const list = byIteration.get(r.iteration) ?? [];
      list.push([...((JSON.parse(r.detail).delivered ?? []) as number[])].sort((a, b) => a - b));
      byIteration.set(r.iteration, list);
    }
    const consumed = db.prepare("SELECT iteration, package_id, COUNT(*) AS n FROM consumption_scope WHERE agent_type = 'qa_expert' AND iteration >= 1000 GROUP BY iteration, package_id").all() as { iteration: number; package_id: number; n: number }[];
    for (const c of consumed) if (c.n > 1) out.duplicates.push(`iteration ${c.iteration}: package ${c.package_id} consumed ${c.n} times`);
    for (const [it, shown] of printed) {
      const recs = byIteration.get(it) ?? [];
      if (recs.length > 1) out.duplicates.push(`iteration ${it}: ${recs.length} records`);
      if (shown === undefined) {
        if (recs.length > 0) out.undelivered_records.push(`iteration ${it}: recorded, but its caller printed no block`);
        continue;
      }
      if (recs.length === 0) out.undelivered_records.push(`iteration ${it}: a block printed and not recorded`);
      for (const rec of recs) if (rec.join() !== shown.join()) out.undelivered_records.push(`iteration ${it}: record [${rec.join()}] vs printed [${shown.join()}]`);
      const eaten = consumed.filter((c) => c.iteration === it).map((c) => c.package_id).sort((a, b) => a - b);
      if (eaten.join() !== shown.join()) out.undelivered_records.push(`iteration ${it}: consumed [${eaten.join()}] vs printed [${shown.join()}]`);
    }
    for (const w of writes) {
      const rows =
        w.kind === 'package'
          ? (db.prepare('SELECT summary AS text FROM context_packages WHERE session_id = ? AND instr(summary, ?) > 0').all(S1, w.marker) as { text: string }[])
          : (db.prepare('SELECT content AS text FROM orchestration_logs WHERE session_id = ? AND instr(content, ?) > 0').all(S1, w.marker) as { text: string }[]);
      if (w.saved) out.writes_saved++;
      if (w.saved && rows.length !== 1) out.lost_writes.push(`${w.kind} ${w.marker}: said saved, ${rows.length} rows`);
      if (!w.saved && rows.length > 1) out.half_written.push(`${w.kind} ${w.marker}: ${rows.length} rows`);
      for (const r of rows) if (!r.text.includes(w.kind === 'package' ? 'token rotation notes' : 'rotates on every use')) out.half_written.push(`${w.kind} ${w.marker}: text cut short`);
    }
  } finally {
    db.close();
    fs.rmSync(runtime, { recursive: true, force: true });
    project.cleanup();
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    fs.writeSync(1, 'bench/kills.ts: a round of SIGKILLs of the warm assembler and of bazinga-db writers, then integrity, duplicates, records of undelivered blocks and lost writes counted\n\nUsage: tsx bench/kills.ts [--rounds N] [--seed S]   (default 30 rounds, seed 1; run node scripts/build.mjs first)\n');
    process.exit(0);
  }
  const flag = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    const v = i === -1 ? fallback : Number(process.argv[i + 1]);
    if (!Number.isInteger(v) || v < 1) {
      fs.writeSync(2, `${name} must be a positive integer, got '${process.argv[i + 1]}'\n`);
      process.exit(2);
    }
    return v;
  };
  const r = await killRound(flag('--rounds', 30), flag('--seed', 1));
  const problems = r.corruptions.length + r.duplicates.length + r.undelivered_records.length + r.lost_writes.length + r.half_written.length;
  console.log(`a round of kills: ${r.rounds} rounds (seed ${r.seed}), ${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(2)}`);
  console.log(`calls ${r.calls}: answered by the server ${r.served}, taken and not answered (ran themselves) ${r.unanswered}, in their own process ${r.own}; fallback blocks ${r.fallbacks}`);
  console.log(`kills: server ${r.server_kills}, writers ${r.writer_kills}; writes said saved ${r.writes_saved}`);
  console.log(`corruptions ${r.corruptions.length}, duplicates ${r.duplicates.length}, records of undelivered blocks ${r.undelivered_records.length}, lost writes ${r.lost_writes.length}, half-written rows ${r.half_written.length}`);
  for (const line of [...r.corruptions, ...r.duplicates, ...r.undelivered_records, ...r.lost_writes, ...r.half_written].slice(0, 20)) console.log(`  ${line}`);
  process.exit(problems === 0 ? 0 : 1);
}
