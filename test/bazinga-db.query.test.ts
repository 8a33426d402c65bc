/**
 * `query` (spec §4.8.1, F9): only a single SELECT, run on a read-only connection, with bound
 * parameters. Nothing it is given can change the database file.
 *
 * Every call runs through `runCli` in this process (test/inProcess.ts) with the same assertions a
 * process run gets; test/bazinga-db.smoke.test.ts runs `query` (a read and a refused write) as a
 * real process and checks its bytes equal the in-process run.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S1, S2, copyFixture, type Project } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';

/** bazinga-db in process (see the header). */
const cli = bazingaDbIn;

/** Row count of every table (sqlite_master included) of the database at `dbPath`. */
function rowCounts(dbPath: string): Record<string, number> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
    const counts: Record<string, number> = {
      sqlite_master: (db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n,
    };
    for (const { name } of tables) {
      counts[name] = (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
    }
    counts.user_version = db.pragma('user_version', { simple: true }) as number;
    return counts;
  } finally {
    db.close();
  }
}

interface Refused {
  label: string;
  sql: string;
  code: 'VALIDATION' | 'SQL_ERROR';
  text: string;
}

const ONLY_SELECT = 'Only SELECT queries allowed';
const ONE_STATEMENT = 'You can only execute one statement at a time.';

const refused: Refused[] = [
  { label: 'INSERT', sql: "INSERT INTO sessions (session_id, mode) VALUES ('evil', 'simple')", code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'UPDATE', sql: "UPDATE sessions SET status = 'failed'", code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'DELETE', sql: 'DELETE FROM sessions', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'lower-case delete', sql: 'delete from context_packages', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'DROP TABLE', sql: 'DROP TABLE sessions', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'ATTACH', sql: "ATTACH DATABASE '/tmp/ca-evil.db' AS evil", code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'CREATE TABLE', sql: 'CREATE TABLE evil (x)', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'CREATE INDEX', sql: 'CREATE INDEX evil_idx ON sessions(mode)', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'VACUUM', sql: 'VACUUM', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'PRAGMA journal_mode=DELETE', sql: 'PRAGMA journal_mode=DELETE', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'PRAGMA user_version=5', sql: 'PRAGMA user_version=5', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'read-looking PRAGMA', sql: 'PRAGMA table_info(sessions)', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'leading line comment', sql: '-- just a read\nDELETE FROM sessions', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'leading block comment before SELECT', sql: '/* hi */ SELECT 1', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'WITH … DELETE', sql: 'WITH doomed AS (SELECT session_id FROM sessions) DELETE FROM sessions WHERE session_id IN doomed', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'WITH … SELECT (refused like the original)', sql: 'WITH x AS (SELECT 1) SELECT * FROM x', code: 'VALIDATION', text: ONLY_SELECT },
  { label: 'SELECT 1; DELETE FROM sessions', sql: 'SELECT 1; DELETE FROM sessions', code: 'VALIDATION', text: ONE_STATEMENT },
  { label: 'SELECT; DROP TABLE', sql: 'SELECT * FROM sessions; DROP TABLE sessions', code: 'VALIDATION', text: ONE_STATEMENT },
  { label: 'SELECT; PRAGMA user_version', sql: 'SELECT 1; PRAGMA user_version=5', code: 'VALIDATION', text: ONE_STATEMENT },
  { label: 'SELECT; ATTACH', sql: "SELECT 1; ATTACH DATABASE '/tmp/ca-evil.db' AS evil", code: 'VALIDATION', text: ONE_STATEMENT },
  // A SELECT that writes: the optimize pragma as a table-valued function runs ANALYZE-style writes.
  { label: 'SELECT that writes through pragma_optimize', sql: 'SELECT * FROM pragma_optimize', code: 'SQL_ERROR', text: 'attempt to write a readonly database' },
  // Loading native code from SQL is refused outright.
  { label: 'SELECT load_extension()', sql: "SELECT load_extension('/tmp/ca-evil.so')", code: 'SQL_ERROR', text: 'not authorized' },
  { label: 'no such column', sql: 'SELECT nope FROM sessions', code: 'SQL_ERROR', text: 'no such column: nope' },
  { label: 'no such table', sql: 'SELECT * FROM agent_reasoning', code: 'SQL_ERROR', text: 'no such table: agent_reasoning' },
];

describe('bazinga-db query', () => {
  let project: Project;
  let beforeBytes: Buffer;
  let beforeCounts: Record<string, number>;

  const expectUnchanged = () => {
    expect(fs.readFileSync(project.dbPath).equals(beforeBytes)).toBe(true);
    expect(rowCounts(project.dbPath)).toEqual(beforeCounts);
    expect(fs.existsSync('/tmp/ca-evil.db')).toBe(false);
  };

  beforeAll(() => {
    project = copyFixture('ca-query-');
    // First open: WAL header change and the ca_* objects (§5.5). Everything after must change nothing.
    const first = cli(project, ['list-sessions']);
    expect(first.code, first.stderr).toBe(0);
    expect(fs.existsSync(`${project.dbPath}-wal`)).toBe(false);
    beforeBytes = fs.readFileSync(project.dbPath);
    beforeCounts = rowCounts(project.dbPath);
    expect(beforeCounts.sessions).toBe(2);
    expect(beforeCounts.context_packages).toBeGreaterThan(0);
  });

  afterAll(() => project?.cleanup());

  it.each(refused)('refuses $label ($code)', ({ sql, code, text }) => {
    const r = cli(project, ['query', sql]);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({ success: false, code });
    expect(r.error.error).toContain(text);
    expect(r.stderr).not.toMatch(/^\s{4}at /m);
    expectUnchanged();
  });

  it('refuses writes spread over unquoted tokens', () => {
    const r = cli(project, ['query', 'DELETE', 'FROM', 'sessions', 'WHERE', '1=1']);
    expect(r.code).toBe(1);
    expect(r.error).toMatchObject({ code: 'VALIDATION', error: ONLY_SELECT });
    expectUnchanged();
  });

  it('runs a plain SELECT (leading blanks, lower case) and joins unquoted tokens', () => {
    const r = cli(project, ['query', '  select 1 as x']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual([{ x: 1 }]);
    const joined = cli(project, ['query', 'SELECT', 'count(*)', 'AS', 'n', 'FROM', 'sessions']);
    expect(joined.json).toEqual([{ n: 2 }]);
    expectUnchanged();
  });

  it('binds --param values as TEXT, in order', () => {
    const r = cli(project, [
      'query',
      "SELECT COALESCE(json_extract(metadata,'$.project_id'),'default') AS pid FROM sessions WHERE session_id = ?",
      '--param',
      S1,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual([{ pid: 'acme-shop' }]);

    const two = cli(project, [
      'query',
      'SELECT session_id FROM sessions WHERE session_id IN (?, ?) ORDER BY session_id',
      '--param',
      S2,
      '--param',
      S1,
    ]);
    expect(two.json).toEqual([{ session_id: S1 }, { session_id: S2 }]);

    const typed = cli(project, ['query', 'SELECT typeof(?) AS t, ? AS v', '--param', '42', '--param', '42']);
    expect(typed.json).toEqual([{ t: 'text', v: '42' }]);

    // Column affinity: text '1' matches an INTEGER column value 1.
    const affinity = cli(project, ['query', 'SELECT id FROM context_packages WHERE id = ?', '--param', '1']);
    expect(affinity.json).toEqual([{ id: 1 }]);

    // A hostile value stays a value.
    const hostile = cli(project, ['query', 'SELECT count(*) AS n FROM sessions WHERE session_id = ?', '--param', "' OR 1=1 --"]);
    expect(hostile.json).toEqual([{ n: 0 }]);
    expectUnchanged();
  });

  it('binds --params with types: int, float, bool, null, string', () => {
    const r = cli(project, [
      'query',
      'SELECT typeof(?) AS ti, typeof(?) AS tf, typeof(?) AS tt, typeof(?) AS tb, typeof(?) AS tn, typeof(?) AS ts',
      '--params',
      '[7, 2.5, true, false, null, "x"]',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual([{ ti: 'integer', tf: 'real', tt: 'integer', tb: 'integer', tn: 'null', ts: 'text' }]);

    const values = cli(project, [
      'query',
      'SELECT ? AS i, ? AS f, ? AS t, ? AS b, ? AS n, ? AS s, ? + 1 AS sum',
      '--params',
      '[7, 2.5, true, false, null, "x", 41]',
    ]);
    expect(values.json).toEqual([{ i: 7, f: 2.5, t: 1, b: 0, n: null, s: 'x', sum: 42 }]);

    const whole = cli(project, ['query', 'SELECT typeof(?) AS t', '--params', '[3.0]']);
    expect(whole.json).toEqual([{ t: 'integer' }]);

    const rows = cli(project, [
      'query',
      'SELECT session_id FROM sessions WHERE session_id = ? OR ? IS NULL ORDER BY session_id LIMIT ?',
      '--params',
      `["${S2}", 1, 5]`,
    ]);
    expect(rows.json).toEqual([{ session_id: S2 }]);
    expectUnchanged();
  });

  it('reports a parameter count mismatch as VALIDATION', () => {
    for (const args of [
      ['query', 'SELECT ? AS a, ? AS b', '--param', 'only-one'],
      ['query', 'SELECT ? AS a'],
      ['query', 'SELECT 1 AS a', '--param', 'surplus'],
      ['query', 'SELECT ? AS a', '--params', '[1, 2]'],
    ]) {
      const r = cli(project, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.error).toMatchObject({ success: false, code: 'VALIDATION' });
      expect(r.error.error).toMatch(/parameter/i);
    }
    expectUnchanged();
  });

  it('reports when column names repeat, the last one wins', () => {
    const r = cli(project, ['query', 'SELECT 1 AS a, 2 AS a']);
    expect(r.json).toEqual([{ a: 2 }]);
    expectUnchanged();
  });
});
