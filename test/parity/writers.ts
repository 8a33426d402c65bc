/**
 * The two ways the grid's writes reach a database, one interface:
 *   - bazingaWriter: BAZINGA's own `bazinga_db.py` of the project, as its agents run it
 *     (`python3 .claude/skills/bazinga-db/scripts/bazinga_db.py --quiet <command> …`), a real
 *     process per write; its rows carry the real time, to the second;
 *   - productWriter: this product's bazinga-db (its CLI in this process, on the real SQLite file);
 *     a row that orders by time gets the next second of a fixed clock (stamped after the write, so
 *     the offline test needs no sleeping), and `update-task-group`, which this product does not
 *     implement, is the UPDATE BAZINGA's own command makes.
 * Each returns what BAZINGA prints back: the package id, the reasoning log id, the pattern hash.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../../skills/bazinga-db/scripts/lib/cli.ts';
import type { Write } from './grid.ts';

export const BAZINGA_DB = '.claude/skills/bazinga-db/scripts/bazinga_db.py';

export interface Written {
  packageId?: number;
  logId?: number;
  patternHash?: string;
}

export interface Writer {
  /** The project whose database it writes. */
  readonly root: string;
  createSession(session: string, requirements: string): Promise<void>;
  /** One write (its commands one after the other); writers of several projects may run at once. */
  write(session: string, w: Write): Promise<Written>;
}

/** Whether a write makes a row the builder orders by time (a package's created_at, a reasoning entry's timestamp). */
export const stampsTime = (w: Write) => w.do === 'package' || w.do === 'reasoning';

/** The artifact a package points to, written first (as an agent writes its report before saving the package). */
function writeArtifact(root: string, session: string, file: string, body: string): string {
  const rel = `bazinga/artifacts/${session}/${file}`;
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), body);
  return rel;
}

/** The arguments of the bazinga-db command(s) a write is, as BAZINGA's skills pass them. */
function commandsOf(session: string, w: Write, file?: string): string[][] {
  switch (w.do) {
    case 'group':
      return [['create-task-group', w.group, session, w.name, 'pending', ...(w.specializations ? ['--specializations', JSON.stringify(w.specializations)] : [])]];
    case 'package':
      return [['save-context-package', session, w.group, w.type, file as string, w.producer, JSON.stringify(w.consumers), w.priority, w.summary]];
    case 'reasoning':
      return [['save-reasoning', session, w.group, w.agent, w.phase, w.content]];
    case 'error-pattern':
      return Array.from({ length: w.saves }, () => ['save-error-pattern', w.project, w.errorType, w.message, w.solution, ...(w.lang ? ['--lang', w.lang] : [])]);
    case 'strategy':
      return [['save-strategy', w.project, w.topic, w.insight, ...(w.lang ? ['--lang', w.lang] : []), ...(w.framework ? ['--framework', w.framework] : [])]];
    case 'update-group': {
      const flags: string[] = [];
      if (w.revisionCount !== undefined) flags.push('--revision_count', String(w.revisionCount));
      if (w.status !== undefined) flags.push('--status', w.status);
      if (w.qaAttempts !== undefined) flags.push('--qa_attempts', String(w.qaAttempts));
      if (w.lastReviewStatus !== undefined) flags.push('--last_review_status', w.lastReviewStatus);
      return [['update-task-group', w.group, session, ...flags]];
    }
  }
}

/** The JSON a command printed (its last JSON document on stdout). */
function printed(stdout: string): Record<string, unknown> {
  const start = stdout.indexOf('{');
  if (start < 0) return {};
  try {
    return JSON.parse(stdout.slice(start)) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function collect(w: Write, results: Record<string, unknown>[]): Written {
  const first = results[0] ?? {};
  if (w.do === 'package') return { packageId: Number(first.package_id) };
  if (w.do === 'reasoning') return { logId: Number(first.log_id) };
  if (w.do === 'error-pattern') return { patternHash: String(first.pattern_hash) };
  return {};
}

/** Runs a command to its end: its exit code and both streams. */
function runProcess(command: string, args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** BAZINGA's own bazinga_db.py of the project at `root`, one real process per command. */
export function bazingaWriter(root: string, env: NodeJS.ProcessEnv): Writer {
  const python = async (script: string, args: string[]): Promise<Record<string, unknown>> => {
    const r = await runProcess('python3', [script, ...args], { cwd: root, env });
    if (r.code !== 0) throw new Error(`${path.basename(script)} ${args[0] ?? ''} exited ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 400)}`);
    return printed(r.stdout);
  };
  const run = (args: string[]) => python(BAZINGA_DB, ['--quiet', ...args]);
  return {
    root,
    async createSession(session, requirements) {
      await run(['create-session', session, 'parallel', requirements]);
      // The config-seeder step of a session's start (transitions, agent markers, special rules).
      await python('.claude/skills/bazinga-db/scripts/init_session.py', ['--session-id', session]);
    },
    async write(session, w) {
      const file = w.do === 'package' ? writeArtifact(root, session, w.file, w.body) : undefined;
      const results: Record<string, unknown>[] = [];
      for (const args of commandsOf(session, w, file)) results.push(await run(args));
      if (w.do === 'error-pattern') {
        const hash = String(results[0]?.pattern_hash);
        for (let i = 0; i < w.confirmations; i++) await run(['update-error-confidence', hash, w.project, 'success']);
      }
      return collect(w, results);
    },
  };
}

/** The fixed clock of the product writer's time-ordered rows: one second apart. */
const CLOCK_START = Date.UTC(2026, 0, 15, 9, 30, 0);
const sqliteTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** This product's bazinga-db on the project at `root`, in this process. */
export function productWriter(root: string): Writer {
  const dbPath = path.join(root, 'bazinga', 'bazinga.db');
  let tick = 0;
  const run = (args: string[]): Record<string, unknown> => {
    let out = '';
    let err = '';
    const code = runCli(['--quiet', '--db', dbPath, '--project-root', root, ...args], { cwd: root, env: {}, stdout: (t) => (out += t), stderr: (t) => (err += t) });
    if (code !== 0) throw new Error(`bazinga-db ${args[0]} exited ${code}: ${err.trim().slice(0, 400)}`);
    return printed(out);
  };
  const sql = (statement: string, ...params: unknown[]) => {
    const db = new Database(dbPath);
    try {
      db.prepare(statement).run(...params);
    } finally {
      db.close();
    }
  };
  return {
    root,
    async createSession(session, requirements) {
      run(['create-session', session, 'parallel', requirements]);
    },
    async write(session, w) {
      if (w.do === 'update-group') {
        // BAZINGA's update-task-group: each given column set, updated_at touched.
        const sets: [string, unknown][] = [];
        if (w.revisionCount !== undefined) sets.push(['revision_count', w.revisionCount]);
        if (w.status !== undefined) sets.push(['status', w.status]);
        if (w.qaAttempts !== undefined) sets.push(['qa_attempts', w.qaAttempts]);
        if (w.lastReviewStatus !== undefined) sets.push(['last_review_status', w.lastReviewStatus]);
        for (const [column, value] of sets) sql(`UPDATE task_groups SET ${column} = ?, updated_at = CURRENT_TIMESTAMP WHERE id = ? AND session_id = ?`, value, w.group, session);
        return {};
      }
      const file = w.do === 'package' ? writeArtifact(root, session, w.file, w.body) : undefined;
      const results = commandsOf(session, w, file).map(run);
      const written = collect(w, results);
      if (w.do === 'error-pattern') for (let i = 0; i < w.confirmations; i++) run(['update-error-confidence', String(written.patternHash), w.project, 'success']);
      const at = sqliteTime(CLOCK_START + 1000 * tick++);
      if (written.packageId !== undefined) sql('UPDATE context_packages SET created_at = ? WHERE id = ?', at, written.packageId);
      if (written.logId !== undefined) sql('UPDATE orchestration_logs SET timestamp = ? WHERE id = ?', at, written.logId);
      return written;
    },
  };
}
