/**
 * A database an earlier release re-keyed gets the original's keys back (schema
 * v12, patternRestore.ts). The file is built by hand in the shape that release left (real SQLite:
 * error patterns keyed by their fault with a `tool` in their signature, this product's references
 * naming those keys, ca_schema 11), then opened by a real bazinga-db process that writes: the rows
 * get the hash the original computes over their signature in the original's shape, rows that meet
 * on one key are merged (one kept, named in the open's one notice line), this product's own
 * references move to fault keys, odd rows are left as they are, and a second open changes nothing.
 */
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorPatternHash, faultKeyOf, type ErrorSignature } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import { BAZINGA_DB_SCRIPT, REPO_ROOT, downgradeExtensionsToV11, makeProject, runScript, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const SESSION = 'bazinga_20260101_100000';
/** A hash as the earlier release made them (any 64 hex digits: nothing recomputes them). */
const rekeyed = (name: string) => crypto.createHash('sha256').update(`rekeyed:${name}`).digest('hex');
const X = { r1: rekeyed('r1'), r2: rekeyed('r2'), r3: rekeyed('r3'), r4: rekeyed('r4'), r5: rekeyed('r5') };

const MODULE: ErrorSignature = { error_type: 'ModuleNotFound', message_pattern: "Cannot find module '...' line N", context_hints: [], stack_pattern: [] };
const TOKEN: ErrorSignature = { error_type: 'TypeError', message_pattern: "Cannot read properties of undefined (reading '...')", context_hints: ['auth'], stack_pattern: ['a.ts:3'] };
const TIMEOUT: ErrorSignature = { error_type: 'JestTimeout', message_pattern: 'Exceeded timeout of Nms for a test', context_hints: [], stack_pattern: [] };
/** The signature as the earlier release wrote it: the original's keys, then `tool`. */
const withTool = (sig: ErrorSignature, tool: string) => pyJsonDumps({ ...sig, tool });

/** Rows that are no signature the restore could give a key to: left as they are. */
const ODD = [
  { name: 'not JSON', hash: rekeyed('odd1'), signature: '{"error_type": "X", "tool": "te' },
  { name: 'JSON, not an object', hash: rekeyed('odd2'), signature: '["tool"]' },
  { name: 'a type that is not a string', hash: rekeyed('odd3'), signature: '{"error_type": 1, "message_pattern": "m", "tool": "text"}' },
  { name: 'hints that are not strings', hash: rekeyed('odd4'), signature: '{"error_type": "E", "message_pattern": "m", "context_hints": [1], "stack_pattern": [], "tool": "text"}' },
  { name: 'JSON with `tool` and no message', hash: rekeyed('odd5'), signature: '{"error_type": "E", "tool": "text"}' },
];

let p: Project;
const open = () => new Database(p.dbPath);
const all = (sql: string, ...params: unknown[]) => {
  const db = open();
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
};

/** The file as a v11 writer left it (see the header). */
function buildRekeyedFile(): void {
  expect(bazingaDbIn(p, ['create-session', SESSION, 'simple', 'Shop', '--metadata', JSON.stringify({ project_id: 'acme' })]).code).toBe(0);
  expect(bazingaDbIn(p, ['create-task-group', 'G1', SESSION, 'Cart']).code).toBe(0);
  const db = open();
  downgradeExtensionsToV11(db);
  const pattern = db.prepare(
    `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // r1 and r2: one key once restored (their tools differ); r1 the more confident.
  pattern.run(X.r1, 'acme', withTool(MODULE, 'text'), 'Add the @ alias', 0.8, 2, null, '2026-01-01 10:00:00', '2025-12-01 10:00:00', 90);
  pattern.run(X.r2, 'acme', withTool(MODULE, 'tsc'), 'Restart tsc', 0.6, 3, 'typescript', '2026-01-03 10:00:00', '2025-11-01 10:00:00', null);
  // r3 meets a row of BAZINGA's own, already under the original's key: that row is kept.
  pattern.run(errorPatternHash(TOKEN), 'acme', pyJsonDumps(TOKEN), 'Guard the token', 0.5, 1, null, '2026-01-02 10:00:00', '2026-01-02 10:00:00', 90);
  pattern.run(X.r3, 'acme', withTool(TOKEN, 'node'), 'Check the token first', 0.9, 4, null, '2026-01-04 10:00:00', '2025-12-15 10:00:00', 30);
  // r4: the same signature as r1 in another project; r5: alone, with no TTL.
  pattern.run(X.r4, 'other', withTool(MODULE, 'text'), 'Add the alias', 0.7, 1, null, '2026-01-01 10:00:00', '2026-01-01 10:00:00', 90);
  pattern.run(X.r5, 'acme', withTool(TIMEOUT, 'vitest'), 'Reset fake timers', 0.7, 1, null, '2026-01-01 10:00:00', '2026-01-01 10:00:00', null);
  for (const o of ODD) pattern.run(o.hash, 'acme', o.signature, `odd ${o.name}`, 0.7, 1, null, '2026-01-01 10:00:00', '2026-01-01 10:00:00', 90);
  // What this product said of them by those keys.
  const outcome = db.prepare("INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt) VALUES ('acme', 'error_pattern', ?, ?, '2026-01-05', ?, ?)");
  outcome.run(X.r1, SESSION, 2, 1);
  outcome.run(X.r2, SESSION, 1, 0);
  db.prepare(
    "INSERT INTO ca_captures (project_id, session_id, group_id, failure_ref, outcome, pattern_hash, operation, created_at) VALUES ('acme', ?, 'G1', 'package:1', 'passed', ?, 'created', '2026-01-05T10:00:00Z')",
  ).run(SESSION, X.r3);
  db.prepare(
    `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, duration_ms, version, detail, settled)
     VALUES ('2026-01-05T10:00:00Z', ?, 'G1', 'developer', 0, 'assemble', 'recorded', 1, '0.1.0', ?, 1)`,
  ).run(SESSION, JSON.stringify({ shown: [{ kind: 'error_pattern', id: X.r1 }, { kind: 'error_pattern', id: X.r3 }], left_out: [{ kind: 'error_pattern', id: X.r2, reason: 'limit' }] }));
  db.close();
}

beforeEach(() => {
  p = makeProject('ca-restore-');
  buildRekeyedFile();
});
afterEach(() => p.cleanup());

/** A write through a real process, notices on (no --quiet). */
const write = () => runScript(BAZINGA_DB_SCRIPT, ['--db', p.dbPath, '--project-root', p.root, 'save-strategy', 'acme', 'general', 'Keep retries idempotent']);

describe('a database an earlier release re-keyed gets the original hashes back', () => {
  const MODULE_HASH = errorPatternHash(MODULE);
  const TOKEN_HASH = errorPatternHash(TOKEN);
  const TIMEOUT_HASH = errorPatternHash(TIMEOUT);

  it('the first writer restores every row it can, merges the rows that meet, and says which it kept in one line', () => {
    const r = write();
    expect(r.code, r.stderr).toBe(0);
    // The whole of stderr: the one line.
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `✓ Error patterns: 5 given back the key BAZINGA's own tool computes; merged 2 rows of project acme into ${MODULE_HASH}, 2 rows of project acme into ${TOKEN_HASH} (kept: the one already under that key, else the most confident)`,
    ]);
    const rows = all('SELECT pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days FROM error_patterns ORDER BY rowid');
    expect(rows.slice(0, 4)).toEqual([
      // r1 kept (the more confident), r2's occurrences and dates added; its signature the original's shape.
      { pattern_hash: MODULE_HASH, project_id: 'acme', signature_json: pyJsonDumps(MODULE), solution: 'Add the @ alias', confidence: 0.8, occurrences: 5, lang: 'typescript', last_seen: '2026-01-03 10:00:00', created_at: '2025-11-01 10:00:00', ttl_days: 90 },
      // BAZINGA's own row under the key kept as it was, r3's occurrences added.
      { pattern_hash: TOKEN_HASH, project_id: 'acme', signature_json: pyJsonDumps(TOKEN), solution: 'Guard the token', confidence: 0.5, occurrences: 5, lang: null, last_seen: '2026-01-04 10:00:00', created_at: '2025-12-15 10:00:00', ttl_days: 90 },
      { pattern_hash: MODULE_HASH, project_id: 'other', signature_json: pyJsonDumps(MODULE), solution: 'Add the alias', confidence: 0.7, occurrences: 1, lang: null, last_seen: '2026-01-01 10:00:00', created_at: '2026-01-01 10:00:00', ttl_days: 90 },
      { pattern_hash: TIMEOUT_HASH, project_id: 'acme', signature_json: pyJsonDumps(TIMEOUT), solution: 'Reset fake timers', confidence: 0.7, occurrences: 1, lang: null, last_seen: '2026-01-01 10:00:00', created_at: '2026-01-01 10:00:00', ttl_days: null },
    ]);
    expect(pyJsonDumps(MODULE)).toBe(`{"error_type": "ModuleNotFound", "message_pattern": "Cannot find module '...' line N", "context_hints": [], "stack_pattern": []}`);
    // Every row has its fault key now.
    expect(all('SELECT COUNT(*) AS n FROM ca_pattern_faults')).toEqual([{ n: rows.length }]);
  });

  it.each(ODD)('a row whose signature is $name is left as it is', ({ hash, signature, name }) => {
    expect(write().code).toBe(0);
    expect(all('SELECT signature_json, solution FROM error_patterns WHERE pattern_hash = ?', hash)).toEqual([{ signature_json: signature, solution: `odd ${name}` }]);
  });

  it("this product's references name fault keys: verdicts (merged rows add up), the capture ledger, the ids in records", () => {
    expect(write().code).toBe(0);
    const moduleFault = faultKeyOf(MODULE).fault_hash;
    const tokenFault = faultKeyOf(TOKEN).fault_hash;
    expect(all('SELECT item_id, helped, hurt FROM ca_outcomes')).toEqual([{ item_id: moduleFault, helped: 3, hurt: 1 }]);
    expect(all('SELECT fault_hash FROM ca_captures')).toEqual([{ fault_hash: tokenFault }]);
    const detail = JSON.parse(String(all('SELECT detail FROM ca_assemblies')[0]?.detail));
    expect(detail.shown.map((s: { id: string }) => s.id)).toEqual([moduleFault, tokenFault]);
    expect(detail.left_out[0].id).toBe(moduleFault);
  });

  it('both tools find a restored row by its hash; a second writer changes nothing and says nothing', () => {
    expect(write().code).toBe(0);
    const dump = () => all('SELECT rowid, * FROM error_patterns ORDER BY rowid');
    const before = dump();
    const again = write();
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('Error patterns');
    expect(dump()).toEqual(before);
    // The hash the original computes for the restored signature is the row's: update-error-confidence finds it.
    expect(bazingaDbIn(p, ['update-error-confidence', errorPatternHash(MODULE), 'acme', 'success']).json).toMatchObject({ previous_confidence: 0.8, new_confidence: 0.9 });
  });

  it('when a recording assembly is the first writer, it restores them and says so in its one line', () => {
    const io = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G1', '--agent', 'developer', '--now', '2026-01-06T10:00:00Z'], { cwd: REPO_ROOT });
    expect(runAssembler({ name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' }, io.io)).toBe(0);
    expect(io.err().trimEnd().split('\n').filter((l) => l.includes('Error patterns'))).toEqual([expect.stringMatching(/^⚠ context-assembler: Error patterns: 5 given back .* merged 2 rows of project acme into [0-9a-f]{64}, 2 rows of project acme into [0-9a-f]{64} /)]);
    expect(all('SELECT COUNT(*) AS n FROM error_patterns WHERE pattern_hash = ?', errorPatternHash(MODULE))).toEqual([{ n: 2 }]);
    // The block shows the restored rows, one per fault.
    expect(io.out()).toContain(`"ModuleNotFound: Cannot find module '...' line N"`);
  });

  it('--quiet keeps the notice off stderr; the restore happens all the same', () => {
    const r = runScript(BAZINGA_DB_SCRIPT, ['--quiet', '--db', p.dbPath, '--project-root', p.root, 'save-strategy', 'acme', 'general', 'x']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(all('SELECT project_id FROM error_patterns WHERE pattern_hash = ? ORDER BY rowid', errorPatternHash(MODULE))).toEqual([{ project_id: 'acme' }, { project_id: 'other' }]);
  });

  it('a read (no writer) leaves the re-keyed file as it is', () => {
    const dump = () => all('SELECT rowid, * FROM error_patterns ORDER BY rowid');
    const before = dump();
    const r = bazingaDbIn(p, ['get-error-patterns', 'acme', '--min_confidence', '0', '--limit', '20']);
    expect(r.code).toBe(0);
    expect(r.json.map((x: { pattern_hash: string }) => x.pattern_hash)).toContain(X.r1);
    expect(dump()).toEqual(before);
  });
});
