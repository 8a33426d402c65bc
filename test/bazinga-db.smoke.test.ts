/**
 * Real-process smoke tests of bazinga-db, one small script per command family (sessions, task
 * groups, context packages and consumption, reasoning, error patterns, strategies, utilities).
 * The table-driven suites (vectors, bad input, query, schema, fixture) call `runCli` in process;
 * here each call runs twice, as a real `tsx` process (skills/bazinga-db/scripts/bazinga-db.ts) and
 * in process, on two projects set up identically, and both runs must pass the same assertions
 * (test/cliAssert.ts) and print the same bytes: exit code, stdout and stderr, once the two project
 * roots and any clock time are written the same way. That identity is what lets the tables run in
 * process without losing what a process run would catch.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fails, ok } from './cliAssert.ts';
import { BAZINGA_DB_SCRIPT, makeProject, runScript, writeArtifact, type Project, type RunResult } from './helpers.ts';
import { bazingaDbIn, bazingaDbVia, runBazingaDbInProcess, type CliMode } from './inProcess.ts';

const S = 'sess_smoke';

interface Step {
  args: string[];
  /** The assertions, the same for both modes; `p` is the project the call ran on. */
  check: (r: RunResult, p: Project) => void;
}

interface Family {
  /** In-process calls that give both projects the same starting state. */
  setup: (p: Project) => void;
  steps: Step[];
}

const session = (p: Project) => {
  ok(bazingaDbIn(p, ['create-session', S, 'simple', 'Smoke requirements', '--metadata', '{"project_id":"proj_smoke"}']));
};

const FAMILIES: Record<string, Family> = {
  sessions: {
    setup: () => {},
    steps: [
      {
        // The first call creates the database (schema and all) from a real process.
        args: ['create-session', S, 'parallel', 'Smoke requirements', '--metadata', '{"project_id":"proj_smoke"}'],
        check: (r, p) => {
          expect(ok(r)).toMatchObject({ success: true });
          expect(fs.existsSync(p.dbPath)).toBe(true);
        },
      },
      { args: ['get-session', S], check: (r) => expect(ok(r)).toMatchObject({ session_id: S, mode: 'parallel', status: 'active' }) },
      { args: ['update-session-status', S, 'paused'], check: (r) => fails(r, 1, 'VALIDATION', "Invalid status 'paused'") },
    ],
  },
  'task groups': {
    setup: session,
    steps: [
      {
        args: ['create-task-group', 'grp1', S, 'Group one', '--complexity', '3'],
        check: (r) => expect(ok(r).task_group).toMatchObject({ id: 'grp1', session_id: S, name: 'Group one', complexity: 3 }),
      },
      {
        args: ['create-task-group', 'global', S, 'x'],
        check: (r) => fails(r, 1, 'VALIDATION', "'global' is a reserved identifier and cannot be used as a task group ID"),
      },
    ],
  },
  'context packages and consumption': {
    setup: (p) => {
      session(p);
      writeArtifact(p, S, 'a.md', '# research\n');
    },
    steps: [
      {
        args: ['save-context-package', S, 'grp1', 'research', `bazinga/artifacts/${S}/a.md`, 'developer', '["developer","qa_expert"]', 'high', 'token=abcdefghijklmnopqrstuvwxyz012345 rotated'],
        check: (r) => expect(ok(r)).toEqual({ success: true, package_id: 1, file_path: `bazinga/artifacts/${S}/a.md`, consumers_created: 2, redacted: true }),
      },
      {
        args: ['get-context-packages', S, 'grp1', 'developer', '10', '--with-total'],
        check: (r) => {
          const out = ok(r);
          expect(out.packages.map((x: { id: number }) => x.id)).toEqual([1]);
          expect(out.total_available).toBe(1);
          expect(out.packages[0].summary).toBe('token=[REDACTED:token] rotated');
        },
      },
      {
        args: ['save-consumption', S, 'global', 'developer', '0', '1'],
        check: (r) => fails(r, 1, 'VALIDATION', "group_id cannot be 'global' for this operation (must be group-specific)"),
      },
    ],
  },
  reasoning: {
    setup: session,
    steps: [
      {
        args: ['save-reasoning', S, 'grp1', 'developer', 'understanding', 'Plan: password=hunter2secret in env', '--references', '["src/a.ts"]'],
        check: (r) => expect(ok(r)).toMatchObject({ success: true, reasoning_phase: 'understanding', redacted: true }),
      },
      {
        args: ['get-reasoning', S, '--phase', 'thinking'],
        check: (r) =>
          fails(r, 1, 'VALIDATION', "Invalid phase: thinking. Must be one of: ['approach', 'blockers', 'completion', 'decisions', 'pivot', 'risks', 'understanding']"),
      },
    ],
  },
  'error patterns': {
    setup: session,
    steps: [
      {
        args: ['save-error-pattern', 'proj_smoke', 'ModuleNotFoundError', "Cannot find module '@/utils' at /home/u/app/src/x.ts line 12", 'Fix tsconfig paths'],
        check: (r) =>
          expect(ok(r)).toEqual({
            success: true,
            pattern_hash: 'c396f13a676baff03ef14fad2f32524d28e108484bdee1b2e5c6ae7e2345c8c7',
            operation: 'created',
            occurrences: 1,
            confidence: 0.5,
            redacted: false,
          }),
      },
      { args: ['update-error-confidence', 'nohash', 'proj_smoke', 'success'], check: (r) => fails(r, 1, 'NOT_FOUND', 'Pattern not found') },
    ],
  },
  strategies: {
    setup: () => {},
    steps: [
      {
        args: ['save-strategy', 'proj1', 'weird', 'Use small PRs'],
        check: (r) =>
          expect(ok(r)).toEqual({ success: true, strategy_id: 'proj1_general_f378e270eb910c01', project_id: 'proj1', topic: 'general', operation: 'created', redacted: false }),
      },
      { args: ['update-strategy-helpfulness', 'nope'], check: (r) => fails(r, 1, 'NOT_FOUND', 'Strategy not found') },
    ],
  },
  utilities: {
    setup: () => {},
    steps: [
      {
        // A usage error: exit 2, and no database file is created for it.
        args: ['bogus-cmd'],
        check: (r, p) => {
          fails(r, 2, 'USAGE', 'Unknown command: bogus-cmd');
          expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
          expect(fs.existsSync(p.dbPath)).toBe(false);
        },
      },
      {
        // A read never creates the database: NOT_FOUND, naming the path and the command that creates one.
        args: ['query', 'SELECT 1'],
        check: (r, p) => {
          fails(r, 1, 'NOT_FOUND', /^Database not found: .*create-session creates it\)$/);
          expect(fs.existsSync(p.dbPath)).toBe(false);
        },
      },
      { args: ['cleanup-error-patterns'], check: (r) => expect(ok(r)).toMatchObject({ success: true, deleted_count: 0 }) },
      { args: ['query', '  select 1 as x'], check: (r) => expect(ok(r)).toEqual([{ x: 1 }]) },
      { args: ['query', 'DELETE FROM sessions'], check: (r) => fails(r, 1, 'VALIDATION', 'Only SELECT queries allowed') },
      { args: ['integrity-check'], check: (r) => expect(ok(r)).toEqual({ ok: true, details: 'Database integrity check passed' }) },
    ],
  },
};

/** The bytes of a run with the project root and clock times written the same way in both modes. */
function bytesOf(r: RunResult, p: Project) {
  const norm = (t: string) =>
    t
      .split(p.root)
      .join('<root>')
      .replace(/\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?/g, '<time>');
  return { code: r.code, stdout: norm(r.stdout), stderr: norm(r.stderr) };
}

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});
const project = (mode: CliMode) => {
  const p = makeProject(`ca-smoke-${mode}-`);
  projects.push(p);
  return p;
};

describe.each(Object.entries(FAMILIES))('bazinga-db %s: a real process and runCli in process give the same result', (_name, family) => {
  it('same exit codes, stdout and stderr, and both pass the same assertions', () => {
    const viaProcess = project('process');
    const inProcess = project('in-process');
    family.setup(viaProcess);
    family.setup(inProcess);
    for (const step of family.steps) {
      const real = bazingaDbVia('process')(viaProcess, step.args);
      step.check(real, viaProcess);
      const local = bazingaDbVia('in-process')(inProcess, step.args);
      step.check(local, inProcess);
      expect(bytesOf(local, inProcess), step.args.join(' ')).toEqual(bytesOf(real, viaProcess));
    }
  });
});

describe('bazinga-db informational lines (no --quiet): the same on a real process and in process', () => {
  it('creating a database says so on stderr, the JSON document alone on stdout', () => {
    const runs = (['process', 'in-process'] as const).map((mode) => {
      const p = project(mode);
      const argv = ['--db', p.dbPath, '--project-root', p.root, 'create-session', 'S', 'simple', 'req'];
      const r = mode === 'process' ? runScript(BAZINGA_DB_SCRIPT, argv) : runBazingaDbInProcess(argv);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ success: true, existing: false });
      expect(r.stderr).not.toBe('');
      expect(r.stderr).not.toContain('{"success"');
      expect(fs.existsSync(path.join(p.root, 'bazinga', 'bazinga.db'))).toBe(true);
      return bytesOf(r, p);
    });
    expect(runs[1]).toEqual(runs[0]);
  });
});
