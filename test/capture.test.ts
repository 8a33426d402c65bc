/**
 * Learning from a group's retries (bazinga-db capture.ts): a failure text (a failures package, or
 * the review feedback a retry spawn was given), what the fixing agent wrote, and how the next
 * review ended become signature → solution, with provenance in `ca_captures`. On real SQLite
 * files written through bazinga-db's commands and the assembler, the review outcomes set on
 * task_groups as BAZINGA sets them. Times are set by hand: agents work minutes apart, a test does not.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { capturedPatternOf, errorPatternHash, errorSignature, faultKeyOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { REPO_ROOT, makeProject, runScript as runTsx, writeArtifact, type Project } from './helpers.ts';
import { insertAssembly } from '../skills/bazinga-db/scripts/lib/repo/assemblies.ts';
import { withLearning } from '../skills/bazinga-db/scripts/lib/repo/patternLearning.ts';
import { readSpawnState } from '../skills/bazinga-db/scripts/lib/repo/spawnState.ts';
import type { ErrorPatternRow } from '../skills/bazinga-db/scripts/lib/patternRow.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const SESSION = 'bazinga_20260101_100000';
const PROJECT = 'shop';
const ASSEMBLE_SPEC = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;
const ASSEMBLE_SPEC_JSON = ASSEMBLE_SPEC;

/** Real tsc output for one renamed export (the same fault in two files). */
const TSC_A = "src/app.ts(1,10): error TS2305: Module '\"./services/notification.service\"' has no exported member 'sendNotice'.";
const TSC_A_ELSEWHERE = "src/api/deep/orders.ts(2,10): error TS2305: Module '\"./services/notification.service\"' has no exported member 'sendNotice'.";
const VITEST_B = ` FAIL  test/cart.test.ts > totals a cart
AssertionError: expected 7 to be 8 // Object.is equality
 ❯ test/cart.test.ts:12:31`;
/** The same fault as VITEST_B with other values: another row for the original (its message keeps numbers), the same fault. */
const VITEST_B_OTHER = ` FAIL  test/cart.test.ts > totals a cart with shipping
AssertionError: expected 12 to be 15 // Object.is equality
 ❯ test/cart.test.ts:30:9`;
const FIX_A = 'Renamed the import to notifyUser, the export the service has now';

let p: Project;
const db = () => new Database(p.dbPath);
const ok = (args: string[]) => {
  const r = bazingaDbIn(p, args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};

function setup(session = SESSION): void {
  ok(['create-session', session, 'parallel', 'Shop', '--metadata', JSON.stringify({ project_id: PROJECT })]);
}

function group(id: string, session = SESSION): void {
  ok(['create-task-group', id, session, `Group ${id}`]);
}

/** A failures package holding `output` in its artifact, at `at`. */
function failure(groupId: string, output: string, at: string, session = SESSION): number {
  const file = writeArtifact(p, session, `failures_${groupId}_${at.replace(/\W/g, '')}.md`, `# QA\n\n${output}\n`);
  const out = ok(['save-context-package', session, groupId, 'failures', file, 'qa_expert', '["developer"]', 'high', 'QA failed: tests fail']);
  const conn = db();
  conn.prepare('UPDATE context_packages SET created_at = ? WHERE id = ?').run(at, out.package_id);
  conn.close();
  return out.package_id;
}

function fix(groupId: string, text: string, at: string, phase = 'completion', session = SESSION): number {
  const out = ok(['save-reasoning', session, groupId, 'developer', phase, text]);
  const conn = db();
  conn.prepare('UPDATE orchestration_logs SET timestamp = ? WHERE id = ?').run(at, out.log_id);
  conn.close();
  return out.log_id;
}

function review(groupId: string, status: 'APPROVED' | 'CHANGES_REQUESTED', revisions: number, session = SESSION): void {
  const conn = db();
  conn
    .prepare("UPDATE task_groups SET last_review_status = ?, revision_count = ?, status = CASE WHEN ? = 'APPROVED' THEN 'completed' ELSE status END WHERE id = ? AND session_id = ?")
    .run(status, revisions, status, groupId, session);
  conn.close();
}

/** The rows as stored: what BAZINGA's own CLI and builder read. */
const patterns = () => {
  const conn = db();
  const rows = conn.prepare('SELECT pattern_hash, solution, confidence, occurrences FROM error_patterns WHERE project_id = ? ORDER BY rowid').all(PROJECT);
  conn.close();
  return rows as { pattern_hash: string; solution: string; confidence: number; occurrences: number }[];
};
/** G1 fails with tsc's TS2305, the developer fixes it, the review approves, the capture learns it. */
const fixedOnce = () => {
  group('G1');
  failure('G1', TSC_A, '2026-01-01 10:00:00');
  fix('G1', FIX_A, '2026-01-01 10:20:00');
  review('G1', 'APPROVED', 1);
  ok(['capture-outcomes', SESSION]);
};
/** A pattern the capture created: the row BAZINGA's save-error-pattern writes (0.5, seen once), read by this product at 0.7 (its fix passed a review). */
const expectCreated = (hash: string, solution: string) => {
  expect(patterns()).toEqual([{ pattern_hash: hash, solution, confidence: 0.5, occurrences: 1 }]);
  expect(learnt()).toEqual([{ pattern_hash: hash, solution, confidence: 0.7, occurrences: 1 }]);
};
/** The rows as this product reads them: with what the capture learnt of them (ca_pattern_learning). */
const learnt = () => {
  const conn = db();
  const rows = withLearning(conn, conn.prepare('SELECT * FROM error_patterns WHERE project_id = ? ORDER BY rowid').all(PROJECT) as ErrorPatternRow[]);
  conn.close();
  return rows.map(({ pattern_hash, solution, confidence, occurrences }) => ({ pattern_hash, solution, confidence, occurrences }));
};
const ledger = () => {
  const conn = db();
  const rows = conn.prepare('SELECT group_id, failure_ref, outcome, operation, solution_ref, fault_hash FROM ca_captures ORDER BY id').all();
  conn.close();
  return rows as Record<string, unknown>[];
};

/** The row the capture saves of TSC_A (the original's hash of its type and message) and its fault. */
const HASH_A = capturedPatternOf(TSC_A).hash;
const FAULT_A = capturedPatternOf(TSC_A).fault.fault_hash;

beforeEach(() => {
  p = makeProject('ca-capture-');
  setup();
});
afterEach(() => p.cleanup());

describe('capture-outcomes: a failure, its fix, the review after it', () => {
  it('fail → fix → approved: signature → solution, with where both came from; a second run changes nothing', () => {
    group('G1');
    const pkg = failure('G1', TSC_A, '2026-01-01 10:00:00');
    const log = fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    const out = ok(['capture-outcomes', SESSION]);
    expect(out).toMatchObject({ success: true, project_id: PROJECT, groups: 1, undecided: 0 });
    expect(out.decided).toEqual([
      expect.objectContaining({ group_id: 'G1', failure_ref: `package:${pkg}`, outcome: 'passed', operation: 'created', solution_ref: `reasoning:${log}`, pattern_hash: HASH_A, fault_hash: FAULT_A, error_type: 'TS2305' }),
    ]);
    expectCreated(HASH_A, FIX_A);
    expect(ok(['capture-outcomes', SESSION]).decided).toEqual([]);
    expectCreated(HASH_A, FIX_A);
    expect(ledger()).toHaveLength(1);
    // The pattern is what the next agent meeting the fault is shown.
    expect(ok(['get-error-patterns', PROJECT, '--min_confidence', '0'])[0]).toMatchObject({ pattern_hash: HASH_A, solution: FIX_A });
  });

  it('--dry-run reports the decision and writes nothing', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    expect(ok(['capture-outcomes', SESSION, '--dry-run']).decided).toEqual([expect.objectContaining({ outcome: 'passed', operation: 'created' })]);
    expect(patterns()).toEqual([]);
    expect(ledger()).toEqual([]);
  });

  it('a group not yet reviewed after its last failure is left undecided, then decided once it passes', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    expect(ok(['capture-outcomes', SESSION])).toMatchObject({ decided: [], undecided: 1, undecided_groups: ['G1'] });
    review('G1', 'APPROVED', 1);
    expect(ok(['capture-outcomes', SESSION]).decided).toHaveLength(1);
  });

  it('the same fault again after a fix: that retry failed (nothing learnt from it); the fix after the last one is the solution', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', 'Restarted the build', '2026-01-01 10:20:00');
    failure('G1', TSC_A_ELSEWHERE, '2026-01-01 10:40:00');
    const log = fix('G1', FIX_A, '2026-01-01 11:00:00');
    review('G1', 'APPROVED', 2);
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided.map((d: any) => [d.outcome, d.operation])).toEqual([
      ['failed', 'unknown-failed'],
      ['passed', 'created'],
    ]);
    expect(out.decided[1].solution_ref).toBe(`reasoning:${log}`);
    expectCreated(HASH_A, FIX_A);
  });

  it('two texts of one fault with no fix between them are one failure; another fault next means the first was fixed', () => {
    group('G1');
    const first = failure('G1', TSC_A, '2026-01-01 10:00:00');
    failure('G1', TSC_A_ELSEWHERE, '2026-01-01 10:05:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    failure('G1', VITEST_B, '2026-01-01 10:40:00');
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided).toEqual([expect.objectContaining({ failure_ref: `package:${first}`, failure_refs: [`package:${first}`, `package:${first + 1}`], outcome: 'passed' })]);
    expect(out.undecided).toBe(1);
  });

  it('a known fault: a passing retry raises its confidence, a failing one lowers it, beside the row (which stays as written)', () => {
    fixedOnce();
    group('G2');
    // Another group meets it: fixed the same way, passes.
    failure('G2', TSC_A_ELSEWHERE, '2026-01-01 12:00:00');
    fix('G2', FIX_A, '2026-01-01 12:20:00');
    review('G2', 'APPROVED', 1);
    expect(ok(['capture-outcomes', SESSION]).decided.map((d: any) => d.operation)).toEqual(['raised']);
    expect(learnt()[0]).toMatchObject({ confidence: 0.8, occurrences: 2 });
    expect(patterns()[0]).toMatchObject({ confidence: 0.5, occurrences: 1 });
    // The block says how it came to be and what its fix did: created from G1's passing retry, passed again in G2.
    const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G2', '--agent', 'developer', '--error', TSC_A, '--now', '2026-01-03T12:20:00Z', '--dry-run', '--format', 'json'], { cwd: REPO_ROOT });
    expect(runScript(ASSEMBLE_SPEC, run.io), run.err()).toBe(0);
    const shown = JSON.parse(run.out()).error_patterns.find((e: any) => e.fault_hash === FAULT_A);
    expect(shown).toMatchObject({ origin: 'captured', fix_passed: 2, fix_failed: 0, provenance: 'captured from a passing retry; fix passed 2×' });
    // A third group: the fault comes back after the fix.
    group('G3');
    failure('G3', TSC_A, '2026-01-01 13:00:00');
    fix('G3', 'Tried the known fix', '2026-01-01 13:20:00');
    failure('G3', TSC_A, '2026-01-01 13:40:00');
    expect(ok(['capture-outcomes', SESSION, '--group', 'G3']).decided.map((d: any) => d.operation)).toEqual(['lowered']);
    expect(learnt()[0]).toMatchObject({ confidence: 0.6, occurrences: 3 });
    expect(patterns()[0]).toMatchObject({ confidence: 0.5, occurrences: 1 });
  });

  it('the row the capture saves is the one BAZINGA saves for the same error: its hash, its signature, in its JSON', () => {
    fixedOnce();
    const conn = db();
    const row = conn.prepare('SELECT pattern_hash, signature_json FROM error_patterns').get() as { pattern_hash: string; signature_json: string };
    conn.close();
    // What `bazinga_db.py save-error-pattern shop TS2305 "<the message tsc printed>" …` stores.
    const expected = errorSignature('TS2305', "Module '\"./services/notification.service\"' has no exported member 'sendNotice'.");
    expect(row).toEqual({ pattern_hash: errorPatternHash(expected), signature_json: pyJsonDumps(expected) });
    expect(row.signature_json).toBe(`{"error_type": "TS2305", "message_pattern": "Module '...' has no exported member '...'.", "context_hints": [], "stack_pattern": []}`);
  });

  it.each([
    {
      // An agent pasted the compiler's line as the message: the original keeps its file and position.
      name: 'a row BAZINGA saved by hand (another message, another hash)',
      saved: { type: 'TS2305', message: TSC_A_ELSEWHERE },
      recurs: TSC_A,
    },
    { name: 'a row the capture saved of other values (another hash)', saved: null, recurs: VITEST_B_OTHER },
  ])('the capture of a recurring fault finds the known pattern through the fault key: $name', ({ saved, recurs }) => {
    let known: string;
    if (saved !== null) {
      const signature = errorSignature(saved.type, saved.message);
      known = errorPatternHash(signature);
      expect(known).not.toBe(capturedPatternOf(recurs).hash);
      expect(faultKeyOf(signature).fault_hash).toBe(capturedPatternOf(recurs).fault.fault_hash);
      const conn = db();
      conn
        .prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, last_seen, created_at, ttl_days) VALUES (?, ?, ?, 'Rename the import', 0.7, 3, datetime('now'), datetime('now'), 90)")
        .run(known, PROJECT, pyJsonDumps(signature));
      conn.close();
    } else {
      group('G0');
      failure('G0', VITEST_B, '2026-01-01 09:00:00');
      fix('G0', 'Rounded the cart total', '2026-01-01 09:20:00');
      review('G0', 'APPROVED', 1);
      ok(['capture-outcomes', SESSION]);
      known = capturedPatternOf(VITEST_B).hash;
      expect(known).not.toBe(capturedPatternOf(recurs).hash);
    }
    const before = learnt()[0] as { occurrences: number; confidence: number };
    const storedBefore = patterns()[0] as { occurrences: number; confidence: number };
    group('G1');
    failure('G1', recurs, '2026-01-01 10:00:00');
    fix('G1', 'Fixed it the known way', '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided.map((d: any) => [d.operation, d.pattern_hash])).toEqual([['raised', known]]);
    // No second row: the known one counts the occurrence, as a repeat save would, beside the row (stored as written).
    expect(learnt()).toEqual([expect.objectContaining({ pattern_hash: known, occurrences: before.occurrences + 1, confidence: Math.round((before.confidence + 0.1) * 100) / 100 })]);
    expect(patterns()).toEqual([expect.objectContaining({ pattern_hash: known, occurrences: storedBefore.occurrences, confidence: storedBefore.confidence })]);
  });

  it("QA's failures package and the prose feedback the retry was given are one failure (no fix between): nothing is credited before a review", () => {
    const signature = capturedPatternOf(TSC_A);
    const conn = db();
    conn
      .prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences) VALUES (?, ?, ?, 'Rename the import', 0.7, 1)")
      .run(signature.hash, PROJECT, pyJsonDumps(signature.signature));
    conn.close();
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    failure('G1', 'QA: the build still fails, see the report', '2026-01-01 10:05:00');
    review('G1', 'CHANGES_REQUESTED', 1);
    expect(ok(['capture-outcomes', SESSION])).toMatchObject({ decided: [], undecided: 1 });
    expect(patterns()[0]).toMatchObject({ confidence: 0.7, occurrences: 1 });
  });

  it('a failure told in prose only is learnt at 0.5 (hidden until confirmed), a tool output at 0.7', () => {
    group('G1');
    failure('G1', 'QA: checkout total is off by the shipping fee', '2026-01-01 10:00:00');
    fix('G1', 'Added shipping to the total', '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    ok(['capture-outcomes', SESSION]);
    expect(patterns()).toEqual([expect.objectContaining({ confidence: 0.5, solution: 'Added shipping to the total' })]);
  });

  it('a dry run reports what the real run writes, a pattern it would create known to the failures after it', () => {
    group('G1');
    group('G2');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    failure('G2', TSC_A_ELSEWHERE, '2026-01-01 11:00:00');
    fix('G2', FIX_A, '2026-01-01 11:20:00');
    review('G2', 'APPROVED', 1);
    const dry = ok(['capture-outcomes', SESSION, '--dry-run']).decided.map((d: any) => d.operation);
    expect(dry).toEqual(['created', 'raised']);
    expect(ok(['capture-outcomes', SESSION]).decided.map((d: any) => d.operation)).toEqual(dry);
  });

  it('error patterns whose signature is not one are left as they are, each a fault of its own, never in the way of a capture', () => {
    const conn = db();
    const insert = conn.prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences) VALUES (?, ?, ?, ?, 0.6, 1)");
    insert.run('bad1', PROJECT, '{"error_type": "Range', 'fix A');
    insert.run('bad2', PROJECT, '{"error_type": "RangeError"}', 'fix B');
    insert.run('bad3', PROJECT, '[]', 'fix C');
    conn.close();
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    expect(ok(['capture-outcomes', SESSION]).decided.map((d: any) => d.operation)).toEqual(['created']);
    const after = db();
    expect(after.prepare('SELECT pattern_hash, signature_json, solution FROM error_patterns ORDER BY rowid').all()).toEqual([
      { pattern_hash: 'bad1', signature_json: '{"error_type": "Range', solution: 'fix A' },
      { pattern_hash: 'bad2', signature_json: '{"error_type": "RangeError"}', solution: 'fix B' },
      { pattern_hash: 'bad3', signature_json: '[]', solution: 'fix C' },
      { pattern_hash: HASH_A, signature_json: expect.any(String), solution: FIX_A },
    ]);
    // Keyed by a writer: each odd row its own fault (its hash), the new one its fault.
    expect(after.prepare('SELECT pattern_hash, fault_hash, tool FROM ca_pattern_faults ORDER BY pattern_hash').all()).toEqual(
      [
        { pattern_hash: 'bad1', fault_hash: 'bad1', tool: 'none' },
        { pattern_hash: 'bad2', fault_hash: 'bad2', tool: 'none' },
        { pattern_hash: 'bad3', fault_hash: 'bad3', tool: 'none' },
        { pattern_hash: HASH_A, fault_hash: FAULT_A, tool: 'tsc' },
      ].sort((a, b) => (a.pattern_hash < b.pattern_hash ? -1 : 1)),
    );
    after.close();
  });

  it('two faults with the developer at work between them (reasoning of any phase) are two failures; the later fix is not the earlier fault\'s solution', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', 'Looking at the failing import first', '2026-01-01 10:20:00', 'approach');
    failure('G1', VITEST_B, '2026-01-01 10:40:00');
    const log = fix('G1', 'Fixed cart totals rounding', '2026-01-01 11:00:00');
    review('G1', 'APPROVED', 2);
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided.map((d: any) => [d.error_type, d.operation, d.solution_ref])).toEqual([
      ['TS2305', 'no-solution', null],
      ['AssertionError', 'created', `reasoning:${log}`],
    ]);
    expect(patterns().some((r) => r.pattern_hash === HASH_A)).toBe(false);
  });

  it('an item a record lists twice counts once; records that can never have a verdict do not keep older ones from being settled', () => {
    group('G1');
    const conn = db();
    const add = (groupId: string | null, iteration: number, shown: unknown[]) =>
      insertAssembly(conn, {
        created_at: '2026-01-01T10:00:00Z', session_id: SESSION, group_id: groupId, agent_type: 'developer', iteration, source: 'assemble', outcome: 'recorded',
        reason: null, purpose: null, zone: 'Normal', usage_pct: 0, budget: 1, used_tokens: 0, overrun: 0, prompt_tokens: null, duration_ms: 1, version: '0.1.0',
        detail: JSON.stringify({ shown }),
      });
    add('G1', 0, [{ kind: 'strategy', id: 'a' }, { kind: 'strategy', id: 'a' }]);
    for (let i = 0; i < 120; i++) add(i % 2 === 0 ? null : 'global', 0, [{ kind: 'strategy', id: 'b' }]);
    conn.close();
    review('G1', 'CHANGES_REQUESTED', 1);
    group('G2');
    // A spawn settles what it can: the old G1 record too, behind 120 that never will have a verdict.
    runScript(ASSEMBLE_SPEC_JSON, capturingIo(['--project-root', p.root, '--session', SESSION, '--group', 'G2', '--agent', 'developer', '--now', '2026-01-01T12:00:00Z'], { cwd: REPO_ROOT }).io);
    const after = db();
    expect(after.prepare('SELECT kind, item_id, helped, hurt FROM ca_outcomes').all()).toEqual([{ kind: 'strategy', item_id: 'a', helped: 0, hurt: 1 }]);
    // Left unsettled: 20 of the 120 (a spawn marks at most 100 of them) and the spawn's own open record.
    expect(after.prepare('SELECT COUNT(*) AS n FROM ca_assemblies WHERE settled = 0').get()).toEqual({ n: 21 });
    after.close();
  });

  it('a file an earlier v10 build made (ca_captures without refs, ca_outcomes a row per verdict) is brought to this shape by the next writer', () => {
    group('G1');
    const conn = db();
    conn.exec(`DROP TABLE ca_captures; CREATE TABLE ca_captures (id INTEGER PRIMARY KEY AUTOINCREMENT, project_id TEXT NOT NULL, session_id TEXT NOT NULL,
      group_id TEXT NOT NULL, failure_ref TEXT NOT NULL, fail_iteration INTEGER, outcome TEXT NOT NULL, pattern_hash TEXT NOT NULL, operation TEXT NOT NULL,
      solution_ref TEXT, created_at TEXT NOT NULL, UNIQUE(session_id, group_id, failure_ref))`);
    conn.exec(`DROP TABLE ca_outcomes; CREATE TABLE ca_outcomes (assembly_id INTEGER NOT NULL, project_id TEXT NOT NULL, session_id TEXT NOT NULL, kind TEXT NOT NULL,
      item_id TEXT NOT NULL, verdict TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (assembly_id, kind, item_id)) WITHOUT ROWID`);
    insertAssembly(conn, {
      created_at: '2026-01-01T10:00:00Z', session_id: SESSION, group_id: 'G1', agent_type: 'developer', iteration: 0, source: 'assemble', outcome: 'recorded',
      reason: null, purpose: null, zone: 'Normal', usage_pct: 0, budget: 1, used_tokens: 0, overrun: 0, prompt_tokens: null, duration_ms: 1, version: '0.1.0',
      detail: JSON.stringify({ shown: [{ kind: 'strategy', id: 's' }] }),
    });
    conn.exec("UPDATE ca_assemblies SET settled = 1; UPDATE ca_meta SET value = '10' WHERE key = 'ca_schema'");
    conn.close();
    review('G1', 'APPROVED', 0);
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided.map((d: any) => d.operation)).toEqual(['created']);
    // The derived verdicts were made again from the record.
    expect(out.records_settled).toBe(1);
    const after = db();
    expect(after.prepare('SELECT kind, item_id, helped FROM ca_outcomes').all()).toEqual([{ kind: 'strategy', item_id: 's', helped: 1 }]);
    expect(after.prepare('SELECT refs FROM ca_captures').all()).toHaveLength(1);
    after.close();
  });

  it('names the session it cannot find and the flags it takes', () => {
    const r = bazingaDbIn(p, ['capture-outcomes', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Session not found: nope');
    const bad = bazingaDbIn(p, ['capture-outcomes', SESSION, '--grop', 'G1']);
    expect(bad.stderr).toContain("Unknown flag '--grop'. Valid flags: ['--dry-run', '--group']");
  });
});

describe('before each spawn: the assembler learns from the session\'s retries', () => {
  const assemble = (flags: string[], now: string, learns = false) => {
    const run = capturingIo(['--project-root', p.root, '--session', SESSION, '--now', now, '--format', 'json', ...flags], { cwd: REPO_ROOT });
    const code = runScript(ASSEMBLE_SPEC, learns ? { ...run.io, learns: true } : run.io);
    expect(code, run.err()).toBe(0);
    return JSON.parse(run.out());
  };

  it('what a spawn decided from the newest failures is not decided again by the session-end run that reads them all', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    failure('G1', TSC_A_ELSEWHERE, '2026-01-01 10:05:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    failure('G1', VITEST_B, '2026-01-01 10:40:00');
    // The retry's spawn reads the two newest failures: A (its second text) was fixed, B follows.
    assemble(['--agent', 'developer', '--group', 'G1', '--iteration', '2'], '2026-01-01T11:00:00Z');
    expect(ledger()).toEqual([expect.objectContaining({ outcome: 'passed', operation: 'created', fault_hash: FAULT_A })]);
    review('G1', 'APPROVED', 2);
    const out = ok(['capture-outcomes', SESSION]);
    // A is not counted twice under its first text; only B is new.
    expect(out.decided.map((d: any) => [d.error_type, d.operation])).toEqual([['AssertionError', 'no-solution']]);
    expectCreated(HASH_A, FIX_A);
  });

  it('a retry spawn decides the last transition from the failures since, whatever the developer wrote in between; the session-end run does not decide it again', () => {
    group('G1');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    const log = fix('G1', FIX_A, '2026-01-01 10:20:00');
    for (let i = 0; i < 25; i++) fix('G1', `Thinking about the cart, step ${i}`, `2026-01-01 10:2${Math.floor(i / 10) + 1}:${String(10 + (i % 10)).padStart(2, '0')}`, 'understanding');
    failure('G1', VITEST_B, '2026-01-01 10:40:00');
    assemble(['--agent', 'developer', '--group', 'G1', '--iteration', '2'], '2026-01-01T11:00:00Z');
    expect(ledger()).toEqual([expect.objectContaining({ operation: 'created', solution_ref: `reasoning:${log}`, fault_hash: FAULT_A })]);
    review('G1', 'APPROVED', 2);
    const out = ok(['capture-outcomes', SESSION]);
    expect(out.decided.map((d: any) => d.error_type)).toEqual(['AssertionError']);
  });

  it('consume --ids (the recording step after assemble --dry-run) learns once it has marked', () => {
    group('G1');
    group('G2');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    const pkg = ok(['save-context-package', SESSION, 'G2', 'research', writeArtifact(p, SESSION, 'r.md'), 'developer', '["developer"]', 'high', 'Cart research']).package_id;
    const r = runTsx(path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'consume.ts'), ['--project-root', p.root, '--ids', String(pkg), '--agent', 'developer', '--iteration', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(ledger()).toEqual([expect.objectContaining({ group_id: 'G1', operation: 'created' })]);
  });

  it("the prompt hook's assembly (a dry run whose spawn records its delivery afterwards) learns before it chooses the block", () => {
    group('G1');
    group('G2');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    const doc = assemble(['--agent', 'developer', '--group', 'G2', '--dry-run', '--error', TSC_A_ELSEWHERE], '2026-01-01T11:00:00Z', true);
    expect(ledger()).toEqual([expect.objectContaining({ group_id: 'G1', operation: 'created' })]);
    expect(doc.error_patterns[0]).toMatchObject({ pattern_hash: HASH_A, matched_error: true });
  });

  it('what the capture learnt of a row reaches the block (its confidence, its count, its place), while the row stays as BAZINGA wrote it', () => {
    // A prose-told fault BAZINGA's agent saved by hand at 0.5: below the threshold the block shows (0.7).
    const signature = errorSignature('TS2305', "Module '\"./services/notification.service\"' has no exported member 'sendNotice'.");
    const conn = db();
    conn
      .prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, last_seen, created_at, ttl_days) VALUES (?, ?, ?, 'Rename the import', 0.5, 1, '2025-12-01 10:00:00', '2025-12-01 10:00:00', 90)")
      .run(errorPatternHash(signature), PROJECT, pyJsonDumps(signature));
    conn.close();
    const stored = patterns();
    const shown = () => assemble(['--agent', 'developer', '--group', 'G9', '--dry-run'], '2026-01-01T14:00:00Z').error_patterns.map((e: any) => [e.pattern_hash, e.confidence, e.occurrences]);
    group('G9');
    expect(shown()).toEqual([]);
    // Two groups meet it and pass with the known fix: +0.1 each, kept beside the row.
    for (const [g, at] of [['G1', '10'], ['G2', '12']] as const) {
      group(g);
      failure(g, TSC_A, `2026-01-01 ${at}:00:00`);
      fix(g, FIX_A, `2026-01-01 ${at}:20:00`);
      review(g, 'APPROVED', 1);
      expect(ok(['capture-outcomes', SESSION, '--group', g]).decided.map((d: any) => d.operation)).toEqual(['raised']);
    }
    expect(patterns()).toEqual(stored);
    expect(shown()).toEqual([[errorPatternHash(signature), 0.7, 3]]);
  });

  it('what was learnt of a row is not carried to a row saved again under its key after a cleanup; the next capture that decides prunes it', () => {
    fixedOnce();
    expectCreated(HASH_A, FIX_A);
    const conn = db();
    const row = conn.prepare('SELECT * FROM error_patterns WHERE pattern_hash = ?').get(HASH_A) as Record<string, unknown>;
    // BAZINGA's cleanup deleted it; an agent saved the same error again, a day later: another row.
    conn.prepare('DELETE FROM error_patterns WHERE pattern_hash = ?').run(HASH_A);
    conn
      .prepare("INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, last_seen, created_at, ttl_days) VALUES (?, ?, ?, ?, 0.5, 1, '2026-01-02 09:00:00', '2026-01-02 09:00:00', 90)")
      .run(HASH_A, PROJECT, row.signature_json, FIX_A);
    const learning = () => conn.prepare('SELECT count(*) AS n FROM ca_pattern_learning').get() as { n: number };
    expect(learning().n).toBe(1);
    expect(learnt()).toEqual([{ pattern_hash: HASH_A, solution: FIX_A, confidence: 0.5, occurrences: 1 }]);
    // The next capture that decides something prunes it.
    group('G2');
    failure('G2', VITEST_B, '2026-01-02 10:00:00');
    fix('G2', 'Rounded the cart total', '2026-01-02 10:20:00');
    review('G2', 'APPROVED', 1);
    expect(ok(['capture-outcomes', SESSION]).decided.map((d: any) => d.operation)).toEqual(['created']);
    expect(conn.prepare('SELECT pattern_hash FROM ca_pattern_learning').all()).toEqual([{ pattern_hash: capturedPatternOf(VITEST_B).hash }]);
    conn.close();
  });

  it("a capture's move of a known row changes the spawn state the prompt hook keys a rebuild by", () => {
    fixedOnce();
    group('G2');
    const state = () => {
      const conn = db();
      try {
        return readSpawnState(conn, SESSION, 'G2').fingerprint;
      } finally {
        conn.close();
      }
    };
    const before = state();
    const storedBefore = patterns();
    failure('G2', TSC_A_ELSEWHERE, '2026-01-01 12:00:00');
    fix('G2', FIX_A, '2026-01-01 12:20:00');
    review('G2', 'APPROVED', 1);
    const failuresOnly = state();
    expect(ok(['capture-outcomes', SESSION, '--group', 'G2']).decided.map((d: any) => d.operation)).toEqual(['raised']);
    expect(patterns()).toEqual(storedBefore);
    expect(state()).not.toBe(failuresOnly);
    expect(before).not.toBe(failuresOnly);
  });

  it('error_patterns.capture false: a recording spawn learns nothing (capture-outcomes still does)', () => {
    group('G1');
    group('G2');
    failure('G1', TSC_A, '2026-01-01 10:00:00');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    fs.mkdirSync(path.join(p.root, 'bazinga'), { recursive: true });
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { error_patterns: { capture: false } } }));
    assemble(['--agent', 'developer', '--group', 'G2'], '2026-01-01T11:00:00Z');
    expect(ledger()).toEqual([]);
    expect(ok(['capture-outcomes', SESSION]).decided).toHaveLength(1);
  });

  it('the retry feedback a spawn was given is the failure; the next spawn after the approval learns it; a dry run never does', () => {
    group('G1');
    group('G2');
    // The developer's retry, given QA's feedback (as the prompt hook passes qa_feedback): on record.
    assemble(['--agent', 'developer', '--group', 'G1', '--iteration', '1', '--error', `QA: tests fail\n${TSC_A}`], '2026-01-01T10:00:00Z');
    fix('G1', FIX_A, '2026-01-01 10:20:00');
    review('G1', 'APPROVED', 1);
    assemble(['--agent', 'developer', '--group', 'G2', '--dry-run'], '2026-01-01T11:00:00Z');
    expect(patterns()).toEqual([]);
    const doc = assemble(['--agent', 'developer', '--group', 'G2'], '2026-01-01T11:00:00Z');
    expect(doc.step).toBe('consume');
    expect(ledger()).toEqual([expect.objectContaining({ group_id: 'G1', outcome: 'passed', operation: 'created', fault_hash: FAULT_A })]);
    expect(String(ledger()[0]?.failure_ref)).toMatch(/^assembly:\d+$/);
    // The next spawn meeting the fault is shown it, matched by its error.
    const retry = assemble(['--agent', 'developer', '--group', 'G2', '--iteration', '1', '--error', TSC_A_ELSEWHERE, '--dry-run'], '2026-01-01T12:00:00Z');
    expect(retry.error_patterns[0]).toMatchObject({ pattern_hash: HASH_A, solution: FIX_A, matched_error: true });
  });
});
