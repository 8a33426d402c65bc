/**
 * The vectors of spec/bazinga-db.md §9 (plus the worked examples of §7.1, §7.3 and §7.4), run
 * against the CLI on real SQLite files. Every call goes through `runCli` in this process
 * (test/inProcess.ts `bazingaDbIn`): the same argv, working directory and environment a process
 * gets, and the same exit-code, stdout and stderr assertions (test/cliAssert.ts). The real `tsx`
 * process of each command family, and the identity of its bytes with the in-process run, is
 * checked in test/bazinga-db.smoke.test.ts.
 *
 * - §9.2 reads share one copy of the fixture; every §9.2 write starts from its own fresh copy.
 * - §9.3 / §9.4 / §9.5 use fresh databases created by the CLI itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  consumptionScopeId,
  errorPatternHash,
  normaliseErrorMessage,
  normaliseErrorType,
  strategyId,
} from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { redact, redactText } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { fails, ok } from './cliAssert.ts';
import { S1, S2, copyFixture, makeProject, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';

// ------------------------------------------------------------------------------------ helpers

const AGENT_LIST =
  "['developer', 'investigator', 'orchestrator', 'project_manager', 'qa_expert', 'requirements_engineer', 'senior_software_engineer', 'tech_lead']";
const CONSUMPTION_AGENT_LIST = "['developer', 'investigator', 'qa_expert', 'senior_software_engineer', 'tech_lead']";
const PHASE_LIST = "['approach', 'blockers', 'completion', 'decisions', 'pivot', 'risks', 'understanding']";

/** bazinga-db in process (see the header). */
const cli = bazingaDbIn;

const ids = (rows: { id: number }[]) => rows.map((r) => r.id);

function withDb<T>(p: Project, fn: (db: Database.Database) => T): T {
  const db = new Database(p.dbPath);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const FIXTURE_HASH = {
  x: '62e443afeef6f285072d38c941350438773ba502413373596f0daa629eab30aa',
  y: 'af1cab196771fe1f',
  typeError: '0768d6540258328b',
  jest: 'ea83b08c98dfc536',
};
const prefix16 = (h: string) => h.slice(0, 16);

// ===================================================================== §9.2 reads (one copy)

describe('§9.2 reads against a copy of the fixture', () => {
  let fx: Project;
  beforeAll(() => {
    fx = copyFixture();
  });
  afterAll(() => fx.cleanup());

  type PkgCase = [label: string, args: string[], expected: number[], total?: number];
  const AUTH = [S1, 'AUTH', 'developer'];
  const pkgCases: PkgCase[] = [
    // AUTH, developer, default limit 3
    ['AUTH dev default, legacy', [...AUTH], [2, 3, 4]],
    ['AUTH dev default, --iteration 1', [...AUTH, '--iteration', '1'], [2, 3, 4]],
    ['AUTH dev default, --iteration 2', [...AUTH, '--iteration', '2'], [2, 1, 3]],
    ['AUTH dev default, --with-total', [...AUTH, '--with-total'], [2, 3, 4], 3],
    ['AUTH dev default, --iteration 2 --with-total', [...AUTH, '--iteration', '2', '--with-total'], [2, 1, 3], 4],
    // AUTH, developer, 10
    ['AUTH dev 10, legacy', [...AUTH, '10'], [2, 3, 4]],
    ['AUTH dev 10, --iteration 1', [...AUTH, '10', '--iteration', '1'], [2, 3, 4]],
    ['AUTH dev 10, --iteration 2', [...AUTH, '10', '--iteration', '2'], [2, 1, 3, 4]],
    ['AUTH dev 10, --with-total', [...AUTH, '10', '--with-total'], [2, 3, 4], 3],
    ['AUTH dev 10, --iteration 2 --with-total', [...AUTH, '10', '--with-total', '--iteration', '2'], [2, 1, 3, 4], 4],
    // AUTH, developer, 1
    ['AUTH dev 1, legacy', [...AUTH, '1'], [2]],
    ['AUTH dev 1, --iteration 1', [...AUTH, '1', '--iteration', '1'], [2]],
    ['AUTH dev 1, --iteration 2', [...AUTH, '1', '--iteration', '2'], [2]],
    ['AUTH dev 1, --with-total', [...AUTH, '1', '--with-total'], [2], 3],
    // agent normalisation
    ['AUTH DEVELOPER 10', [S1, 'AUTH', 'DEVELOPER', '10'], [2, 3, 4]],
    // senior_software_engineer
    ['AUTH sse 10, legacy', [S1, 'AUTH', 'senior_software_engineer', '10'], [2, 1]],
    ['AUTH sse 10, --iteration 1', [S1, 'AUTH', 'senior_software_engineer', '10', '--iteration', '1'], [2, 1]],
    ['AUTH sse 10, --iteration 2', [S1, 'AUTH', 'senior_software_engineer', '10', '--iteration', '2'], [2, 1]],
    ['AUTH sse 10, --with-total', [S1, 'AUTH', 'senior_software_engineer', '10', '--with-total'], [2, 1], 2],
    ['AUTH qa_expert 10', [S1, 'AUTH', 'qa_expert', '10'], [3, 4]],
    ['AUTH tech_lead 10', [S1, 'AUTH', 'tech_lead', '10'], [4]],
    ['AUTH investigator 10', [S1, 'AUTH', 'investigator', '10'], []],
    ['AUTH investigator 10, --with-total', [S1, 'AUTH', 'investigator', '10', '--with-total'], [], 0],
    // CART
    ['CART dev 10, legacy', [S1, 'CART', 'developer', '10'], [5, 4]],
    ['CART dev 10, --iteration 1', [S1, 'CART', 'developer', '10', '--iteration', '1'], [5, 4]],
    ['CART qa_expert 10', [S1, 'CART', 'qa_expert', '10'], [6, 4]],
    ['CART tech_lead 10', [S1, 'CART', 'tech_lead', '10'], [6, 4]],
    // global
    ['global dev 10, legacy', [S1, 'global', 'developer', '10'], [4]],
    ['global dev 10, --iteration 1', [S1, 'global', 'developer', '10', '--iteration', '1'], [4]],
    ['global dev 10, --iteration 2', [S1, 'global', 'developer', '10', '--iteration', '2'], [4]],
    ['"" dev 10 (F1: means global)', [S1, '', 'developer', '10'], [4]],
    ['global qa_expert 10', [S1, 'global', 'qa_expert', '10'], [4]],
    ['auth (lower case) dev 10: only the global one', [S1, 'auth', 'developer', '10'], [4]],
    // S2 and unknown session
    ['S2 CHK dev 10', [S2, 'CHK', 'developer', '10'], [7]],
    ['S2 global dev 10', [S2, 'global', 'developer', '10'], []],
    ['unknown session', ['nosuch', 'AUTH', 'developer'], []],
  ];

  it.each(pkgCases)('get-context-packages %s', (_label, args, expected, total) => {
    const out = ok(cli(fx, ['get-context-packages', ...args]));
    if (total === undefined) {
      expect(Array.isArray(out)).toBe(true);
      expect(ids(out)).toEqual(expected);
    } else {
      expect(Object.keys(out).sort()).toEqual(['packages', 'total_available']);
      expect(ids(out.packages)).toEqual(expected);
      expect(out.total_available).toBe(total);
    }
  });

  it('get-context-packages prints exactly the listing fields; group_id is null for the global package', () => {
    const out = ok(cli(fx, ['get-context-packages', S1, 'AUTH', 'developer', '10']));
    expect(out).toEqual([
      {
        id: 2,
        package_type: 'failures',
        priority: 'critical',
        summary: '3 auth tests fail: refresh reuse undetected, expired token gives 500 not 401, no clock-skew tolerance',
        file_path: `bazinga/artifacts/${S1}/failures_AUTH_iter1.md`,
        size_bytes: 145,
        group_id: 'AUTH',
      },
      {
        id: 3,
        package_type: 'decisions',
        priority: 'medium',
        summary: 'Store tokens in SecureStore, never AsyncStorage; read API base URL from config',
        file_path: `bazinga/artifacts/${S1}/decisions_AUTH.md`,
        size_bytes: 96,
        group_id: 'AUTH',
      },
      {
        id: 4,
        package_type: 'investigation',
        priority: 'low',
        summary: 'Stale Metro cache explains phantom module errors; run metro with --reset-cache before blaming imports',
        file_path: `bazinga/artifacts/${S1}/investigation_build.md`,
        size_bytes: 164,
        group_id: null,
      },
    ]);
  });

  it.each([
    ['0', 'limit must be between 1 and 50 (got 0)'],
    ['51', 'limit must be between 1 and 50 (got 51)'],
  ])('get-context-packages AUTH developer %s → VALIDATION', (limit, message) => {
    fails(cli(fx, ['get-context-packages', S1, 'AUTH', 'developer', limit]), 1, 'VALIDATION', message);
  });

  it('get-session S1 → the full row, keys in column order', () => {
    const out = ok(cli(fx, ['get-session', S1]));
    expect(Object.keys(out)).toEqual([
      'session_id',
      'start_time',
      'end_time',
      'mode',
      'original_requirements',
      'status',
      'initial_branch',
      'metadata',
      'created_at',
    ]);
    expect(out).toEqual({
      session_id: S1,
      start_time: '2025-12-01 09:00:00',
      end_time: null,
      mode: 'parallel',
      original_requirements: 'Add JWT auth and an offline cart to the shop app',
      status: 'active',
      initial_branch: 'main',
      metadata: '{"project_id":"acme-shop"}',
      created_at: '2025-12-01 09:00:00',
    });
  });

  it('get-session nope → NOT_FOUND', () => {
    fails(cli(fx, ['get-session', 'nope']), 1, 'NOT_FOUND', 'Session not found: nope');
  });

  it.each([
    [[], [S2, S1]],
    [['1'], [S2]],
  ])('list-sessions %j', (args, expected) => {
    const out = ok(cli(fx, ['list-sessions', ...args]));
    expect(out.map((s: any) => s.session_id)).toEqual(expected);
    expect(out[0]).toMatchObject({ session_id: S2, mode: 'simple', original_requirements: 'Fix flaky checkout tests' });
  });

  it.each([
    [[S1], ['AUTH', 'CART']],
    [[S1, 'pending'], ['CART']],
    [[S2], ['CHK']],
  ])('get-task-groups %j', (args, expected) => {
    const out = ok(cli(fx, ['get-task-groups', ...args]));
    expect(out.map((g: any) => g.id)).toEqual(expected);
    for (const g of out) {
      expect(g).toMatchObject({ assigned_to: 'developer', initial_tier: 'Developer', item_count: 1, context_references: null });
    }
  });

  it.each<[string, string[], number[]]>([
    ['all of S1', [], [5, 4, 3, 2, 6, 1, 7]],
    ['--group_id AUTH', ['--group_id', 'AUTH'], [5, 4, 3, 2, 1]],
    ['--group_id global', ['--group_id', 'global'], [7]],
    ['--group_id CART', ['--group_id', 'CART'], [6]],
    ['--agent_type developer --phase decisions', ['--agent_type', 'developer', '--phase', 'decisions'], [5]],
    ['--limit 2', ['--limit', '2'], [5, 4]],
    ['--group_id AUTH --agent_type qa_expert', ['--group_id', 'AUTH', '--agent_type', 'qa_expert'], [4]],
  ])('get-reasoning S1 %s', (_label, args, expected) => {
    const out = ok(cli(fx, ['get-reasoning', S1, ...args]));
    expect(ids(out)).toEqual(expected);
    for (const row of out) {
      expect(row.references).toEqual([]);
      expect(row.agent_id).toBeNull();
      expect(typeof row.redacted).toBe('boolean');
      expect(row).not.toHaveProperty('phase');
    }
  });

  it('get-reasoning rows carry reasoning_phase, confidence and the redacted flag (row 5)', () => {
    const out = ok(cli(fx, ['get-reasoning', S1, '--limit', '1']));
    expect(out).toHaveLength(1);
    expect(Object.keys(out[0])).toEqual([
      'id',
      'session_id',
      'group_id',
      'agent_type',
      'agent_id',
      'iteration',
      'reasoning_phase',
      'confidence_level',
      'content',
      'redacted',
      'timestamp',
      'references',
    ]);
    expect(out[0]).toMatchObject({
      id: 5,
      session_id: S1,
      group_id: 'AUTH',
      agent_type: 'developer',
      iteration: 2,
      reasoning_phase: 'decisions',
      confidence_level: 'high',
      redacted: true,
      timestamp: '2025-12-02 09:15:00',
      references: [],
    });
    expect(out[0].content).toContain('password=REDACTED');
  });

  it('get-reasoning --phase thinking → VALIDATION', () => {
    fails(
      cli(fx, ['get-reasoning', S1, '--phase', 'thinking']),
      1,
      'VALIDATION',
      `Invalid phase: thinking. Must be one of: ${PHASE_LIST}`,
    );
  });

  it('get-reasoning with a stray positional → USAGE', () => {
    fails(
      cli(fx, ['get-reasoning', S1, 'stray']),
      2,
      'USAGE',
      "Unexpected argument 'stray'. Use --flag syntax for options.",
    );
  });

  it('get-consumption S1 → the single scope row', () => {
    expect(ok(cli(fx, ['get-consumption', S1]))).toEqual([
      {
        scope_id: 'bc704573eb28d540eaf6f6dd16e17c92',
        session_id: S1,
        group_id: 'AUTH',
        agent_type: 'developer',
        iteration: 1,
        package_id: 1,
        consumed_at: '2025-12-01 10:00:00',
      },
    ]);
  });

  it('get-consumption S1 --group_id global → []', () => {
    expect(ok(cli(fx, ['get-consumption', S1, '--group_id', 'global']))).toEqual([]);
  });

  it.each<[string, string[], string[], number[] | undefined]>([
    ['default', [], [FIXTURE_HASH.x, FIXTURE_HASH.jest], [0.8, 0.7]],
    [
      '--min_confidence 0 --limit 10',
      ['--min_confidence', '0', '--limit', '10'],
      [FIXTURE_HASH.x, FIXTURE_HASH.jest, FIXTURE_HASH.y, FIXTURE_HASH.typeError],
      [0.8, 0.7, 0.5, 0.5],
    ],
    ['--min_confidence 0.8 (F5)', ['--min_confidence', '0.8'], [FIXTURE_HASH.x], [0.8]],
    ['--lang python', ['--lang', 'python'], [], []],
  ])('get-error-patterns acme-shop %s', (_label, args, hashes, confidences) => {
    const out = ok(cli(fx, ['get-error-patterns', 'acme-shop', ...args]));
    expect(out.map((p: any) => prefix16(p.pattern_hash))).toEqual(hashes.map(prefix16));
    expect(out.map((p: any) => p.confidence)).toEqual(confidences);
  });

  it('get-error-patterns output shape: full hash, parsed signature, rounded confidence', () => {
    const out = ok(cli(fx, ['get-error-patterns', 'acme-shop', '--limit', '1']));
    expect(out).toHaveLength(1);
    expect(Object.keys(out[0])).toEqual(['pattern_hash', 'solution', 'confidence', 'occurrences', 'lang', 'last_seen', 'signature']);
    expect(out[0]).toMatchObject({
      pattern_hash: FIXTURE_HASH.x,
      confidence: 0.8,
      occurrences: 1,
      lang: 'typescript',
      last_seen: '2025-12-01 13:00:00',
      signature: { error_type: 'ModuleNotFound', message_pattern: "Cannot find module '...' at .../x.ts line N" },
    });
  });

  const M = 'acme-shop_methodology_d238582816d736ef';
  const I = 'acme-shop_implementation_7b221de248e1061a';
  const A = 'acme-shop_architecture_e460f15151a2c2c9';
  it.each<[string, string[], string[]]>([
    ['default', [], [M, I, A]],
    ['--framework react-native', ['--framework', 'react-native'], [M, I, A]],
    ['--topic methodology', ['--topic', 'methodology'], [M]],
    ['--lang python', ['--lang', 'python'], []],
  ])('get-strategies acme-shop %s', (_label, args, expected) => {
    const out = ok(cli(fx, ['get-strategies', 'acme-shop', ...args]));
    expect(out.map((s: any) => s.strategy_id)).toEqual(expected);
    if (expected.length > 0) {
      expect(Object.keys(out[0])).toEqual([
        'strategy_id',
        'project_id',
        'topic',
        'insight',
        'helpfulness',
        'lang',
        'framework',
        'last_seen',
        'created_at',
      ]);
      expect(out[0]).toMatchObject({ strategy_id: M, helpfulness: 2, framework: null, lang: 'typescript' });
    }
  });

  it('query SELECT COUNT(*) → [{n:7}]', () => {
    expect(ok(cli(fx, ['query', 'SELECT COUNT(*) AS n FROM context_packages']))).toEqual([{ n: 7 }]);
  });

  it('query with a bound parameter (§4.8.1 example)', () => {
    const sql = "SELECT COALESCE(json_extract(metadata,'$.project_id'),'default') AS pid FROM sessions WHERE session_id = ?";
    expect(ok(cli(fx, ['query', sql, '--param', S1]))).toEqual([{ pid: 'acme-shop' }]);
  });

  it('integrity-check → ok', () => {
    expect(ok(cli(fx, ['integrity-check']))).toEqual({ ok: true, details: 'Database integrity check passed' });
  });

  it('the read-only vectors did not change any row', () => {
    withDb(fx, (db) => {
      expect(db.prepare('SELECT COUNT(*) AS n FROM context_package_consumers WHERE consumed_at IS NOT NULL').get()).toEqual({ n: 1 });
      expect(db.prepare('SELECT COUNT(*) AS n FROM consumption_scope').get()).toEqual({ n: 1 });
      expect(db.prepare('SELECT COUNT(*) AS n FROM context_packages').get()).toEqual({ n: 7 });
    });
  });
});

// ======================================================= §9.2 writes (fresh copy per row)

describe('§9.2 writes, each from a fresh copy of the fixture', () => {
  let fx: Project;
  beforeEach(() => {
    fx = copyFixture();
  });
  afterEach(() => fx.cleanup());

  const consumerRow = (p: Project, pkg: number, agent: string) =>
    withDb(p, (db) =>
      db.prepare('SELECT consumed_at, iteration FROM context_package_consumers WHERE package_id = ? AND agent_type = ?').get(pkg, agent),
    ) as { consumed_at: string | null; iteration: number };
  const scopeRows = (p: Project) => withDb(p, (db) => db.prepare('SELECT * FROM consumption_scope ORDER BY rowid').all()) as any[];

  it('mark-context-consumed 1 developer 1 → nothing new', () => {
    expect(ok(cli(fx, ['mark-context-consumed', '1', 'developer', '1']))).toEqual({
      success: true,
      package_id: 1,
      agent_type: 'developer',
      iteration: 1,
      consumer_row_updated: false,
      scope_id: 'bc704573eb28d540eaf6f6dd16e17c92',
      scope_inserted: false,
    });
    expect(scopeRows(fx)).toHaveLength(1);
    expect(consumerRow(fx, 1, 'developer')).toEqual({ consumed_at: '2025-12-01 10:00:00', iteration: 1 });
  });

  it('mark-context-consumed 1 developer 2 → scope row at iteration 2; consumer row keeps iteration 1', () => {
    expect(ok(cli(fx, ['mark-context-consumed', '1', 'developer', '2']))).toMatchObject({
      success: true,
      consumer_row_updated: false,
      scope_id: '3d4d2c1ea31bb18e48effdb40321c5f7',
      scope_inserted: true,
    });
    const out = ok(cli(fx, ['get-context-packages', S1, 'AUTH', 'developer', '10', '--iteration', '2']));
    expect(ids(out)).toEqual([2, 3, 4]);
    expect(consumerRow(fx, 1, 'developer')).toEqual({ consumed_at: '2025-12-01 10:00:00', iteration: 1 });
    const added = scopeRows(fx).find((r) => r.scope_id === '3d4d2c1ea31bb18e48effdb40321c5f7');
    expect(added).toMatchObject({ session_id: S1, group_id: 'AUTH', agent_type: 'developer', iteration: 2, package_id: 1 });
  });

  it('mark-context-consumed 2 developer 1 → consumer row updated, scope inserted, legacy view drops 2', () => {
    expect(ok(cli(fx, ['mark-context-consumed', '2', 'developer', '1']))).toMatchObject({
      consumer_row_updated: true,
      scope_id: '1da6142164592192541c18d4f2f89360',
      scope_inserted: true,
    });
    expect(ids(ok(cli(fx, ['get-context-packages', S1, 'AUTH', 'developer', '10'])))).toEqual([3, 4]);
    const row = consumerRow(fx, 2, 'developer');
    expect(row.consumed_at).not.toBeNull();
    expect(row.iteration).toBe(1);
  });

  it('mark-context-consumed 4 developer 1 → scope row in group global', () => {
    expect(ok(cli(fx, ['mark-context-consumed', '4', 'developer', '1']))).toMatchObject({
      consumer_row_updated: true,
      scope_id: '7879f1358ec16864444ef6a81b17596a',
      scope_inserted: true,
    });
    const added = scopeRows(fx).find((r) => r.scope_id === '7879f1358ec16864444ef6a81b17596a');
    expect(added).toMatchObject({ session_id: S1, group_id: 'global', agent_type: 'developer', iteration: 1, package_id: 4 });
  });

  it('mark-context-consumed 5 qa_expert 1 → NOT_CONSUMER', () => {
    fails(
      cli(fx, ['mark-context-consumed', '5', 'qa_expert', '1']),
      1,
      'NOT_CONSUMER',
      "Agent 'qa_expert' was not designated as consumer for package 5",
    );
    expect(scopeRows(fx)).toHaveLength(1);
  });

  it('save-consumption S1 AUTH developer 1 1 → inserted:false', () => {
    expect(ok(cli(fx, ['save-consumption', S1, 'AUTH', 'developer', '1', '1']))).toEqual({
      success: true,
      inserted: false,
      scope_id: 'bc704573eb28d540eaf6f6dd16e17c92',
      session_id: S1,
      group_id: 'AUTH',
      agent_type: 'developer',
      iteration: 1,
      package_id: 1,
    });
    expect(scopeRows(fx)).toHaveLength(1);
  });

  it('save-consumption S1 AUTH developer 2 1 → inserted:true', () => {
    expect(ok(cli(fx, ['save-consumption', S1, 'AUTH', 'developer', '2', '1']))).toMatchObject({
      inserted: true,
      scope_id: '3d4d2c1ea31bb18e48effdb40321c5f7',
    });
    expect(scopeRows(fx)).toHaveLength(2);
    // Consumer rows are not touched.
    expect(consumerRow(fx, 1, 'developer')).toEqual({ consumed_at: '2025-12-01 10:00:00', iteration: 1 });
  });

  it('save-consumption S1 AUTH developer 1 7 → VALIDATION (F7: package of another session)', () => {
    fails(
      cli(fx, ['save-consumption', S1, 'AUTH', 'developer', '1', '7']),
      1,
      'VALIDATION',
      'Context package 7 does not belong to session bazinga_20251201_090000',
    );
    expect(scopeRows(fx)).toHaveLength(1);
  });

  it('save-context-package S1 AUTH handoff … → package 8, summary redacted (F6)', () => {
    const out = ok(
      cli(fx, [
        'save-context-package',
        S1,
        'AUTH',
        'handoff',
        `bazinga/artifacts/${S1}/decisions_AUTH.md`,
        'developer',
        '["qa_expert","tech_lead"]',
        'high',
        'Handoff: token=abcdefghijklmnopqrstuvwxyz012345 rotated',
      ]),
    );
    expect(out).toEqual({
      success: true,
      package_id: 8,
      file_path: `bazinga/artifacts/${S1}/decisions_AUTH.md`,
      consumers_created: 2,
      redacted: true,
    });
    withDb(fx, (db) => {
      expect(db.prepare('SELECT * FROM context_packages WHERE id = 8').get()).toMatchObject({
        session_id: S1,
        group_id: 'AUTH',
        scope: 'group',
        package_type: 'handoff',
        producer_agent: 'developer',
        priority: 'high',
        size_bytes: 96,
        version: 1,
        supersedes_id: null,
        summary: 'Handoff: token=[REDACTED:token] rotated',
      });
      expect(db.prepare('SELECT agent_type, consumed_at, iteration FROM context_package_consumers WHERE package_id = 8 ORDER BY id').all()).toEqual([
        { agent_type: 'qa_expert', consumed_at: null, iteration: 1 },
        { agent_type: 'tech_lead', consumed_at: null, iteration: 1 },
      ]);
    });
  });

  it('extract-strategies S1 AUTH acme-shop → 4 new strategies (F4)', () => {
    const expectedIds = [
      'acme-shop_architecture_e2c0bbd69819dd32',
      'acme-shop_architecture_3c46c8b71b49d440',
      'acme-shop_implementation_cf03b8fa480f3e54',
      'acme-shop_methodology_7cb8155058bbb47b',
    ];
    expect(ok(cli(fx, ['extract-strategies', S1, 'AUTH', 'acme-shop']))).toEqual({
      success: true,
      extracted_count: 4,
      session_id: S1,
      group_id: 'AUTH',
      project_id: 'acme-shop',
      strategy_ids: expectedIds,
    });
    withDb(fx, (db) => {
      const rows = db
        .prepare(`SELECT strategy_id, project_id, helpfulness, lang, framework, insight FROM strategies WHERE strategy_id IN (${expectedIds.map(() => '?').join(',')})`)
        .all(...expectedIds) as any[];
      expect(rows).toHaveLength(4);
      for (const row of rows) expect(row).toMatchObject({ project_id: 'acme-shop', helpfulness: 1, lang: null, framework: null });
      // Log 5's content was already redacted; it stays redacted in the insight.
      const fromLog5 = rows.find((r) => r.strategy_id === expectedIds[0]);
      const log5 = db.prepare('SELECT content FROM orchestration_logs WHERE id = 5').get() as { content: string };
      expect(fromLog5.insight).toBe(log5.content.slice(0, 500));
      expect(db.prepare('SELECT COUNT(*) AS n FROM strategies').get()).toEqual({ n: 7 });
    });
  });

  it('update-error-confidence 62e443af… success → 0.8 → 0.9 (F5)', () => {
    expect(ok(cli(fx, ['update-error-confidence', FIXTURE_HASH.x, 'acme-shop', 'success']))).toEqual({
      success: true,
      pattern_hash: FIXTURE_HASH.x,
      previous_confidence: 0.8,
      new_confidence: 0.9,
      injectable: true,
    });
    withDb(fx, (db) => {
      expect(db.prepare('SELECT confidence FROM error_patterns WHERE pattern_hash = ?').get(FIXTURE_HASH.x)).toEqual({ confidence: 0.9 });
    });
  });

  it('cleanup-error-patterns deletes by date relative to now (last_seen set relative to now)', () => {
    withDb(fx, (db) => {
      const set = db.prepare("UPDATE error_patterns SET last_seen = datetime('now', ?) WHERE rowid = ?");
      set.run('-92 days', 1); // expired
      set.run('-91 days', 2); // date + 90 = yesterday → expired
      set.run('-90 days', 3); // date + 90 = today → kept
      set.run('-1 days', 4); // kept
    });
    expect(ok(cli(fx, ['cleanup-error-patterns', 'other-project']))).toEqual({ success: true, deleted_count: 0, project_id: 'other-project' });
    expect(ok(cli(fx, ['cleanup-error-patterns']))).toEqual({ success: true, deleted_count: 2, project_id: null });
    withDb(fx, (db) => {
      const left = db.prepare('SELECT substr(pattern_hash, 1, 16) AS h FROM error_patterns ORDER BY rowid').all();
      expect(left).toEqual([{ h: FIXTURE_HASH.typeError }, { h: FIXTURE_HASH.jest }]);
    });
  });

  it('create-task-group AUTH S1 "JWT authentication" → status stays in_progress (F11)', () => {
    const out = ok(cli(fx, ['create-task-group', 'AUTH', S1, 'JWT authentication']));
    expect(out.success).toBe(true);
    expect(out.task_group).toMatchObject({
      id: 'AUTH',
      session_id: S1,
      name: 'JWT authentication',
      status: 'in_progress',
      complexity: 6,
      item_count: 1,
      initial_tier: 'Developer',
      assigned_to: 'developer',
    });
    withDb(fx, (db) => {
      expect(db.prepare("SELECT status FROM task_groups WHERE id = 'AUTH' AND session_id = ?").get(S1)).toEqual({ status: 'in_progress' });
    });
  });
});

// ============================================================ §9.3 ordering and tie vectors

/** A fresh project with session sess_A and the five packages of §9.3 (created_at 10:00:01…05). */
function setupOrdering(): Project {
  const p = makeProject();
  ok(cli(p, ['create-session', 'sess_A', 'simple', 'Ordering vector']));
  const rows: [string, string, string, string][] = [
    ['grp1', 'medium', '["developer","qa_expert"]', 'a.md'],
    ['grp1', 'critical', '["developer"]', 'b.md'],
    ['grp2', 'high', '["developer"]', 'c.md'],
    ['global', 'low', '["developer","tech_lead"]', 'd.md'],
    ['grp1', 'high', '["developer","qa_expert"]', 'e.md'],
  ];
  rows.forEach(([group, priority, consumers, file], i) => {
    const rel = writeArtifact(p, 'sess_A', file);
    const out = ok(cli(p, ['save-context-package', 'sess_A', group, 'research', rel, 'developer', consumers, priority, `package ${i + 1}`]));
    expect(out.package_id).toBe(i + 1);
  });
  withDb(p, (db) => {
    const upd = db.prepare('UPDATE context_packages SET created_at = ? WHERE id = ?');
    for (let id = 1; id <= 5; id++) upd.run(`2025-12-01 10:00:0${id}`, id);
  });
  return p;
}

describe('§9.3 ordering vector (fresh database)', () => {
  let p: Project;
  beforeAll(() => {
    p = setupOrdering();
  });
  afterAll(() => p.cleanup());

  it('the setup stored global package 4 with scope global and group NULL', () => {
    withDb(p, (db) => {
      expect(db.prepare('SELECT scope, group_id FROM context_packages WHERE id = 4').get()).toEqual({ scope: 'global', group_id: null });
    });
  });

  it.each<[string, string[], number[]]>([
    ['grp1 developer 10', ['grp1', 'developer', '10'], [2, 5, 1, 4]],
    ['grp1 developer 2', ['grp1', 'developer', '2'], [2, 5]],
    ['global developer 10', ['global', 'developer', '10'], [4]],
    ['grp1 qa_expert 10', ['grp1', 'qa_expert', '10'], [5, 1]],
    ['grp1 tech_lead 10', ['grp1', 'tech_lead', '10'], [4]],
    ['grp2 developer 10', ['grp2', 'developer', '10'], [3, 4]],
  ])('get-context-packages sess_A %s', (_label, args, expected) => {
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_A', ...args])))).toEqual(expected);
  });

  it('grp1 developer 2 --with-total → {packages:[2,5], total_available:4}', () => {
    const out = ok(cli(p, ['get-context-packages', 'sess_A', 'grp1', 'developer', '2', '--with-total']));
    expect(ids(out.packages)).toEqual([2, 5]);
    expect(out.total_available).toBe(4);
  });

  it('after mark-context-consumed 2 developer 1', () => {
    expect(ok(cli(p, ['mark-context-consumed', '2', 'developer', '1']))).toMatchObject({
      consumer_row_updated: true,
      scope_id: '862375a254fc6ebc6667191093bbea57',
      scope_inserted: true,
    });
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_A', 'grp1', 'developer', '10'])))).toEqual([5, 1, 4]);
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_A', 'grp1', 'developer', '10', '--iteration', '1'])))).toEqual([5, 1, 4]);
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_A', 'grp1', 'developer', '10', '--iteration', '2'])))).toEqual([2, 5, 1, 4]);
  });

  it('after also mark-context-consumed 2 developer 3', () => {
    expect(ok(cli(p, ['mark-context-consumed', '2', 'developer', '3']))).toMatchObject({
      consumer_row_updated: false,
      scope_id: 'b1fa880ceffeaf435c7d79fb64e7694f',
      scope_inserted: true,
    });
    withDb(p, (db) => {
      expect(db.prepare("SELECT iteration FROM context_package_consumers WHERE package_id = 2 AND agent_type = 'developer'").get()).toEqual({
        iteration: 1,
      });
      expect(db.prepare("SELECT iteration FROM consumption_scope WHERE scope_id = 'b1fa880ceffeaf435c7d79fb64e7694f'").get()).toEqual({
        iteration: 3,
      });
    });
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_A', 'grp1', 'developer', '10', '--iteration', '3'])))).toEqual([5, 1, 4]);
  });
});

describe('§9.3 tie vector (fresh database)', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject();
  });
  afterAll(() => p.cleanup());

  it('same-second packages come back in descending id order (F2)', () => {
    ok(cli(p, ['create-session', 'sess_T', 'simple', 'Tie vector']));
    const saved: number[] = [];
    for (const f of ['t1.md', 't2.md', 't3.md']) {
      const rel = writeArtifact(p, 'sess_T', f);
      saved.push(ok(cli(p, ['save-context-package', 'sess_T', 'g1', 'research', rel, 'developer', '["developer"]', 'high', f])).package_id);
    }
    withDb(p, (db) => db.prepare("UPDATE context_packages SET created_at = '2025-12-01 10:00:00' WHERE session_id = 'sess_T'").run());
    expect(ids(ok(cli(p, ['get-context-packages', 'sess_T', 'g1', 'developer', '10'])))).toEqual([...saved].reverse());
  });

  it('same-second reasoning rows come back in descending id order (F10)', () => {
    const saved: number[] = [];
    for (const phase of ['understanding', 'approach', 'completion']) {
      saved.push(ok(cli(p, ['save-reasoning', 'sess_T', 'g1', 'developer', phase, `tie ${phase}`])).log_id);
    }
    withDb(p, (db) => db.prepare("UPDATE orchestration_logs SET timestamp = '2025-12-01 10:00:00' WHERE session_id = 'sess_T'").run());
    expect(ids(ok(cli(p, ['get-reasoning', 'sess_T'])))).toEqual([...saved].reverse());
  });
});

// ============================================================== §9.4 validation and usage

describe('§9.4 validation and usage cases', () => {
  let p: Project;
  beforeAll(() => {
    p = setupOrdering();
    ok(cli(p, ['create-task-group', 'grp1', 'sess_A', 'Group one']));
    writeArtifact(p, 'sess_B', 'a.md');
    writeArtifact(p, 'nosess', 'a.md');
  });
  afterAll(() => p.cleanup());

  const pkg = (over: Partial<Record<'session' | 'group' | 'type' | 'file' | 'producer' | 'consumers' | 'priority' | 'summary', string>> = {}) => [
    'save-context-package',
    over.session ?? 'sess_A',
    over.group ?? 'grp1',
    over.type ?? 'research',
    over.file ?? 'bazinga/artifacts/sess_A/a.md',
    over.producer ?? 'developer',
    over.consumers ?? '["developer"]',
    over.priority ?? 'high',
    over.summary ?? 'x',
  ];

  type ErrCase = [label: string, args: string[], exit: number, code: string, message: string | RegExp];
  const cases: ErrCase[] = [
    ['get-context-packages limit x', ['get-context-packages', 'sess_A', 'grp1', 'developer', 'x'], 1, 'VALIDATION', "limit must be an integer, got 'x'"],
    ['get-context-packages group "a b"', ['get-context-packages', 'sess_A', 'a b', 'developer'], 1, 'VALIDATION', 'group_id must be alphanumeric with underscores/hyphens only'],
    ['get-context-packages group "  "', ['get-context-packages', 'sess_A', '  ', 'developer'], 1, 'VALIDATION', 'group_id cannot be empty'],
    ['save-context-package /etc/passwd', pkg({ file: '/etc/passwd' }), 1, 'VALIDATION', 'Invalid file_path: must be within bazinga/artifacts/sess_A. Got: /etc/passwd'],
    [
      'save-context-package ../sess_B escape',
      pkg({ file: 'bazinga/artifacts/sess_A/../sess_B/a.md' }),
      1,
      'VALIDATION',
      'Invalid file_path: must be within bazinga/artifacts/sess_A. Got: bazinga/artifacts/sess_A/../sess_B/a.md',
    ],
    [
      'save-context-package the artifacts directory itself (F15)',
      pkg({ file: 'bazinga/artifacts/sess_A' }),
      1,
      'VALIDATION',
      'Invalid file_path: must be within bazinga/artifacts/sess_A. Got: bazinga/artifacts/sess_A',
    ],
    ['save-context-package consumer ghost', pkg({ consumers: '["ghost"]' }), 1, 'VALIDATION', `Invalid consumer agent: ghost. Must be one of ${AGENT_LIST}`],
    ['save-context-package consumers []', pkg({ consumers: '[]' }), 1, 'VALIDATION', 'At least one valid consumer agent is required'],
    ['save-context-package consumers ["  "]', pkg({ consumers: '["  "]' }), 1, 'VALIDATION', 'At least one valid consumer agent is required'],
    ['save-context-package consumers not JSON', pkg({ consumers: 'developer' }), 1, 'VALIDATION', /^Invalid consumers_json argument: ./],
    ['save-context-package consumers [""]', pkg({ consumers: '[""]' }), 1, 'VALIDATION', 'Invalid consumers_json argument: All consumer elements must be non-empty strings'],
    ['save-context-package priority urgent', pkg({ priority: 'urgent' }), 1, 'VALIDATION', "Invalid priority: urgent. Must be one of ('low', 'medium', 'high', 'critical')"],
    [
      'save-context-package type notes',
      pkg({ type: 'notes' }),
      1,
      'VALIDATION',
      "Invalid package_type: notes. Must be one of ('research', 'failures', 'decisions', 'handoff', 'investigation')",
    ],
    ['save-context-package producer ghost', pkg({ producer: 'ghost' }), 1, 'VALIDATION', `Invalid producer_agent: ghost. Must be one of ${AGENT_LIST}`],
    ['save-context-package session nosess', pkg({ session: 'nosess', file: 'bazinga/artifacts/nosess/a.md' }), 1, 'NOT_FOUND', 'Session not found: nosess'],
    [
      'save-reasoning phase thinking',
      ['save-reasoning', 'sess_A', 'grp1', 'developer', 'thinking', 'x'],
      1,
      'VALIDATION',
      `Invalid reasoning_phase: thinking. Must be one of: ${PHASE_LIST}`,
    ],
    [
      'save-reasoning --confidence 0.9',
      ['save-reasoning', 'sess_A', 'grp1', 'developer', 'understanding', 'x', '--confidence', '0.9'],
      1,
      'VALIDATION',
      "Invalid confidence: 0.9. Must be one of: ['high', 'low', 'medium']",
    ],
    [
      'save-reasoning without content',
      ['save-reasoning', 'sess_A', 'grp1', 'developer', 'understanding'],
      2,
      'USAGE',
      'Content is required. Provide as 5th argument or use --content-file FILE',
    ],
    ['save-reasoning blank content', ['save-reasoning', 'sess_A', 'grp1', 'developer', 'understanding', '   '], 1, 'VALIDATION', 'content cannot be empty'],
    ['save-reasoning session nosess', ['save-reasoning', 'nosess', 'grp1', 'developer', 'understanding', 'x'], 1, 'NOT_FOUND', 'Session not found: nosess'],
    ...(['global', 'GLOBAL', ''] as const).map(
      (g): ErrCase => [
        `save-consumption group "${g}"`,
        ['save-consumption', 'sess_A', g, 'developer', '0', '1'],
        1,
        'VALIDATION',
        "group_id cannot be 'global' for this operation (must be group-specific)",
      ],
    ),
    [
      'save-consumption agent requirements_engineer',
      ['save-consumption', 'sess_A', 'grp1', 'requirements_engineer', '0', '1'],
      1,
      'VALIDATION',
      `Invalid agent_type: requirements_engineer. Must be one of ${CONSUMPTION_AGENT_LIST}`,
    ],
    ['save-consumption iteration -1', ['save-consumption', 'sess_A', 'grp1', 'developer', '-1', '1'], 1, 'VALIDATION', 'iteration must be >= 0, got -1'],
    ['save-consumption package 999', ['save-consumption', 'sess_A', 'grp1', 'developer', '0', '999'], 1, 'NOT_FOUND', 'Context package not found: 999'],
    [
      'extract-strategies group global',
      ['extract-strategies', 'sess_A', 'global', 'proj1'],
      1,
      'VALIDATION',
      "Invalid group_id: group_id cannot be 'global' for this operation (must be group-specific)",
    ],
    ['query DELETE', ['query', 'DELETE FROM sessions'], 1, 'VALIDATION', 'Only SELECT queries allowed'],
    ['query WITH', ['query', 'WITH x AS (SELECT 1) SELECT * FROM x'], 1, 'VALIDATION', 'Only SELECT queries allowed'],
    ['query unknown column', ['query', 'SELECT nope FROM sessions'], 1, 'SQL_ERROR', 'no such column: nope'],
    ['query two statements', ['query', 'SELECT 1; DELETE FROM strategies'], 1, 'VALIDATION', 'You can only execute one statement at a time.'],
    ['create-session mode weird', ['create-session', 's2', 'weird', 'req'], 1, 'VALIDATION', "Invalid mode: weird. Must be 'simple' or 'parallel'"],
    ['create-session empty id', ['create-session', '', 'simple', 'req'], 1, 'VALIDATION', 'session_id cannot be empty'],
    ['create-session --bogus', ['create-session', 's2', 'simple', 'req', '--bogus', 'x'], 2, 'USAGE', 'Unknown flag or missing value: --bogus'],
    ['update-session-status nosuch', ['update-session-status', 'nosuch', 'failed'], 1, 'NOT_FOUND', 'Session not found: nosuch'],
    [
      'create-task-group global',
      ['create-task-group', 'global', 'sess_A', 'x'],
      1,
      'VALIDATION',
      "'global' is a reserved identifier and cannot be used as a task group ID",
    ],
    [
      'create-task-group status weird',
      ['create-task-group', 'grpX', 'sess_A', 'x', 'weird'],
      1,
      'VALIDATION',
      'Invalid status: weird. Must be one of: pending, in_progress, completed, failed, approved_pending_merge, merging',
    ],
    ['create-task-group --complexity 11', ['create-task-group', 'grpZ', 'sess_A', 'x', '--complexity', '11'], 1, 'VALIDATION', '--complexity must be between 1 and 10'],
    [
      'update-context-references ["a"]',
      ['update-context-references', 'grp1', 'sess_A', '["a"]'],
      1,
      'VALIDATION',
      'Invalid package_ids argument: package_ids must be a JSON array of integers',
    ],
    [
      'update-context-references [true] (F17)',
      ['update-context-references', 'grp1', 'sess_A', '[true]'],
      1,
      'VALIDATION',
      'Invalid package_ids argument: package_ids must be a JSON array of integers',
    ],
    [
      'update-context-references grpNone',
      ['update-context-references', 'grpNone', 'sess_A', '[1]'],
      1,
      'NOT_FOUND',
      "No task group found with id='grpNone' and session_id='sess_A'",
    ],
    [
      'update-error-confidence outcome maybe',
      ['update-error-confidence', 'c396f13a676baff03ef14fad2f32524d28e108484bdee1b2e5c6ae7e2345c8c7', 'proj1', 'maybe'],
      1,
      'VALIDATION',
      "Outcome must be 'success' or 'failure', got 'maybe'",
    ],
    ['update-error-confidence nohash', ['update-error-confidence', 'nohash', 'proj1', 'success'], 1, 'NOT_FOUND', 'Pattern not found'],
    [
      'get-strategies --topic weird (F16)',
      ['get-strategies', 'proj1', '--topic', 'weird'],
      1,
      'VALIDATION',
      "Invalid topic 'weird'. Valid: implementation, architecture, methodology, general",
    ],
    ['update-strategy-helpfulness nope', ['update-strategy-helpfulness', 'nope'], 1, 'NOT_FOUND', 'Strategy not found'],
    ['bogus-cmd', ['bogus-cmd'], 2, 'USAGE', 'Unknown command: bogus-cmd'],
    ['stream-logs x (out of scope)', ['stream-logs', 'x'], 2, 'USAGE', 'Command not supported by this implementation: stream-logs'],
    ['no command at all', [], 2, 'USAGE', /./],
  ];

  it.each(cases)('%s', (_label, args, exit, code, message) => {
    fails(cli(p, args), exit, code, message);
  });

  it('update-session-status sess_A paused → VALIDATION with valid_statuses', () => {
    const r = cli(p, ['update-session-status', 'sess_A', 'paused']);
    fails(r, 1, 'VALIDATION', "Invalid status 'paused'");
    expect(r.error.valid_statuses).toEqual(['active', 'completed', 'failed']);
  });

  it('none of the failing calls above wrote anything', () => {
    withDb(p, (db) => {
      expect(db.prepare('SELECT COUNT(*) AS n FROM sessions').get()).toEqual({ n: 1 });
      expect(db.prepare('SELECT id FROM task_groups ORDER BY id').all()).toEqual([{ id: 'grp1' }]);
      expect(db.prepare('SELECT COUNT(*) AS n FROM consumption_scope').get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT COUNT(*) AS n FROM context_packages WHERE session_id != 'sess_A'").get()).toEqual({ n: 0 });
    });
  });

  it('consumers ["Developer "," developer","qa_expert"] → ok, consumers_created 2', () => {
    const out = ok(cli(p, pkg({ consumers: '["Developer "," developer","qa_expert"]' })));
    expect(out.consumers_created).toBe(2);
    withDb(p, (db) => {
      expect(db.prepare('SELECT agent_type FROM context_package_consumers WHERE package_id = ? ORDER BY id').all(out.package_id)).toEqual([
        { agent_type: 'developer' },
        { agent_type: 'qa_expert' },
      ]);
    });
  });

  it('save-reasoning sess_A "" … → ok, stored with group global (F1)', () => {
    const out = ok(cli(p, ['save-reasoning', 'sess_A', '', 'developer', 'understanding', 'x']));
    expect(out.group_id).toBe('global');
    withDb(p, (db) => {
      expect(db.prepare('SELECT group_id, log_type FROM orchestration_logs WHERE id = ?').get(out.log_id)).toEqual({ group_id: 'global', log_type: 'reasoning' });
    });
  });

  it('query "  select 1 as x" → [{x:1}]', () => {
    expect(ok(cli(p, ['query', '  select 1 as x']))).toEqual([{ x: 1 }]);
  });

  it('query with --param sess_A → one row', () => {
    const out = ok(cli(p, ['query', 'SELECT * FROM sessions WHERE session_id = ?', '--param', 'sess_A']));
    expect(out).toHaveLength(1);
    expect(out[0].session_id).toBe('sess_A');
  });
});

// ======================================================= §9.5 patterns, strategies, reasoning

const HASH_C396 = 'c396f13a676baff03ef14fad2f32524d28e108484bdee1b2e5c6ae7e2345c8c7';

describe('§9.5 error patterns (fresh sess_A / proj1)', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject();
    ok(cli(p, ['create-session', 'sess_A', 'simple', 'Learning vectors', '--metadata', '{"project_id":"proj1"}']));
  });
  afterAll(() => p.cleanup());

  const patternRow = (hash: string) =>
    withDb(p, (db) => db.prepare("SELECT * FROM error_patterns WHERE pattern_hash = ? AND project_id = 'proj1'").get(hash)) as any;

  it('1. save → created, c396f13a…, confidence 0.5, not redacted', () => {
    expect(
      ok(
        cli(p, [
          'save-error-pattern',
          'proj1',
          'ModuleNotFoundError',
          "Cannot find module '@/utils' at /home/u/app/src/x.ts line 12",
          'Fix tsconfig paths',
          '--lang',
          'typescript',
        ]),
      ),
    ).toEqual({ success: true, pattern_hash: HASH_C396, operation: 'created', occurrences: 1, confidence: 0.5, redacted: false });
    expect(patternRow(HASH_C396)).toMatchObject({ solution: 'Fix tsconfig paths', confidence: 0.5, occurrences: 1, lang: 'typescript', ttl_days: 90 });
  });

  it('2. save again with another path → updated, occurrences 2, longer solution kept', () => {
    expect(
      ok(
        cli(p, [
          'save-error-pattern',
          'proj1',
          'ModuleNotFoundError',
          "Cannot find module '@/lib' at /srv/other/x.ts line 99",
          'Fix tsconfig paths and babel alias',
        ]),
      ),
    ).toEqual({ success: true, pattern_hash: HASH_C396, operation: 'updated', occurrences: 2, redacted: false });
    expect(patternRow(HASH_C396)).toMatchObject({ solution: 'Fix tsconfig paths and babel alias', occurrences: 2, lang: 'typescript', confidence: 0.5 });
  });

  it('3. stored signature_json is Python-style JSON', () => {
    expect(patternRow(HASH_C396).signature_json).toBe(
      `{"error_type": "ModuleNotFoundError", "message_pattern": "Cannot find module '...' at .../x.ts line N", "context_hints": [], "stack_pattern": []}`,
    );
  });

  it('confidence sequence: success ×3, failure ×4, success ×2 (§7.2 port column)', () => {
    const steps: [string, number, number, boolean][] = [
      ['success', 0.5, 0.6, true],
      ['success', 0.6, 0.7, true],
      ['success', 0.7, 0.8, true],
      ['failure', 0.8, 0.6, true],
      ['failure', 0.6, 0.4, true],
      ['failure', 0.4, 0.2, false],
      ['failure', 0.2, 0.1, false],
      ['success', 0.1, 0.2, false],
      ['success', 0.2, 0.3, true],
    ];
    for (const [outcome, previous, next, injectable] of steps) {
      expect(ok(cli(p, ['update-error-confidence', HASH_C396, 'proj1', outcome]))).toEqual({
        success: true,
        pattern_hash: HASH_C396,
        previous_confidence: previous,
        new_confidence: next,
        injectable,
      });
    }
    expect(patternRow(HASH_C396).confidence).toBe(0.3);
  });

  it('redaction in a pattern: the solution is redacted, the message without separator is not', () => {
    const hash = 'f772f8b1256da6fde1adf857ab8fbc52e0bcdd3aa23ae04ff0c3885fff3e4fc4';
    expect(
      ok(cli(p, ['save-error-pattern', 'proj1', 'AuthError', 'login failed with password hunter2', 'password: abc123 was wrong'])),
    ).toMatchObject({ pattern_hash: hash, operation: 'created', redacted: true });
    const row = patternRow(hash);
    expect(row.solution).toBe('password: [REDACTED:password] was wrong');
    expect(JSON.parse(row.signature_json).message_pattern).toBe('login failed with password hunter2');
  });

  it('redaction in a pattern: an Anthropic key in the message', () => {
    const out = ok(cli(p, ['save-error-pattern', 'proj1', 'KeyError', 'bad key sk-ant-abcdefghijklmnopqrstuvwxyz in config', 'use env var']));
    expect(out).toMatchObject({ operation: 'created', redacted: true });
    const row = patternRow(out.pattern_hash);
    expect(JSON.parse(row.signature_json).message_pattern).toBe('bad key [REDACTED:anthropic_key] in config');
    expect(row.signature_json).not.toContain('sk-ant-');
  });

  it('§7.1 AuthError with a secret at the end of the message → port redacts field by field (F6)', () => {
    const hash = '87f5c6f5fcde7400643a6ab54a1bf447310278e5b819c276d1fe602630381273';
    expect(ok(cli(p, ['save-error-pattern', 'proj1', 'AuthError', 'login failed password=hunter2', 'rotate it']))).toMatchObject({
      pattern_hash: hash,
      operation: 'created',
      redacted: true,
    });
    expect(patternRow(hash).signature_json).toBe(
      '{"error_type": "AuthError", "message_pattern": "login failed password=[REDACTED:password]", "context_hints": [], "stack_pattern": []}',
    );
  });

  it('§7.1 hints example through the CLI: hints stored in the given order, hashed sorted', () => {
    const hash = '788eb0abeccd8ef713e87d30d1b6a1dbb7fe8a855f0a44a44ab3523541a47960';
    expect(
      ok(cli(p, ['save-error-pattern', 'proj1', 'ModuleNotFoundError', "Cannot find module '@/x'", 'alias', '--context_hints', '["tsconfig","import"]'])),
    ).toMatchObject({ pattern_hash: hash, operation: 'created' });
    expect(JSON.parse(patternRow(hash).signature_json).context_hints).toEqual(['tsconfig', 'import']);
  });
});

describe('§9.5 strategies and §7.3 ids (fresh project proj1)', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject();
  });
  afterAll(() => p.cleanup());
  const ID = 'proj1_general_f378e270eb910c01';

  it('save-strategy proj1 weird "Use small PRs" twice → created then updated, topic general', () => {
    expect(ok(cli(p, ['save-strategy', 'proj1', 'weird', 'Use small PRs']))).toEqual({
      success: true,
      strategy_id: ID,
      project_id: 'proj1',
      topic: 'general',
      operation: 'created',
      redacted: false,
    });
    expect(ok(cli(p, ['save-strategy', 'proj1', 'weird', 'Use small PRs']))).toMatchObject({
      strategy_id: ID,
      topic: 'general',
      operation: 'updated',
    });
    const list = ok(cli(p, ['get-strategies', 'proj1']));
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ strategy_id: ID, topic: 'general', insight: 'Use small PRs', helpfulness: 2, lang: null, framework: null });
  });

  it.each<[string, number, number]>([
    ['5', 2, 7],
    ['-3', 7, 7],
    ['500', 7, 107],
  ])('update-strategy-helpfulness %s → previous %d, new %d', (inc, previous, next) => {
    expect(ok(cli(p, ['update-strategy-helpfulness', ID, inc]))).toEqual({
      success: true,
      strategy_id: ID,
      previous_helpfulness: previous,
      new_helpfulness: next,
    });
  });

  it('--strategy_id custom_1 is used as given', () => {
    expect(ok(cli(p, ['save-strategy', 'proj1', 'general', 'Custom insight', '--strategy_id', 'custom_1']))).toMatchObject({
      strategy_id: 'custom_1',
      operation: 'created',
    });
    withDb(p, (db) => {
      expect(db.prepare("SELECT project_id, topic, insight, helpfulness FROM strategies WHERE strategy_id = 'custom_1'").get()).toEqual({
        project_id: 'proj1',
        topic: 'general',
        insight: 'Custom insight',
        helpfulness: 1,
      });
    });
  });

  it('§7.3: the same insight under another topic gets another id', () => {
    expect(ok(cli(p, ['save-strategy', 'proj1', 'implementation', 'Use small PRs'])).strategy_id).toBe('proj1_implementation_f378e270eb910c01');
  });

  it('§7.3: the insight is redacted before hashing and storing (F6)', () => {
    const out = ok(cli(p, ['save-strategy', 'proj1', 'methodology', 'Rotate token=abcdefghijklmnopqrstuvwxyz012345 weekly']));
    expect(out).toMatchObject({ strategy_id: 'proj1_methodology_d7f635a09ba8f973', topic: 'methodology', redacted: true });
    withDb(p, (db) => {
      expect(db.prepare("SELECT insight FROM strategies WHERE strategy_id = 'proj1_methodology_d7f635a09ba8f973'").get()).toEqual({
        insight: 'Rotate token=[REDACTED:token] weekly',
      });
    });
  });

  it.each<[string, string, string, string]>([
    ['proj1', 'general', 'Use small PRs', 'proj1_general_f378e270eb910c01'],
    ['proj1', 'implementation', 'Use small PRs', 'proj1_implementation_f378e270eb910c01'],
    ['proj1', 'methodology', 'Rotate token=REDACTED weekly', 'proj1_methodology_2e69eb2e1905b48c'],
    ['proj1', 'methodology', 'Rotate token=[REDACTED:token] weekly', 'proj1_methodology_d7f635a09ba8f973'],
    ['proj1', 'methodology', 'Rotate token=abcdefghijklmnopqrstuvwxyz012345 weekly', 'proj1_methodology_4a289c6eadf45982'],
  ])('§7.3 strategyId(%s, %s, %j) = %s', (project, topic, insight, expected) => {
    expect(strategyId(project, topic, insight)).toBe(expected);
  });
});

describe('§9.5 reasoning redaction and references (fresh sess_A)', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject();
    ok(cli(p, ['create-session', 'sess_A', 'simple', 'Reasoning vectors']));
  });
  afterAll(() => p.cleanup());

  const logRow = (id: number) => withDb(p, (db) => db.prepare('SELECT * FROM orchestration_logs WHERE id = ?').get(id)) as any;

  it('content is redacted, references stored Python-style and returned parsed', () => {
    const out = ok(
      cli(p, [
        'save-reasoning',
        'sess_A',
        'grp1',
        'developer',
        'understanding',
        'Plan: password=hunter2secret in env',
        '--iteration',
        '1',
        '--confidence',
        'high',
        '--references',
        '["src/a.ts"]',
      ]),
    );
    expect(out).toMatchObject({
      success: true,
      session_id: 'sess_A',
      group_id: 'grp1',
      agent_type: 'developer',
      reasoning_phase: 'understanding',
      content_length: 41,
      redacted: true,
    });
    const row = logRow(out.log_id);
    expect(row).toMatchObject({
      content: 'Plan: password=[REDACTED:password] in env',
      references_json: '["src/a.ts"]',
      redacted: 1,
      iteration: 1,
      confidence_level: 'high',
      log_type: 'reasoning',
      reasoning_phase: 'understanding',
    });
    const listed = ok(cli(p, ['get-reasoning', 'sess_A', '--group_id', 'grp1']));
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: out.log_id, references: ['src/a.ts'], content: 'Plan: password=[REDACTED:password] in env', redacted: true });
  });

  it.each<[string, string | null]>([
    ['["a b","ü"]', '["a b", "\\u00fc"]'],
    ['[]', null],
  ])('--references %s is stored as %s', (refs, stored) => {
    const out = ok(cli(p, ['save-reasoning', 'sess_A', 'grp2', 'developer', 'approach', 'refs', '--references', refs]));
    expect(logRow(out.log_id).references_json).toBe(stored);
  });
});

// ====================================================================== §9.5 redaction table (F22)

/**
 * The original's redaction inputs (§6.1, §9.5), as the full engine stores them (F22): markers
 * name the rule, and the cases the original missed (`my_api_key=`, `client_secret=`, connection
 * strings, a bare bearer token, a quoted value with blanks) are caught.
 */
const REDACTION_TABLE: [input: string, output: string, redacted: boolean][] = [
  ['api_key=abcdefghijklmnopqrstuvwxyz123', 'api_key=[REDACTED:api_key]', true],
  ["APIKEY: 'abcdefghijklmnopqrstuvwxyz'", "APIKEY: '[REDACTED:api_key]'", true],
  ['pwd=x', 'pwd=[REDACTED:password]', true],
  ['token=abcdefghij.klmnopqrstu', 'token=[REDACTED:token]', true],
  ['key sk-proj-abcdefghijklmnopqrstuvwx end', 'key [REDACTED:openai_key] end', true],
  ['gh ghp_abcdefghijklmnopqrstuvwxyz0123456789 x', 'gh [REDACTED:github_token] x', true],
  ['github_pat_11ABCDEFG0123456789_abcdefghij', '[REDACTED:github_token]', true],
  ['id AKIAABCDEFGHIJKLMNOP here', 'id [REDACTED:aws_access_key_id] here', true],
  ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'aws_secret_access_key = [REDACTED:secret]', true],
  ['-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----', '[REDACTED:private_key]', true],
  ['slack xoxb-1234567890-abcdef', 'slack [REDACTED:slack_token]', true],
  ['pk_test_abcdefghij12 and sk_live_abcdefghij12', '[REDACTED:stripe_key] and [REDACTED:stripe_key]', true],
  ['Authorization: Bearer abcdefghijkl.mnop', 'Authorization: Bearer [REDACTED:authorization]', true],
  ['Use api_key=sk_live_ABCDEFGHIJKLMNOPQRSTUV1234 for calls', 'Use api_key=[REDACTED:stripe_key] for calls', true],
  ['DB at postgres://admin:pw@db.example.com:5432/x', 'DB at postgres://admin:[REDACTED:url_password]@db.example.com:5432/x', true],
  ['password=REDACTED', 'password=REDACTED', true],
  // §6.1 consequences: what the original misses, the engine catches
  ['my_api_key=abcdefghijklmnopqrstuvwxyz123', 'my_api_key=[REDACTED:api_key]', true],
  ['client_secret=hunter2', 'client_secret=[REDACTED:secret]', true],
  ['access_token=abcdefghijklmnopqrstuvwxyz', 'access_token=[REDACTED:token]', true],
  ['api_key=short123', 'api_key=[REDACTED:api_key]', true],
  ['Bearer abcdefghijklmnopqrstuvwxyz', 'Bearer [REDACTED:bearer]', true],
  ['PASSWORD="hunter2 and more"', 'PASSWORD="[REDACTED:password]"', true],
  [`aws_secret_access_key=${'A'.repeat(44)}`, 'aws_secret_access_key=[REDACTED:secret]', true],
  ['k sk-ant-abcdefghijklmnopqrstuvwxyz end', 'k [REDACTED:anthropic_key] end', true],
  // §6.4: a key inside a longer Unicode word is not a key
  ['épassword=x', 'épassword=x', false],
  ['-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----', '[REDACTED:private_key]', true],
];

/** True when `output` equals `input` except that each marker in it stands for some removed text. */
function differsOnlyAtMarkers(input: string, output: string): boolean {
  const parts = output.split(/\[REDACTED:[a-z0-9_]+\]/);
  const pattern = parts.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]+?');
  return new RegExp(`^${pattern}$`).test(input);
}

describe('§9.5 redaction table', () => {
  it.each(REDACTION_TABLE)('redact(%j) → %j (redacted %s)', (input, output, redacted) => {
    const r = redact(input);
    expect({ text: r.text, redacted: r.redacted }).toEqual({ text: output, redacted });
  });

  it.each(REDACTION_TABLE)('differential: %j differs from what it stores only where a secret was removed', (input, output) => {
    expect(differsOnlyAtMarkers(input, output)).toBe(true);
  });

  it('the differential check can fail', () => {
    expect(differsOnlyAtMarkers('password=x and more', 'password=[REDACTED:password] and less')).toBe(false);
    expect(differsOnlyAtMarkers('a b', 'a [REDACTED:x] b')).toBe(false);
  });

  describe('through the CLI (save-reasoning stores the redacted content)', () => {
    let p: Project;
    beforeAll(() => {
      p = makeProject();
      ok(cli(p, ['create-session', 'sess_R', 'simple', 'Redaction through the CLI']));
    });
    afterAll(() => p.cleanup());

    const viaCli = REDACTION_TABLE.filter(([input]) =>
      ['-----BEGIN RSA', 'Use api_key=', 'DB at postgres', 'password=REDACTED'].some((s) => input.startsWith(s)),
    );
    it('selected the four rows', () => expect(viaCli).toHaveLength(4));

    it.each(viaCli)('save-reasoning content %j → %j (redacted %s)', (input, output, redacted) => {
      const out = ok(cli(p, ['save-reasoning', 'sess_R', 'grp1', 'developer', 'risks', input]));
      expect(out.redacted).toBe(redacted);
      expect(out.content_length).toBe(Array.from(output).length);
      withDb(p, (db) => {
        expect(db.prepare('SELECT content, redacted FROM orchestration_logs WHERE id = ?').get(out.log_id)).toEqual({
          content: output,
          redacted: redacted ? 1 : 0,
        });
      });
    });
  });
});

// ============================================================== §7.1 hashes, §7.4 scope ids

describe('§7.1 worked hash examples', () => {
  it.each<[string, string, string[], string, string]>([
    [
      'ModuleNotFoundError',
      "Cannot find module '@/utils' at /home/u/app/src/x.ts line 12",
      [],
      "Cannot find module '...' at .../x.ts line N",
      HASH_C396,
    ],
    [
      'ModuleNotFound',
      "Cannot find module '@/utils' at /home/dev/app/src/x.ts line 12",
      [],
      "Cannot find module '...' at .../x.ts line N",
      '62e443afeef6f285072d38c941350438773ba502413373596f0daa629eab30aa',
    ],
    [
      'ModuleNotFoundError',
      "Cannot find module '@/x'",
      ['tsconfig', 'import'],
      "Cannot find module '...'",
      '788eb0abeccd8ef713e87d30d1b6a1dbb7fe8a855f0a44a44ab3523541a47960',
    ],
    ['TSError', 'Error in C:\\Users\\me\\proj\\x.ts line 3', [], 'Error in ...\\x.ts line N', '1b51d30be0a7d85a'],
    ['E', 'see http://example.com/a/b/c.html now', [], 'see http:.../c.html now', 'c84328a4d365f0a9'],
    ['SyntaxError', 'Unexpected token "foo" in JSON at position 12', [], 'Unexpected token "..." in JSON at position 12', '3ac3335395230bce'],
    [
      'AuthError',
      'login failed password=hunter2',
      [],
      'login failed password=[REDACTED:password]',
      '87f5c6f5fcde7400643a6ab54a1bf447310278e5b819c276d1fe602630381273',
    ],
  ])('%s / %j', (errorType, message, hints, pattern, hash) => {
    const type = redactText(normaliseErrorType(errorType));
    const messagePattern = redactText(normaliseErrorMessage(message));
    expect(messagePattern).toBe(pattern);
    const digest = errorPatternHash({ error_type: type, message_pattern: messagePattern, context_hints: hints, stack_pattern: [] });
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest.startsWith(hash)).toBe(true);
  });

  it('the fixture second pattern (y.ts) has its own hash', () => {
    const messagePattern = normaliseErrorMessage("Cannot find module '@/utils' at /home/dev/app/src/y.ts line 12");
    expect(messagePattern).toBe("Cannot find module '...' at .../y.ts line N");
    expect(errorPatternHash({ error_type: 'ModuleNotFound', message_pattern: messagePattern, context_hints: [], stack_pattern: [] })).toMatch(
      /^af1cab196771fe1f/,
    );
  });

  it('stack_pattern is not part of the hash; a quoted string of 51+ characters is kept', () => {
    const base = { error_type: 'E', message_pattern: 'm', context_hints: ['b', 'a'] };
    expect(errorPatternHash({ ...base, stack_pattern: [] })).toBe(errorPatternHash({ ...base, stack_pattern: ['frame', 1] }));
    const long = `'${'q'.repeat(51)}'`;
    expect(normaliseErrorMessage(`bad ${long}`)).toBe(`bad ${long}`);
    expect(normaliseErrorType('')).toBe('Unknown');
    expect(normaliseErrorType('   ')).toBe('');
  });
});

describe('§7.4 consumption scope_id examples', () => {
  it.each([
    ['sess_A:grp1:developer:0:1', 'f63d739de17d9e33154defda3df569e5'],
    ['bazinga_20251201_090000:AUTH:developer:1:1', 'bc704573eb28d540eaf6f6dd16e17c92'],
    ['bazinga_20251201_090000:AUTH:developer:2:1', '3d4d2c1ea31bb18e48effdb40321c5f7'],
    ['bazinga_20251201_090000:AUTH:developer:1:2', '1da6142164592192541c18d4f2f89360'],
    ['bazinga_20251201_090000:global:developer:1:4', '7879f1358ec16864444ef6a81b17596a'],
    ['sess_A:grp1:developer:1:2', '862375a254fc6ebc6667191093bbea57'],
    ['sess_A:grp1:developer:3:2', 'b1fa880ceffeaf435c7d79fb64e7694f'],
    ['sess_A:global:developer:1:4', 'a895133afcb31cd103a6829a66366954'],
  ])('%s → %s', (input, expected) => {
    const [session, group, agent, iteration, pkg] = input.split(':') as [string, string, string, string, string];
    expect(consumptionScopeId(session, group, agent, Number(iteration), Number(pkg))).toBe(expected);
  });

  it('the CLI writes the same scope_id (save-consumption on a fresh database)', () => {
    const p = makeProject();
    try {
      ok(cli(p, ['create-session', 'sess_A', 'simple', 'scope id']));
      const rel = writeArtifact(p, 'sess_A', 'a.md');
      expect(ok(cli(p, ['save-context-package', 'sess_A', 'grp1', 'research', rel, 'developer', '["developer"]', 'high', 's'])).package_id).toBe(1);
      expect(ok(cli(p, ['save-consumption', 'sess_A', 'grp1', ' Developer ', '0', '1']))).toMatchObject({
        inserted: true,
        agent_type: 'developer',
        scope_id: 'f63d739de17d9e33154defda3df569e5',
      });
      expect(fs.existsSync(path.join(p.root, 'bazinga', 'bazinga.db'))).toBe(true);
    } finally {
      p.cleanup();
    }
  });
});
