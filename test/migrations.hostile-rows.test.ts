/**
 * Migrations that cannot brick (bazinga-db migrate.ts, schemaSteps.ts; references/schema-steps.md).
 *
 * A corpus of rows that BAZINGA's v19 schema accepts but its CLI would not write (NULLs wherever
 * the CHECKs and NOT NULLs let them through, texts in number columns, signatures that are empty,
 * not JSON or JSON of the wrong shape, keys that collide with the key a re-keyed row is restored
 * to, in its project and in another, BLOBs in text columns, megabyte texts), put one at a time and
 * all together into a file in each starting state a writer meets: a fresh v19 file (no `ca_*`
 * objects), a file whose extensions predate v12 (re-keyed rows carrying a `tool` key), and a
 * current file (the rows arrive after the writer's migration, as BAZINGA writes them). Then a
 * write through bazinga-db and a recording assembly: both succeed, the assembly prints a block
 * (not the fallback), nothing warns, and every hostile row is either migrated (a re-keyed row
 * given the original's key) or left byte-identical.
 *
 * Then steps that fail anyway, made to fail for real (a trigger that aborts one row's update, or
 * every write of a table): the open goes on without the step, the original's commands work, the
 * step is tried once per process (a second open in this process does not try it; a new process
 * does), doctor reports it as broken with the step, the error and the row, and once the cause is
 * gone the next writer completes the migration.
 *
 * Real SQLite files; bazinga-db and the assembler run in this process (runCli, runScript), a few
 * opens as real processes.
 */
import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { errorPatternHash, faultKeyOf, type ErrorSignature } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { CA_SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION_DESCRIPTION, V19_DDL } from '../skills/bazinga-db/scripts/lib/schema.ts';
import { runDoctor } from '../skills/context-assembler/scripts/lib/doctor.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import { BAZINGA_DB_SCRIPT, REPO_ROOT, downgradeExtensionsToV11, makeProject, runScript, type Project } from './helpers.ts';
import { capturingIo, runBazingaDbInProcess } from './inProcess.ts';

const SESSION = 'bazinga_20260101_100000';
const NOW = '2026-01-06T10:00:00Z';
const ASSEMBLE = { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' } as const;

/** A signature of its own per corpus entry (so that all entries fit in one file). */
const signature = (n: number): ErrorSignature => ({ error_type: 'ModuleNotFound', message_pattern: `Cannot find module '...' (case ${n})`, context_hints: [], stack_pattern: [] });
/** The signature as an earlier release wrote it: the original's keys, then `tool`. */
const rekeyedSignature = (n: number, tool = 'node') => pyJsonDumps({ ...signature(n), tool });
/** A hash an earlier release gave a row (any 64 hex digits: nothing recomputes them). */
const rekeyedHash = (name: string) => crypto.createHash('sha256').update(`rekeyed:${name}`).digest('hex');
/** The key a re-keyed row of signature(n) is restored to. */
const restoredHash = (n: number) => errorPatternHash(signature(n));
/** The pattern BAZINGA's tools saved in every state. */
const TOTAL: ErrorSignature = { error_type: 'TypeError', message_pattern: "Cannot read properties of undefined (reading '...')", context_hints: [], stack_pattern: [] };
/** About 1 MB of prose-like text. */
const MEGABYTE = 'the cart total is rounded in cents before tax '.repeat(22_000);

/** A row to insert as another tool would, and what the writer may do with it. */
interface HostileRow {
  table: string;
  values: Record<string, unknown>;
  /**
   * `kept`: byte-identical after; `restored`: a re-keyed row given the original's key and
   * signature (this one) by a writer's migration (a current file has none to run: kept there).
   */
  after: 'kept' | { restored: ErrorSignature };
}

interface Entry {
  name: string;
  rows: HostileRow[];
}

const pattern = (values: Record<string, unknown>, after: HostileRow['after'] = 'kept'): HostileRow => ({ table: 'error_patterns', values: { project_id: 'acme', solution: 'x', ...values }, after });
const rekeyed = (n: number, values: Record<string, unknown> = {}): HostileRow =>
  pattern({ pattern_hash: rekeyedHash(`case ${n}`), signature_json: rekeyedSignature(n), confidence: 0.7, occurrences: 2, ttl_days: 90, ...values }, { restored: signature(n) });
const pkg = (values: Record<string, unknown>): HostileRow => ({
  table: 'context_packages',
  values: { session_id: SESSION, group_id: 'G1', package_type: 'research', file_path: `bazinga/artifacts/${SESSION}/r.md`, producer_agent: 'investigator', summary: 'a summary', ...values },
  after: 'kept',
});
const reasoning = (values: Record<string, unknown>): HostileRow => ({
  table: 'orchestration_logs',
  values: { session_id: SESSION, agent_type: 'developer', content: 'I will fix the rounding', log_type: 'reasoning', reasoning_phase: 'approach', group_id: 'G1', ...values },
  after: 'kept',
});
const strategy = (values: Record<string, unknown>): HostileRow => ({ table: 'strategies', values: { project_id: 'acme', topic: 'general', insight: 'x', ...values }, after: 'kept' });
const group = (values: Record<string, unknown>): HostileRow => ({ table: 'task_groups', values: { session_id: SESSION, name: 'n', ...values }, after: 'kept' });
const session = (values: Record<string, unknown>): HostileRow => ({ table: 'sessions', values, after: 'kept' });

/** Every column BAZINGA's v19 DDL lets be NULL, NULL. */
const NULL_PATTERN = { confidence: null, occurrences: null, lang: null, last_seen: null, created_at: null, ttl_days: null };

const CORPUS: Entry[] = [
  // The two findings, as they would meet a migration that re-keys or restores.
  { name: 'a re-keyed row whose ttl_days is NULL', rows: [rekeyed(1, { ttl_days: null })] },
  {
    name: 'a row whose signature does not parse, holding the key a re-keyed row is restored to',
    rows: [pattern({ pattern_hash: restoredHash(2), signature_json: '{"error_type": "ModuleNotFound", "tool": "te', solution: 'crafted' }), { ...rekeyed(2), after: 'kept' }],
  },
  { name: 'a re-keyed row with every nullable column NULL', rows: [rekeyed(3, NULL_PATTERN)] },
  { name: 'a re-keyed row with text in its number columns', rows: [rekeyed(4, { occurrences: 'many', ttl_days: 'forever', last_seen: 'yesterday' })] },
  {
    name: 'a row of another signature holding the restored key',
    rows: [pattern({ pattern_hash: restoredHash(5), signature_json: pyJsonDumps({ error_type: 'Other', message_pattern: 'not this one', context_hints: [], stack_pattern: [] }) }), { ...rekeyed(5), after: 'kept' }],
  },
  { name: 'the restored key held in another project', rows: [pattern({ project_id: 'other', pattern_hash: restoredHash(6), signature_json: 'garbage' }), rekeyed(6)] },
  { name: 'one re-keyed hash in two projects', rows: [rekeyed(7), { ...rekeyed(7), values: { ...rekeyed(7).values, project_id: 'other' } }] },
  {
    name: 'a re-keyed signature holding a number beyond a double, beside an ordinary re-keyed row',
    rows: [
      pattern({ pattern_hash: rekeyedHash('inf'), signature_json: '{"error_type": "E", "message_pattern": "m", "context_hints": [], "stack_pattern": [1e400], "tool": "node"}' }),
      rekeyed(10),
    ],
  },
  { name: 'a re-keyed signature as a BLOB', rows: [pattern({ pattern_hash: rekeyedHash('blob'), signature_json: Buffer.from(rekeyedSignature(8)) })] },
  {
    name: 'a re-keyed row with a megabyte message',
    rows: [pattern({ pattern_hash: rekeyedHash('huge'), signature_json: pyJsonDumps({ error_type: 'E', message_pattern: MEGABYTE, context_hints: [], stack_pattern: [], tool: 'text' }) }, { restored: { error_type: 'E', message_pattern: MEGABYTE, context_hints: [], stack_pattern: [] } })],
  },
  // Patterns the migration keys (and the assembler reads) as they are.
  { name: 'a pattern with every nullable column NULL and an empty signature', rows: [pattern({ pattern_hash: 'h-empty', signature_json: '', solution: '', ...NULL_PATTERN })] },
  { name: 'signatures that are not JSON, JSON null, an array, or of the wrong types', rows: [
    pattern({ pattern_hash: 'h-text', signature_json: 'TypeError: x is undefined' }),
    pattern({ pattern_hash: 'h-null', signature_json: 'null' }),
    pattern({ pattern_hash: 'h-array', signature_json: '[1, "tool"]' }),
    pattern({ pattern_hash: 'h-types', signature_json: '{"error_type": 5, "message_pattern": ["a"], "context_hints": "x", "stack_pattern": {}}', confidence: 0.9 }),
  ] },
  { name: 'a key and project that are empty', rows: [pattern({ pattern_hash: '', project_id: '', signature_json: '{}', solution: '', confidence: 1 })] },
  { name: "a row that does not parse whose key is another row's fault key", rows: [pattern({ pattern_hash: faultKeyOf(TOTAL).fault_hash, signature_json: 'garbage', solution: 'crafted' })] },
  { name: 'one key in two projects', rows: [pattern({ pattern_hash: 'h-shared', signature_json: '{"error_type": "E", "message_pattern": "m"}' }), pattern({ pattern_hash: 'h-shared', project_id: 'other', signature_json: 'x' })] },
  { name: 'a BLOB key, signature and solution', rows: [pattern({ pattern_hash: Buffer.from([0, 1, 2]), signature_json: Buffer.from('{}'), solution: Buffer.from([0xff]), confidence: 0.9 })] },
  { name: 'a megabyte signature and solution', rows: [pattern({ pattern_hash: 'h-huge', signature_json: pyJsonDumps({ error_type: 'E', message_pattern: MEGABYTE.slice(0, 4000), context_hints: [], stack_pattern: [] }), solution: MEGABYTE, confidence: 0.9 })] },
  // The other tables the writer and the assembler read.
  { name: 'a package with every nullable column NULL and empty texts', rows: [pkg({ group_id: null, summary: '', file_path: '', producer_agent: '', size_bytes: null, version: null, scope: null, created_at: null })] },
  { name: 'a package with text in its number columns and an odd date', rows: [pkg({ size_bytes: 'big', version: 'v2', created_at: 'not a date', scope: 'global' })] },
  { name: 'a package superseding one that does not exist', rows: [pkg({ supersedes_id: 999 })] },
  { name: 'a package whose summary is a BLOB', rows: [pkg({ summary: Buffer.from([0, 0xff, 0x41]) })] },
  { name: 'a package with a megabyte summary', rows: [pkg({ summary: MEGABYTE })] },
  { name: 'reasoning with every nullable column NULL', rows: [reasoning({ timestamp: null, iteration: null, agent_id: null, reasoning_phase: null, confidence_level: null, references_json: null, redacted: null, group_id: null, content: '' })] },
  { name: 'reasoning with text in its number columns and references that are not a list', rows: [reasoning({ iteration: 'first', timestamp: 'soon', references_json: 'not json' }), reasoning({ references_json: '{"a": [1]}' })] },
  { name: 'reasoning whose content is a BLOB', rows: [reasoning({ content: Buffer.from([0, 0xff]) })] },
  { name: 'reasoning of a megabyte', rows: [reasoning({ content: MEGABYTE, reasoning_phase: 'completion' })] },
  { name: 'an event whose payload is not JSON', rows: [reasoning({ log_type: 'event', reasoning_phase: null, event_subtype: null, event_payload: 'not json' })] },
  {
    name: 'a task group with every nullable column NULL',
    rows: [group({ id: 'G2', status: null, assigned_to: null, revision_count: null, last_review_status: null, complexity: null, initial_tier: null, context_references: null, specializations: null, item_count: null, security_sensitive: null, qa_attempts: null, tl_review_attempts: null, review_iteration: null, no_progress_count: null, blocking_issues_count: null, created_at: null, updated_at: null })],
  },
  { name: 'a task group with text in its number columns and references that are not JSON', rows: [group({ id: 'G3', revision_count: 'many', item_count: 'x', review_iteration: 'r', context_references: 'not json', specializations: '{"a": 1}' })] },
  { name: 'a session with every nullable column NULL', rows: [session({ session_id: 'bazinga_nulls', start_time: null, end_time: null, mode: null, original_requirements: null, status: null, initial_branch: null, metadata: null, created_at: null })] },
  { name: 'sessions whose metadata is not JSON, an array, or a BLOB', rows: [session({ session_id: 'bazinga_text', metadata: 'not json' }), session({ session_id: 'bazinga_array', metadata: '[1, 2]' }), session({ session_id: 'bazinga_blob', metadata: Buffer.from([0xff]) })] },
  { name: 'a strategy with every nullable column NULL and empty texts', rows: [strategy({ strategy_id: 's-null', topic: '', insight: '', helpfulness: null, lang: null, framework: null, last_seen: null, created_at: null })] },
  { name: 'a strategy whose topic and insight are BLOBs', rows: [strategy({ strategy_id: 's-blob', topic: Buffer.from([0]), insight: Buffer.from([0xff, 0]) })] },
  { name: 'a strategy of a megabyte', rows: [strategy({ strategy_id: 's-huge', insight: MEGABYTE, helpfulness: 5 })] },
  { name: 'a consumer row with an odd time and no iteration', rows: [{ table: 'context_package_consumers', values: { package_id: 1, agent_type: 'tech_lead', consumed_at: 'not a time', iteration: null }, after: 'kept' }] },
];

// ------------------------------------------------------------------------------------------ states

type StateName = 'fresh v19' | 'extensions before v12' | 'current';
const STATES: StateName[] = ['fresh v19', 'extensions before v12', 'current'];

/** bazinga-db in this process, with notices (no --quiet). */
function cli(p: Project, args: readonly string[]) {
  return runBazingaDbInProcess(['--db', p.dbPath, '--project-root', p.root, ...args], { cwd: p.root, env: {} });
}

function ok(p: Project, args: readonly string[]) {
  const r = cli(p, args);
  expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
  return r;
}

/** What BAZINGA's own tools leave in every state: a session of project acme with a group, a package, reasoning, a pattern and a strategy. */
function seedThroughProduct(p: Project): void {
  ok(p, ['--quiet', 'create-session', SESSION, 'simple', 'Shop', '--metadata', JSON.stringify({ project_id: 'acme' })]);
  ok(p, ['--quiet', 'create-task-group', 'G1', SESSION, 'Cart']);
  ok(p, ['--quiet', 'save-context-package', SESSION, 'G1', 'research', `bazinga/artifacts/${SESSION}/r.md`, 'investigator', '["developer"]', 'high', 'Cart totals are integer cents']);
  ok(p, ['--quiet', 'save-reasoning', SESSION, 'G1', 'developer', 'approach', 'Round once, at the end']);
  ok(p, ['--quiet', 'save-error-pattern', 'acme', 'TypeError', "Cannot read properties of undefined (reading 'total')", 'Guard the cart']);
  ok(p, ['--quiet', 'save-strategy', 'acme', 'implementation', 'Keep totals in integer cents']);
}

/** The same rows written the way BAZINGA's own CLI writes them into a file it made (no `ca_*` object). */
function seedAsBazinga(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    for (const ddl of V19_DDL) db.exec(ddl);
    db.prepare('INSERT INTO schema_version (version, description) VALUES (?, ?)').run(SCHEMA_VERSION, SCHEMA_VERSION_DESCRIPTION);
    db.prepare("INSERT INTO sessions (session_id, mode, original_requirements, metadata) VALUES (?, 'simple', 'Shop', ?)").run(SESSION, JSON.stringify({ project_id: 'acme' }));
    db.prepare("INSERT INTO task_groups (id, session_id, name) VALUES ('G1', ?, 'Cart')").run(SESSION);
    db.prepare("INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary) VALUES (?, 'G1', 'research', ?, 'investigator', 'high', 'Cart totals are integer cents')").run(SESSION, `bazinga/artifacts/${SESSION}/r.md`);
    db.prepare("INSERT INTO context_package_consumers (package_id, agent_type) VALUES (1, 'developer')").run();
    db.prepare("INSERT INTO orchestration_logs (session_id, agent_type, content, log_type, reasoning_phase, group_id) VALUES (?, 'developer', 'Round once, at the end', 'reasoning', 'approach', 'G1')").run(SESSION);
    db.prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution) VALUES (?, 'acme', ?, 'Guard the cart')").run(errorPatternHash(TOTAL), pyJsonDumps(TOTAL));
    db.prepare("INSERT INTO strategies (strategy_id, project_id, topic, insight) VALUES ('acme_implementation_1', 'acme', 'implementation', 'Keep totals in integer cents')").run();
  } finally {
    db.close();
  }
}

/** A file as a v11 writer left it: no ca_pattern_faults or v12 indexes, the ledger's old column, ca_schema 11. */
function downgradeToV11(dbPath: string): void {
  const db = new Database(dbPath);
  try {
    downgradeExtensionsToV11(db);
  } finally {
    db.close();
  }
}

const templates = new Map<StateName, string>();
let templateDir: string;

/** Each state made once; every case starts from a copy. */
beforeAll(() => {
  templateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-hostile-templates-'));
  for (const state of STATES) {
    const p = makeProject('ca-hostile-state-');
    try {
      if (state === 'fresh v19') seedAsBazinga(p.dbPath);
      else {
        seedThroughProduct(p);
        if (state === 'extensions before v12') downgradeToV11(p.dbPath);
        else ok(p, ['--quiet', 'index-search']);
      }
      const file = path.join(templateDir, `${state.replace(/\W+/g, '-')}.db`);
      const db = new Database(p.dbPath);
      db.prepare('VACUUM INTO ?').run(file);
      db.close();
      templates.set(state, file);
    } finally {
      p.cleanup();
    }
  }
});
afterAll(() => fs.rmSync(templateDir, { recursive: true, force: true }));

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

/** A project whose database is a copy of the state's file. */
function projectIn(state: StateName): Project {
  const p = makeProject('ca-hostile-');
  projects.push(p);
  fs.copyFileSync(templates.get(state) as string, p.dbPath);
  return p;
}

// ------------------------------------------------------------------------------------- rows, bytes

interface Placed {
  row: HostileRow;
  rowid: number;
  /** Each column's value as SQLite's quote() gives it (type and bytes), long ones by their hash. */
  before: string[];
}

const digest = (v: string) => (v.length > 200 ? `sha256:${crypto.createHash('sha256').update(v).digest('hex')} (${v.length} chars)` : v);

function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name);
}

/** A row's bytes: quote() of each column (identifiers from the table's own definition, never input). */
function bytesOf(db: Database.Database, table: string, rowid: number): string[] | undefined {
  const quoted = columnsOf(db, table).map((c) => `quote("${c}")`).join(', ');
  const row = db.prepare(`SELECT ${quoted} FROM ${table} WHERE rowid = ?`).raw().get(rowid) as string[] | undefined;
  return row?.map(digest);
}

/** Inserts the rows as another tool would (values bound; foreign keys not enforced, as SQLite's default). */
function placeRows(p: Project, rows: readonly HostileRow[]): Placed[] {
  const db = new Database(p.dbPath);
  try {
    db.pragma('foreign_keys = OFF');
    return rows.map((row) => {
      const names = Object.keys(row.values);
      const sql = `INSERT INTO ${row.table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
      const rowid = Number(db.prepare(sql).run(...names.map((n) => row.values[n])).lastInsertRowid);
      return { row, rowid, before: bytesOf(db, row.table, rowid) as string[] };
    });
  } finally {
    db.close();
  }
}

/** What each placed row must be now: its bytes as they were, or, restored, with the original's key and signature. */
function expectMigratedOrKept(p: Project, state: StateName, placed: readonly Placed[]): void {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    for (const { row, rowid, before } of placed) {
      const now = bytesOf(db, row.table, rowid);
      if (row.after === 'kept' || state === 'current') {
        expect(now, `${row.table} rowid ${rowid} left byte-identical`).toEqual(before);
        continue;
      }
      const columns = columnsOf(db, 'error_patterns');
      const quote = (v: string) => digest((db.prepare('SELECT quote(?) AS q').get(v) as { q: string }).q);
      const expected = [...before];
      expected[columns.indexOf('pattern_hash')] = quote(errorPatternHash(row.after.restored));
      expected[columns.indexOf('signature_json')] = quote(pyJsonDumps(row.after.restored));
      expect(now, `${row.table} rowid ${rowid} restored to the original's key`).toEqual(expected);
    }
  } finally {
    db.close();
  }
}

// --------------------------------------------------------------------------------- what is run

/** Lines a run may say on stderr: the restore's notice. Anything else (a warning, a fallback) is a pass that failed. */
const QUIET_ENOUGH = /Error patterns: \d+ given back the key BAZINGA's own tool computes/;

function expectNoWarnings(stderr: string, what: string): void {
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !QUIET_ENOUGH.test(l));
  expect(lines, `${what} said`).toEqual([]);
}

/** A write through bazinga-db (the original's command), with notices. */
function saveErrorPattern(p: Project): void {
  const r = cli(p, ['save-error-pattern', 'acme', 'RangeError', 'Invalid currency code in the cart', 'Validate the code first']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.json).toMatchObject({ success: true, operation: 'created' });
  expectNoWarnings(r.stderr, 'save-error-pattern');
}

/** A recording assembly (it opens the database for writes): a block, not the fallback. */
function assemble(p: Project, extra: readonly string[] = []): string {
  const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G1', '--agent', 'developer', '--now', NOW, ...extra], { cwd: REPO_ROOT, now: NOW });
  const code = runAssembler(ASSEMBLE, run.io);
  expect(code, run.err()).toBe(0);
  expectNoWarnings(run.err(), 'the assembly');
  expect(run.out()).toContain('Cart totals are integer cents');
  return run.out();
}

// ------------------------------------------------------------------------------------------ corpus

describe.each(STATES)('from a %s file: a write and an assembly never fail on rows the v19 schema accepts', (state) => {
  it.each(CORPUS)('$name', ({ rows }) => {
    const p = projectIn(state);
    const placed = placeRows(p, rows);
    saveErrorPattern(p);
    assemble(p);
    expectMigratedOrKept(p, state, placed);
  });

  it("the whole corpus together, through the original's writes, the capture, a search index build and redact-existing", () => {
    const p = projectIn(state);
    const placed = placeRows(p, CORPUS.flatMap((e) => e.rows));
    saveErrorPattern(p);
    for (const args of [
      ['save-context-package', SESSION, 'G1', 'decisions', `bazinga/artifacts/${SESSION}/d.md`, 'tech_lead', '["developer"]', 'medium', 'Refunds use the same rounding'],
      ['save-reasoning', SESSION, 'G1', 'developer', 'decisions', 'Rounding in one helper'],
      ['update-error-confidence', errorPatternHash(TOTAL), 'acme', 'success'],
      ['save-strategy', 'acme', 'general', 'Test the rounding at .5'],
      ['capture-outcomes', SESSION],
      ['index-search'],
      ['redact-existing'],
    ]) {
      const r = cli(p, args);
      expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
      expectNoWarnings(r.stderr, args[0] as string);
    }
    assemble(p, ['--error', "ModuleNotFound: Cannot find module 'x' (case 3)"]);
    expectMigratedOrKept(p, state, placed);
  });
});

// ---------------------------------------------------------------------- a step that fails anyway

/** Runs SQL on the file as an outside tool would. */
function exec(p: Project, sql: string): void {
  const db = new Database(p.dbPath);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

function query(p: Project, sql: string, ...params: unknown[]): Record<string, unknown>[] {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

/** What the last writer's open recorded for doctor (ca_meta `schema.failed`), or undefined. */
function recorded(p: Project): { failures: { step: string; error: string; row?: { table: string; rowid?: number; key?: string } }[]; attempts: number } | undefined {
  const row = query(p, "SELECT value FROM ca_meta WHERE key = 'schema.failed'")[0];
  return row === undefined ? undefined : JSON.parse(String(row.value));
}

const caSchema = (p: Project) => query(p, "SELECT value FROM ca_meta WHERE key = 'ca_schema'")[0]?.value;

/** `doctor --format json` in this process: its exit code and its migrations row. */
async function doctorMigrations(p: Project): Promise<{ code: number; row: { status: string; detail: string; fix: string } | undefined }> {
  let out = '';
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.CLAUDE_PROJECT_DIR;
  delete env.BAZINGA_ROOT;
  const code = await runDoctor(['--project-root', p.root, '--format', 'json'], { cwd: p.root, env, stdout: (t) => (out += t), stderr: () => {} });
  const doc = JSON.parse(out) as { checks: { check: string; status: string; detail: string; fix: string }[] };
  return { code, row: doc.checks.find((c) => c.check === 'migrations') };
}

/** The original's commands, each of which must still work with the step failed. */
function originalCommandsWork(p: Project): void {
  for (const args of [
    ['save-context-package', SESSION, 'G1', 'decisions', `bazinga/artifacts/${SESSION}/d.md`, 'tech_lead', '["developer"]', 'medium', 'Refunds use the same rounding'],
    ['save-reasoning', SESSION, 'G1', 'developer', 'decisions', 'Rounding in one helper'],
    ['save-error-pattern', 'acme', 'RangeError', 'Invalid currency code in the cart', 'Validate the code first'],
    ['update-error-confidence', errorPatternHash(TOTAL), 'acme', 'success'],
    ['save-strategy', 'acme', 'general', 'Test the rounding at .5'],
    ['create-task-group', 'G9', SESSION, 'Refunds'],
    ['mark-context-consumed', '1', 'developer', '1'],
    ['get-context-packages', SESSION, 'G1', 'developer'],
  ]) {
    const r = cli(p, ['--quiet', ...args]);
    expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
  }
}

/** A write in another process (a real bazinga-db run, notices on). */
const writeInAnotherProcess = (p: Project) => runScript(BAZINGA_DB_SCRIPT, ['--db', p.dbPath, '--project-root', p.root, 'save-strategy', 'acme', 'general', 'Another process']);

/** Times another tool wrote as numbers or BLOBs (the columns' affinity keeps a number a number), and reasoning as a BLOB. */
const ODD_TIMES: HostileRow[] = [
  pkg({ created_at: 1733486400, summary: 'a package dated by a Unix time' }),
  pkg({ created_at: 1733486400.5, summary: 'a package dated by a fraction of a second' }),
  pkg({ created_at: Buffer.from('2025-12-06 10:00:00'), summary: 'a package dated by a BLOB' }),
  reasoning({ content: Buffer.from('I will round in cents, as a BLOB'), reasoning_phase: 'completion', timestamp: 1733486400 }),
  reasoning({ content: Buffer.from([0, 0xff, 0x41]), agent_type: Buffer.from('developer'), reasoning_phase: 'approach' }),
  pattern({ pattern_hash: 'h-blob-seen', signature_json: '{"error_type": "E", "message_pattern": "m"}', confidence: 0.9, last_seen: Buffer.from('2025-12-06 10:00:00'), created_at: 1733486400 }),
  strategy({ strategy_id: 's-odd-times', insight: 'round in cents', helpfulness: 3, last_seen: 1733486400, created_at: Buffer.from('x') }),
];

describe('times written as numbers or BLOBs, and reasoning as a BLOB, leave every spawn its block', () => {
  it.each(['developer', 'qa_expert', 'tech_lead', 'investigator'])('%s, also with the handoff purpose', (agent) => {
    const p = projectIn('current');
    placeRows(p, ODD_TIMES);
    for (const purpose of [[], ['--purpose', 'handoff']]) {
      const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G1', '--agent', agent, '--iteration', '1', '--now', NOW, ...purpose], { cwd: REPO_ROOT, now: NOW });
      const code = runAssembler(ASSEMBLE, run.io);
      expect(code, run.err()).toBe(0);
      expectNoWarnings(run.err(), `the assembly for ${agent} ${purpose.join(' ')}`);
      expect(run.out()).toContain('Cart totals are integer cents');
    }
  });
});

describe('a schema step that fails anyway leaves the database usable, is tried once per process, and doctor names it', () => {
  it("the restore of one row fails as the old re-keying's did (a CHECK on ttl_days NULL): the rest migrates, writes work, doctor names the row; once fixed, the next writer completes it", async () => {
    const p = projectIn('extensions before v12');
    const [nullTtl, other] = placeRows(p, [rekeyed(1, { ttl_days: null }), rekeyed(2)]) as [Placed, Placed];
    // As the old migration's computed TTL did: every attempt to rewrite that row fails its CHECK.
    exec(p, "CREATE TRIGGER ttl_check BEFORE UPDATE ON error_patterns WHEN OLD.ttl_days IS NULL BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: ttl_days > 0'); END");

    const first = cli(p, ['save-context-package', SESSION, 'G1', 'decisions', `bazinga/artifacts/${SESSION}/first.md`, 'tech_lead', '["developer"]', 'low', 'First write']);
    expect(first.code, first.stderr).toBe(0);
    const key = `acme/${rekeyedHash('case 1')}`;
    expect(first.stderr).toContain(`⚠ schema step 'restore pattern keys' failed: CHECK constraint failed: ttl_days > 0; row to fix: error_patterns rowid ${nullTtl.rowid} (${key})`);
    // That row as it was; the other restored; the version not recorded, the failure is.
    expectMigratedOrKept(p, 'extensions before v12', [{ ...nullTtl, row: { ...nullTtl.row, after: 'kept' } }, other]);
    expect(caSchema(p)).toBe('11');
    expect(recorded(p)).toEqual({ version: CA_SCHEMA_VERSION, attempts: 1, failures: [{ step: 'restore pattern keys', error: 'CHECK constraint failed: ttl_days > 0', row: { table: 'error_patterns', rowid: nullTtl.rowid, key } }] });

    originalCommandsWork(p);
    assemble(p);
    // Every open since in this process used the file without the step: not tried (or said) again.
    const again = cli(p, ['save-strategy', 'acme', 'general', 'Said once']);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('schema step');
    expect(recorded(p)?.attempts).toBe(1);

    const broken = await doctorMigrations(p);
    expect(broken.code).toBe(1);
    expect(broken.row?.status).toBe('fail');
    expect(broken.row?.detail).toContain(`'restore pattern keys': CHECK constraint failed: ttl_days > 0 (row to fix: error_patterns rowid ${nullTtl.rowid} (${key}))`);
    expect(broken.row?.detail).toContain('at 1 writer open in a row');
    expect(broken.row?.fix).toContain(`bazinga-db query "SELECT rowid, * FROM error_patterns WHERE rowid = ?" --param ${nullTtl.rowid}`);

    // Another process tries once more, and says so.
    const next = writeInAnotherProcess(p);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain("⚠ schema step 'restore pattern keys' failed");
    expect(recorded(p)?.attempts).toBe(2);

    // The cause gone, the next writer completes the migration and clears the record.
    exec(p, 'DROP TRIGGER ttl_check');
    const fixed = writeInAnotherProcess(p);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).not.toContain('schema step');
    expectMigratedOrKept(p, 'extensions before v12', [nullTtl]);
    expect(query(p, 'SELECT ttl_days FROM error_patterns WHERE rowid = ?', nullTtl.rowid)).toEqual([{ ttl_days: null }]);
    expect(caSchema(p)).toBe(String(CA_SCHEMA_VERSION));
    expect(recorded(p)).toBeUndefined();
    const healthy = await doctorMigrations(p);
    expect(healthy.row).toMatchObject({ status: 'ok', detail: `this layer's tables at v${CA_SCHEMA_VERSION}` });
  });

  it("moving this layer's references fails (a trigger refuses every change of the records): patterns are restored and keyed, the records keep their ids, doctor names the record", async () => {
    const p = projectIn('extensions before v12');
    const [row] = placeRows(p, [rekeyed(1)]) as [Placed];
    const record = Number(
      new Database(p.dbPath)
        .prepare(
          `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, duration_ms, version, detail, settled)
           VALUES ('2026-01-05T10:00:00Z', ?, 'G1', 'developer', 0, 'assemble', 'recorded', 1, '0.1.0', ?, 1)`,
        )
        .run(SESSION, JSON.stringify({ shown: [{ kind: 'error_pattern', id: rekeyedHash('case 1') }] })).lastInsertRowid,
    );
    exec(p, "CREATE TRIGGER records_frozen BEFORE UPDATE ON ca_assemblies BEGIN SELECT RAISE(ABORT, 'records are read-only here'); END");

    const first = cli(p, ['save-strategy', 'acme', 'general', 'First write']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`⚠ schema step 'pattern references' failed: records are read-only here; row to fix: ca_assemblies rowid ${record}`);
    expectMigratedOrKept(p, 'extensions before v12', [row]);
    expect(query(p, 'SELECT COUNT(*) AS n FROM ca_pattern_faults')[0]?.n).toBeGreaterThan(0);
    expect(String(query(p, 'SELECT detail FROM ca_assemblies WHERE id = ?', record)[0]?.detail)).toContain(rekeyedHash('case 1'));
    originalCommandsWork(p);
    assemble(p);
    const doctor = await doctorMigrations(p);
    expect(doctor.row?.status).toBe('fail');
    expect(doctor.row?.detail).toContain(`'pattern references': records are read-only here (row to fix: ca_assemblies rowid ${record})`);
  });

  it("storing one row's fault key fails (a trigger refuses it): reads compute that row's key, save-error-pattern still saves, doctor names the row", async () => {
    const p = projectIn('current');
    const [row] = placeRows(p, [pattern({ pattern_hash: 'h-refused', signature_json: pyJsonDumps({ error_type: 'ModuleNotFound', message_pattern: "Cannot find module '...' from the refused row", context_hints: [], stack_pattern: [] }), solution: 'Alias it', confidence: 0.9 })]) as [Placed];
    // An outside tool pruned the version record: the next writer runs the steps again.
    exec(p, "DELETE FROM ca_meta WHERE key = 'ca_schema'; CREATE TRIGGER key_refused BEFORE INSERT ON ca_pattern_faults WHEN NEW.pattern_hash = 'h-refused' BEGIN SELECT RAISE(ABORT, 'not this key'); END");

    const first = cli(p, ['save-strategy', 'acme', 'general', 'First write']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`⚠ schema step 'pattern fault keys' failed: not this key; row to fix: error_patterns rowid ${row.rowid} (acme/h-refused)`);
    expect(query(p, "SELECT COUNT(*) AS n FROM ca_pattern_faults WHERE pattern_hash = 'h-refused'")).toEqual([{ n: 0 }]);
    originalCommandsWork(p);
    // The read keys it itself: the pattern is listed and shown for its error.
    expect(cli(p, ['--quiet', 'get-error-patterns', 'acme', '--min_confidence', '0.8']).json.map((x: { pattern_hash: string }) => x.pattern_hash)).toContain('h-refused');
    expect(assemble(p, ['--error', "ModuleNotFound: Cannot find module 'x' from the refused row"])).toContain('Alias it');
    expectMigratedOrKept(p, 'current', [row]);
    const doctor = await doctorMigrations(p);
    expect(doctor.row?.status).toBe('fail');
    expect(doctor.row?.detail).toContain(`'pattern fault keys': not this key (row to fix: error_patterns rowid ${row.rowid} (acme/h-refused))`);
  });

  it("this layer's own bookkeeping refuses every write (a trigger on ca_meta): nothing can be recorded, yet every command of the original works and the assembly prints its block; doctor says the tables are behind", async () => {
    const p = projectIn('extensions before v12');
    const [row] = placeRows(p, [rekeyed(1)]) as [Placed];
    exec(p, `CREATE TRIGGER meta_frozen_insert BEFORE INSERT ON ca_meta BEGIN SELECT RAISE(ABORT, 'ca_meta is frozen'); END;
             CREATE TRIGGER meta_frozen_update BEFORE UPDATE ON ca_meta BEGIN SELECT RAISE(ABORT, 'ca_meta is frozen'); END;
             CREATE TRIGGER meta_frozen_delete BEFORE DELETE ON ca_meta BEGIN SELECT RAISE(ABORT, 'ca_meta is frozen'); END`);
    const first = cli(p, ['save-strategy', 'acme', 'general', 'First write']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/⚠ schema step '[^']+' failed: ca_meta is frozen/);
    originalCommandsWork(p);
    const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G1', '--agent', 'developer', '--now', NOW], { cwd: REPO_ROOT, now: NOW });
    expect(runAssembler(ASSEMBLE, run.io), run.err()).toBe(0);
    expect(run.err()).not.toContain('fallback');
    expect(run.out()).toContain('Cart totals are integer cents');
    expectMigratedOrKept(p, 'extensions before v12', [row]);
    expect(caSchema(p)).toBe('11');
    expect(recorded(p)).toBeUndefined();
    const doctor = await doctorMigrations(p);
    // Its objects were made; only the version (and the record of what failed) could not be written.
    expect(doctor.code).toBe(0);
    expect(doctor.row).toMatchObject({ status: 'warn', detail: `this layer's tables at v11, not v${CA_SCHEMA_VERSION}` });
    expect(doctor.row?.fix).toContain('if every write says a schema step failed');
  });
});
