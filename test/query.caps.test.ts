/**
 * `query` is bounded (issue: a `SELECT zeroblob(100000000)` took 72 s and 4 GB before failing): rows
 * are read one at a time and reading stops at --max-rows or --max-bytes, the rows before the cap
 * printed, one warning line on stderr (also under --quiet) naming the cap and the flag that raises it.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bazingaDbIn } from './inProcess.ts';
import { copyFixture, type Project } from './helpers.ts';

let project: Project;
beforeAll(() => {
  project = copyFixture('ca-query-caps-');
});
afterAll(() => project.cleanup());

const ENDLESS = 'SELECT x FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)';

describe('query caps', () => {
  it('an endless SELECT stops at the row cap (1000 by default): those rows printed, the cap named on stderr under --quiet', () => {
    const r = bazingaDbIn(project, ['query', ENDLESS]);
    expect(r.code).toBe(0);
    expect(r.json).toHaveLength(1000);
    expect(r.json[999]).toEqual({ x: 1000 });
    expect(r.stderr).toBe('⚠ query stopped at 1000 rows, the row cap (raise it with --max-rows N)\n');
  });

  it('--max-rows raises or lowers it', () => {
    const r = bazingaDbIn(project, ['query', ENDLESS, '--max-rows', '3']);
    expect(r.json).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
    expect(r.stderr).toContain('stopped at 3 rows');
    expect(bazingaDbIn(project, ['query', 'SELECT session_id FROM sessions', '--max-rows', '2']).stderr).toBe('');
  });

  it('one row past the byte cap (a 100 MB blob) gives [] and the cap at once; --max-bytes moves it', () => {
    const r = bazingaDbIn(project, ['query', 'SELECT zeroblob(100000000) AS b']);
    expect(r.code).toBe(0);
    expect(r.json).toEqual([]);
    expect(r.stderr).toBe('⚠ query stopped at row 1: printing it would pass 10000000 bytes, the byte cap (raise it with --max-bytes N)\n');
    const text = bazingaDbIn(project, ['query', "SELECT printf('%.*c', 2000, 'x') AS t FROM sessions", '--max-bytes', '3000']);
    expect(text.json).toHaveLength(1);
    expect(text.stderr).toContain('stopped at row 2');
  });

  it('the byte cap counts what is printed: UTF-8, escapes and indentation', () => {
    // 1000 control characters print as 6000 bytes (\\u0001 each); 1000 é as 2000.
    const escaped = bazingaDbIn(project, ['query', "SELECT replace(printf('%.*c', 1000, 'x'), 'x', char(1)) AS v", '--max-bytes', '2000']);
    expect(escaped.json).toEqual([]);
    expect(escaped.stderr).toContain('the byte cap');
    const wide = bazingaDbIn(project, ['query', "SELECT replace(printf('%.*c', 1000, 'x'), 'x', 'é') AS v", '--max-bytes', '1100']);
    expect(wide.json).toEqual([]);
    const fits = bazingaDbIn(project, ['query', "SELECT replace(printf('%.*c', 1000, 'x'), 'x', 'é') AS v", '--max-bytes', '2100']);
    expect(fits.json).toHaveLength(1);
    expect(Buffer.byteLength(fits.stdout)).toBeLessThanOrEqual(2100);
  });

  it.each([
    ['--max-rows', '0', "--max-rows must be >= 1, got 0"],
    ['--max-rows', '-5', "--max-rows must be >= 1, got -5"],
    ['--max-bytes', 'x', "--max-bytes must be an integer, got 'x'"],
    ['--max-bytes', '1.5', "--max-bytes must be an integer, got '1.5'"],
    ['--max-ms', '0', "--max-ms must be >= 1, got 0"],
  ])('%s %s: VALIDATION naming the flag and the value (the project\'s one integer rule)', (flag, value, message) => {
    const r = bazingaDbIn(project, ['query', 'SELECT 1', flag, value]);
    expect(r.code).toBe(1);
    expect(r.error).toEqual({ success: false, error: message, code: 'VALIDATION' });
  });
});

/**
 * The time bound: SQLite cannot be stopped from JavaScript, so the statement runs in the CLI run
 * again as a child (relaunch.ts, its arguments on stdin) and is stopped at --max-ms. What the child
 * prints is what the command prints; these cases are the ones a child could get wrong.
 */
describe('query time bound', () => {
  it('a SELECT whose one row takes unbounded work (a count over an endless recursion) is stopped at --max-ms, the bound named; nothing on stdout', () => {
    const r = bazingaDbIn(project, ['query', `SELECT count(*) AS n FROM (${ENDLESS})`, '--max-ms', '400']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.error).toEqual({ success: false, error: 'query stopped after 400 ms, the time bound (raise it with --max-ms N)', code: 'SQL_ERROR' });
  });

  it('within the bound: rows, bound parameters, blobs and a column named like a marker, as before', () => {
    const r = bazingaDbIn(project, ['query', 'SELECT ? + 1 AS n, ? AS t, ? AS z, x\'0102\' AS b, x\'03\' AS "$blob"', '--params', '[41, "x", null]']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual([{ n: 42, t: 'x', z: null, b: { 0: 1, 1: 2 }, $blob: { 0: 3 } }]);
  });

  it('a statement longer than one process argument may be (128 KiB) runs: the child gets its arguments on stdin', () => {
    const long = 'x'.repeat(200_000);
    const r = bazingaDbIn(project, ['query', `SELECT length('${long}') AS n`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual([{ n: 200_000 }]);
  });

  it('many small rows up to the caps come through whole, with the cap warning', () => {
    const r = bazingaDbIn(project, ['query', ENDLESS, '--max-rows', '50000']);
    expect(r.code).toBe(0);
    expect(r.json).toHaveLength(50000);
    expect(r.json[49999]).toEqual({ x: 50000 });
    expect(r.stderr).toBe('⚠ query stopped at 50000 rows, the row cap (raise it with --max-rows N)\n');
  });

  it('a statement that fails in SQLite while it runs is SQL_ERROR with its message', () => {
    const r = bazingaDbIn(project, ['query', "SELECT json_extract('not json', '$.a') AS v"]);
    expect(r.code).toBe(1);
    expect(r.error.code).toBe('SQL_ERROR');
    expect(r.error.error).toMatch(/malformed JSON/);
  });

  it('a stopped statement leaves no -wal or -shm beside a WAL database that had none', () => {
    const wal = copyFixture('ca-query-wal-');
    try {
      const db = new Database(wal.dbPath);
      db.pragma('journal_mode = WAL');
      db.close();
      const side = () => ['-wal', '-shm'].filter((s) => fs.existsSync(wal.dbPath + s));
      expect(side()).toEqual([]);
      const r = bazingaDbIn(wal, ['query', `SELECT count(*) AS n FROM (${ENDLESS})`, '--max-ms', '400']);
      expect(r.error?.code).toBe('SQL_ERROR');
      expect(side()).toEqual([]);
    } finally {
      wal.cleanup();
    }
  });

  it('BAZINGA_DB_CHILD in a user\'s environment changes nothing: the statement is still bounded', () => {
    const r = bazingaDbIn(project, ['query', `SELECT count(*) AS n FROM (${ENDLESS})`, '--max-ms', '300'], { env: { BAZINGA_DB_CHILD: '1' } });
    expect(r.error).toEqual({ success: false, error: 'query stopped after 300 ms, the time bound (raise it with --max-ms N)', code: 'SQL_ERROR' });
  });

});
