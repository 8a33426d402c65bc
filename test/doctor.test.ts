/**
 * `context-assembler doctor` on copies of the v19 fixture: a healthy project, each broken case (no
 * project root, database missing, corrupt file, schema v18, malformed config) failing with a FAIL
 * row and a fix, the database left untouched, and a bad --format.
 *
 * The JSON checks run `runDoctor` in this process (the function the doctor script and its bundle
 * call); the table output, the exit codes of bad usage and --help, the never-modifies check and an
 * installed project with a missing dependency run as real processes through the bin launcher, and
 * one test checks that the launcher process and the in-process run report the same checks.
 */
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../skills/context-assembler/scripts/lib/doctor.ts';
import { REPO_ROOT, S1, copyFixture, makeProject, type Project } from './helpers.ts';
import { bazingaDbIn as bazingaDb } from './inProcess.ts';

const BIN = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const CHECKS = ['node', 'better-sqlite3', 'fts5', 'project root', 'database', 'schema', 'migrations', 'secrets', 'config', 'relevance', 'flow', 'reports', 'warm assembler', 'tokenizer'];

/** No inherited project hints: only flags (or the cwd) choose the project. */
const ENV: NodeJS.ProcessEnv = { ...process.env };
delete ENV.CLAUDE_PROJECT_DIR;
delete ENV.BAZINGA_ROOT;

interface Check {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix: string;
}
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function doctor(args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const r = spawnSync(process.execPath, [BIN, 'doctor', ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? ENV,
    encoding: 'utf8',
    timeout: 60_000, // hang guard only
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** runDoctor in this process, with the working directory and environment a launcher process would get. */
async function doctorIn(args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runDoctor(args, {
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? ENV,
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  });
  return { code, stdout, stderr };
}

const parsed = (r: Run) => {
  const doc = JSON.parse(r.stdout) as { ok: boolean; checks: Check[] };
  return { ...r, doc, row: (name: string) => doc.checks.find((c) => c.check === name) };
};

/** `doctor --format json` in process. */
async function doctorJson(args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return parsed(await doctorIn([...args, '--format', 'json'], opts));
}

/** `doctor --format json` through the launcher, as a real process. */
function doctorJsonProcess(args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return parsed(doctor([...args, '--format', 'json'], opts));
}

/** Asserts exit 1, ok false, and a FAIL row `name` whose detail matches and whose fix is non-empty. */
function expectFail(r: Awaited<ReturnType<typeof doctorJson>>, name: string, detail: RegExp) {
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.doc.ok).toBe(false);
  const row = r.row(name);
  expect(row, `row ${name}`).toBeDefined();
  expect(row?.status).toBe('fail');
  expect(row?.detail).toMatch(detail);
  expect(row?.fix.trim().length).toBeGreaterThan(0);
}

/**
 * The bundled fixture may be checked out read-only (files 0444, folders 0555) and cpSync keeps
 * modes; give the copy normal modes so "writable" does not depend on running as root.
 */
function makeWritable(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, d.name);
    if (d.isDirectory()) makeWritable(abs);
    else if (d.isFile()) fs.chmodSync(abs, 0o644);
  }
}

function writableFixture(prefix: string): Project {
  const p = copyFixture(prefix);
  makeWritable(p.root);
  return p;
}

const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

const projects: Project[] = [];
function fixture(): Project {
  const p = writableFixture('ca-doctor-');
  projects.push(p);
  return p;
}
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

describe('doctor on a healthy fixture copy', () => {
  let p: Project;
  beforeAll(() => {
    p = writableFixture('ca-doctor-ok-');
  });
  afterAll(() => p.cleanup());

  it('json: exit 0, ok true, every check present and OK', async () => {
    const r = await doctorJson(['--project-root', p.root]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.doc.ok).toBe(true);
    expect(r.doc.checks.map((c) => c.check)).toEqual(CHECKS);
    // Where the report's HTML goes.
    expect(r.doc.checks.find((c) => c.check === 'reports')?.detail).toMatch(/bazinga\/reports \(none yet\): context-assembler report --format html writes there/);
    for (const c of r.doc.checks) {
      expect(c.status, `${c.check}: ${c.detail}`).toBe('ok');
      expect(c.detail.length).toBeGreaterThan(0);
    }
    expect(r.row('schema')?.detail).toBe('v19');
    expect(r.row('database')?.detail).toContain(p.dbPath);
  });

  it('table: exit 0, one OK row per check, "healthy"', () => {
    const r = doctor(['--project-root', p.root]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^check\s+status\s+detail\s+fix$/);
    for (const name of CHECKS) expect(lines.some((l) => new RegExp(`^${name}\\s+OK\\s`).test(l)), name).toBe(true);
    expect(r.stdout).not.toMatch(/\bFAIL\b/);
    expect(r.stdout.trimEnd().endsWith('healthy')).toBe(true);
  });

  it('bazinga/reports a symbolic link: a WARN row naming it (the report writes through no link inside the project)', async () => {
    const q = fixture();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-doctor-elsewhere-'));
    try {
      fs.symlinkSync(elsewhere, path.join(q.root, 'bazinga', 'reports'));
      const r = await doctorJson(['--project-root', q.root]);
      expect(r.row('reports')).toEqual({
        check: 'reports',
        status: 'warn',
        detail: `${path.join(q.root, 'bazinga', 'reports')} is a symbolic link: the report writes through no link inside the project, so no HTML report can be written there`,
        fix: 'make it a real folder, or give report --out FILE',
      });
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('finds the project through CLAUDE_PROJECT_DIR and through the working directory', async () => {
    const byEnv = await doctorJson([], { cwd: os.tmpdir(), env: { ...ENV, CLAUDE_PROJECT_DIR: p.root } });
    expect(byEnv.code).toBe(0);
    expect(byEnv.row('project root')?.detail).toContain('CLAUDE_PROJECT_DIR');
    const sub = path.join(p.root, 'bazinga', 'artifacts');
    const byCwd = await doctorJson([], { cwd: sub });
    expect(byCwd.code).toBe(0);
    expect(byCwd.row('project root')?.detail).toContain(fs.realpathSync(p.root));
  });

  it('the launcher process reports what runDoctor reports in process (exit code, checks, statuses, details but the tokenizer time)', async () => {
    const real = doctorJsonProcess(['--project-root', p.root]);
    const local = await doctorJson(['--project-root', p.root]);
    const shape = (r: typeof local) => ({
      code: r.code,
      stderr: r.stderr,
      ok: r.doc.ok,
      checks: r.doc.checks.map((c) => ({ ...c, detail: c.check === 'tokenizer' ? c.detail.replace(/ in \d+ ms$/, ' in N ms') : c.detail })),
    });
    expect(shape(local)).toEqual(shape(real));
    expect(real.doc.checks.map((c) => c.check)).toEqual(CHECKS);
  });

  it('--db and --config point it elsewhere', async () => {
    const config = path.join(p.root, 'other-config.json');
    fs.copyFileSync(path.join(REPO_ROOT, 'bazinga', 'skills_config.json'), config);
    const r = await doctorJson(['--db', p.dbPath, '--config', config]);
    expect(r.code).toBe(0);
    expect(r.row('config')?.detail).toBe(config);
    expect(r.row('database')?.detail).toContain(p.dbPath);
  });
});

describe('doctor on broken setups (each exit 1, a FAIL row with a fix)', () => {
  it('--project-root naming a folder without bazinga/: a FAIL row (the project asked for is not one)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-doctor-notroot-'));
    try {
      const r = await doctorJson(['--project-root', dir]);
      expectFail(r, 'project root', /not a valid BAZINGA project root/);
      expect(r.row('project root')?.fix).toMatch(/--project-root/);
      // The checks that need a project are not reported as OK.
      expect(r.row('database')).toBeUndefined();
      expect(r.row('schema')).toBeUndefined();
      expect(r.row('config')?.status).not.toBe('ok');
      const table = doctor(['--project-root', dir]);
      expect(table.code).toBe(1);
      expect(table.stdout).toMatch(/^project root\s+FAIL\s/m);
      expect(table.stdout).toContain('broken: apply the fix of each FAIL row');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('database missing', async () => {
    const p = makeProject('ca-doctor-nodb-');
    projects.push(p);
    const r = await doctorJson(['--project-root', p.root]);
    expectFail(r, 'database', /bazinga\.db does not exist/);
    expect(r.row('database')?.detail).toContain(p.dbPath);
    // Doctor does not create it.
    expect(fs.existsSync(p.dbPath)).toBe(false);
  });

  it('corrupt database file (random bytes)', async () => {
    const p = fixture();
    let bytes = crypto.randomBytes(64 * 1024);
    // Random bytes never start with the SQLite header in practice; make sure anyway.
    if (bytes.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') bytes = Buffer.concat([Buffer.from('x'), bytes]);
    fs.writeFileSync(p.dbPath, bytes);
    const r = await doctorJson(['--project-root', p.root]);
    expectFail(r, 'schema', /not a database/i);
    expect(fs.readFileSync(p.dbPath).equals(bytes)).toBe(true);
    const table = doctor(['--project-root', p.root]);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(/^schema\s+FAIL\s/m);
  });

  it('schema_version 18', async () => {
    const p = fixture();
    const db = new Database(p.dbPath);
    db.prepare('UPDATE schema_version SET version = 18').run();
    db.close();
    const r = await doctorJson(['--project-root', p.root]);
    expectFail(r, 'schema', /v18.*older than v19/);
    expect(r.row('schema')?.fix).toMatch(/migrate/);
  });

  it.each([
    ['not JSON', '{"context_engineering": {', /^config file not valid JSON at line \d+, column \d+: .*skills_config\.json$/],
    ['a key of the wrong type', '{"context_engineering": {"token_safety_margin": "lots"}}\n', /skills_config\.json.*context_engineering\.token_safety_margin/],
  ])('malformed bazinga/skills_config.json: %s (the detail names the file/key)', async (_label, text, detail) => {
    const p = fixture();
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), text);
    const r = await doctorJson(['--project-root', p.root]);
    expectFail(r, 'config', detail);
    expect(r.row('config')?.detail).toContain(path.join(p.root, 'bazinga', 'skills_config.json'));
    // Only the config is broken.
    expect(r.doc.checks.filter((c) => c.status === 'fail').map((c) => c.check)).toEqual(['config']);
  });
});

describe('doctor with no BAZINGA project in sight (no flag naming one): a WARN row, not broken for that alone', () => {
  /** Exit 0, ok, one WARN project-root row naming the flag, nothing that needs a project checked, no FAIL. */
  function expectNoProject(r: Awaited<ReturnType<typeof doctorJson>>, detail: RegExp) {
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.doc.ok).toBe(true);
    expect(r.row('project root')).toMatchObject({ status: 'warn' });
    expect(r.row('project root')?.detail).toMatch(/^no BAZINGA project found: /);
    expect(r.row('project root')?.detail).toMatch(detail);
    expect(r.row('project root')?.fix).toContain('--project-root');
    for (const name of ['database', 'schema', 'secrets']) expect(r.row(name), name).toBeUndefined();
    expect(r.doc.checks.filter((c) => c.status === 'fail')).toEqual([]);
  }

  it('npm run doctor inside this repository (it has .claude/ and bazinga/, but is the bundle, without a database)', async () => {
    expect(fs.existsSync(path.join(REPO_ROOT, 'bazinga', 'bazinga.db'))).toBe(false);
    expectNoProject(await doctorJson([], { cwd: REPO_ROOT }), /this bundle's own folder/);
    // CLAUDE_PROJECT_DIR naming the repository (Claude Code opened in it) is the same.
    expectNoProject(await doctorJson([], { cwd: os.tmpdir(), env: { ...ENV, CLAUDE_PROJECT_DIR: REPO_ROOT } }), /this bundle's own folder/);
    // As `npm run doctor` runs it: the launcher, a table, exit 0, a WARN row and a verdict that is not "broken".
    const r = spawnSync('npm', ['run', '--silent', 'doctor'], { cwd: REPO_ROOT, env: ENV, encoding: 'utf8', timeout: 60_000 /* hang guard only */ });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^project root\s+WARN\s+no BAZINGA project found: .*--project-root/m);
    expect(r.stdout).not.toMatch(/\bFAIL\b/);
    expect(r.stdout).not.toContain('broken');
    expect(r.stdout.trimEnd()).toMatch(/\nhealthy, with \d+ warnings?: see the WARN rows$/);
  });

  it('a working directory with no project above it and no environment naming one', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-doctor-noroot-'));
    try {
      const r = await doctorJson([], { cwd });
      expectNoProject(r, /no folder with \.claude\/ and bazinga\/ at or above/);
      expect(r.row('config')).toMatchObject({ status: 'warn', detail: 'not checked: no project root' });
      const table = doctor([], { cwd });
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^project root\s+WARN\s/m);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('the same folder named with --project-root is checked as a project: its missing database fails', async () => {
    const r = await doctorJson(['--project-root', REPO_ROOT]);
    expectFail(r, 'database', /bazinga\.db does not exist/);
    expect(r.row('project root')?.status).toBe('ok');
  });
});

describe('doctor never modifies the database', () => {
  it('bytes identical before/after on a copy that was already opened once', () => {
    const p = fixture();
    // Open it once through bazinga-db (which adds its extension objects), then close.
    const opened = bazingaDb(p, ['get-session', S1]);
    expect(opened.code, opened.stderr).toBe(0);
    const dir = path.join(p.root, 'bazinga');
    const dbFiles = () => fs.readdirSync(dir).filter((f) => f.startsWith('bazinga.db')).sort();
    const before = new Map(dbFiles().map((f) => [f, sha(path.join(dir, f))]));
    const mtime = fs.statSync(p.dbPath).mtimeMs;

    expect(doctor(['--project-root', p.root]).code).toBe(0);
    expect(doctorJsonProcess(['--project-root', p.root]).code).toBe(0);

    const after = new Map(dbFiles().map((f) => [f, sha(path.join(dir, f))]));
    expect(after.get('bazinga.db')).toBe(before.get('bazinga.db'));
    expect(fs.statSync(p.dbPath).mtimeMs).toBe(mtime);
    // A WAL, when there is one, is not grown by doctor either (a read-only open may leave an empty one).
    const wal = path.join(dir, 'bazinga.db-wal');
    if (before.has('bazinga.db-wal')) expect(after.get('bazinga.db-wal')).toBe(before.get('bazinga.db-wal'));
    else if (fs.existsSync(wal)) expect(fs.statSync(wal).size).toBe(0);
    // And the data reads back the same through bazinga-db.
    const again = bazingaDb(p, ['get-session', S1]);
    expect(again.json).toEqual(opened.json);
  });
});

/** True when `pkg` resolves from `dir` (for example through a node_modules in an ancestor folder). */
function resolvesFrom(dir: string, pkg: string): boolean {
  try {
    createRequire(path.join(dir, 'probe.js')).resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(resolvesFrom(os.tmpdir(), 'js-tiktoken'))('doctor of an installed project whose runtime dependencies are incomplete', () => {
  it('js-tiktoken missing: a tokenizer FAIL row whose fix installs into .claude/skills, the other rows OK', () => {
    const p = writableFixture('ca-doctor-installed-');
    projects.push(p);
    const installed = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'install.mjs'), p.root, '--no-deps'], {
      cwd: REPO_ROOT,
      env: ENV,
      encoding: 'utf8',
      timeout: 60_000, // hang guard only
    });
    expect(installed.status, installed.stderr).toBe(0);
    const skills = path.join(p.root, '.claude', 'skills');
    fs.mkdirSync(path.join(skills, 'node_modules'));
    for (const pkg of ['tsx', 'yaml', 'better-sqlite3']) {
      fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', pkg), path.join(skills, 'node_modules', pkg), 'dir');
    }
    const bin = path.join(skills, 'context-assembler', 'bin', 'context-assembler.cjs');
    const r = spawnSync(process.execPath, [bin, 'doctor', '--format', 'json'], {
      cwd: os.tmpdir(),
      env: { ...ENV, CLAUDE_PROJECT_DIR: p.root },
      encoding: 'utf8',
      timeout: 60_000, // hang guard only
    });
    expect(r.status, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout) as { ok: boolean; checks: Check[] };
    expect(doc.ok).toBe(false);
    expect(doc.checks.filter((c) => c.status !== 'ok').map((c) => c.check)).toEqual(['tokenizer']);
    const row = doc.checks.find((c) => c.check === 'tokenizer') as Check;
    expect(row.detail).toContain('js-tiktoken');
    // The dependencies of an installed project live in .claude/skills/ (no lockfile there), never in the project's own root.
    expect(row.fix).toBe(`cd "${skills}" && npm install --omit=dev`);
  });
});

describe('bad usage', () => {
  it('bad --format → exit 2, a JSON error on stderr, nothing on stdout', () => {
    const r = doctor(['--format', 'yaml']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const err = JSON.parse(r.stderr.trim().split('\n').pop() as string);
    expect(err.success).toBe(false);
    expect(err.error).toContain('--format');
  });

  it('--help → exit 0 with usage', () => {
    const r = doctor(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: doctor/);
  });
});
