/**
 * A fault signs once, also in a database an earlier signer keyed (schema v14, patternRestore.ts
 * resignPatternKeys). That signer kept a number ending a sentence, so `Expected 3 arguments, but
 * got 2.` and `Expected 4 arguments, but got 1.` (one fault, TS2554) were stored under two fault
 * keys. The file is built here in the shape it left (real SQLite: rows saved through bazinga-db,
 * their keys, verdicts, ledger and record naming the keys that signer computed, ca_schema 13);
 * the next writer signs the keys again, merges what named the two into the one, and a second
 * write changes nothing. BAZINGA's own keys (pattern_hash) are not touched.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorPatternOf, faultPatternHash } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { CA_SCHEMA_VERSION } from '../skills/bazinga-db/scripts/lib/schema.ts';
import { ASSEMBLE } from '../skills/context-assembler/scripts/lib/main.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import type { AssemblyDoc } from '../skills/context-assembler/scripts/lib/contract.ts';
import { BAZINGA_DB_SCRIPT, makeProject, runScript, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const SESSION = 'bazinga_20260101_100000';
const GOT_2 = 'Expected 3 arguments, but got 2.';
const GOT_1 = 'Expected 4 arguments, but got 1.';
/** The keys the earlier signer stored: its message pattern kept the number before the full stop. */
const OLD = { got2: faultPatternHash({ error_type: 'TS2554', message_pattern: 'Expected N arguments, but got 2.' }), got1: faultPatternHash({ error_type: 'TS2554', message_pattern: 'Expected N arguments, but got 1.' }) };

let p: Project;
const query = (sql: string, ...params: unknown[]) => {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
};

/** The file as a writer with the earlier signer left it. */
function buildFile(): { hash2: string; hash1: string } {
  const ok = (args: string[]) => {
    const r = bazingaDbIn(p, args);
    expect(r.code, r.stderr).toBe(0);
    return r.json;
  };
  ok(['create-session', SESSION, 'simple', 'Shop', '--metadata', JSON.stringify({ project_id: 'acme' })]);
  ok(['create-task-group', 'CART', SESSION, 'Cart']);
  const hash2 = ok(['save-error-pattern', 'acme', 'TS2554', GOT_2, 'Pass the discount too']).pattern_hash as string;
  const hash1 = ok(['save-error-pattern', 'acme', 'TS2554', GOT_1, 'Pass every argument']).pattern_hash as string;
  for (const h of [hash2, hash2, hash1, hash1]) ok(['update-error-confidence', h, 'acme', 'success']);
  const db = new Database(p.dbPath);
  const key = db.prepare('UPDATE ca_pattern_faults SET fault_hash = ? WHERE project_id = ? AND pattern_hash = ?');
  key.run(OLD.got2, 'acme', hash2);
  key.run(OLD.got1, 'acme', hash1);
  const outcome = db.prepare("INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt) VALUES ('acme', 'error_pattern', ?, ?, '2026-01-05', ?, ?)");
  outcome.run(OLD.got2, SESSION, 2, 1);
  outcome.run(OLD.got1, SESSION, 1, 0);
  db.prepare(
    "INSERT INTO ca_captures (project_id, session_id, group_id, failure_ref, outcome, fault_hash, operation, created_at) VALUES ('acme', ?, 'CART', 'package:1', 'passed', ?, 'created', '2026-01-05T10:00:00Z')",
  ).run(SESSION, OLD.got2);
  db.prepare(
    `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, duration_ms, version, detail, settled)
     VALUES ('2026-01-05T10:00:00Z', ?, 'CART', 'developer', 0, 'assemble', 'recorded', 1, '0.1.0', ?, 1)`,
  ).run(SESSION, JSON.stringify({ shown: [{ kind: 'error_pattern', id: OLD.got1 }], left_out: [{ kind: 'error_pattern', id: OLD.got2, reason: 'limit' }] }));
  db.prepare("UPDATE ca_meta SET value = '13' WHERE key = 'ca_schema'").run();
  db.close();
  return { hash2, hash1 };
}

let rows: { hash2: string; hash1: string };
beforeEach(() => {
  p = makeProject('ca-resign-');
  rows = buildFile();
});
afterEach(() => p.cleanup());

/** A write through a real process. */
const write = () => runScript(BAZINGA_DB_SCRIPT, ['--quiet', '--db', p.dbPath, '--project-root', p.root, 'save-strategy', 'acme', 'general', 'Keep retries idempotent']);

describe('fault keys an earlier signer stored are signed again', () => {
  const NEW = errorPatternOf('TS2554', GOT_2).fault.fault_hash;

  it('one fault, one key: both rows under the key they sign now, BAZINGA\'s hashes as they were', () => {
    expect(NEW).toBe(errorPatternOf('TS2554', GOT_1).fault.fault_hash);
    expect(NEW).not.toBe(OLD.got2);
    const before = query('SELECT pattern_hash, signature_json, confidence FROM error_patterns ORDER BY rowid');
    expect(write().code).toBe(0);
    expect(query('SELECT pattern_hash, fault_hash FROM ca_pattern_faults ORDER BY pattern_hash')).toEqual(
      [rows.hash2, rows.hash1].sort().map((h) => ({ pattern_hash: h, fault_hash: NEW })),
    );
    expect(query('SELECT pattern_hash, signature_json, confidence FROM error_patterns ORDER BY rowid')).toEqual(before);
    expect(query("SELECT value FROM ca_meta WHERE key = 'ca_schema'")).toEqual([{ value: String(CA_SCHEMA_VERSION) }]);
  });

  it('what named the two keys names the one: verdicts summed, the ledger and the record renamed; a second write changes nothing', () => {
    expect(write().code).toBe(0);
    expect(query("SELECT item_id, helped, hurt FROM ca_outcomes WHERE kind = 'error_pattern'")).toEqual([{ item_id: NEW, helped: 3, hurt: 1 }]);
    expect(query('SELECT fault_hash FROM ca_captures')).toEqual([{ fault_hash: NEW }]);
    const detail = JSON.parse(query('SELECT detail FROM ca_assemblies')[0]?.detail as string);
    expect(detail).toEqual({ shown: [{ kind: 'error_pattern', id: NEW }], left_out: [{ kind: 'error_pattern', id: NEW, reason: 'limit' }] });
    const snapshot = () => ({
      keys: query('SELECT * FROM ca_pattern_faults ORDER BY pattern_hash'),
      outcomes: query('SELECT * FROM ca_outcomes ORDER BY item_id'),
      captures: query('SELECT * FROM ca_captures ORDER BY id'),
      records: query('SELECT detail FROM ca_assemblies ORDER BY id'),
    });
    const once = snapshot();
    expect(write().code).toBe(0);
    expect(snapshot()).toEqual(once);
  });

  it('the assembler then shows the two rows as one pattern, the failure\'s own for the fault met again', () => {
    expect(write().code).toBe(0);
    const c = capturingIo(
      ['--project-root', p.root, '--now', '2026-01-06T10:00:00Z', '--dry-run', '--format', 'json', '--session', SESSION, '--group', 'CART', '--agent', 'developer', '--iteration', '1', '--error', 'src/cart.ts(9,3): error TS2554: Expected 5 arguments, but got 3.'],
      { cwd: p.root },
    );
    expect(runAssembler(ASSEMBLE, c.io), c.err()).toBe(0);
    const doc = JSON.parse(c.out()) as AssemblyDoc;
    const ts2554 = (doc.error_patterns ?? []).filter((e) => e.error_type === 'TS2554');
    expect(ts2554).toHaveLength(1);
    expect(ts2554[0]).toMatchObject({ fault_hash: NEW, occurrences: 2, failure_fault: true });
  });
});
