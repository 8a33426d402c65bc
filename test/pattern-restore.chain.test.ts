/**
 * A chain of re-keyed error patterns is restored whole (repo/errorPatterns.ts restoreOriginalKeys):
 * five rows an earlier release re-keyed, each holding the original key the next one must get back,
 * in a file built by hand in the shape that release left (real SQLite, ca_schema 11). Row k can move
 * only once row k-1 moved off its key, so the restore's passes go on while one moves a key. Inserted
 * in the order the chain resolves, one pass restores it; inserted the other way round, each pass
 * restores one row. Either way the first writer's open gives every row its original key (nothing
 * lost, nothing merged or duplicated), says so in its one line, records no failure, and a second
 * writer changes nothing.
 */
import crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorPatternHash, type ErrorSignature } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { CA_SCHEMA_VERSION } from '../skills/bazinga-db/scripts/lib/schema.ts';
import { downgradeExtensionsToV11, makeProject, type Project } from './helpers.ts';
import { bazingaDbIn, runBazingaDbInProcess } from './inProcess.ts';

const SESSION = 'bazinga_20260101_100000';
/** The chain's length: more rows than passes the restore once made at most (three). */
const LINKS = 5;
/** The original signature of chain row k (1-based). */
const signature = (k: number): ErrorSignature => ({ error_type: 'ChainError', message_pattern: `link ${k} of the chain failed`, context_hints: [], stack_pattern: [] });
/** The key row k is restored to. */
const originalKey = (k: number) => errorPatternHash(signature(k));
/** The key row k holds now: the original key of row k+1; the last row a hash of its own (any 64 hex digits). */
const heldKey = (k: number) => (k < LINKS ? originalKey(k + 1) : crypto.createHash('sha256').update('rekeyed:chain end').digest('hex'));
const links = Array.from({ length: LINKS }, (_, i) => i + 1);

let p: Project;
beforeEach(() => {
  p = makeProject('ca-restore-chain-');
});
afterEach(() => p.cleanup());

function query(sql: string): Record<string, unknown>[] {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

/** The file as a v11 writer left it, the chain's rows inserted in `order` (rowid order is the order the restore tries them). */
function buildChain(order: readonly number[]): void {
  expect(bazingaDbIn(p, ['create-session', SESSION, 'simple', 'Shop', '--metadata', JSON.stringify({ project_id: 'acme' })]).code).toBe(0);
  const db = new Database(p.dbPath);
  try {
    downgradeExtensionsToV11(db);
    const insert = db.prepare(
      `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days)
       VALUES (?, 'acme', ?, ?, 0.7, ?, NULL, '2026-01-01 10:00:00', '2025-12-01 10:00:00', 90)`,
    );
    // The earlier release's shape: the original's keys, then `tool`.
    for (const k of order) insert.run(heldKey(k), pyJsonDumps({ ...signature(k), tool: 'text' }), `fix link ${k}`, k);
  } finally {
    db.close();
  }
}

/** A write through bazinga-db (in this process), notices on: its exit code and stderr. */
const write = () => runBazingaDbInProcess(['--db', p.dbPath, '--project-root', p.root, 'save-strategy', 'acme', 'general', 'Keep retries idempotent']);

describe('a chain of re-keyed rows, each holding the key the next is restored to', () => {
  it.each([
    { name: 'inserted in the order the chain resolves (one pass)', order: links },
    { name: 'inserted the other way round (one row a pass)', order: [...links].reverse() },
  ])('$name: every row gets its original key back, none lost or merged, the open succeeds', ({ order }) => {
    buildChain(order);
    // The chain as built: row k under row k+1's original key.
    expect(query("SELECT solution, pattern_hash FROM error_patterns WHERE project_id = 'acme' ORDER BY solution")).toEqual(links.map((k) => ({ solution: `fix link ${k}`, pattern_hash: heldKey(k) })));

    const r = write();
    expect(r.code, r.stderr).toBe(0);
    // The whole of stderr: the restore's one line, no merge, no failed step.
    expect(r.stderr.trimEnd().split('\n')).toEqual([`✓ Error patterns: ${LINKS} given back the key BAZINGA's own tool computes`]);
    // Each row under its own original key with its own signature and solution: five rows, each key once.
    const rows = query("SELECT pattern_hash, signature_json, solution, occurrences FROM error_patterns WHERE project_id = 'acme' ORDER BY solution");
    expect(rows).toEqual(links.map((k) => ({ pattern_hash: originalKey(k), signature_json: pyJsonDumps(signature(k)), solution: `fix link ${k}`, occurrences: k })));
    expect(query('SELECT COUNT(*) AS n FROM error_patterns')).toEqual([{ n: LINKS }]);
    expect(query('SELECT COUNT(*) AS n FROM ca_pattern_faults')).toEqual([{ n: LINKS }]);
    // The open completed: the current version recorded, no failed step left for doctor.
    expect(query("SELECT key, value FROM ca_meta WHERE key IN ('ca_schema', 'schema.failed') ORDER BY key")).toEqual([{ key: 'ca_schema', value: String(CA_SCHEMA_VERSION) }]);

    // A second writer finds nothing to restore and says nothing.
    const again = write();
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
    expect(query("SELECT pattern_hash, signature_json, solution, occurrences FROM error_patterns WHERE project_id = 'acme' ORDER BY solution")).toEqual(rows);
  });
});
