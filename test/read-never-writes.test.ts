/**
 * A read never writes. bazinga-db's read commands and every assembly
 * that records nothing (zone, rank, pack, reasoning, --dry-run) open the database read-only: on a
 * fresh copy of the v19 fixture the file's bytes stay the same and no -wal/-shm appears; on a
 * database a writer has opened, with rows another tool wrote since, a logical dump (every table's
 * rows in rowid order) is the same before and after, count cache and search index included. A read
 * never creates a database (NOT_FOUND naming the path and create-session), and on a WAL database
 * leaves no -wal/-shm behind unless another connection holds them. A database that cannot
 * be written here (a read-only file and folder, checked as an unprivileged user) still gets the
 * full block, with one line saying consumption was not recorded. And the busy timeout is the
 * whole wait of a command: a read (or a write) on a database another process holds locked answers
 * BUSY within --busy-timeout plus half a second, counted as a deadline from the open (time holding
 * a transaction's lock excepted).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { COMMAND_ACCESS, commandAccess } from '../skills/bazinga-db/scripts/lib/cli.ts';
import { COMMANDS } from '../skills/bazinga-db/scripts/lib/commands/index.ts';
import { tokenize } from '../skills/bazinga-db/scripts/lib/args.ts';
import { openDatabase, stmt, writeTransaction } from '../skills/bazinga-db/scripts/lib/db.ts';
import { insertConsumer, insertPackage } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { insertReasoning } from '../skills/bazinga-db/scripts/lib/repo/reasoning.ts';
import { insertErrorPattern } from '../skills/bazinga-db/scripts/lib/repo/errorPatterns.ts';
import { errorPatternOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { searchIndexBehind, syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { runScript as runAssembler, type ScriptSpec } from '../skills/context-assembler/scripts/lib/shell.ts';
import { capturingIo, runBazingaDbInProcess } from './inProcess.ts';
import { BAZINGA_DB_SCRIPT, REPO_ROOT, S1, S2, copyFixture, makeProject, writeArtifact, type Project } from './helpers.ts';

const NOW = '2025-12-02T12:00:00Z';
const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');

const projects: Project[] = [];
const track = (p: Project) => (projects.push(p), p);
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const listing = (p: Project) => fs.readdirSync(path.dirname(p.dbPath)).sort();

/**
 * A logical dump: every table's rows (virtual tables through their shadow tables), in rowid order
 * (WITHOUT ROWID tables: in key order), plus the schema. Read through a read-only connection.
 */
function dump(dbPath: string): Record<string, unknown[]> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string; sql: string }[];
    const out: Record<string, unknown[]> = { sqlite_master: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() };
    for (const t of tables) {
      if (/^CREATE VIRTUAL/i.test(t.sql)) continue;
      const q = `"${t.name.replace(/"/g, '""')}"`;
      const order = /WITHOUT ROWID\s*$/i.test(t.sql) ? '1, 2' : 'rowid';
      out[t.name] = db.prepare(`SELECT * FROM ${q} ORDER BY ${order}`).raw().all();
    }
    return out;
  } finally {
    db.close();
  }
}

/** bazinga-db in process with exactly these global flags and arguments. */
const cli = (p: Project, args: readonly string[], globals: readonly string[] = []) =>
  runBazingaDbInProcess(['--quiet', ...globals, '--db', p.dbPath, '--project-root', p.root, ...args], { cwd: p.root, env: {} });

const spec = (name: string, step: ScriptSpec['step']): ScriptSpec => ({ name, step, defaultFormat: 'json', readsStdin: true, summary: '' });

/** One assembler step in process, given the previous step's output on stdin. */
function step(p: Project, s: ScriptSpec, args: readonly string[], stdin?: string): { code: number; out: string; err: string } {
  const run = capturingIo(['--project-root', p.root, ...args], { cwd: p.root, now: NOW });
  const code = runAssembler(s, { ...run.io, readStdin: () => stdin });
  return { code, out: run.out(), err: run.err() };
}

const REQUEST = ['--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1', '--now', NOW];

/** Every read-only way of assembling: the steps one by one (piped), and assemble --dry-run in both formats. */
function assembleReadOnly(p: Project, extra: readonly string[] = []): string[] {
  const outputs: string[] = [];
  const ok = (r: { code: number; out: string; err: string }) => {
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toContain('"fallback": true');
    outputs.push(r.out);
    return r.out;
  };
  const zone = ok(step(p, spec('zone.ts', 'zone'), [...REQUEST, ...extra]));
  const rank = ok(step(p, spec('rank.ts', 'rank'), ['--explain'], zone));
  const pack = ok(step(p, spec('pack.ts', 'pack'), [], rank));
  const reasoning = ok(step(p, spec('reasoning.ts', 'reasoning'), [], pack));
  ok(step(p, spec('consume.ts', 'consume'), ['--dry-run'], reasoning));
  ok(step(p, spec('assemble.ts', 'consume'), [...REQUEST, ...extra, '--dry-run', '--format', 'json', '--explain']));
  ok(step(p, { ...spec('assemble.ts', 'consume'), defaultFormat: 'markdown' }, [...REQUEST, ...extra, '--dry-run']));
  return outputs;
}

describe('which bazinga-db commands read', () => {
  const READS = ['get-session', 'list-sessions', 'get-task-groups', 'get-context-packages', 'get-consumption', 'get-reasoning', 'get-error-patterns', 'get-strategies', 'get-memory', 'search-memories', 'query', 'integrity-check'];

  it('every command is classified explicitly; the reads are exactly the get-*, list-sessions, search-memories, query and integrity-check', () => {
    expect(Object.keys(COMMAND_ACCESS).sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    const access = (name: string, args: string[] = []) => {
      const command = COMMANDS.find((c) => c.name === name)!;
      return commandAccess(name, tokenize(args, command.flags, command.maxPositionals));
    };
    expect(COMMANDS.filter((c) => access(c.name) === 'read').map((c) => c.name).sort()).toEqual([...READS].sort());
    expect(COMMANDS.filter((c) => access(c.name) === 'none').map((c) => c.name)).toEqual(['detect-paths']);
    // A command that keeps the search index in step writes.
    for (const c of COMMANDS.filter((c) => c.indexes)) expect(access(c.name), c.name).toBe('write');
    // Counting what redact-existing would change is a read.
    expect(access('redact-existing')).toBe('write');
    expect(access('redact-existing', ['--dry-run'])).toBe('read');
    expect(access('capture-outcomes')).toBe('write');
    expect(access('capture-outcomes', ['s1', '--dry-run'])).toBe('read');
    // So are planning maintenance and a rehydration that counts no access.
    expect(access('memory-maintenance', ['p'])).toBe('write');
    expect(access('memory-maintenance', ['p', '--dry-run'])).toBe('read');
    expect(access('rehydrate', ['p'])).toBe('write');
    expect(access('rehydrate', ['p', '--dry-run'])).toBe('read');
  });

  it.each([
    { name: 'get-session', args: ['get-session', S1] },
    { name: 'list-sessions', args: ['list-sessions', '5'] },
    { name: 'get-task-groups', args: ['get-task-groups', S1] },
    { name: 'get-context-packages', args: ['get-context-packages', S1, 'AUTH', 'developer', '5', '--iteration', '1', '--with-total'] },
    { name: 'get-consumption', args: ['get-consumption', S1] },
    { name: 'get-reasoning', args: ['get-reasoning', S1] },
    { name: 'get-error-patterns', args: ['get-error-patterns', 'acme-shop', '--min_confidence', '0'] },
    { name: 'get-strategies', args: ['get-strategies', 'acme-shop'] },
    { name: 'query', args: ['query', 'SELECT COUNT(*) AS n FROM context_packages'] },
    { name: 'integrity-check', args: ['integrity-check'] },
    { name: 'redact-existing --dry-run', args: ['redact-existing', '--dry-run'] },
  ])('$name on a fresh v19 copy: answers, and the file is byte-identical with no -wal/-shm', ({ args }) => {
    const p = track(copyFixture('ca-ro-read-'));
    const bytes = sha256(p.dbPath);
    const files = listing(p);
    const r = cli(p, args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.json).toBeDefined();
    expect(sha256(p.dbPath)).toBe(bytes);
    expect(listing(p)).toEqual(files);
    expect(files).toEqual(['artifacts', 'bazinga.db']);
  });

  it('get-context-packages reads the same on a file no writer of this product opened (its ca_* indexes absent) as on one it did', () => {
    const pristine = track(copyFixture('ca-ro-hints-'));
    const opened = track(copyFixture('ca-ro-hints-'));
    expect(cli(opened, ['create-session', S1, 'parallel', 'unchanged']).json).toMatchObject({ existing: true });
    for (const args of [
      ['get-context-packages', S1, 'AUTH', 'developer', '10', '--iteration', '1', '--with-total'],
      ['get-context-packages', S1, 'AUTH', 'qa_expert', '10', '--iteration', '2', '--with-total'],
      ['get-context-packages', S2, 'global', 'developer', '10'],
      ['get-reasoning', S1],
    ]) {
      expect(cli(pristine, args).json, args.join(' ')).toEqual(cli(opened, args).json);
    }
  });

  it('a read never creates a database, a file or a folder: NOT_FOUND naming the path and create-session', () => {
    const p = track(makeProject('ca-ro-missing-'));
    const dbPath = path.join(p.root, 'new', 'dir', 'x.db');
    for (const args of [['get-session', 'S'], ['list-sessions'], ['query', 'SELECT 1'], ['integrity-check'], ['redact-existing', '--dry-run']]) {
      const r = runBazingaDbInProcess(['--db', dbPath, ...args], { cwd: p.root, env: {} });
      expect(r.code, args[0]).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.error).toEqual({
        success: false,
        code: 'NOT_FOUND',
        error: `Database not found: ${dbPath} (a read never creates one; create-session creates it)`,
      });
      expect(fs.existsSync(path.join(p.root, 'new'))).toBe(false);
    }
    // The default path too, and a write still creates it.
    expect(cli(p, ['get-session', 'S']).error.code).toBe('NOT_FOUND');
    expect(fs.readdirSync(path.join(p.root, 'bazinga'))).toEqual(['artifacts']);
    expect(cli(p, ['create-session', 'S', 'simple', 'req']).code).toBe(0);
    expect(cli(p, ['get-session', 'S']).json).toMatchObject({ session_id: 'S', status: 'active' });
  });

  it('an existing empty file passed to a read stays empty', () => {
    const p = track(makeProject('ca-ro-empty-'));
    fs.writeFileSync(p.dbPath, '');
    for (const args of [['get-session', 'S'], ['list-sessions'], ['query', 'SELECT 1']]) {
      expect(cli(p, args).error).toMatchObject({ code: 'NOT_FOUND', error: `Database file is empty: ${p.dbPath} (a read never initialises it; create-session does)` });
    }
    expect(fs.statSync(p.dbPath).size).toBe(0);
    expect(listing(p)).toEqual(['artifacts', 'bazinga.db']);
  });
});

describe('assembly without recording changes nothing', () => {
  it('on a fresh v19 copy: zone, rank, pack, reasoning, consume --dry-run and assemble --dry-run leave the file byte-identical, no -wal/-shm', () => {
    const p = track(copyFixture('ca-ro-assemble-'));
    const bytes = sha256(p.dbPath);
    const before = dump(p.dbPath);
    const outputs = assembleReadOnly(p, ['--task', 'refresh token reuse']);
    expect(outputs.join('')).toContain('"relevance"');
    expect(sha256(p.dbPath)).toBe(bytes);
    expect(listing(p)).toEqual(['artifacts', 'bazinga.db']);
    expect(dump(p.dbPath)).toEqual(before);
  });

  it('a read never builds a search index: on a file without one it ranks without relevance and says so in one line; once indexed, relevance', () => {
    const pristine = track(copyFixture('ca-ro-same-'));
    const indexed = track(copyFixture('ca-ro-same-'));
    const conn = openDatabase({ dbPath: indexed.dbPath });
    writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: indexed.root, artifactBytes: 16384 }));
    conn.close();
    const args = [...REQUEST.map((a) => (a === 'qa_expert' ? 'developer' : a)), '--task', 'refresh token reuse returns 500', '--explain', '--dry-run', '--format', 'json'];
    const a = step(pristine, spec('assemble.ts', 'consume'), args);
    const b = step(indexed, spec('assemble.ts', 'consume'), args);
    expect(a.err).toBe(
      '⚠ context-assembler: the search index does not cover every row of packages and reasoning (a read never indexes: `bazinga-db index-search` or a recording call does); those rank without relevance\n',
    );
    expect(b.err).toBe('');
    const unindexed = JSON.parse(a.out);
    const ranked = JSON.parse(b.out);
    expect(unindexed.packages.length).toBeGreaterThan(0);
    expect(unindexed.packages.every((pkg: any) => pkg.components.relevance === 0)).toBe(true);
    expect(ranked.packages.some((pkg: any) => pkg.components.relevance > 0)).toBe(true);
    // The same eligible packages either way: only their order may differ.
    expect(unindexed.packages.map((pkg: any) => pkg.id).sort()).toEqual(ranked.packages.map((pkg: any) => pkg.id).sort());
  });

  it('on a file a writer opened, with rows another tool wrote since: the logical dump is identical (no index catch-up, no cached counts)', () => {
    const p = track(copyFixture('ca-ro-behind-'));
    // A writer opened it (WAL, ca_* objects, the index brought up to date by a write).
    expect(cli(p, ['create-session', S1, 'parallel', 'unchanged']).code).toBe(0);
    const conn = openDatabase({ dbPath: p.dbPath });
    writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: p.root, artifactBytes: 16384 }));
    // Rows another tool wrote since: the index is behind.
    const file = writeArtifact(p, S1, 'webhooks.md', '# Webhook replays\nidempotency keys for webhook replays\n');
    writeTransaction(conn, () => {
      const id = insertPackage(conn, { sessionId: S1, groupId: 'AUTH', scope: 'group', packageType: 'research', filePath: file, producerAgent: 'investigator', priority: 'low', summary: 'Webhook replay notes', sizeBytes: null });
      insertConsumer(conn, id, 'qa_expert');
      insertReasoning(conn, { sessionId: S1, groupId: 'AUTH', agentType: 'developer', agentId: null, iteration: 1, phase: 'approach', confidence: null, content: 'Replay webhooks with idempotency keys', referencesJson: null, redacted: false });
      // An error pattern as BAZINGA saves it, of a fault the fixture knows (its x.ts and y.ts rows): no fault key yet.
      const z = errorPatternOf('ModuleNotFound', "Cannot find module '@/utils' at /home/dev/app/src/z.ts line 9");
      insertErrorPattern(conn, { hash: z.hash, projectId: 'acme-shop', signatureJson: pyJsonDumps(z.signature), solution: 'Check the alias', lang: 'typescript' });
    });
    expect(searchIndexBehind(conn)).toEqual(expect.arrayContaining(['packages', 'reasoning']));
    conn.close();
    const before = dump(p.dbPath);
    expect(before.ca_token_counts).toEqual([]);
    const outputs = assembleReadOnly(p, ['--task', 'idempotency of webhook replays']);
    // The index is used as the writer left it: the new package ranks without relevance until a
    // recording assembly indexes it (rebuilding the index in memory on every dry run would cost a second).
    const doc = JSON.parse(outputs[5] as string);
    expect(doc.query.terms.length).toBeGreaterThan(0);
    expect(doc.packages.every((pkg: any) => pkg.summary !== 'Webhook replay notes' || pkg.components.relevance === 0)).toBe(true);
    // The new row is keyed by the read itself (its fault, shown once: three rows, three occurrences), and nothing is stored.
    expect(doc.error_patterns.filter((e: any) => e.error_type === 'ModuleNotFound').map((e: any) => e.occurrences)).toEqual([3]);
    expect(dump(p.dbPath)).toEqual(before);
    const after = openDatabase({ dbPath: p.dbPath });
    try {
      expect(searchIndexBehind(after)).toEqual(expect.arrayContaining(['packages', 'reasoning']));
    } finally {
      after.close();
    }
    // A recording run is a writer: it records, catches the index up and keeps its counts.
    const recorded = step(p, spec('assemble.ts', 'consume'), [...REQUEST, '--task', 'idempotency of webhook replays', '--format', 'json']);
    expect(JSON.parse(recorded.out).consumption).toBe('recorded');
    const caught = openDatabase({ dbPath: p.dbPath });
    try {
      expect(searchIndexBehind(caught)).toEqual([]);
    } finally {
      caught.close();
    }
  });
});

describe('a read leaves no file beside a WAL database', () => {
  /** A fixture copy a writer has opened and closed: WAL, and no -wal/-shm left. */
  function walCopy(prefix: string): Project {
    const p = track(copyFixture(prefix));
    expect(cli(p, ['create-session', S1, 'parallel', 'unchanged']).code).toBe(0);
    expect(fs.readFileSync(p.dbPath).subarray(18, 20)).toEqual(Buffer.from([2, 2]));
    expect(listing(p)).toEqual(['artifacts', 'bazinga.db']);
    return p;
  }

  it('every read command and every read-only assembly: the file byte-identical, no -wal/-shm after it', () => {
    const p = walCopy('ca-ro-wal-');
    const bytes = sha256(p.dbPath);
    for (const args of [
      ['get-session', S1],
      ['list-sessions'],
      ['get-context-packages', S1, 'AUTH', 'developer', '5', '--iteration', '1', '--with-total'],
      ['get-reasoning', S1],
      ['query', 'SELECT COUNT(*) AS n FROM context_packages'],
      ['integrity-check'],
      ['redact-existing', '--dry-run'],
    ]) {
      const r = cli(p, args);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
      expect(listing(p), args[0]).toEqual(['artifacts', 'bazinga.db']);
    }
    assembleReadOnly(p, ['--task', 'refresh token reuse']);
    expect(listing(p)).toEqual(['artifacts', 'bazinga.db']);
    expect(sha256(p.dbPath)).toBe(bytes);
  });

  it('while another connection has the database open, its -wal/-shm are left to it, and its writes stay', () => {
    const p = walCopy('ca-ro-wal-shared-');
    const other = new Database(p.dbPath);
    try {
      other.prepare("UPDATE sessions SET status = 'completed' WHERE session_id = ?").run(S1);
      expect(listing(p)).toEqual(['artifacts', 'bazinga.db', 'bazinga.db-shm', 'bazinga.db-wal']);
      const wal = fs.statSync(`${p.dbPath}-wal`).size;
      expect(wal).toBeGreaterThan(0);
      expect(cli(p, ['get-session', S1]).json.status).toBe('completed');
      assembleReadOnly(p);
      expect(listing(p)).toEqual(['artifacts', 'bazinga.db', 'bazinga.db-shm', 'bazinga.db-wal']);
      expect(fs.statSync(`${p.dbPath}-wal`).size).toBe(wal);
      other.prepare("UPDATE sessions SET status = 'failed' WHERE session_id = ?").run(S1);
    } finally {
      other.close();
    }
    expect(listing(p)).toEqual(['artifacts', 'bazinga.db']);
    expect(cli(p, ['get-session', S1]).json.status).toBe('failed');
  });
});

/**
 * Where the unprivileged user runs the scripts from: a copy of what they need (the skills, the
 * dependencies, package.json, tsconfig.json) in a folder of its own under the temp folder, made
 * once. The checkout itself may lie where that user cannot enter (a clone inside a 0700 folder):
 * the test must not depend on the permissions above the checkout.
 */
let unprivileged: string | undefined;
function unprivilegedRoot(): string {
  if (unprivileged === undefined) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-ro-scripts-'));
    fs.chmodSync(root, 0o755);
    for (const entry of ['skills', 'node_modules', 'package.json', 'tsconfig.json']) {
      fs.cpSync(path.join(REPO_ROOT, entry), path.join(root, entry), { recursive: true, verbatimSymlinks: true });
    }
    unprivileged = root;
  }
  return unprivileged;
}
afterAll(() => {
  if (unprivileged !== undefined) fs.rmSync(unprivileged, { recursive: true, force: true });
});

/**
 * Runs a script as another, unprivileged user when this is root (root ignores file modes), from
 * unprivilegedRoot(); else (or with `self`) as this user, from the checkout.
 */
function runAs(args: readonly string[], self = false): { code: number; stdout: string; stderr: string } {
  const asRoot = !self && process.getuid?.() === 0;
  const root = asRoot ? unprivilegedRoot() : REPO_ROOT;
  // The scripts' paths inside the root they run from; every other argument as given.
  const mapped = args.map((a) => (a.startsWith(REPO_ROOT + path.sep) ? path.join(root, path.relative(REPO_ROOT, a)) : a));
  const r = spawnSync(process.execPath, ['--import', 'tsx', ...mapped], {
    cwd: root,
    env: { ...process.env, CLAUDE_PROJECT_DIR: '', BAZINGA_ROOT: '' },
    encoding: 'utf8',
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A fixture copy whose folder and file this process's unprivileged runs can read but not write. */
function readOnlyCopy(prefix: string, prepare?: (p: Project) => void): Project {
  const p = track(copyFixture(prefix));
  prepare?.(p);
  const asRoot = process.getuid?.() === 0;
  // Owned by root and 0755/0644: readable by the other user, writable only by root. Not root: take write away.
  for (const dir of [p.root, path.join(p.root, 'bazinga')]) fs.chmodSync(dir, asRoot ? 0o755 : 0o555);
  fs.chmodSync(p.dbPath, asRoot ? 0o644 : 0o444);
  const cleanup = p.cleanup;
  p.cleanup = () => {
    for (const dir of [p.root, path.join(p.root, 'bazinga')]) fs.chmodSync(dir, 0o755);
    cleanup();
  };
  return p;
}

const canDropPrivileges = process.platform !== 'win32' && (process.getuid?.() !== 0 || spawnSync('id', ['-u', 'nobody']).status === 0);

describe.skipIf(!canDropPrivileges)('a database that cannot be written here (read-only file and folder)', () => {
  const args = (p: Project, extra: readonly string[] = []) => ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--now', NOW, ...extra];
  const FULL_BLOCK = /^## Context for developer\n\n### Relevant Packages \(4\/4\)\n/;
  const ONE_LINE = '⚠ context-assembler: the database is read-only here; consumption not recorded\n';

  // Where no writer ever indexed the file, the read says so too: it can never build the index there.
  const UNINDEXED =
    '⚠ context-assembler: the search index does not cover every row of packages and reasoning (a read never indexes: `bazinga-db index-search` or a recording call does); those rank without relevance\n';

  it.each([
    { name: 'as shipped (rollback journal)', wal: false },
    { name: 'after a writer opened and indexed it (WAL, no -shm: SQLite cannot create one here)', wal: true },
  ])('$name: the full block, its stderr lines, nothing written', ({ wal }) => {
    const indexed = (q: Project) => {
      if (wal) expect(cli(q, ['index-search']).code).toBe(0);
    };
    const p = readOnlyCopy('ca-ro-file-', indexed);
    const bytes = sha256(p.dbPath);
    const files = listing(p);
    const r = runAs([ASSEMBLE, ...args(p)]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(FULL_BLOCK);
    expect(r.stdout).not.toContain('Fallback Mode');
    expect(r.stderr).toBe(wal ? ONE_LINE : ONE_LINE + UNINDEXED);
    expect(sha256(p.dbPath)).toBe(bytes);
    expect(listing(p)).toEqual(files);
    // The same as a dry run on a writable copy prints.
    const writable = track(copyFixture('ca-ro-twin-'));
    indexed(writable);
    expect(runAs([ASSEMBLE, ...args(writable, ['--dry-run'])], true).stdout).toBe(r.stdout);
    // bazinga-db reads there too; a write says why it cannot.
    const query = ['get-context-packages', S1, 'AUTH', 'developer', '3', '--iteration', '2'];
    const read = runAs([BAZINGA_DB_SCRIPT, '--db', p.dbPath, ...query]);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout)).toEqual(cli(writable, query).json);
    const write = runAs([BAZINGA_DB_SCRIPT, '--db', p.dbPath, 'update-session-status', S1, 'failed']);
    expect(write.code).toBe(1);
    expect(write.stderr).toContain('readonly database');
    expect(sha256(p.dbPath)).toBe(bytes);
  });
});

/** A child process that holds the write lock (BEGIN EXCLUSIVE) on `dbPath` until killed; resolves once it holds it. */
function holdLock(dbPath: string): Promise<ChildProcess> {
  const code = `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.exec('BEGIN EXCLUSIVE'); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code, dbPath], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (c) => reject(new Error(`lock holder exited (${c})`)));
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('locked')) resolve(child);
    });
  });
}

describe('the busy timeout is the whole wait of a command', () => {
  it.each([
    { name: 'a read (--busy-timeout 1000)', args: ['get-session', S1], globals: ['--busy-timeout', '1000'], env: {}, budget: 1000 },
    { name: 'a read (BAZINGA_BUSY_TIMEOUT_MS=800)', args: ['list-sessions'], globals: [], env: { BAZINGA_BUSY_TIMEOUT_MS: '800' }, budget: 800 },
    { name: 'a write (--busy-timeout 1000)', args: ['update-session-status', S1, 'failed'], globals: ['--busy-timeout', '1000'], env: {}, budget: 1000 },
  ])('$name on a database another process holds locked answers BUSY within the timeout plus half a second', async ({ args, globals, env, budget }) => {
    const p = track(copyFixture('ca-ro-busy-'));
    const holder = await holdLock(p.dbPath);
    try {
      const started = performance.now();
      const r = runBazingaDbInProcess(['--quiet', ...globals, '--db', p.dbPath, ...args], { cwd: p.root, env });
      const elapsed = performance.now() - started;
      expect(r.error).toMatchObject({ code: 'BUSY' });
      expect(r.error.error).toContain('database is locked');
      expect(elapsed).toBeGreaterThanOrEqual(budget * 0.9);
      expect(elapsed).toBeLessThan(budget + 500);
    } finally {
      holder.kill();
    }
    await new Promise((resolve) => holder.once('exit', resolve));
    expect(cli(p, args, globals).code).toBe(0);
  });

  it('a write waits for a lock released within the timeout, and succeeds', async () => {
    const p = track(copyFixture('ca-ro-wait-'));
    const holder = await holdLock(p.dbPath);
    // The call below blocks this process: another process releases the lock after 400 ms.
    const release = spawn(process.execPath, ['-e', `setTimeout(() => process.kill(${holder.pid}), 400)`]);
    const started = performance.now();
    const r = runBazingaDbInProcess(['--quiet', '--busy-timeout', '5000', '--db', p.dbPath, 'update-session-status', S1, 'failed'], { cwd: p.root, env: {} });
    expect(r.code, r.stderr).toBe(0);
    expect(performance.now() - started).toBeLessThan(5000);
    await new Promise((resolve) => release.once('exit', resolve));
    expect(cli(p, ['get-session', S1]).json.status).toBe('failed');
  });
});

describe('the busy deadline of a connection', () => {
  /** Blocks this thread (never the lock holder, another process) for `ms`. */
  const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

  it('time since the open counts: a statement after 700 ms of a 1000 ms budget waits only what is left', async () => {
    const p = track(copyFixture('ca-ro-deadline-'));
    const opened = performance.now();
    const reader = openDatabase({ dbPath: p.dbPath, readOnly: true, busyTimeoutMs: 1000 });
    const holder = await holdLock(p.dbPath);
    try {
      block(Math.max(0, 700 - (performance.now() - opened)));
      const started = performance.now();
      expect(() => stmt(reader, 'SELECT COUNT(*) FROM sessions').get()).toThrow(/database is locked/);
      const waited = performance.now() - started;
      // Without the deadline this statement alone would wait the whole 1000 ms.
      expect(waited).toBeLessThan(600);
      expect(performance.now() - opened).toBeLessThan(1000 + 500);
    } finally {
      reader.close();
      holder.kill();
    }
    await new Promise((resolve) => holder.once('exit', resolve));
  });

  it("a write transaction's own time (the lock held, nothing waited for) leaves the budget whole, statements prepared in it included", async () => {
    const p = track(copyFixture('ca-ro-held-'));
    const writer = openDatabase({ dbPath: p.dbPath, busyTimeoutMs: 3000 });
    writeTransaction(writer, () => {
      block(3200);
      // A statement prepared late in the body, past the deadline as it was, must not leave SQLite's timeout at 0.
      stmt(writer, "UPDATE sessions SET status = 'completed' WHERE session_id = ?").run(S1);
    });
    const holder = await holdLock(p.dbPath);
    // Released after 1200 ms (longer than the retries' pauses together): the write below waits for
    // it in SQLite's own busy wait, as it may (its budget is intact).
    const release = spawn(process.execPath, ['-e', `setTimeout(() => process.kill(${holder.pid}), 1200)`]);
    try {
      const started = performance.now();
      writeTransaction(writer, () => stmt(writer, "UPDATE sessions SET status = 'failed' WHERE session_id = ?").run(S1));
      expect(performance.now() - started).toBeLessThan(3000 + 500);
      expect(writer.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    } finally {
      writer.close();
      holder.kill();
    }
    await new Promise((resolve) => release.once('exit', resolve));
    expect(cli(p, ['get-session', S1]).json.status).toBe('failed');
  });

  it('a nested transaction gives its time back once: a later wait still ends within the budget', async () => {
    const p = track(copyFixture('ca-ro-nested-'));
    const writer = openDatabase({ dbPath: p.dbPath, busyTimeoutMs: 1000 });
    writeTransaction(writer, () => writeTransaction(writer, () => block(1500)));
    const holder = await holdLock(p.dbPath);
    try {
      const started = performance.now();
      expect(() => writeTransaction(writer, () => stmt(writer, "UPDATE sessions SET status = 'failed' WHERE session_id = ?").run(S1))).toThrow(/database is locked/);
      expect(performance.now() - started).toBeLessThan(1000 + 500);
    } finally {
      writer.close();
      holder.kill();
    }
    await new Promise((resolve) => holder.once('exit', resolve));
  });
});

describe('the environment is left as it was', () => {
  it('SQLITE_USE_URI is set only while the addon reads it, then put back (absent stays absent)', () => {
    const script = [
      "import { openDatabase } from './skills/bazinga-db/scripts/lib/db.ts';",
      "const before = process.env.SQLITE_USE_URI;",
      "const db = openDatabase({ dbPath: process.argv[1] }); db.close();",
      "console.log(JSON.stringify({ before: before ?? null, after: process.env.SQLITE_USE_URI ?? null }));",
    ].join('\n');
    const p = track(copyFixture('ca-ro-env-'));
    for (const [env, expected] of [[undefined, null], ['0', '0']] as const) {
      const childEnv = { ...process.env };
      if (env === undefined) delete childEnv.SQLITE_USE_URI;
      else childEnv.SQLITE_USE_URI = env;
      const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, p.dbPath], { cwd: REPO_ROOT, env: childEnv, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ before: expected, after: expected });
    }
  });
});
