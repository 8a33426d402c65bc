/**
 * End-to-end: the context-assembler scripts (spec/assembler.md) on real SQLite files, copies of the
 * v19 fixture made by the original tool (spec/bazinga-db.md §9.1). Most calls run the scripts'
 * own entry functions in this process (`runScript` of lib/shell.ts with each script's spec,
 * `runFetch`), with the argv, working directory, environment and stdin a process would get; real
 * processes remain where the process is the point: the step pipe through bash (whose output must
 * equal the in-process assemble), a stdin pipe that never closes, each step script's exit 2 for a
 * bad parameter, `consume.ts --ids` (its logic lives in the script), and a lock held by another
 * process's connection.
 * Eligibility and iteration re-delivery (§3.2), consumption (§3.7), the step pipe (§2), reasoning
 * (§3.6), the JSON document (§6), determinism, error-pattern TTL and --error (§3.4), parameter
 * errors and never-block (§3.8), and on-demand fetch (§7).
 *
 * Read-only runs (all with --dry-run) share one fixture copy per describe; every test that writes
 * gets its own copy. The only timing bound is a 10 s hang guard on each process.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFetch } from '../skills/context-assembler/scripts/lib/fetchArtifact.ts';
import { runScript, type ScriptSpec } from '../skills/context-assembler/scripts/lib/shell.ts';
import { WORD_MATCHED_ROWS_MAX } from '../skills/context-assembler/scripts/lib/pipeline.ts';
import { REPO_ROOT, S1, S2, envWithoutRootHints, makeProject, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';

const SCRIPTS = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts');
/** tsx by absolute URL, so a process can run from a folder outside the repository. */
const TSX = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
/** Sanity bound that catches hangs; not a performance assertion. */
const HANG_GUARD_MS = 10_000;
const NOW = '2025-12-02T12:00:00Z';

/** The environment of every child: no inherited root hints, so only our flags choose the project. */
const ENV = envWithoutRootHints();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The specs of the step scripts (each skills/context-assembler/scripts/<name> passes its own to main()). */
const SPECS: Record<string, ScriptSpec> = {
  'assemble.ts': { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' },
  'zone.ts': { name: 'zone.ts', step: 'zone', defaultFormat: 'json', readsStdin: false, summary: '' },
  'rank.ts': { name: 'rank.ts', step: 'rank', defaultFormat: 'json', readsStdin: true, summary: '' },
  'pack.ts': { name: 'pack.ts', step: 'pack', defaultFormat: 'json', readsStdin: true, summary: '' },
  'reasoning.ts': { name: 'reasoning.ts', step: 'reasoning', defaultFormat: 'json', readsStdin: true, summary: '' },
  'consume.ts': { name: 'consume.ts', step: 'consume', defaultFormat: 'json', readsStdin: true, summary: '' },
};

/**
 * Runs a script in this process, as its entry file would (same argv, working directory,
 * environment, and stdin as `runProcess` gives it); `consume.ts --ids` always as a process.
 */
function run(script: string, args: readonly string[], opts: { cwd?: string; input?: string } = {}): Run {
  if (script === 'consume.ts' && args.some((a) => a === '--ids' || a.startsWith('--ids='))) return runProcess(script, args, opts);
  const started = Date.now();
  let stdout = '';
  let stderr = '';
  const io = {
    argv: args,
    cwd: opts.cwd ?? REPO_ROOT,
    env: ENV,
    stdout: (t: string) => (stdout += t),
    stderr: (t: string) => (stderr += t),
    readStdin: () => opts.input ?? '',
    now: () => new Date(),
  };
  let code: number;
  if (script === 'fetch.ts') code = runFetch({ ...io, readStdin: () => undefined });
  else {
    const spec = SPECS[script];
    if (!spec) throw new Error(`no in-process spec for ${script}`);
    code = runScript(spec, io);
  }
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** Runs a script as a real `tsx` process. */
function runProcess(script: string, args: readonly string[], opts: { cwd?: string; input?: string } = {}): Run {
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--import', TSX, path.join(SCRIPTS, script), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: ENV,
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: HANG_GUARD_MS,
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', ms: Date.now() - started };
}

interface Req {
  session?: string;
  group?: string | null;
  agent?: string;
  iteration?: number;
  now?: string;
}

/** Request flags for `project`; `group: null` leaves --group out (session-wide). */
function req(project: Project, r: Req = {}, extra: readonly string[] = []): string[] {
  const group = r.group === undefined ? 'AUTH' : r.group;
  return [
    '--project-root', project.root,
    '--session', r.session ?? S1,
    ...(group === null ? [] : ['--group', group]),
    '--agent', r.agent ?? 'developer',
    '--iteration', String(r.iteration ?? 1),
    '--now', r.now ?? NOW,
    ...extra,
  ];
}

/** Runs assemble.ts --format json; expects success with a clean stderr and returns the document. */
function assembleJson(project: Project, r: Req = {}, extra: readonly string[] = ['--dry-run']): any {
  const out = run('assemble.ts', [...req(project, r, extra), '--format', 'json']);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout);
}

function assembleMarkdown(project: Project, r: Req = {}, extra: readonly string[] = ['--dry-run']): string {
  const out = run('assemble.ts', [...req(project, r, extra)]);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return out.stdout;
}

const ids = (doc: any): number[] => doc.packages.map((p: any) => p.id);
const excludedAs = (doc: any, reason: string): number[] =>
  doc.excluded.filter((e: any) => e.kind === 'package' && e.reason === reason).map((e: any) => e.id).sort((a: number, b: number) => a - b);

function query<T = Record<string, unknown>>(dbPath: string, sql: string, ...params: unknown[]): T[] {
  // Read-write with query_only: as the last connection to close it removes the -wal/-shm files a
  // read-only connection to a WAL database would leave behind (and changes no byte).
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    db.pragma('query_only = ON');
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

function withDb<T>(dbPath: string, fn: (db: Database.Database) => T): T {
  const db = new Database(dbPath, { fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Every row of every original (non-`ca_*`) table, in rowid order. */
function snapshotRows(dbPath: string): Record<string, unknown[]> {
  const tables = query<{ name: string }>(
    dbPath,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ca\\_%' ESCAPE '\\' ORDER BY name",
  ).map((t) => t.name);
  return Object.fromEntries(tables.map((t) => [t, query(dbPath, `SELECT rowid AS __rowid, * FROM "${t}" ORDER BY rowid`)]));
}

const consumptionRows = (dbPath: string) => ({
  consumers: query(dbPath, 'SELECT * FROM context_package_consumers ORDER BY id'),
  scopes: query(dbPath, 'SELECT * FROM consumption_scope ORDER BY scope_id'),
});

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** A shared fixture copy for a describe whose runs only read (--dry-run). */
function sharedFixture(): { get: () => Project } {
  let project: Project | undefined;
  beforeAll(() => {
    project = copyIndexedFixture('ca-e2e-ro-');
  });
  afterAll(() => project?.cleanup());
  return { get: () => project as Project };
}

/** A fixture copy for one test, removed afterwards. */
function withFixture<T>(fn: (p: Project) => T): T {
  const p = copyIndexedFixture('ca-e2e-rw-');
  try {
    return fn(p);
  } finally {
    p.cleanup();
  }
}

// ─────────────────────────────────────────────────────────────────────────────────────────────────

describe('eligibility and iteration re-delivery (§3.2)', () => {
  const fx = sharedFixture();

  it('developer in AUTH at iteration 1 gets [2, 1, 3, 4]: package 1, consumed at iteration 1 by an earlier spawn, is given again; a request for more naming it leaves it out', () => {
    const doc = assembleJson(fx.get(), { iteration: 1 });
    expect(ids(doc)).toEqual([2, 1, 3, 4]);
    expect(doc.total_available).toBe(4);
    expect(doc.overflow_count).toBe(0);
    expect(excludedAs(doc, 'consumed')).toEqual([]);
    const more = assembleJson(fx.get(), { iteration: 1 }, ['--dry-run', '--more', '1']);
    expect(ids(more)).toEqual([2, 3, 4]);
    expect(more.total_available).toBe(3);
    expect(excludedAs(more, 'consumed')).toEqual([1]);
  });

  it('at iteration 2 package 1 is delivered again (a fresh agent remembers nothing)', () => {
    const all = assembleJson(fx.get(), { iteration: 2 }, ['--dry-run', '--limit', '10']);
    expect([...ids(all)].sort()).toEqual([1, 2, 3, 4]);
    expect(all.total_available).toBe(4);
    expect(excludedAs(all, 'consumed')).toEqual([]);
    // The developer's default limit (3) ranks three; the fourth is the builder's too, so it is shown.
    const limited = assembleJson(fx.get(), { iteration: 2 });
    expect(limited.packages).toHaveLength(4);
    expect(limited.total_available).toBe(4);
    expect(limited.overflow_count).toBe(0);
    expect(limited.excluded.filter((e: any) => e.reason === 'limit')).toEqual([]);
    expect([...limited.floor.packages].sort()).toEqual([1, 2, 3, 4]);
  });

  it('session-wide (no --group) sees only the global package 4', () => {
    for (const agent of ['developer', 'qa_expert', 'tech_lead']) {
      const doc = assembleJson(fx.get(), { group: null, agent }, ['--dry-run', '--limit', '10']);
      expect(ids(doc), agent).toEqual([4]);
      expect(doc.total_available, agent).toBe(1);
    }
    // "global" spelled out is the same request.
    expect(ids(assembleJson(fx.get(), { group: 'global' }, ['--dry-run', '--limit', '10']))).toEqual([4]);
  });

  it.each([
    { group: 'AUTH', iteration: 1 },
    { group: 'AUTH', iteration: 2 },
    { group: null, iteration: 1 },
    { group: 'CART', iteration: 1 },
  ])('a consumer list hides nothing: qa_expert gets the packages saved for the developers too (group $group, iteration $iteration)', ({ group, iteration }) => {
    const doc = assembleJson(fx.get(), { agent: 'qa_expert', group, iteration }, ['--dry-run', '--limit', '10']);
    if (group === 'AUTH') expect([...ids(doc)].sort()).toEqual([1, 2, 3, 4]);
    if (group === 'CART') expect([...ids(doc)].sort()).toEqual([4, 5, 6]);
    if (group === null) expect(ids(doc)).toEqual([4]);
    // Named ones rank up: package 3 (for qa_expert) above package 1 (for the developers), both medium or higher.
    if (group === 'AUTH') expect(doc.packages.find((x: any) => x.id === 3).score).toBeGreaterThan(0);
  });

  it('after a recorded assemble at iteration 2 the same call gets them all again (a re-spawn is a fresh agent); --more naming them gets none of them; iteration 3 sees them all', () => {
    withFixture((p) => {
      const first = assembleJson(p, { iteration: 2 }, ['--limit', '10']);
      expect([...first.consumed].sort()).toEqual([1, 2, 3, 4]);
      expect(first.consumption).toBe('recorded');

      const again = assembleJson(p, { iteration: 2 }, ['--limit', '10']);
      expect([...ids(again)].sort()).toEqual([1, 2, 3, 4]);
      expect(excludedAs(again, 'consumed')).toEqual([]);
      // Recorded once however often delivered.
      expect(again.consumed).toEqual([]);
      expect(query<any>(p.dbPath, "SELECT COUNT(*) AS n FROM consumption_scope WHERE agent_type = 'developer' AND iteration = 2")[0].n).toBe(4);

      const more = assembleJson(p, { iteration: 2 }, ['--dry-run', '--limit', '10', '--more', '1,2,3,4']);
      expect(more.packages).toEqual([]);
      expect(more.total_available).toBe(0);
      expect(excludedAs(more, 'consumed')).toEqual([1, 2, 3, 4]);
      expect(assembleMarkdown(p, { iteration: 2 }, ['--dry-run', '--limit', '10', '--more', '1,2,3,4'])).toContain('### Relevant Packages (0/0)');

      const retry = assembleJson(p, { iteration: 3 }, ['--dry-run', '--limit', '10']);
      expect([...ids(retry)].sort()).toEqual([1, 2, 3, 4]);
      expect(excludedAs(retry, 'consumed')).toEqual([]);
    });
  });
});

describe('consumption (§3.7)', () => {
  it.each([
    { zone: 'Normal', tokens: 0, records: true },
    { zone: 'Soft_Warning', tokens: 110_000, records: true },
    { zone: 'Conservative', tokens: 130_000, records: false },
    { zone: 'Wrap-up', tokens: 150_000, records: false },
    { zone: 'Emergency', tokens: 165_000, records: false },
  ])('$zone: records consumption = $records', ({ zone, tokens, records }) => {
    withFixture((p) => {
      const before = consumptionRows(p.dbPath);
      const doc = assembleJson(p, { iteration: 1 }, ['--current-tokens', String(tokens)]);
      expect(doc.zone).toBe(zone);
      if (!records) {
        expect(doc.consumed).toEqual([]);
        expect(doc.consumption).toBe('skipped-zone');
        expect(consumptionRows(p.dbPath)).toEqual(before);
        return;
      }
      expect(doc.consumption).toBe('recorded');
      // Package 1 is delivered again; it was recorded for this iteration already, so only the others are recorded now.
      expect(ids(doc)).toEqual([2, 1, 3, 4]);
      expect([...doc.consumed].sort()).toEqual([2, 3, 4]);
      for (const id of doc.consumed as number[]) {
        // The developer's consumer row was pending for all three: now consumed at this iteration.
        const consumer = query<any>(p.dbPath, "SELECT * FROM context_package_consumers WHERE package_id = ? AND agent_type = 'developer'", id);
        expect(consumer).toHaveLength(1);
        expect(consumer[0].consumed_at, `package ${id}`).not.toBeNull();
        expect(consumer[0].iteration).toBe(1);
        const scope = query<any>(
          p.dbPath,
          "SELECT * FROM consumption_scope WHERE session_id = ? AND package_id = ? AND agent_type = 'developer' AND iteration = 1",
          S1,
          id,
        );
        expect(scope, `scope row of package ${id}`).toHaveLength(1);
        expect(scope[0].group_id).toBe(id === 4 ? 'global' : 'AUTH');
      }
      // Nobody else's rows moved.
      const others = (rows: any[]) => rows.filter((r) => !(r.agent_type === 'developer' && [2, 3, 4].includes(r.package_id)));
      expect(others(consumptionRows(p.dbPath).consumers)).toEqual(others(before.consumers));
      expect(consumptionRows(p.dbPath).scopes).toHaveLength(before.scopes.length + 3);
    });
  });

  it('--dry-run records nothing (rows unchanged; file bytes unchanged once opened)', () => {
    withFixture((p) => {
      const rowsBefore = snapshotRows(p.dbPath);
      const doc = assembleJson(p, { iteration: 1 }, ['--dry-run']);
      expect(ids(doc)).toEqual([2, 1, 3, 4]);
      expect(doc.consumed).toEqual([]);
      expect(doc.consumption).toBe('dry-run');
      expect(snapshotRows(p.dbPath)).toEqual(rowsBefore);
      // The first open may add the port's own ca_* objects (and switch the file to WAL); after that
      // a dry run leaves the file alone.
      assembleMarkdown(p, { iteration: 1 }, ['--dry-run']);
      const bytes = sha256(p.dbPath);
      const files = fs.readdirSync(path.dirname(p.dbPath)).sort();
      expect(files).toEqual(['artifacts', 'bazinga.db']);
      assembleMarkdown(p, { iteration: 1 }, ['--dry-run']);
      assembleJson(p, { iteration: 1 }, ['--dry-run']);
      expect(sha256(p.dbPath)).toBe(bytes);
      expect(fs.readdirSync(path.dirname(p.dbPath)).sort()).toEqual(files);
      expect(snapshotRows(p.dbPath)).toEqual(rowsBefore);
      // Nothing was recorded: a real run still delivers the same packages.
      expect(assembleJson(p, { iteration: 1 }, []).consumed).toEqual([2, 3, 4]);
    });
  });

  it('consume.ts --ids 3,4 --agent developer --iteration 5 marks both (consumer rows and scope rows)', () => {
    withFixture((p) => {
      const out = run('consume.ts', ['--project-root', p.root, '--ids', '3,4', '--agent', 'developer', '--iteration', '5']);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      const result = JSON.parse(out.stdout);
      expect(result.success).toBe(true);
      expect(result.consumed).toEqual([3, 4]);
      const scopes = query<any>(p.dbPath, "SELECT package_id, group_id FROM consumption_scope WHERE agent_type = 'developer' AND iteration = 5 ORDER BY package_id");
      expect(scopes).toEqual([
        { package_id: 3, group_id: 'AUTH' },
        { package_id: 4, group_id: 'global' },
      ]);
      const consumers = query<any>(
        p.dbPath,
        "SELECT package_id, iteration, consumed_at IS NOT NULL AS done FROM context_package_consumers WHERE agent_type = 'developer' AND package_id IN (3, 4) ORDER BY package_id",
      );
      expect(consumers).toEqual([
        { package_id: 3, iteration: 5, done: 1 },
        { package_id: 4, iteration: 5, done: 1 },
      ]);
      // Recorded, they hide nothing: at iteration 5 all four are shown; a request for more naming them leaves them out.
      expect([...ids(assembleJson(p, { iteration: 5 }, ['--dry-run', '--limit', '10']))].sort()).toEqual([1, 2, 3, 4]);
      const doc = assembleJson(p, { iteration: 5 }, ['--dry-run', '--limit', '10', '--more', '3,4']);
      expect(excludedAs(doc, 'consumed')).toEqual([3, 4]);
      expect([...ids(doc)].sort()).toEqual([1, 2]);
    });
  });

  it('consume.ts --ids records a package its consumer list does not name (the block shows it to every agent): a scope row only', () => {
    withFixture((p) => {
      const out = run('consume.ts', ['--project-root', p.root, '--ids', '5', '--agent', 'qa_expert', '--iteration', '1']);
      expect(out.code, out.stderr).toBe(0);
      expect(JSON.parse(out.stdout).consumed).toEqual([5]);
      expect(query<any>(p.dbPath, "SELECT package_id, group_id FROM consumption_scope WHERE agent_type = 'qa_expert' AND iteration = 1")).toEqual([{ package_id: 5, group_id: 'CART' }]);
      expect(query<any>(p.dbPath, "SELECT COUNT(*) AS n FROM context_package_consumers WHERE agent_type = 'qa_expert' AND package_id = 5")[0].n).toBe(0);
    });
  });

  it.each([
    { name: 'package 99 does not exist', args: ['--ids', '3,99', '--agent', 'developer', '--iteration', '1'] },
    { name: 'package 7 belongs to another session', args: ['--ids', '3,7', '--agent', 'developer', '--iteration', '1', '--session', S1] },
  ])('consume.ts exits 1 and writes nothing when $name', ({ args }) => {
    withFixture((p) => {
      const before = snapshotRows(p.dbPath);
      const out = run('consume.ts', ['--project-root', p.root, ...args]);
      expect(out.code).toBe(1);
      expect(out.stdout).toBe('');
      expect(JSON.parse(out.stderr.trim()).success).toBe(false);
      expect(snapshotRows(p.dbPath)).toEqual(before);
    });
  });
});

const STEP_ORDER = ['zone.ts', 'rank.ts', 'pack.ts', 'reasoning.ts', 'consume.ts'];

describe('the step pipe equals assemble (§2)', () => {
  const fx = sharedFixture();
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const cmd = (script: string, args: readonly string[]) =>
    [process.execPath, '--import', TSX, path.join(SCRIPTS, script), ...args].map(q).join(' ');

  it.each([
    { name: 'developer AUTH iteration 1', r: { agent: 'developer', group: 'AUTH', iteration: 1 }, extra: [] as string[] },
    { name: 'qa_expert CART iteration 2, Conservative', r: { agent: 'qa_expert', group: 'CART', iteration: 2 }, extra: ['--current-tokens', '130000'] },
    { name: 'tech_lead session-wide with --error', r: { agent: 'tech_lead', group: null, iteration: 0 }, extra: ['--error', "Cannot find module '@/utils' at /x/y/x.ts line 3"] },
  ])('zone | rank | pack | reasoning | consume --dry-run prints the bytes of assemble --format json --dry-run ($name)', ({ r, extra }) => {
    const p = fx.get();
    const root = ['--project-root', p.root];
    const pipeline = [
      cmd('zone.ts', [...req(p, r), ...extra]),
      cmd('rank.ts', root),
      cmd('pack.ts', root),
      cmd('reasoning.ts', root),
      cmd('consume.ts', [...root, '--dry-run']),
    ].join(' | ');
    const piped = spawnSync('bash', ['-c', `set -o pipefail; ${pipeline}`], { cwd: REPO_ROOT, env: ENV, encoding: 'utf8', timeout: 4 * HANG_GUARD_MS });
    expect(piped.stderr).toBe('');
    expect(piped.status).toBe(0);
    const direct = run('assemble.ts', [...req(p, r), ...extra, '--format', 'json', '--dry-run']);
    expect(direct.code).toBe(0);
    expect(piped.stdout).toBe(direct.stdout);
    expect(JSON.parse(piped.stdout).step).toBe('consume');
  });

  // A document of version 1 (before doc_version): no doc_version, purpose, summary_cap, and a request
  // without purpose and texts. Read into this version's shape (upgrade.ts), the steps after it give
  // the bytes they give the current document.
  const asVersion1 = (json: string) => {
    const d = JSON.parse(json);
    for (const k of ['doc_version', 'purpose', 'summary_cap']) delete d[k];
    for (const k of ['purpose', 'task', 'error', 'scope', 'lang', 'framework']) if (d.request[k] === null) delete d.request[k];
    return JSON.stringify(d);
  };
  it.each([
    { from: 'zone.ts', next: ['rank.ts', 'pack.ts', 'reasoning.ts'] },
    { from: 'rank.ts', next: ['pack.ts', 'reasoning.ts'] },
    { from: 'reasoning.ts', next: [] as string[] },
  ])('a version 1 document after $from continues as the current one does', ({ from, next }) => {
    const p = fx.get();
    const root = ['--project-root', p.root];
    // Each boundary's document, made by the steps up to it.
    const upTo = (script: string) => {
      let out = run('zone.ts', req(p)).stdout;
      for (const s of ['rank.ts', 'pack.ts', 'reasoning.ts']) {
        if (STEP_ORDER.indexOf(s) > STEP_ORDER.indexOf(script)) break;
        out = run(s, root, { input: out }).stdout;
      }
      return out;
    };
    const current = upTo(from);
    expect(JSON.parse(current).doc_version).toBe(2);
    let a = current;
    let b = asVersion1(current);
    expect(JSON.parse(b).doc_version).toBeUndefined();
    for (const s of [...next, 'consume.ts']) {
      const args = s === 'consume.ts' ? [...root, '--dry-run'] : root;
      const ra = run(s, args, { input: a });
      const rb = run(s, args, { input: b });
      expect(rb.stderr).toBe('');
      expect(rb.code).toBe(0);
      a = ra.stdout;
      b = rb.stdout;
      // The same document (its keys may stand in another order: the upgrade adds what was absent).
      expect(JSON.parse(b)).toEqual(JSON.parse(a));
    }
  });

  it('a document of a newer version is refused, naming the field and the versions read', () => {
    const p = fx.get();
    const d = JSON.parse(run('zone.ts', req(p)).stdout);
    const r = run('rank.ts', ['--project-root', p.root], { input: JSON.stringify({ ...d, doc_version: 3 }) });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr).error).toContain('field "doc_version" must be an integer from 1 to 2, got 3 (written by a newer version of context-assembler');
  });

  it.each(['rank.ts', 'pack.ts', 'reasoning.ts', 'consume.ts'])('%s given request flags starts from them and does not read stdin', (script) => {
    const p = fx.get();
    const out = run(script, [...req(p), '--dry-run'], { input: 'not a document' });
    expect(out.code, out.stderr).toBe(0);
    const doc = JSON.parse(out.stdout);
    expect(doc.request.agent).toBe('developer');
    expect(doc.step).toBe(script.replace('.ts', ''));
  });

  it('a step with request flags and stdin an open pipe that never closes still finishes', async () => {
    const p = fx.get();
    const child = spawn(process.execPath, ['--import', TSX, path.join(SCRIPTS, 'rank.ts'), ...req(p)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const guard = setTimeout(() => {
        child.kill();
        resolve(null);
      }, 10_000);
      child.on('close', (c) => {
        clearTimeout(guard);
        resolve(c);
      });
    });
    child.stdin.end();
    expect(code).toBe(0);
    expect(JSON.parse(stdout).step).toBe('rank');
  });
});

describe('reasoning (§3.6)', () => {
  const fx = sharedFixture();

  it('reads the real reasoning_phase column: developer gets developer, qa_expert and tech_lead entries ordered by phase', () => {
    const doc = assembleJson(fx.get(), { agent: 'developer', iteration: 1 });
    const entries = doc.reasoning.entries as any[];
    // The developer's completion of iteration 1, which QA's failures report (package 2) answered,
    // comes below QA's entry of the group.
    expect(entries.map((e) => e.id)).toEqual([5, 4, 3, 7]);
    expect(entries.map((e) => `${e.agent_type}:${e.phase}`)).toEqual([
      'developer:decisions',
      'qa_expert:decisions',
      'developer:completion',
      'tech_lead:decisions',
    ]);
    expect(entries[2]).toMatchObject({ standing: 'contradicted', standing_by: 'package 2' });
    const md = assembleMarkdown(fx.get(), { agent: 'developer', iteration: 1 });
    expect(md).toContain('### Prior Agent Reasoning (4 entries)');
    expect(md).toMatch(/\*\*\[developer\] completion \(it\. 1, \d+ [a-z]+ ago; a claim that failed review: package 2\):\*\* Implemented token issue\/verify/);
    expect(md).toMatch(/\*\*\[tech_lead\] decisions \(\d+ [a-z]+ ago\):\*\* All groups/);
    expect(md).not.toMatch(/\*\*\[\w+\] (unknown|null|undefined):\*\*/);
  });

  it("qa_expert gets the developer's reasoning (every entry the builder lists for it) but not the tech lead's (nor its own)", () => {
    const doc = assembleJson(fx.get(), { agent: 'qa_expert', iteration: 1 });
    expect(doc.include_reasoning).toBe(true);
    const entries = doc.reasoning.entries as any[];
    // The completion QA's failures report answered yields its place among the developer's two: the
    // two chosen (decisions 5, then 2), then the builder's others past the two per producer, by phase.
    expect(entries.map((e) => e.id)).toEqual([5, 2, 3, 1]);
    expect(doc.floor.reasoning).toEqual([5, 3, 2, 1]);
    expect(new Set(entries.map((e) => e.agent_type))).toEqual(new Set(['developer']));
    expect(assembleMarkdown(fx.get(), { agent: 'qa_expert', iteration: 1 })).not.toContain('[tech_lead]');
  });

  it('developer at iteration 0 gets no reasoning unless --include-reasoning true', () => {
    const off = assembleJson(fx.get(), { agent: 'developer', iteration: 0 });
    expect(off.include_reasoning).toBe(false);
    expect(off.reasoning.entries).toEqual([]);
    expect(assembleMarkdown(fx.get(), { agent: 'developer', iteration: 0 })).not.toContain('### Prior Agent Reasoning');
    const on = assembleJson(fx.get(), { agent: 'developer', iteration: 0 }, ['--dry-run', '--include-reasoning', 'true']);
    expect(on.include_reasoning).toBe(true);
    expect(on.reasoning.entries.map((e: any) => e.id)).toEqual([5, 4, 3, 7]);
  });

  it('--include-reasoning false removes it for qa_expert', () => {
    const doc = assembleJson(fx.get(), { agent: 'qa_expert', iteration: 1 }, ['--dry-run', '--include-reasoning', 'false']);
    expect(doc.include_reasoning).toBe(false);
    expect(doc.reasoning.entries).toEqual([]);
    expect(assembleMarkdown(fx.get(), { agent: 'qa_expert', iteration: 1 }, ['--dry-run', '--include-reasoning', 'false'])).not.toContain(
      '### Prior Agent Reasoning',
    );
  });
});

describe('JSON output (§6)', () => {
  const fx = sharedFixture();
  const TOP_LEVEL = [
    'zone', 'usage_pct', 'remaining_budget', 'context_budget', 'packages', 'total_available', 'overflow_count',
    'packages_tokens', 'reasoning', 'error_patterns', 'strategies', 'excluded', 'consumed',
  ];

  it('has the documented top-level keys, packages with id/priority/file_path/summary/score, exclusions with id/reason', () => {
    const doc = assembleJson(fx.get(), { iteration: 2 });
    for (const key of TOP_LEVEL) expect(doc, key).toHaveProperty(key);
    expect(doc.zone).toBe('Normal');
    expect(doc.usage_pct).toBe(0);
    expect(doc.remaining_budget).toBe(170_000);
    expect(doc.context_budget).toBe(34_000);
    expect(doc.packages.length).toBeGreaterThan(0);
    for (const pkg of doc.packages) {
      expect(typeof pkg.id).toBe('number');
      expect(['critical', 'high', 'medium', 'low']).toContain(pkg.priority);
      expect(pkg.file_path).toMatch(/^bazinga\/artifacts\//);
      expect(typeof pkg.summary).toBe('string');
      expect(typeof pkg.score).toBe('number');
      expect(pkg).not.toHaveProperty('components');
    }
    const scores = doc.packages.map((p: any) => p.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // What a request for more leaves out is excluded with its reason (package 1 was given at iteration 1).
    const more = assembleJson(fx.get(), { iteration: 1 }, ['--dry-run', '--more', '1']);
    expect(more.excluded.length).toBeGreaterThan(0);
    for (const e of more.excluded) {
      expect(typeof e.id).toBe('number');
      expect(['budget', 'limit', 'zone', 'consumed', 'redaction-emptied', 'expired']).toContain(e.reason);
    }
    expect(doc.packages_tokens).toBeGreaterThan(0);
    expect(doc.packages_tokens).toBeLessThanOrEqual(doc.context_budget);
  });

  it('--explain adds the score components, and the score is their weighted sum (4, 2, 1.5, 1, 100, 3, paths 25, match 30, designated 1)', () => {
    const doc = assembleJson(fx.get(), { iteration: 2 }, ['--dry-run', '--explain', '--limit', '10']);
    expect(doc.packages).toHaveLength(4);
    // Without --task the implicit task of the group is the query: relevance counts too.
    expect(doc.query.source).toBe('implicit');
    expect(doc.packages.some((p: any) => p.components.relevance > 0)).toBe(true);
    for (const pkg of doc.packages) {
      expect(Object.keys(pkg.components).sort()).toEqual(['designated', 'match', 'outcome', 'paths', 'priority', 'recency', 'relevance', 'same_group', 'scope', 'type_affinity']);
      expect(Object.keys(pkg.match).sort()).toEqual(['fields', 'terms']);
      const k = pkg.components;
      // match: 1 when the package matches the query (relevance at least 0.1 of the best) or the scope.
      expect(k.match).toBe(k.relevance >= 0.1 || k.scope > 0 ? 1 : 0);
      expect(pkg.score).toBeCloseTo(4 * k.priority + 2 * k.same_group + 1.5 * k.type_affinity + 1 * k.recency + 100 * k.relevance + 3 * k.scope + 25 * k.paths + 30 * k.match + 10 * k.outcome + 1 * k.designated, 3);
      expect(k.same_group).toBe(pkg.id === 4 ? 0 : 1);
    }
    const two = doc.packages.find((p: any) => p.id === 2);
    // critical, same group, failures → developer, created 20 h 50 min before --now (half-life 72 h).
    expect(two.components).toMatchObject({ priority: 4, same_group: 1, type_affinity: 1 });
    expect(two.components.recency).toBeCloseTo(Math.pow(0.5, (20 + 50 / 60) / 72), 5);
  });
});

describe('determinism', () => {
  const fx = sharedFixture();

  it.each(['markdown', 'json'])('two runs with the same --now print the same bytes (%s), a real process and in process alike', (format) => {
    const args = [...req(fx.get(), { iteration: 2 }), '--format', format, '--dry-run', '--explain'];
    const a = runProcess('assemble.ts', args);
    const b = run('assemble.ts', args);
    const c = run('assemble.ts', args);
    expect(a.code).toBe(0);
    expect(a.stdout.length).toBeGreaterThan(100);
    expect({ code: b.code, stdout: b.stdout, stderr: b.stderr }).toEqual({ code: a.code, stdout: a.stdout, stderr: a.stderr });
    expect(c.stdout).toBe(b.stdout);
  });

  it('a different --now changes recency (so the clock really is the injected one)', () => {
    const a = assembleJson(fx.get(), { iteration: 2, now: '2025-12-02T12:00:00Z' });
    const b = assembleJson(fx.get(), { iteration: 2, now: '2025-12-05T12:00:00Z' });
    expect(a.packages[0].score).toBeGreaterThan(b.packages[0].score);
  });
});

describe('error patterns (§3.4)', () => {
  const fx = sharedFixture();
  const ERROR = "Cannot find module '@/utils' at /x/y/x.ts line 3";
  const hashes = (doc: any) => doc.error_patterns.map((e: any) => e.pattern_hash.slice(0, 8));

  it.each([
    { now: '2025-12-02T12:00:00Z', expected: ['62e443af', 'ea83b08c'] },
    { now: '2026-03-01T23:59:59Z', expected: ['62e443af', 'ea83b08c'] }, // last_seen 2025-12-01 + 90 days
    { now: '2026-03-02T00:00:00Z', expected: [] },
    { now: '2026-06-01T00:00:00Z', expected: [] },
  ])('TTL against --now $now → $expected', ({ now, expected }) => {
    const doc = assembleJson(fx.get(), { now });
    // Which patterns are shown (their order follows the group's task: see the next cases).
    expect([...hashes(doc)].sort()).toEqual(expected);
    const md = assembleMarkdown(fx.get(), { now });
    if (expected.length === 0) expect(md).not.toContain('### Error Patterns');
    else expect(md).toContain(`### Error Patterns (${expected.length} matches)`);
  });

  it('--error puts the matching 62e443af pattern first and flags it', () => {
    const doc = assembleJson(fx.get(), {}, ['--dry-run', '--error', ERROR]);
    expect(hashes(doc)[0]).toBe('62e443af');
    expect(doc.error_patterns[0].matched_error).toBe(true);
    expect(doc.error_patterns.slice(1).every((e: any) => e.matched_error === false)).toBe(true);
  });

  it("two of BAZINGA's rows of one fault (the fixture's x.ts and y.ts: two rows to the original) are one pattern: the more confident row, both occurrences", () => {
    const doc = assembleJson(fx.get());
    const module = doc.error_patterns.filter((e: any) => e.error_type === 'ModuleNotFound');
    expect(module).toHaveLength(1);
    expect(module[0]).toMatchObject({ message_pattern: "Cannot find module '...' at .../x.ts line N", confidence: 0.8, occurrences: 2 });
    expect(module[0].pattern_hash.slice(0, 8)).toBe('62e443af');
    expect(module[0].fault_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(assembleMarkdown(fx.get())).toMatch(/> \*\*Confidence\*\*: 0\.8 \(seen 2 times, last \d+ [a-z]+ ago; saved by an agent, fix unverified\)/);
  });

  it('--error outranks confidence: a more confident pattern drops behind the matching one', () => {
    withFixture((p) => {
      withDb(p.dbPath, (db) => db.prepare("UPDATE error_patterns SET confidence = 0.95 WHERE pattern_hash LIKE 'ea83b08c%'").run());
      expect(hashes(assembleJson(p))).toEqual(['ea83b08c', '62e443af']);
      expect(hashes(assembleJson(p, {}, ['--dry-run', '--error', ERROR]))).toEqual(['62e443af', 'ea83b08c']);
      const md = assembleMarkdown(p, {}, ['--dry-run', '--error', ERROR]);
      expect(md.indexOf('at .../x.ts line N')).toBeLessThan(md.indexOf('JestTimeout'));
    });
  });
});

describe("a project's many error patterns and strategies: the task's words are matched on the first WORD_MATCHED_ROWS_MAX of each, an error text on every pattern", () => {
  it('a pattern or strategy past the bound is not found by the task; the pattern is found by an error text; within the bound both are', () => {
    withFixture((p) => {
      const projectId = query<{ pid: string }>(p.dbPath, "SELECT json_extract(metadata, '$.project_id') AS pid FROM sessions WHERE session_id = ?", S1)[0]?.pid ?? 'default';
      // WORD_MATCHED_ROWS_MAX + 20 of each, in falling confidence / helpfulness; the word "quokka" only in the one at `at`.
      const seed = (at: number) =>
        withDb(p.dbPath, (db) => {
          db.prepare("DELETE FROM error_patterns WHERE project_id = ?").run(projectId);
          db.prepare("DELETE FROM strategies WHERE project_id = ?").run(projectId);
          const pattern = db.prepare(
            "INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days) VALUES (?, ?, ?, ?, ?, 1, NULL, '2025-12-01 09:00:00', '2025-12-01 09:00:00', 90)",
          );
          const strategy = db.prepare(
            "INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at) VALUES (?, ?, ?, ?, ?, NULL, NULL, '2025-12-01 09:00:00', '2025-12-01 09:00:00')",
          );
          db.transaction(() => {
            for (let i = 0; i < WORD_MATCHED_ROWS_MAX + 20; i++) {
              const word = i === at ? 'quokka' : `filler${i}`;
              pattern.run(`bound${String(i).padStart(4, '0')}`, projectId, JSON.stringify({ error_type: 'Error', message_pattern: `${word} stalled` }), `restart the ${word} worker`, 0.99 - i * 0.0005);
              strategy.run(`s${String(i).padStart(4, '0')}`, projectId, `${word} handling`, `keep the ${word} queue short`, 1000 - i);
            }
          })();
        });
      const shown = (extra: string[]) => {
        const doc = assembleJson(p, {}, ['--dry-run', '--task', 'the quokka queue stalls', ...extra]);
        return { patterns: doc.error_patterns.map((e: any) => e.pattern_hash), strategies: doc.strategies.map((s: any) => s.strategy_id) };
      };
      const inside = WORD_MATCHED_ROWS_MAX - 1;
      seed(inside);
      expect(shown([])).toMatchObject({ patterns: expect.arrayContaining([`bound${String(inside).padStart(4, '0')}`]), strategies: expect.arrayContaining([`s${String(inside).padStart(4, '0')}`]) });
      const past = WORD_MATCHED_ROWS_MAX + 10;
      seed(past);
      const plain = shown([]);
      expect(plain.patterns).not.toContain(`bound${String(past).padStart(4, '0')}`);
      expect(plain.strategies).not.toContain(`s${String(past).padStart(4, '0')}`);
      expect(plain.patterns.length).toBeGreaterThan(0);
      // An error text reads every pattern: the one it matches comes first, wherever it ranks (the
      // builder's three most confident follow, whatever the limit).
      expect(shown(['--error', 'quokka stalled again']).patterns[0]).toBe(`bound${String(past).padStart(4, '0')}`);
    });
  });

  it('patterns that cannot be shown (expired, another language) do not count toward the bound', () => {
    withFixture((p) => {
      const projectId = query<{ pid: string }>(p.dbPath, "SELECT json_extract(metadata, '$.project_id') AS pid FROM sessions WHERE session_id = ?", S1)[0]?.pid ?? 'default';
      withDb(p.dbPath, (db) => {
        db.prepare('DELETE FROM error_patterns WHERE project_id = ?').run(projectId);
        const insert = db.prepare(
          "INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days) VALUES (?, ?, ?, 'restart it', 0.95, 1, ?, ?, ?, 90)",
        );
        db.transaction(() => {
          for (let i = 0; i < WORD_MATCHED_ROWS_MAX + 10; i++) {
            // Expired long before --now, and (the other half of the window) of another language.
            insert.run(`old${i}`, projectId, JSON.stringify({ error_type: 'Error', message_pattern: `quokka stalled ${i}` }), null, '2024-01-01 00:00:00', '2024-01-01 00:00:00');
            insert.run(`py${i}`, projectId, JSON.stringify({ error_type: 'Error', message_pattern: `wombat crashed ${i}` }), 'python', '2025-12-01 09:00:00', '2025-12-01 09:00:00');
          }
          db.prepare(
            "INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days) VALUES ('valid', ?, ?, 'drain the queue', 0.9, 1, 'typescript', '2025-12-01 09:00:00', '2025-12-01 09:00:00', 90)",
          ).run(projectId, JSON.stringify({ error_type: 'Error', message_pattern: 'quokka queue stalled' }));
        })();
      });
      const doc = assembleJson(p, {}, ['--dry-run', '--task', 'the quokka queue stalls', '--lang', 'typescript']);
      // Past the builder's own (it shows the most confident of every language, never an expired one), only 'valid'.
      expect(doc.error_patterns.filter((e: any) => !doc.floor.error_patterns.includes(e.fault_hash)).map((e: any) => e.pattern_hash)).toEqual(['valid']);
      expect(doc.error_patterns.map((e: any) => e.pattern_hash)).toContain('valid');
    });
  });
});

describe('invalid parameters exit 2 with one JSON error naming the flag (§3.8)', () => {
  const fx = sharedFixture();
  const AGENTS = 'developer, senior_software_engineer, qa_expert, tech_lead, investigator, requirements_engineer';

  it.each([
    { name: 'unknown --agent', flags: ['--agent', 'intern'], mentions: ['--agent', AGENTS, 'intern'] },
    { name: '--iteration -1', flags: ['--iteration', '-1'], mentions: ['--iteration', 'must be >= 0', '-1'] },
    { name: '--iteration x', flags: ['--iteration', 'x'], mentions: ['--iteration', 'must be an integer', "'x'"] },
    { name: '--limit 0', flags: ['--limit', '0'], mentions: ['--limit', '1 and 50'] },
    { name: '--reasoning-level huge', flags: ['--reasoning-level', 'huge'], mentions: ['--reasoning-level', 'minimal, medium, full'] },
    { name: '--format xml', flags: ['--format', 'xml'], mentions: ['--format', 'markdown, json'] },
    { name: 'unknown flag', flags: ['--bogus', 'x'], mentions: ['--bogus', '--session', '--agent'] },
    { name: '--include-reasoning maybe', flags: ['--include-reasoning', 'maybe'], mentions: ['--include-reasoning', 'true, false'] },
  ])('$name', ({ flags, mentions }) => {
    const base = ['--project-root', fx.get().root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', NOW, '--dry-run'];
    const out = run('assemble.ts', [...base, ...flags]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    const lines = out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const err = JSON.parse(lines[0] as string);
    expect(err.success).toBe(false);
    expect(['USAGE', 'VALIDATION']).toContain(err.code);
    for (const m of mentions) expect(err.error).toContain(m);
  });

  it('missing --session', () => {
    const out = run('assemble.ts', ['--project-root', fx.get().root, '--agent', 'developer']);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(out.stderr).error).toContain('--session');
  });

  it.each(['zone.ts', 'rank.ts', 'pack.ts', 'reasoning.ts', 'consume.ts'])('%s validates the same way', (script) => {
    // A real process per step script: exit 2 and one JSON error line on its stderr.
    const out = runProcess(script, ['--project-root', fx.get().root, '--session', S1, '--agent', 'developer', '--iteration', '-1']);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(JSON.parse(out.stderr).error).toContain('--iteration');
  });
});

describe('never block (§3.8): fallback block on stdout, warning on stderr, exit 0', () => {
  const FALLBACK_START = '## Context for developer\n\n:warning: Context assembly encountered an error.';
  const request = ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', NOW];

  function expectFallback(out: Run): void {
    expect(out.ms).toBeLessThan(HANG_GUARD_MS);
    expect(out.code).toBe(0);
    expect(out.stdout.startsWith(FALLBACK_START)).toBe(true);
    expect(out.stdout).toContain('**Fallback Mode**: Task and specialization context only. Context packages unavailable.');
    expect(out.stderr).toMatch(/⚠ context-assembler: .*fallback block/);
  }

  it('missing database file', () => {
    const p = makeProject('ca-e2e-nodb-');
    try {
      const out = run('assemble.ts', ['--project-root', p.root, ...request]);
      expectFallback(out);
      expect(out.stderr).toContain('Database not found');
      expect(fs.existsSync(p.dbPath)).toBe(false); // the assembler never creates a database
    } finally {
      p.cleanup();
    }
  });

  it('corrupt file (random bytes)', () => {
    const p = makeProject('ca-e2e-corrupt-');
    try {
      const junk = crypto.randomBytes(64 * 1024);
      fs.writeFileSync(p.dbPath, junk);
      expectFallback(run('assemble.ts', ['--project-root', p.root, ...request]));
      expect(fs.readFileSync(p.dbPath).equals(junk)).toBe(true);
    } finally {
      p.cleanup();
    }
  });

  it.each([
    { name: 'as shipped (rollback journal)', warm: false },
    { name: 'after a first open (WAL)', warm: true },
  ])('database locked by an EXCLUSIVE transaction of another connection, $name', ({ warm }) => {
    withFixture((p) => {
      if (warm) expect(run('assemble.ts', ['--project-root', p.root, ...request, '--dry-run']).code).toBe(0);
      const db = new Database(p.dbPath);
      try {
        db.exec('PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE');
        // The lock is another process's connection: the assembler runs as a real process.
        const out = runProcess('assemble.ts', ['--project-root', p.root, ...request]);
        expectFallback(out);
        expect(out.stderr).toContain('locked');
      } finally {
        db.exec('ROLLBACK');
        db.close();
      }
      // Once the lock is gone the same call assembles normally.
      expect(assembleJson(p).packages.length).toBeGreaterThan(0);
    });
  });

  it.each([
    { name: 'not JSON', text: '{"context_engineering": {"retrieval_limits": ', key: 'not valid JSON' },
    { name: 'a wrong type', text: '{"context_engineering": {"retrieval_limits": {"developer": "x"}}}', key: 'context_engineering.retrieval_limits.developer' },
    { name: 'an out-of-range margin', text: '{"context_engineering": {"token_safety_margin": 1.5}}', key: 'context_engineering.token_safety_margin' },
  ])('malformed bazinga/skills_config.json: $name', ({ text, key }) => {
    withFixture((p) => {
      fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), text);
      const out = run('assemble.ts', ['--project-root', p.root, ...request]);
      expectFallback(out);
      expect(out.stderr).toContain(path.join('bazinga', 'skills_config.json'));
      expect(out.stderr).toContain(key);
    });
  });

  it('no project root at all', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-e2e-noroot-'));
    try {
      const out = run('assemble.ts', request, { cwd: dir });
      expectFallback(out);
      expect(out.stderr).toContain('project root');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every failure prints the same fallback block; --format json prints {fallback: true}', () => {
    const p = makeProject('ca-e2e-nodb2-');
    try {
      const md = run('assemble.ts', ['--project-root', p.root, ...request]);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-e2e-noroot2-'));
      const md2 = run('assemble.ts', request, { cwd: dir });
      fs.rmSync(dir, { recursive: true, force: true });
      expect(md2.stdout).toBe(md.stdout);
      const json = run('assemble.ts', ['--project-root', p.root, ...request, '--format', 'json']);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ fallback: true, agent: 'developer' });
    } finally {
      p.cleanup();
    }
  });

  it('enable_context_assembler false → the one-line disabled block, exit 0, database not even opened', () => {
    const p = makeProject('ca-e2e-disabled-');
    try {
      fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), '{"context_engineering": {"enable_context_assembler": false}}');
      const out = run('assemble.ts', ['--project-root', p.root, ...request]);
      expect(out.ms).toBeLessThan(HANG_GUARD_MS);
      expect(out.code).toBe(0);
      expect(out.stderr).toBe('');
      expect(out.stdout.endsWith('\n')).toBe(true);
      expect(out.stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(out.stdout).toMatch(/^## Context for developer\b.*disabled/);
      expect(out.stdout).not.toContain('Fallback Mode');
    } finally {
      p.cleanup();
    }
  });
});

describe('fetch.ts (§7)', () => {
  const S1_ARTIFACTS = (p: Project) => path.join(p.root, 'bazinga', 'artifacts', S1);

  function insertPackage(p: Project, filePath: string): number {
    return withDb(p.dbPath, (db) => {
      const info = db
        .prepare(
          `INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary, scope)
           VALUES (?, 'AUTH', 'research', ?, 'developer', 'high', 'inserted by the test', 'group')`,
        )
        .run(S1, filePath);
      return Number(info.lastInsertRowid);
    });
  }

  function expectRefused(out: Run): void {
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    const err = JSON.parse(out.stderr.trim());
    expect(err.success).toBe(false);
    expect(err.code).toBe('REFUSED');
  }

  it("prints package 4's artifact with the api_key line redacted", () => {
    withFixture((p) => {
      const out = run('fetch.ts', ['4', '--project-root', p.root]);
      expect(out.code).toBe(0);
      expect(out.stdout.startsWith('# Build investigation\nMetro bundler cache caused stale module errors')).toBe(true);
      expect(out.stdout).toMatch(/api_key=\[REDACTED[^\]]*\] found in old \.env/);
      expect(out.stdout).not.toContain('sk_live_');
      expect(out.stderr).not.toContain('sk_live_');
    });
  });

  it('--max-tokens keeps the beginning and the end and marks the omitted middle with one line', () => {
    withFixture((p) => {
      const lines = Array.from({ length: 200 }, (_, i) => `line ${i + 1}: the build investigation notes go on about caching and bundling`);
      lines[1] = 'api_key=sk_live_51HabcdefGHIJKLMNOPqrstuvwxyz0123 found in old .env';
      fs.writeFileSync(path.join(S1_ARTIFACTS(p), 'investigation_build.md'), lines.join('\n') + '\n');
      const full = run('fetch.ts', ['4', '--project-root', p.root]);
      const out = run('fetch.ts', ['4', '--project-root', p.root, '--max-tokens', '200']);
      expect(out.code).toBe(0);
      const got = out.stdout.trimEnd().split('\n');
      expect(got.length).toBeLessThan(full.stdout.trimEnd().split('\n').length);
      expect(got[0]).toBe('line 1: the build investigation notes go on about caching and bundling');
      expect(got.at(-1)).toBe('line 200: the build investigation notes go on about caching and bundling');
      const markers = got.filter((l) => /omitted/.test(l));
      expect(markers).toHaveLength(1);
      expect(markers[0]).toMatch(/\d+ lines \(about \d+ tokens\) omitted/);
      expect(out.stdout).not.toContain('sk_live_');
      const json = JSON.parse(run('fetch.ts', ['4', '--project-root', p.root, '--max-tokens', '200', '--format', 'json']).stdout);
      expect(json).toMatchObject({ id: 4, truncated: true });
      expect(json.omitted_lines).toBeGreaterThan(100);
      expect(json.tokens).toBeLessThanOrEqual(200);
    });
  });

  it.each([
    { name: 'inside the project, outside artifacts', file: 'bazinga/artifacts/../../secret.txt' },
    { name: 'outside the project', file: 'bazinga/artifacts/../../../../../../../../../../etc/passwd' },
    { name: 'an absolute path outside', file: '/etc/passwd' },
  ])('refuses a file_path that resolves outside bazinga/artifacts ($name)', ({ file }) => {
    withFixture((p) => {
      fs.writeFileSync(path.join(p.root, 'secret.txt'), 'password=hunter2hunter2\n');
      const id = insertPackage(p, file);
      expectRefused(run('fetch.ts', [String(id), '--project-root', p.root]));
    });
  });

  it('refuses an artifact that is a symlink to a file outside bazinga/artifacts', () => {
    withFixture((p) => {
      const outside = path.join(p.root, 'outside.md');
      fs.writeFileSync(outside, '# not an artifact\n');
      const artifact = path.join(S1_ARTIFACTS(p), 'decisions_AUTH.md'); // package 3's file
      fs.rmSync(artifact);
      fs.symlinkSync(outside, artifact);
      expectRefused(run('fetch.ts', ['3', '--project-root', p.root]));
      // A symlink that stays inside the artifacts folder is fine.
      fs.rmSync(artifact);
      fs.symlinkSync(path.join(S1_ARTIFACTS(p), 'research_group_AUTH.md'), artifact);
      const ok = run('fetch.ts', ['3', '--project-root', p.root]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('# JWT research');
    });
  });

  it('a real fetch.ts process prints the same bytes as the in-process run: a redacted artifact (exit 0), an unknown id (exit 1), a bad id (exit 2)', () => {
    withFixture((p) => {
      for (const args of [['4', '--project-root', p.root], ['999', '--project-root', p.root], ['abc', '--project-root', p.root]]) {
        const real = runProcess('fetch.ts', args);
        const local = run('fetch.ts', args);
        expect({ code: local.code, stdout: local.stdout, stderr: local.stderr }, args[0]).toEqual({ code: real.code, stdout: real.stdout, stderr: real.stderr });
      }
    });
  });

  it('unknown id → exit 1 NOT_FOUND; bad id → exit 2', () => {
    withFixture((p) => {
      const missing = run('fetch.ts', ['999', '--project-root', p.root]);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toBe('');
      expect(JSON.parse(missing.stderr.trim()).code).toBe('NOT_FOUND');
      for (const bad of ['abc', '-3', '1.5']) {
        const out = run('fetch.ts', [bad, '--project-root', p.root]);
        expect(out.code, bad).toBe(2);
        expect(out.stdout).toBe('');
        expect(JSON.parse(out.stderr.trim()).success).toBe(false);
      }
    });
  });

  it('S2 package 7 is fetched from its own session folder', () => {
    withFixture((p) => {
      const out = run('fetch.ts', ['7', '--project-root', p.root]);
      expect(out.code).toBe(0);
      expect(out.stdout).toBe(fs.readFileSync(path.join(p.root, 'bazinga', 'artifacts', S2, 'failures_CHK_iter1.md'), 'utf8'));
    });
  });
});
