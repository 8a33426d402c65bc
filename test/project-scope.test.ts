/**
 * Which project a session reads (bazinga-db repo/sessions.ts ProjectScope).
 * BAZINGA's create-session records no project id, while its agents save patterns and strategies
 * under the project id they pass: a session that records none reads the database as one project
 * (every project's patterns, strategies, verdicts and memory, as BAZINGA's prompt builder does); a
 * session whose metadata records a project id keeps to it. What such a session writes goes under
 * `default`. Real SQLite files, written through bazinga-db's commands.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getProjectScope } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { capturedPatternOf } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { runReport } from '../skills/context-assembler/scripts/lib/report/run.ts';
import { REPO_ROOT, makeProject, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbIn, capturingIo } from './inProcess.ts';

const ASSEMBLE = { name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' } as const;
const NOW = '2026-01-02T12:00:00Z';

let p: Project;
const ok = (args: string[]) => {
  const r = bazingaDbIn(p, args);
  expect(r.code, r.stderr).toBe(0);
  return r.json;
};
const sql = (text: string, ...params: unknown[]) => {
  const db = new Database(p.dbPath);
  try {
    return db.prepare(text).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
};
const run = (text: string, ...params: unknown[]) => {
  const db = new Database(p.dbPath);
  try {
    db.prepare(text).run(...params);
  } finally {
    db.close();
  }
};
const assemble = (session: string, flags: string[] = []) => {
  const io = capturingIo(['--project-root', p.root, '--session', session, '--agent', 'developer', '--now', NOW, '--format', 'json', '--dry-run', ...flags], { cwd: REPO_ROOT });
  const code = runScript(ASSEMBLE, io.io);
  expect(code, io.err()).toBe(0);
  return JSON.parse(io.out());
};

/** A pattern saved under a project, confident enough to be shown. */
function pattern(project: string, type: string, message: string): string {
  const hash = ok(['save-error-pattern', project, type, message, `fix for ${project}`]).pattern_hash as string;
  run('UPDATE error_patterns SET confidence = 0.8 WHERE pattern_hash = ? AND project_id = ?', hash, project);
  return hash;
}

const SESSIONS = {
  /** As BAZINGA's create-session leaves it: no metadata. */
  bazinga: { id: 'bazinga_20260101_090000', metadata: null },
  acme: { id: 'bazinga_20260101_100000', metadata: { project_id: 'acme' } },
  /** A project id that is no string, or empty: none recorded. */
  numeric: { id: 'bazinga_20260101_110000', metadata: { project_id: 42 } },
  empty: { id: 'bazinga_20260101_120000', metadata: { project_id: '' } },
} as const;

let acme: string;
let other: string;
beforeEach(() => {
  p = makeProject('ca-scope-');
  for (const s of Object.values(SESSIONS)) ok(['create-session', s.id, 'simple', 'Shop', ...(s.metadata === null ? [] : ['--metadata', JSON.stringify(s.metadata)])]);
  acme = pattern('acme', 'TypeError', "Cannot read properties of undefined (reading 'cart')");
  other = pattern('other', 'RangeError', 'Maximum call stack size exceeded in the reducer');
  ok(['save-strategy', 'acme', 'implementation', 'Keep cart totals in integer cents']);
  ok(['save-strategy', 'other', 'architecture', 'Split the reducer by feature']);
});
afterEach(() => p.cleanup());

describe('the scope a session reads', () => {
  it.each([
    { session: SESSIONS.bazinga, scope: { projectId: 'default', wholeDatabase: true } },
    { session: SESSIONS.acme, scope: { projectId: 'acme', wholeDatabase: false } },
    { session: SESSIONS.numeric, scope: { projectId: 'default', wholeDatabase: true } },
    { session: SESSIONS.empty, scope: { projectId: 'default', wholeDatabase: true } },
    // A session the database does not hold: nothing known of it, project `default` alone.
    { session: { id: 'bazinga_29990101_000000', metadata: null }, scope: { projectId: 'default', wholeDatabase: false } },
  ])('$session.id ($session.metadata): $scope', ({ session, scope }) => {
    const db = new Database(p.dbPath, { readonly: true });
    try {
      expect(getProjectScope(db, session.id)).toEqual(scope);
    } finally {
      db.close();
    }
  });

  it.each([
    { name: 'no project id (BAZINGA\'s own session)', session: SESSIONS.bazinga.id, patterns: () => [acme, other], strategies: ['Keep cart totals in integer cents', 'Split the reducer by feature'] },
    { name: 'a project id that is a number', session: SESSIONS.numeric.id, patterns: () => [acme, other], strategies: ['Keep cart totals in integer cents', 'Split the reducer by feature'] },
    { name: 'metadata project_id acme', session: SESSIONS.acme.id, patterns: () => [acme], strategies: ['Keep cart totals in integer cents'] },
  ])('a block for a session with $name shows the patterns and strategies it reads', ({ session, patterns, strategies }) => {
    const doc = assemble(session);
    // Its own choice is its scope's; what else it shows is the prompt builder's own (every project's
    // patterns above 0.7: the floor), never more.
    const floor: string[] = doc.floor?.error_patterns ?? [];
    const shown = doc.error_patterns as { pattern_hash: string; fault_hash: string }[];
    expect(shown.filter((e) => !floor.includes(e.fault_hash) || patterns().includes(e.pattern_hash)).map((e) => e.pattern_hash).sort()).toEqual(patterns().sort());
    expect(doc.strategies.map((s: { insight: string }) => s.insight).sort()).toEqual([...strategies].sort());
  });

  it("a no-project session's error text finds the pattern its agent saved under the project id it passed", () => {
    const doc = assemble(SESSIONS.bazinga.id, ['--error', "TypeError: Cannot read properties of undefined (reading 'cart')"]);
    expect(doc.error_patterns[0]).toMatchObject({ pattern_hash: acme, matched_error: true, solution: 'fix for acme' });
  });

  it('verdicts count across projects for a session read as one project, by project for a scoped one', () => {
    // acme's pattern shown to an approved spawn of the acme session.
    ok(['create-task-group', 'G1', SESSIONS.acme.id, 'Cart']);
    const fault = capturedPatternOf("TypeError: Cannot read properties of undefined (reading 'cart')").fault.fault_hash;
    expect(sql('SELECT fault_hash FROM ca_pattern_faults WHERE pattern_hash = ?', acme)).toEqual([{ fault_hash: fault }]);
    run(
      `INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt) VALUES ('acme', 'error_pattern', ?, ?, '2026-01-02', 1, 0)`,
      fault,
      SESSIONS.acme.id,
    );
    const counts = (session: string) => assemble(session, ['--explain']).error_patterns.find((e: { pattern_hash: string }) => e.pattern_hash === acme)?.outcome;
    expect(counts(SESSIONS.bazinga.id)).toMatchObject({ helped: 1 });
    expect(counts(SESSIONS.acme.id)).toMatchObject({ helped: 1 });
    // A session of another project never sees acme's pattern, nor its verdicts.
    ok(['create-session', 'bazinga_20260101_130000', 'simple', 'Other', '--metadata', JSON.stringify({ project_id: 'other' })]);
    // (acme's may still follow as the prompt builder's own: it reads every project; never with acme's verdicts.)
    const otherDoc = assemble('bazinga_20260101_130000', ['--explain']);
    const floor: string[] = otherDoc.floor?.error_patterns ?? [];
    const own = (otherDoc.error_patterns as { pattern_hash: string; fault_hash: string; outcome?: unknown }[]).filter((e) => !floor.includes(e.fault_hash) || e.pattern_hash === other);
    expect(own.map((e) => e.pattern_hash)).toEqual([other]);
    expect(otherDoc.error_patterns.find((e: { pattern_hash: string }) => e.pattern_hash === acme)?.outcome).toBeUndefined();
  });
});

describe('the report of a session that records no project id', () => {
  const metric = (session: string) => {
    const io = capturingIo(['--project-root', p.root, '--session', session, '--format', 'json', '--now', NOW], { cwd: REPO_ROOT });
    expect(runReport(io.io), io.err()).toBe(0);
    const data = JSON.parse(io.out());
    return { recurrence: data.metrics.find((m: { key: string }) => m.key === 'qa_failure_recurrence'), session: data.sessions[0] };
  };

  it('computes QA failure recurrence over every project (it was "not computable" in a project that has a pattern)', () => {
    run("UPDATE error_patterns SET occurrences = 2 WHERE project_id = 'acme'");
    const { recurrence, session } = metric(SESSIONS.bazinga.id);
    expect(recurrence).toMatchObject({ value: 50, numerator: 1, denominator: 2 });
    expect(session).toMatchObject({ project_id: 'default', whole_database: true });
    expect(session.repeated_failures.map((f: { pattern_hash: string }) => f.pattern_hash)).toEqual([acme]);
    // A scoped session: its project's alone.
    expect(metric(SESSIONS.acme.id).recurrence).toMatchObject({ value: 100, numerator: 1, denominator: 1 });
  });
});

describe('what a session that records no project id learns and remembers', () => {
  const TSC = "src/cart.ts(4,2): error TS2339: Property 'cents' does not exist on type 'Cart'.";

  it("its capture finds the fault saved under another project and moves that row (beside it); a new one goes under 'default'", () => {
    const session = SESSIONS.bazinga.id;
    ok(['create-task-group', 'G1', session, 'Cart']);
    ok(['create-task-group', 'G2', session, 'Totals']);
    // acme's agent saved this fault before (the compiler's line pasted whole: another row, the same fault).
    const known = pattern('acme', 'TS2339', TSC);
    const failure = (group: string, text: string, at: string) => {
      const file = writeArtifact(p, session, `failures_${group}.md`, `# QA\n\n${text}\n`);
      const id = ok(['save-context-package', session, group, 'failures', file, 'qa_expert', '["developer"]', 'high', 'QA failed']).package_id;
      run('UPDATE context_packages SET created_at = ? WHERE id = ?', at, id);
    };
    const fix = (group: string, text: string, at: string) => run('UPDATE orchestration_logs SET timestamp = ? WHERE id = ?', at, ok(['save-reasoning', session, group, 'developer', 'completion', text]).log_id);
    failure('G1', TSC, '2026-01-01 10:00:00');
    fix('G1', 'Added cents to Cart', '2026-01-01 10:20:00');
    failure('G2', 'VitestError: totals differ by shipping', '2026-01-01 11:00:00');
    fix('G2', 'Added shipping to the total', '2026-01-01 11:20:00');
    run("UPDATE task_groups SET last_review_status = 'APPROVED', status = 'completed' WHERE session_id = ?", session);
    const out = ok(['capture-outcomes', session]);
    expect(out.project_id).toBe('default');
    expect(out.decided.map((d: { operation: string; pattern_hash: string }) => [d.operation, d.pattern_hash === known])).toEqual([
      ['raised', true],
      ['created', false],
    ]);
    // The move is kept beside acme's row (which stays as its agent saved it), under acme.
    expect(sql('SELECT project_id, occurrences FROM error_patterns WHERE pattern_hash = ?', known)).toEqual([{ project_id: 'acme', occurrences: 1 }]);
    expect(sql('SELECT project_id, occurrences_delta FROM ca_pattern_learning WHERE pattern_hash = ?', known)).toEqual([{ project_id: 'acme', occurrences_delta: 1 }]);
    expect(sql("SELECT COUNT(*) AS n FROM error_patterns WHERE project_id = 'default'")).toEqual([{ n: 1 }]);
  });

  it("summarise-session learns from every project's patterns and strategies, and keeps the memories under 'default'", () => {
    // The session's end after the rows were written (the commands stamp them with the real clock).
    const END = '2999-01-01T00:00:00Z';
    const out = ok(['summarise-session', SESSIONS.bazinga.id, '--now', END]);
    expect(out.project_id).toBe('default');
    const sources: string[] = out.memories.map((m: { source: string }) => m.source);
    expect(sources).toEqual(expect.arrayContaining([`pattern:${acme}`, `pattern:${other}`]));
    expect(sources.filter((s) => s.startsWith('strategy:')).map((s) => s.split('_')[0])).toEqual(['strategy:acme', 'strategy:other']);
    expect(sql("SELECT DISTINCT project_id FROM ca_memories")).toEqual([{ project_id: 'default' }]);
    // A scoped session learns from its project alone.
    const scoped = ok(['summarise-session', SESSIONS.acme.id, '--now', END]).memories.map((m: { source: string }) => m.source);
    expect(scoped.filter((s: string) => s.startsWith('pattern:'))).toEqual([`pattern:${acme}`]);
  });
});
