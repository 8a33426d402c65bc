/**
 * The search index built outside the spawns: `bazinga-db index-search` indexes every row not yet
 * indexed in short transactions (one indexer at a time), `--background` starts it detached at the
 * lowest priority, and the plugin's SessionStart hook starts it in a BAZINGA project. Real
 * processes where the point is a process; the rest in process.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFixture, makeProject, REPO_ROOT, type Project } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';
import { openDatabase } from '../skills/bazinga-db/scripts/lib/db.ts';
import { ensureExtensions, extensionsCurrent } from '../skills/bazinga-db/scripts/lib/migrate.ts';
import { CA_DDL, CA_OBJECTS } from '../skills/bazinga-db/scripts/lib/schema.ts';

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});
const fixture = () => {
  const p = copyFixture('ca-index-search-');
  projects.push(p);
  return p;
};

/** Rows indexed against rows stored (packages, reasoning rows). */
function coverage(dbPath: string): { packages: [number, number]; reasoning: [number, number] } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const has = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'ca_fts_packages'").get() as { n: number }).n > 0;
    return {
      packages: [has ? n('SELECT count(*) AS n FROM ca_fts_packages') : 0, n('SELECT count(*) AS n FROM context_packages')],
      reasoning: [has ? n('SELECT count(*) AS n FROM ca_fts_reasoning') : 0, n("SELECT count(*) AS n FROM orchestration_logs WHERE log_type = 'reasoning'")],
    };
  } finally {
    db.close();
  }
}

async function until(ok: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (ok()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return ok();
}

describe('bazinga-db index-search', () => {
  it('indexes every row of a database BAZINGA made (never indexed), then finds nothing left', () => {
    const p = fixture();
    const first = bazingaDbIn(p, ['index-search']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ success: true, complete: true, backlog: 0 });
    const c = coverage(p.dbPath);
    expect(c.packages[0]).toBe(c.packages[1]);
    expect(c.reasoning[0]).toBe(c.reasoning[1]);
    expect(first.json.indexed.packages).toBe(c.packages[1]);
    const again = bazingaDbIn(p, ['index-search']);
    expect(again.json).toMatchObject({ complete: true, indexed: { packages: 0, reasoning: 0, patterns: 0, strategies: 0 } });
  });

  it('one indexer at a time: a live holder of the lock is left alone, a dead one is taken over', () => {
    const p = fixture();
    const lock = `${p.dbPath}.index-search.pid`;
    fs.writeFileSync(lock, String(process.pid));
    expect(bazingaDbIn(p, ['index-search']).json).toEqual({ success: true, complete: false, skipped: 'another index-search is running on this database' });
    expect(coverage(p.dbPath).packages[0]).toBe(0);
    fs.writeFileSync(lock, '2147483646');
    expect(bazingaDbIn(p, ['index-search']).json).toMatchObject({ complete: true });
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('a lock no indexer touched for 30 s is stale, whoever holds its pid now (a killed indexer, a reused pid, a zombie)', () => {
    const p = fixture();
    const lock = `${p.dbPath}.index-search.pid`;
    fs.writeFileSync(lock, String(process.pid)); // a live pid, but not an indexer's
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    expect(bazingaDbIn(p, ['index-search']).json).toMatchObject({ complete: true });
    expect(fs.existsSync(lock)).toBe(false);
    // A lock being written (empty, fresh) counts as held.
    fs.writeFileSync(lock, '');
    expect(bazingaDbIn(p, ['index-search']).json).toMatchObject({ skipped: 'another index-search is running on this database' });
    expect(fs.readFileSync(lock, 'utf8')).toBe('');
  });

  it('nothing to do where relevance is off or the database file is empty (no schema made in it)', () => {
    const off = fixture();
    fs.writeFileSync(path.join(off.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { enable_fts5: false } }));
    expect(bazingaDbIn(off, ['index-search']).json).toEqual({ success: true, complete: false, skipped: 'relevance is off (context_engineering.enable_fts5: false)' });
    expect(bazingaDbIn(off, ['index-search', '--background']).json).toMatchObject({ started: false });
    expect(coverage(off.dbPath).packages[0]).toBe(0);
    const empty = makeProject('ca-index-empty-');
    projects.push(empty);
    fs.mkdirSync(path.dirname(empty.dbPath), { recursive: true });
    fs.writeFileSync(empty.dbPath, '');
    expect(bazingaDbIn(empty, ['index-search']).json).toMatchObject({ complete: false, skipped: expect.stringContaining('no database at') });
    expect(fs.statSync(empty.dbPath).size).toBe(0);
  });

  it.each([
    [['index-search', '--max-ms', '0'], 'VALIDATION', '--max-ms must be >= 1, got 0'],
    [['index-search', 'extra'], 'USAGE', "Unexpected argument 'extra'"],
  ])('%j: %s', (args, code, message) => {
    const r = bazingaDbIn(fixture(), args);
    expect(r.error).toMatchObject({ code, error: message });
  });

  it('without a database: NOT_FOUND in the foreground, nothing started in the background', () => {
    const p = makeProject('ca-index-none-');
    projects.push(p);
    fs.mkdirSync(path.dirname(p.dbPath), { recursive: true });
    expect(bazingaDbIn(p, ['index-search']).error?.code).toBe('NOT_FOUND');
    expect(bazingaDbIn(p, ['index-search', '--background']).json).toMatchObject({ success: true, started: false });
    expect(fs.existsSync(p.dbPath)).toBe(false);
  });

  it('--background returns at once and the detached indexer completes the index', async () => {
    const p = fixture();
    const r = bazingaDbIn(p, ['index-search', '--background']);
    expect(r.json).toMatchObject({ success: true, started: true });
    expect(r.json.pid).toBeGreaterThan(0);
    expect(await until(() => { const c = coverage(p.dbPath); return c.packages[0] === c.packages[1] && c.packages[1] > 0 && !fs.existsSync(`${p.dbPath}.index-search.pid`); }, 30_000)).toBe(true);
  });

  it("the plugin's SessionStart hook (bootstrap.mjs) starts it in the session's BAZINGA project and returns at once", async () => {
    const p = fixture();
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'hooks', 'bootstrap.mjs')], { env: { ...process.env, CLAUDE_PROJECT_DIR: p.root }, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(await until(() => { const c = coverage(p.dbPath); return c.packages[0] === c.packages[1] && c.reasoning[0] === c.reasoning[1]; }, 30_000)).toBe(true);
  });

  it('a spawn while the indexer runs leaves the backlog to it: one stderr line, the block all the same', () => {
    const p = fixture();
    fs.writeFileSync(`${p.dbPath}.index-search.pid`, String(process.pid));
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'), '--project-root', p.root, '--session', 'bazinga_20251201_090000', '--group', 'AUTH', '--agent', 'qa_expert'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^## Context for qa_expert\n/);
    expect(r.stdout).not.toContain('Fallback Mode');
    expect(r.stderr).toBe('⚠ context-assembler: the search index is being built in the background; ranked with what is indexed so far\n');
    expect(coverage(p.dbPath).packages[0]).toBe(0);
    // It asked the indexer to step aside while it wrote, and took the request back as it exited.
    expect(fs.readdirSync(path.dirname(p.dbPath)).filter((n) => n.includes('.index-search.yield.'))).toEqual([]);
  });

  it('the indexer steps aside while a spawn asks it to: no new transaction until the request is withdrawn or stale', () => {
    const p = fixture();
    // Rows of another tool to index, many transactions' worth.
    const db = new Database(p.dbPath);
    const insert = db.prepare("INSERT INTO orchestration_logs (session_id, agent_type, content, log_type, reasoning_phase, group_id) VALUES ('bazinga_20251201_090000', 'developer', ?, 'reasoning', 'approach', 'AUTH')");
    db.transaction(() => {
      for (let i = 0; i < 20_000; i++) insert.run(`step ${i} of the refresh rotation`);
    })();
    db.close();
    // A live process's request (this test's own pid).
    const ask = `${p.dbPath}.index-search.yield.${process.pid}`;
    fs.writeFileSync(ask, '');
    // Within 400 ms the indexer does its first transaction, then waits on the fresh request.
    const held = bazingaDbIn(p, ['index-search', '--max-ms', '400']);
    expect(held.json).toMatchObject({ success: true, complete: false });
    expect(held.json.rounds).toBe(1);
    // A request older than YIELD_STALE_MS (2 s) is ignored: the run completes.
    const old = new Date(Date.now() - 3_000);
    fs.utimesSync(ask, old, old);
    const free = bazingaDbIn(p, ['index-search', '--max-ms', '400']);
    expect(free.json.rounds).toBeGreaterThan(1);
    expect(fs.existsSync(ask)).toBe(false); // a request nobody holds is removed
    // A fresh request of a process that is gone does not count either.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const orphan = `${p.dbPath}.index-search.yield.${gone}`;
    fs.writeFileSync(orphan, '');
    const rest = bazingaDbIn(p, ['index-search', '--max-ms', '60000']);
    expect(rest.json).toMatchObject({ success: true, complete: true });
    expect(fs.existsSync(orphan)).toBe(false);
  });

  it('the schema step a statement at a time: the tables in one transaction, then each index in its own with a pause between; cut short, the next open makes the rest', () => {
    const p = fixture();
    const objects = (dbPath: string) => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return (db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
      } finally {
        db.close();
      }
    };
    const indexes = CA_DDL.filter((ddl) => /^CREATE INDEX/.test(ddl)).length;
    expect(indexes).toBeGreaterThan(3);
    // Cut short after the second index: what is made stays, and the version is not recorded.
    const db = new Database(p.dbPath);
    let pauses = 0;
    expect(() =>
      ensureExtensions(db as never, () => {
        if (++pauses === 2) throw new Error('stopped');
      }),
    ).toThrow('stopped');
    expect(extensionsCurrent(db as never)).toBe(false);
    db.close();
    // Two indexes made one at a time, and the unique ones, made with the tables (a record relies on them).
    const unique = CA_DDL.filter((ddl) => /^CREATE UNIQUE INDEX/.test(ddl)).length;
    expect(objects(p.dbPath).filter((n) => n.startsWith('ca_idx_'))).toHaveLength(2 + unique);
    // The next open makes the rest, in one transaction.
    openDatabase({ dbPath: p.dbPath, create: false }).close();
    const whole = new Database(p.dbPath, { readonly: true });
    expect(extensionsCurrent(whole as never)).toBe(true);
    whole.close();
    for (const name of CA_OBJECTS) expect(objects(p.dbPath)).toContain(name);
    // Stepwise from the start: one pause per index.
    const q = fixture();
    const conn = new Database(q.dbPath);
    pauses = 0;
    ensureExtensions(conn as never, () => void pauses++);
    expect(pauses).toBe(indexes);
    expect(extensionsCurrent(conn as never)).toBe(true);
    conn.close();
    expect(objects(q.dbPath)).toEqual(objects(p.dbPath));
  });

  it('a spawn while the indexer makes the schema does not make it itself: it works around the missing objects, records, and leaves them to the indexer', () => {
    const p = fixture();
    fs.writeFileSync(`${p.dbPath}.index-search.pid`, String(process.pid));
    const r = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'), '--project-root', p.root, '--session', 'bazinga_20251201_090000', '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '3', '--format', 'json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.packages.length).toBeGreaterThan(0);
    expect(doc.consumption).toBe('recorded');
    const db = new Database(p.dbPath, { readonly: true });
    try {
      expect((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\'").get() as { n: number }).n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM consumption_scope WHERE agent_type = ? AND iteration = 3').get('qa_expert') as { n: number }).n).toBe(doc.packages.length);
    } finally {
      db.close();
    }
  });
});
