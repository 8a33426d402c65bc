/**
 * Schema parity (spec §2.4, §5): a database the CLI creates has the v19 structure of the fixture,
 * table by table; opening an existing v19 file only adds `ca_*` objects; unusable files are
 * refused without ever falling back to creating a schema.
 *
 * The CLI runs through `runCli` in this process (test/inProcess.ts) on real files; the one
 * informational warning (schema v20 without --quiet) is read from a real process, and
 * test/bazinga-db.smoke.test.ts creates a database through a real process.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAZINGA_DB_SCRIPT, S1, copyFixture, makeProject, runScript, type Project } from './helpers.ts';
import { bazingaDbIn, runBazingaDbInProcess } from './inProcess.ts';

/** bazinga-db in process (see the header). */
const cli = bazingaDbIn;
import { CA_SCHEMA_VERSION } from '../skills/bazinga-db/scripts/lib/schema.ts';

type DB = Database.Database;

const openRo = (p: string): DB => new Database(p, { readonly: true, fileMustExist: true });
const strip = (s: string) => s.replace(/\s+/g, '');

/** Every `CHECK(...)` expression of a CREATE statement, whitespace removed, sorted. */
function extractChecks(sql: string): string[] {
  const out: string[] = [];
  const re = /\bCHECK\s*\(/gi;
  let m: RegExpExecArray | null;
  while ((m = re.exec(sql)) !== null) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    let quote: string | null = null;
    for (; i < sql.length && depth > 0; i++) {
      const ch = sql[i] as string;
      if (quote) {
        if (ch === quote) quote = null;
      } else if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '(') depth++;
      else if (ch === ')') depth--;
    }
    out.push(strip(sql.slice(start, i - 1)));
    re.lastIndex = i;
  }
  return out.sort();
}

interface TableShape {
  columns: unknown[];
  foreignKeys: unknown[];
  indexes: unknown[];
  checks: string[];
  autoincrement: boolean;
}

function sqlOf(db: DB, name: string): string | null {
  const row = db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string | null } | undefined;
  return row?.sql ?? null;
}

function tableShape(db: DB, table: string): TableShape {
  const columns = (db.pragma(`table_info("${table}")`) as Record<string, unknown>[]).map(({ cid, name, type, notnull, dflt_value, pk }) => ({
    cid,
    name,
    type,
    notnull,
    dflt_value,
    pk,
  }));
  const foreignKeys = (db.pragma(`foreign_key_list("${table}")`) as Record<string, unknown>[])
    .map(({ id, seq, table: target, from, to, on_update, on_delete, match }) => ({ id, seq, target, from, to, on_update, on_delete, match }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const indexes = (db.pragma(`index_list("${table}")`) as { name: string; unique: number; origin: string; partial: number }[])
    // The original's indexes only: this layer's own (ca_*) may sit on the same tables.
    .filter(({ name }) => !name.startsWith('ca_'))
    .map(({ name, unique, origin, partial }) => {
      const sql = sqlOf(db, name);
      const where = sql === null ? null : (/\bWHERE\b([\s\S]*)$/i.exec(sql)?.[1] ?? null);
      return {
        name,
        unique,
        origin,
        partial,
        info: db.pragma(`index_info("${name}")`),
        xinfo: db.pragma(`index_xinfo("${name}")`),
        where: where === null ? null : strip(where),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  const sql = sqlOf(db, table) ?? '';
  return { columns, foreignKeys, indexes, checks: extractChecks(sql), autoincrement: /\bAUTOINCREMENT\b/i.test(sql) };
}

function userTables(db: DB): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[])
    .map((r) => r.name)
    .filter((n) => !n.startsWith('ca_') && !n.startsWith('sqlite_'));
}

interface MasterRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** Everything a file holds that the port must not touch: schema rows, every table's rows, user_version. */
function snapshot(dbPath: string): { master: MasterRow[]; rows: Record<string, unknown[]>; userVersion: unknown } {
  const db = openRo(dbPath);
  try {
    const master = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() as MasterRow[];
    const rows: Record<string, unknown[]> = {};
    // The original's tables (this layer's own ca_* tables may be WITHOUT ROWID).
    for (const { name } of master.filter((m) => m.type === 'table' && !m.name.startsWith('ca_'))) {
      rows[name] = db.prepare(`SELECT rowid AS __rowid, * FROM "${name}" ORDER BY rowid`).all();
    }
    return { master, rows, userVersion: db.pragma('user_version', { simple: true }) };
  } finally {
    db.close();
  }
}

// The fixture's table list, read from a private copy (the committed file is never opened for writing).
const fixture = copyFixture('ca-schema-fixture-');
const fixtureDb = openRo(fixture.dbPath);
const FIXTURE_TABLES = userTables(fixtureDb);

describe('schema parity: fresh database vs the v19 fixture', () => {
  let fresh: Project;
  let freshDb: DB;

  beforeAll(() => {
    fresh = makeProject('ca-schema-fresh-');
    expect(fs.existsSync(fresh.dbPath)).toBe(false);
    // A write creates the database (a read never does); this one changes no row.
    const r = cli(fresh, ['cleanup-error-patterns']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ success: true, deleted_count: 0 });
    freshDb = openRo(fresh.dbPath);
  });

  afterAll(() => {
    freshDb?.close();
    fresh?.cleanup();
    fixtureDb.close();
    fixture.cleanup();
  });

  it('the fixture has the 17 v19 tables', () => {
    expect(FIXTURE_TABLES).toHaveLength(17);
    expect(FIXTURE_TABLES).toEqual(
      expect.arrayContaining(['sessions', 'orchestration_logs', 'task_groups', 'context_packages', 'context_package_consumers', 'consumption_scope', 'error_patterns', 'strategies', 'schema_version']),
    );
  });

  it('has exactly the fixture tables (besides ca_* and sqlite_*)', () => {
    expect(userTables(freshDb)).toEqual(FIXTURE_TABLES);
    const names = (freshDb.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    expect(names).toContain('sqlite_sequence');
    expect(names.filter((n) => n.startsWith('sqlite_') && n !== 'sqlite_sequence' && n !== 'sqlite_stat1')).toEqual([]);
  });

  it('has exactly the fixture indexes (besides ca_*)', () => {
    const indexNames = (db: DB) =>
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'ca\\_%' ESCAPE '\\' AND tbl_name NOT LIKE 'ca\\_%' ESCAPE '\\' ORDER BY name").all() as { name: string }[]).map(
        (r) => r.name,
      );
    expect(indexNames(freshDb)).toEqual(indexNames(fixtureDb));
    const others = (db: DB) => db.prepare("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name").all();
    expect(others(freshDb)).toEqual(others(fixtureDb));
  });

  describe.each(FIXTURE_TABLES)('table %s', (table) => {
    let want: TableShape;
    let got: TableShape;
    beforeAll(() => {
      want = tableShape(fixtureDb, table);
      got = tableShape(freshDb, table);
    });

    it('columns: name, type, notnull, dflt_value, pk', () => {
      expect(want.columns.length).toBeGreaterThan(0);
      expect(got.columns).toEqual(want.columns);
    });

    it('foreign keys', () => {
      expect(got.foreignKeys).toEqual(want.foreignKeys);
    });

    it('indexes: uniqueness, origin, columns, sort order, partial WHERE', () => {
      expect(got.indexes).toEqual(want.indexes);
    });

    it('CHECK constraints and AUTOINCREMENT', () => {
      expect(got.checks).toEqual(want.checks);
      expect(got.autoincrement).toBe(want.autoincrement);
    });
  });

  it('the CHECK extractor sees nested parentheses and quoted parentheses', () => {
    expect(extractChecks("CREATE TABLE t (a TEXT CHECK(a IN ('x)', 'y')), b INT CHECK (b BETWEEN 1 AND (2 + 3)))")).toEqual([
      "aIN('x)','y')",
      'bBETWEEN1AND(2+3)',
    ]);
    const fixtureChecks = extractChecks(sqlOf(fixtureDb, 'task_groups') ?? '');
    expect(fixtureChecks).toContain('complexityBETWEEN1AND10');
    expect(fixtureChecks).toHaveLength(8);
  });

  it('has exactly one schema_version row: 19, SpecKit task ID tracking', () => {
    const rows = freshDb.prepare('SELECT version, applied_at, description FROM schema_version').all() as {
      version: number;
      applied_at: string;
      description: string;
    }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ version: 19, description: 'Schema v19: SpecKit task ID tracking' });
    expect(rows[0]?.applied_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('records ca_schema = CA_SCHEMA_VERSION in ca_meta, is in WAL mode, and keeps user_version 0', () => {
    expect(freshDb.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").all()).toEqual([{ value: String(CA_SCHEMA_VERSION) }]);
    expect(freshDb.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(freshDb.pragma('user_version', { simple: true })).toBe(fixtureDb.pragma('user_version', { simple: true }));
    const extras = (freshDb.prepare("SELECT tbl_name FROM sqlite_master WHERE tbl_name LIKE 'ca\\_%' ESCAPE '\\'").all() as { tbl_name: string }[]).map(
      (r) => r.tbl_name,
    );
    expect(extras).toContain('ca_meta');
  });

  it('leaves every data table empty', () => {
    for (const t of FIXTURE_TABLES.filter((t) => t !== 'schema_version')) {
      expect((freshDb.prepare(`SELECT count(*) AS n FROM "${t}"`).get() as { n: number }).n, t).toBe(0);
    }
  });
});

describe('opening an existing v19 file', () => {
  it('adds only ca_* objects and changes no row', () => {
    const project = copyFixture('ca-schema-open-');
    try {
      const before = snapshot(project.dbPath);
      expect(before.rows.sessions).toHaveLength(2);
      // A writer opens it (a read changes nothing at all); this write finds the session and writes no row.
      const open = ['create-session', S1, 'parallel', 'unchanged'];
      const r = cli(project, open);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ session_id: S1, existing: true });

      const after = snapshot(project.dbPath);
      const key = (m: MasterRow) => `${m.type}:${m.name}`;
      const beforeKeys = new Map(before.master.map((m) => [key(m), m]));
      for (const m of before.master) expect(after.master.find((a) => key(a) === key(m)), key(m)).toEqual(m);
      const added = after.master.filter((m) => !beforeKeys.has(key(m)));
      expect(added.length).toBeGreaterThan(0);
      // This layer's own tables, and its indexes (some on the original's tables), are all named ca_*.
      for (const m of added) expect(m.name.startsWith('ca_') || m.tbl_name.startsWith('ca_'), key(m)).toBe(true);
      for (const [table, rows] of Object.entries(before.rows)) expect(after.rows[table], table).toEqual(rows);
      expect(after.userVersion).toBe(before.userVersion);

      const db = openRo(project.dbPath);
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").get()).toEqual({ value: String(CA_SCHEMA_VERSION) });
      } finally {
        db.close();
      }

      // A second open takes the fast path: the file stays byte-identical.
      const bytes = fs.readFileSync(project.dbPath);
      expect(cli(project, open).code).toBe(0);
      expect(fs.readFileSync(project.dbPath).equals(bytes)).toBe(true);

      // A later release's mark (a higher ca_schema) is neither lowered nor a reason to write.
      const rw = new Database(project.dbPath);
      rw.prepare("UPDATE ca_meta SET value = ? WHERE key = 'ca_schema'").run(String(CA_SCHEMA_VERSION + 1));
      rw.pragma('wal_checkpoint(TRUNCATE)');
      rw.close();
      const later = fs.readFileSync(project.dbPath);
      expect(cli(project, open).code).toBe(0);
      expect(fs.readFileSync(project.dbPath).equals(later)).toBe(true);
      // And when objects are missing, they are made again and the higher mark stays.
      const pruned = new Database(project.dbPath);
      pruned.exec('DROP INDEX ca_idx_patterns_shown');
      pruned.close();
      expect(cli(project, open).code).toBe(0);
      const check = openRo(project.dbPath);
      try {
        expect(check.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").get()).toEqual({ value: String(CA_SCHEMA_VERSION + 1) });
        expect(check.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'ca_idx_patterns_shown'").get()).toEqual({ n: 1 });
      } finally {
        check.close();
      }
    } finally {
      project.cleanup();
    }
  });
});

describe('refusing unusable files', () => {
  const projects: Project[] = [];
  afterAll(() => projects.forEach((p) => p.cleanup()));

  /** A fixture copy altered with `sql` (on the copy only). */
  function alteredFixture(sql: string): Project {
    const p = copyFixture('ca-schema-bad-');
    projects.push(p);
    const db = new Database(p.dbPath);
    db.exec(sql);
    db.close();
    return p;
  }

  const caObjects = (dbPath: string) => {
    const db = openRo(dbPath);
    try {
      return db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\'").all();
    } finally {
      db.close();
    }
  };

  it('schema_version 18 → SCHEMA, exit 1, nothing added', () => {
    const p = alteredFixture('UPDATE schema_version SET version = 18');
    const before = snapshot(p.dbPath);
    const r = cli(p, ['list-sessions']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.error).toMatchObject({ success: false, code: 'SCHEMA' });
    expect(r.error.error).toContain('Database schema v18 is older than v19');
    const after = snapshot(p.dbPath);
    expect(after.master).toEqual(before.master);
    expect(after.rows).toEqual(before.rows);
    expect(caObjects(p.dbPath)).toEqual([]);
  });

  it('no schema_version table → SCHEMA (v0)', () => {
    const p = alteredFixture('DROP TABLE schema_version');
    const r = cli(p, ['get-session', S1]);
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({ code: 'SCHEMA' });
    expect(r.error.error).toContain('Database schema v0 is older than v19');
    expect(caObjects(p.dbPath)).toEqual([]);
  });

  it('a missing core table → SCHEMA naming it', () => {
    const p = alteredFixture('DROP TABLE strategies');
    const r = cli(p, ['list-sessions']);
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({ code: 'SCHEMA' });
    expect(r.error.error).toContain('strategies');
    expect(caObjects(p.dbPath)).toEqual([]);
  });

  it('schema_version 20 → continues, with a warning unless --quiet', () => {
    const p = alteredFixture("INSERT INTO schema_version (version, description) VALUES (20, 'future')");
    // Through a real process: the informational line reaches the process's stderr, and equals the in-process run's.
    const loud = runScript(BAZINGA_DB_SCRIPT, ['--db', p.dbPath, 'list-sessions']);
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.json).toHaveLength(2);
    expect(loud.stderr).toMatch(/⚠.*v20/);
    const loudIn = runBazingaDbInProcess(['--db', p.dbPath, 'list-sessions']);
    expect({ code: loudIn.code, stdout: loudIn.stdout, stderr: loudIn.stderr }).toEqual({ code: loud.code, stdout: loud.stdout, stderr: loud.stderr });
    const quiet = cli(p, ['list-sessions']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  });

  it.each([
    ['a text file', Buffer.from('this is certainly not a SQLite database\n'.repeat(200))],
    ['a tiny text file', Buffer.from('not a db\n')],
    ['random bytes', Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 251))],
  ])('%s at the db path → DB_ERROR, exit 1, never a new schema', (_label, content) => {
    const p = makeProject('ca-schema-notdb-');
    projects.push(p);
    fs.writeFileSync(p.dbPath, content);
    for (const args of [['list-sessions'], ['create-session', 'sess_A', 'simple', 'req'], ['query', 'SELECT 1']]) {
      const r = cli(p, args);
      expect(r.code, args[0]).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.error).toMatchObject({ success: false, code: 'DB_ERROR' });
      expect(r.error.error).toContain('file is not a database');
      expect(r.stderr).not.toMatch(/^\s{4}at /m);
      expect(fs.readFileSync(p.dbPath).equals(content)).toBe(true);
    }
    const leftovers = fs.readdirSync(path.dirname(p.dbPath)).filter((f) => f.startsWith('bazinga.db'));
    expect(leftovers.filter((f) => fs.statSync(path.join(path.dirname(p.dbPath), f)).size > 0)).toEqual(['bazinga.db']);
  });

  it('a SQLite file without `sessions` → SCHEMA, and no BAZINGA table is created', () => {
    const p = makeProject('ca-schema-other-');
    projects.push(p);
    const db = new Database(p.dbPath);
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')");
    db.close();
    const r = cli(p, ['list-sessions']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.error).toMatchObject({ success: false, code: 'SCHEMA' });
    expect(r.error.error).toBe(`Not a BAZINGA database (table 'sessions' missing): ${p.dbPath}`);
    const check = openRo(p.dbPath);
    try {
      expect(check.prepare('SELECT name FROM sqlite_master ORDER BY name').all()).toEqual([{ name: 'notes' }]);
      expect(check.prepare('SELECT body FROM notes').all()).toEqual([{ body: 'keep me' }]);
    } finally {
      check.close();
    }
  });

  it('an empty (0-byte) file is initialised like a missing one (by a write; a read leaves it empty)', () => {
    const p = makeProject('ca-schema-empty-');
    projects.push(p);
    fs.writeFileSync(p.dbPath, '');
    expect(cli(p, ['list-sessions']).error).toMatchObject({ code: 'NOT_FOUND' });
    expect(fs.statSync(p.dbPath).size).toBe(0);
    const r = cli(p, ['create-session', 'sess_A', 'simple', 'req']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ success: true, existing: false });
    const db = openRo(p.dbPath);
    try {
      expect(userTables(db)).toEqual(FIXTURE_TABLES);
      expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: 19 }]);
    } finally {
      db.close();
    }
  });
});

/**
 * A write that fails leaves a missing or empty database file as it found it: the schema it made
 * is in the same transaction as its work (rollback journal), undone with it. (Found from outside:
 * a failing write given `--db` on an existing empty file built the schema in it.)
 */
describe('a failing write on an empty file', () => {
  const sideFiles = (dbPath: string) => ['-wal', '-shm', '-journal'].filter((s) => fs.existsSync(dbPath + s));

  it.each([
    ['update-strategy-helpfulness on a missing strategy', ['update-strategy-helpfulness', 'no_such', '1'], 'NOT_FOUND'],
    ['update-error-confidence on a missing pattern', ['update-error-confidence', 'f'.repeat(64), 'proj', 'success'], 'NOT_FOUND'],
    ['forget-memory of a missing memory', ['forget-memory', '42'], 'NOT_FOUND'],
    ['save-reasoning for a missing session', ['save-reasoning', 'no_session', 'AUTH', 'developer', 'completion', 'done'], undefined],
  ])('%s: the file stays empty, nothing beside it', (_name, args, code) => {
    const project = makeProject('ca-empty-fail-');
    try {
      fs.mkdirSync(path.dirname(project.dbPath), { recursive: true });
      fs.writeFileSync(project.dbPath, '');
      const r = cli(project, args);
      expect(r.code, r.stderr).not.toBe(0);
      if (code) expect(r.error.code).toBe(code);
      expect(fs.statSync(project.dbPath).size).toBe(0);
      expect(sideFiles(project.dbPath)).toEqual([]);
      // The file is as it was: the next write that succeeds makes it a database, and says so once.
      const made = runBazingaDbInProcess(['--db', project.dbPath, '--project-root', project.root, 'create-session', S1, 'simple', 'req']);
      expect(made.code, made.stderr).toBe(0);
      expect(made.stderr).toBe(`✓ Created BAZINGA database (schema v19) at ${project.dbPath}\n`);
      const db = openRo(project.dbPath);
      try {
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.prepare('SELECT session_id FROM sessions').all()).toEqual([{ session_id: S1 }]);
      } finally {
        db.close();
      }
    } finally {
      project.cleanup();
    }
  });

  it('a missing file is left an empty file, not a database, and the creation is not announced', () => {
    const project = makeProject('ca-missing-fail-');
    try {
      const r = runBazingaDbInProcess(['--db', project.dbPath, '--project-root', project.root, 'update-strategy-helpfulness', 'no_such', '1']);
      expect(r.code).toBe(1);
      expect(r.stderr).not.toContain('Created BAZINGA database');
      expect(fs.statSync(project.dbPath).size).toBe(0);
      expect(sideFiles(project.dbPath)).toEqual([]);
    } finally {
      project.cleanup();
    }
  });
});
