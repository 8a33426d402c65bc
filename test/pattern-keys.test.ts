/**
 * BAZINGA's error pattern rows as BAZINGA writes them. This product's
 * `save-error-pattern` writes the row the original's writes for the same input: the same
 * `pattern_hash`, the same `signature_json` byte for byte, and a repeat save counts on that row.
 * The expected values were recorded by running the original's `bazinga_db.py save-error-pattern`
 * (mehdic/bazinga, fetched) on each input and are pinned here. One fault, one key lives in this
 * product's own table: two of BAZINGA's rows of one fault are shown once, their occurrences summed.
 * Real SQLite files; a real process for the CLI smoke.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorPatternOf, faultKeyOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { REPO_ROOT, bazingaDb, makeProject, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const ASSEMBLE = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;

let p: Project;
const ok = (args: string[]) => {
  const r = bazingaDbIn(p, args);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
};
const rows = (sql: string, ...params: unknown[]) => {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
};

beforeEach(() => {
  p = makeProject('ca-pattern-keys-');
});
afterEach(() => p.cleanup());

/** What the original's save-error-pattern wrote for each input (bazinga_db.py, run once to record them). */
const ORIGINAL = [
  {
    name: 'a path and a line',
    args: ['ModuleNotFoundError', "Cannot find module '@/utils' at /home/u/app/src/x.ts line 12", 'Fix tsconfig paths', '--lang', 'typescript'],
    hash: 'c396f13a676baff03ef14fad2f32524d28e108484bdee1b2e5c6ae7e2345c8c7',
    signature: `{"error_type": "ModuleNotFoundError", "message_pattern": "Cannot find module '...' at .../x.ts line N", "context_hints": [], "stack_pattern": []}`,
  },
  {
    name: 'hints, stored as given and hashed sorted',
    args: ['ModuleNotFoundError', "Cannot find module '@/x'", 'alias', '--context_hints', '["tsconfig","import"]'],
    hash: '788eb0abeccd8ef713e87d30d1b6a1dbb7fe8a855f0a44a44ab3523541a47960',
    signature: `{"error_type": "ModuleNotFoundError", "message_pattern": "Cannot find module '...'", "context_hints": ["tsconfig", "import"], "stack_pattern": []}`,
  },
  {
    name: 'a Windows path',
    args: ['TSError', 'Error in C:\\Users\\me\\proj\\x.ts line 3', 'fix'],
    hash: '1b51d30be0a7d85aece472789ac543e696d54169e9875e2eeec13c75eed9dd53',
    signature: `{"error_type": "TSError", "message_pattern": "Error in ...\\\\x.ts line N", "context_hints": [], "stack_pattern": []}`,
  },
  {
    name: 'an empty type and a double-quoted name',
    args: ['', 'Unexpected token "foo" in JSON at position 12', 'parse'],
    hash: '60a2c008c4c6a84dfecadb0124aa46ba0db386b67f42b5e381ea9d7366363e39',
    signature: `{"error_type": "Unknown", "message_pattern": "Unexpected token \\"...\\" in JSON at position 12", "context_hints": [], "stack_pattern": []}`,
  },
  {
    name: 'a padded type, non-ASCII text and a stack of any JSON',
    args: ['  TypeError  ', "Ünïcode fehler 'x' – line 7 at /srv/a/b.py", 'fix it', '--stack_pattern', '["a.ts:1", {"f": 2}, 3]'],
    hash: 'ddf15c7af99cbbf51122489bdd7a600a58932c86c03ed473f009714975cabddb',
    signature: `{"error_type": "TypeError", "message_pattern": "\\u00dcn\\u00efcode fehler '...' \\u2013 line N at .../b.py", "context_hints": [], "stack_pattern": ["a.ts:1", {"f": 2}, 3]}`,
  },
  {
    name: "a compiler's line pasted whole",
    args: ['TS2305', "src/app.ts(1,10): error TS2305: Module '\"./services/notification.service\"' has no exported member 'sendNotice'.", 'rename'],
    hash: 'b5705d5bbbd8f285990ef60fca323cc9cec6cac9938a30cb933cf79584ad060f',
    signature: `{"error_type": "TS2305", "message_pattern": "src/app.ts(1,10): error TS2305: Module '...' has no exported member '...'.", "context_hints": [], "stack_pattern": []}`,
  },
];

describe("save-error-pattern writes the original's row", () => {
  it.each(ORIGINAL)('$name: the original hash and signature', ({ args, hash, signature }) => {
    expect(ok(['save-error-pattern', 'proj1', ...args])).toMatchObject({ success: true, pattern_hash: hash, operation: 'created', occurrences: 1, confidence: 0.5 });
    expect(rows('SELECT pattern_hash, signature_json FROM error_patterns')).toEqual([{ pattern_hash: hash, signature_json: signature }]);
    // Its fault in this product's own table, never in BAZINGA's.
    const [type, message] = args as [string, string];
    expect(rows('SELECT project_id, pattern_hash, fault_hash FROM ca_pattern_faults')).toEqual([
      { project_id: 'proj1', pattern_hash: hash, fault_hash: errorPatternOf(type, message).fault.fault_hash },
    ]);
  });

  it('a repeat save counts on one row (occurrences 2, the longer solution), as the original does', () => {
    const first = ok(['save-error-pattern', 'proj1', ...(ORIGINAL[0]?.args as string[])]);
    const again = ok(['save-error-pattern', 'proj1', 'ModuleNotFoundError', "Cannot find module '@/utils' at /home/u/app/src/x.ts line 12", 'Fix tsconfig paths and babel alias']);
    expect(again).toEqual({ success: true, pattern_hash: first.pattern_hash, operation: 'updated', occurrences: 2, redacted: false });
    expect(rows('SELECT occurrences, solution FROM error_patterns')).toEqual([{ occurrences: 2, solution: 'Fix tsconfig paths and babel alias' }]);
    // Another file is another row to the original (".../y.ts"): one fault to this product.
    const other = ok(['save-error-pattern', 'proj1', 'ModuleNotFoundError', "Cannot find module '@/utils' at /srv/other/y.ts line 99", 'Fix tsconfig paths']);
    expect(other).toMatchObject({ operation: 'created', occurrences: 1 });
    expect(other.pattern_hash).not.toBe(first.pattern_hash);
    expect(new Set(rows('SELECT fault_hash FROM ca_pattern_faults').map((r) => r.fault_hash)).size).toBe(1);
  });

  it('update-error-confidence finds the hash save-error-pattern returned', () => {
    const { pattern_hash: hash } = ok(['save-error-pattern', 'proj1', ...(ORIGINAL[1]?.args as string[])]);
    expect(ok(['update-error-confidence', hash, 'proj1', 'success'])).toEqual({ success: true, pattern_hash: hash, previous_confidence: 0.5, new_confidence: 0.6, injectable: true });
  });

  it('through a real process: the same hash, the same row', () => {
    const r = bazingaDb(p, ['save-error-pattern', 'proj1', ...(ORIGINAL[0]?.args as string[])]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ pattern_hash: ORIGINAL[0]?.hash, operation: 'created' });
    const again = bazingaDb(p, ['save-error-pattern', 'proj1', ...(ORIGINAL[0]?.args as string[])]);
    expect(again.json).toMatchObject({ pattern_hash: ORIGINAL[0]?.hash, operation: 'updated', occurrences: 2 });
    expect(bazingaDb(p, ['update-error-confidence', ORIGINAL[0]?.hash as string, 'proj1', 'failure']).json).toMatchObject({ new_confidence: 0.3 });
  });
});

describe('one fault, one pattern in a block', () => {
  const assemble = (session: string) => {
    const run = capturingIo(['--project-root', p.root, '--session', session, '--agent', 'developer', '--now', '2026-01-02T12:00:00Z', '--format', 'json', '--dry-run'], { cwd: REPO_ROOT });
    const code = runScript(ASSEMBLE, run.io);
    expect(code, run.err()).toBe(0);
    return JSON.parse(run.out());
  };

  it.each([
    { name: 'the more confident of two rows stands for the fault', confidences: [0.9, 0.7], stands: 0 },
    { name: 'of equal confidence, the more seen', confidences: [0.8, 0.8], occurrences: [1, 3], stands: 1 },
  ])("two of BAZINGA's rows of one fault are shown once, their occurrences summed: $name", ({ confidences, occurrences, stands }) => {
    ok(['create-session', 'S1', 'simple', 'Shop', '--metadata', JSON.stringify({ project_id: 'shop' })]);
    const messages = ["Cannot find module '@/cart' at /app/src/a.ts line 3", "Cannot find module '@/cart' at /app/lib/b.ts line 40"];
    const hashes = messages.map((m) => ok(['save-error-pattern', 'shop', 'ModuleNotFoundError', m, 'Add the alias']).pattern_hash as string);
    expect(new Set(hashes).size).toBe(2);
    const db = new Database(p.dbPath);
    hashes.forEach((h, i) => db.prepare('UPDATE error_patterns SET confidence = ?, occurrences = ? WHERE pattern_hash = ?').run(confidences[i], occurrences?.[i] ?? 1, h));
    db.close();
    const doc = assemble('S1');
    expect(doc.error_patterns).toHaveLength(1);
    expect(doc.error_patterns[0]).toMatchObject({
      pattern_hash: hashes[stands],
      fault_hash: faultKeyOf({ error_type: 'ModuleNotFoundError', message_pattern: "Cannot find module '...' at .../a.ts line N" }).fault_hash,
      confidence: confidences[stands],
      occurrences: (occurrences ?? [1, 1]).reduce((a, b) => a + b, 0),
    });
    // BAZINGA's rows are left as BAZINGA wrote them (a read writes nothing).
    expect(rows('SELECT pattern_hash FROM error_patterns ORDER BY rowid').map((r) => r.pattern_hash)).toEqual(hashes);
  });
});
