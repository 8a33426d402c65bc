/**
 * Compatibility with a database written by the original tool (spec §5.5): on a temp copy of the
 * v19 fixture, every write command runs once on new rows, and afterwards every row that existed
 * before is unchanged (except the rows a write legitimately targeted, listed explicitly below),
 * the file passes `PRAGMA integrity_check`, `schema_version` and `user_version` are unchanged,
 * and the only new schema objects are `ca_*`.
 *
 * The commands run through `runCli` in this process (test/inProcess.ts) on the real file, with the
 * assertions of test/cliAssert.ts; test/bazinga-db.smoke.test.ts runs each command family as a
 * real process.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from './cliAssert.ts';
import { S1, copyFixture, type Project } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';

/** bazinga-db in process (see the header). */
const cli = bazingaDbIn;
import { CA_SCHEMA_VERSION } from '../skills/bazinga-db/scripts/lib/schema.ts';

type Row = Record<string, unknown>;
/** table → rowid → row */
type Snapshot = Map<string, Map<number, Row>>;

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

interface DbState {
  rows: Snapshot;
  schema: SchemaObject[];
  userVersion: number;
  schemaVersion: Row[];
}

const isPortObject = (o: SchemaObject) =>
  o.name.startsWith('ca_') || (o.name.startsWith('sqlite_autoindex_ca_') && o.tbl_name.startsWith('ca_'));

function readState(dbPath: string): DbState {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const schema = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all() as SchemaObject[];
    const tables = schema.filter((o) => o.type === 'table' && !o.name.startsWith('ca_')).map((o) => o.name);
    const rows: Snapshot = new Map();
    for (const t of tables) {
      const byRowid = new Map<number, Row>();
      for (const r of db.prepare(`SELECT rowid AS __rowid, * FROM "${t}"`).all() as Row[]) {
        const { __rowid, ...rest } = r;
        byRowid.set(Number(__rowid), rest);
      }
      rows.set(t, byRowid);
    }
    return {
      rows,
      schema,
      userVersion: db.pragma('user_version', { simple: true }) as number,
      schemaVersion: db.prepare('SELECT * FROM schema_version ORDER BY version').all() as Row[],
    };
  } finally {
    db.close();
  }
}

/** Rows of original tables that a write below legitimately changes: table → rowid → changed columns. */
const EXPECTED_CHANGES: Record<string, Record<number, Row>> = {
  // AUTOINCREMENT bookkeeping: one new package (8), two new consumer rows (14, 15), one new log (8).
  sqlite_sequence: {
    1: { name: 'context_packages', seq: 8 },
    2: { name: 'context_package_consumers', seq: 15 },
    3: { name: 'orchestration_logs', seq: 8 },
  },
};

/** How many rows each original table gains. */
const EXPECTED_NEW_ROWS: Record<string, number> = {
  sessions: 1, // create-session
  task_groups: 1, // create-task-group
  context_packages: 1, // save-context-package
  context_package_consumers: 2, // its two consumers
  consumption_scope: 2, // mark-context-consumed + save-consumption
  orchestration_logs: 1, // save-reasoning
  error_patterns: 1, // save-error-pattern
  strategies: 2, // save-strategy + extract-strategies
};

const NEW_SESSION = 'bazinga_20260101_120000';
const NEW_GROUP = 'NEWGRP';

describe('writes on a copy of the v19 fixture leave the original rows and schema intact', () => {
  let fx: Project;
  let before: DbState;
  let after: DbState;
  const results: Record<string, any> = {};

  beforeAll(() => {
    fx = copyFixture();
    before = readState(fx.dbPath);
    const run = (name: string, args: string[]) => {
      results[name] = ok(cli(fx, [name, ...args]));
      return results[name];
    };
    run('create-session', [NEW_SESSION, 'simple', 'A new session', '--metadata', '{"project_id":"acme-shop"}']);
    run('update-session-status', [NEW_SESSION, 'completed']);
    run('create-task-group', [NEW_GROUP, S1, 'New group', 'in_progress', 'developer', '--complexity', '3']);
    run('save-context-package', [
      S1,
      NEW_GROUP,
      'research',
      `bazinga/artifacts/${S1}/decisions_AUTH.md`,
      'tech_lead',
      '["developer","qa_expert"]',
      'high',
      'New package for the new group',
    ]);
    const pkg = String(results['save-context-package'].package_id);
    run('update-context-references', [NEW_GROUP, S1, `[${pkg}]`]);
    run('mark-context-consumed', [pkg, 'developer', '1']);
    run('save-consumption', [S1, NEW_GROUP, 'qa_expert', '1', pkg]);
    run('save-reasoning', [S1, NEW_GROUP, 'developer', 'completion', 'Finished the new group with small commits']);
    run('save-error-pattern', ['acme-shop', 'RangeError', 'Maximum call stack size exceeded', 'Break the recursion']);
    run('update-error-confidence', [results['save-error-pattern'].pattern_hash, 'acme-shop', 'success']);
    run('cleanup-error-patterns', ['other-project']);
    run('save-strategy', ['acme-shop', 'methodology', 'Write the failing test first']);
    run('update-strategy-helpfulness', [results['save-strategy'].strategy_id, '2']);
    run('extract-strategies', [S1, NEW_GROUP, 'acme-shop']);
    after = readState(fx.dbPath);
  });
  afterAll(() => fx.cleanup());

  it('the snapshot before matches the fixture described in §9.1', () => {
    const counts = Object.fromEntries([...before.rows].map(([t, rows]) => [t, rows.size]));
    expect(counts).toEqual({
      sessions: 2,
      task_groups: 3,
      context_packages: 7,
      context_package_consumers: 13,
      consumption_scope: 1,
      orchestration_logs: 7,
      error_patterns: 4,
      strategies: 3,
      schema_version: 1,
      state_snapshots: 0,
      token_usage: 0,
      skill_outputs: 0,
      development_plans: 0,
      success_criteria: 0,
      workflow_transitions: 0,
      agent_markers: 0,
      workflow_special_rules: 0,
      sqlite_sequence: 3,
      sqlite_stat1: 0,
    });
    expect(before.schema.some((o) => o.name.startsWith('ca_'))).toBe(false);
  });

  it('every write command succeeded on its new row', () => {
    expect(results['create-session']).toMatchObject({ success: true, existing: false, session_id: NEW_SESSION });
    expect(results['update-session-status']).toMatchObject({ success: true, status: 'completed' });
    expect(results['update-session-status'].end_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);
    expect(results['create-task-group'].task_group).toMatchObject({ id: NEW_GROUP, session_id: S1, status: 'in_progress', complexity: 3 });
    expect(results['save-context-package']).toMatchObject({ success: true, package_id: 8, consumers_created: 2, redacted: false });
    expect(results['update-context-references']).toEqual({ success: true, group_id: NEW_GROUP, session_id: S1, context_references: [8] });
    expect(results['mark-context-consumed']).toMatchObject({ consumer_row_updated: true, scope_inserted: true });
    expect(results['save-consumption']).toMatchObject({ inserted: true, agent_type: 'qa_expert', package_id: 8 });
    expect(results['save-reasoning']).toMatchObject({ success: true, log_id: 8, group_id: NEW_GROUP, redacted: false });
    expect(results['save-error-pattern']).toMatchObject({ operation: 'created', occurrences: 1 });
    expect(results['update-error-confidence']).toMatchObject({ previous_confidence: 0.5, new_confidence: 0.6 });
    expect(results['cleanup-error-patterns']).toEqual({ success: true, deleted_count: 0, project_id: 'other-project' });
    expect(results['save-strategy']).toMatchObject({ operation: 'created', topic: 'methodology' });
    expect(results['update-strategy-helpfulness']).toMatchObject({ previous_helpfulness: 1, new_helpfulness: 3 });
    expect(results['extract-strategies']).toMatchObject({ extracted_count: 1 });
    expect(results['extract-strategies'].strategy_ids[0]).toMatch(/^acme-shop_implementation_[0-9a-f]{16}$/);
  });

  it('every row that existed before is unchanged, except the explicitly expected ones', () => {
    for (const [table, rows] of before.rows) {
      const now = after.rows.get(table);
      expect(now, `table ${table} still exists`).toBeDefined();
      for (const [rowid, row] of rows) {
        const expected = { ...row, ...(EXPECTED_CHANGES[table]?.[rowid] ?? {}) };
        expect(now!.get(rowid), `${table} rowid ${rowid}`).toEqual(expected);
      }
    }
  });

  it('the expected changes are real changes (sqlite_sequence advanced)', () => {
    const seq = before.rows.get('sqlite_sequence')!;
    expect([...seq.values()]).toEqual([
      { name: 'context_packages', seq: 7 },
      { name: 'context_package_consumers', seq: 13 },
      { name: 'orchestration_logs', seq: 7 },
    ]);
    expect([...after.rows.get('sqlite_sequence')!.values()]).toEqual(Object.values(EXPECTED_CHANGES.sqlite_sequence!));
  });

  it('each original table gained exactly the new rows of the writes, and nothing was deleted', () => {
    for (const [table, rows] of before.rows) {
      expect(after.rows.get(table)!.size, table).toBe(rows.size + (EXPECTED_NEW_ROWS[table] ?? 0));
    }
    // The targeted new rows carry what the writes said.
    const newSession = [...after.rows.get('sessions')!.values()].find((r) => r.session_id === NEW_SESSION);
    expect(newSession).toMatchObject({ status: 'completed', mode: 'simple', metadata: '{"project_id":"acme-shop"}' });
    expect(newSession!.end_time).not.toBeNull();
    const newGroup = [...after.rows.get('task_groups')!.values()].find((r) => r.id === NEW_GROUP);
    expect(newGroup).toMatchObject({ session_id: S1, context_references: '[8]', status: 'in_progress' });
    const consumers = [...after.rows.get('context_package_consumers')!.values()].filter((r) => r.package_id === 8);
    expect(consumers).toHaveLength(2);
    expect(consumers.find((r) => r.agent_type === 'developer')!.consumed_at).not.toBeNull();
    expect(consumers.find((r) => r.agent_type === 'qa_expert')!.consumed_at).toBeNull();
    const pattern = [...after.rows.get('error_patterns')!.values()].find((r) => r.pattern_hash === results['save-error-pattern'].pattern_hash);
    expect(pattern).toMatchObject({ project_id: 'acme-shop', confidence: 0.6, occurrences: 1 });
    const strategy = [...after.rows.get('strategies')!.values()].find((r) => r.strategy_id === results['save-strategy'].strategy_id);
    expect(strategy).toMatchObject({ helpfulness: 3, insight: 'Write the failing test first' });
  });

  it('PRAGMA integrity_check returns ok', () => {
    const db = new Database(fx.dbPath, { readonly: true });
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
    expect(ok(cli(fx, ['integrity-check']))).toEqual({ ok: true, details: 'Database integrity check passed' });
  });

  it('schema_version and user_version are unchanged', () => {
    expect(after.userVersion).toBe(before.userVersion);
    expect(after.userVersion).toBe(0);
    expect(after.schemaVersion).toEqual(before.schemaVersion);
    expect(after.schemaVersion).toHaveLength(1);
    expect(after.schemaVersion[0]).toMatchObject({ version: 19, description: 'Schema v19: SpecKit task ID tracking' });
  });

  it('every original schema object is unchanged and the only new objects are ca_*', () => {
    const key = (o: SchemaObject) => `${o.type}:${o.name}`;
    const afterByKey = new Map(after.schema.map((o) => [key(o), o]));
    for (const o of before.schema) expect(afterByKey.get(key(o)), key(o)).toEqual(o);
    const beforeKeys = new Set(before.schema.map(key));
    const added = after.schema.filter((o) => !beforeKeys.has(key(o)));
    expect(added.length).toBeGreaterThan(0);
    for (const o of added) expect(isPortObject(o), `new object ${key(o)}`).toBe(true);
    expect(added.map((o) => o.name)).toContain('ca_meta');
    const db = new Database(fx.dbPath, { readonly: true });
    try {
      expect(db.prepare("SELECT value FROM ca_meta WHERE key = 'ca_schema'").get()).toEqual({ value: String(CA_SCHEMA_VERSION) });
    } finally {
      db.close();
    }
  });
});
