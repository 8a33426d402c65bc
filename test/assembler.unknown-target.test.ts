/**
 * An unknown session or task group: the assembler prints the block as always and one warning line
 * on stderr naming what was not found and what exists (bounded lists, a bounded count); nothing
 * when both exist, for the group `global`, or in a zone that reads no database. Assemblies run in
 * this process (runScript of lib/shell.ts) on copies of the v19 fixture and on fresh SQLite files
 * seeded through the repository functions; one real process through the bin launcher.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, writeTransaction, type DB } from '../skills/bazinga-db/scripts/lib/db.ts';
import { insertSession } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { upsertTaskGroup } from '../skills/bazinga-db/scripts/lib/repo/taskGroups.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { GROUPS_NAMED, SESSIONS_COUNTED, SESSIONS_NAMED, unknownTargetWarning } from '../skills/context-assembler/scripts/lib/unknownTarget.ts';
import { REPO_ROOT, S1, S2, makeProject, type Project } from './helpers.ts';
import { capturingIo, copyIndexedFixture } from './inProcess.ts';

const NOW = '2025-12-02T12:00:00Z';
const ASSEMBLE_SPEC = { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' } as const;
const FALLBACK = ':warning: Context assembly encountered an error.';

function assemble(project: Project, flags: readonly string[]): { code: number; stdout: string; stderr: string } {
  const run = capturingIo(['--project-root', project.root, '--agent', 'developer', '--now', NOW, '--dry-run', ...flags], { cwd: REPO_ROOT });
  const code = runScript(ASSEMBLE_SPEC, run.io);
  return { code, stdout: run.out(), stderr: run.err() };
}

describe('on the v19 fixture (sessions S1 with AUTH, CART; S2 with CHK)', () => {
  let p: Project;
  beforeAll(() => {
    p = copyIndexedFixture('ca-unknown-');
  });
  afterAll(() => p.cleanup());

  it.each([
    {
      name: 'an unknown session: the sessions there are, newest first, and how many',
      flags: ['--session', 'bazinga_20990101_000000'],
      warning: `⚠ context-assembler: session 'bazinga_20990101_000000' not found; sessions: ${S2}, ${S1} (2 most recent of 2)\n`,
    },
    {
      name: 'an unknown session with a group: the session is what is missing',
      flags: ['--session', 'nope', '--group', 'AUTH'],
      warning: `⚠ context-assembler: session 'nope' not found; sessions: ${S2}, ${S1} (2 most recent of 2)\n`,
    },
    {
      name: "an unknown group: the session's groups",
      flags: ['--session', S1, '--group', 'AUTHX'],
      warning: `⚠ context-assembler: group 'AUTHX' not found in session ${S1}; groups: AUTH, CART\n`,
    },
    {
      name: "another session's group is unknown here",
      flags: ['--session', S1, '--group', 'CHK'],
      warning: `⚠ context-assembler: group 'CHK' not found in session ${S1}; groups: AUTH, CART\n`,
    },
    { name: 'a known session and group: nothing', flags: ['--session', S1, '--group', 'AUTH'], warning: '' },
    { name: 'the group global (session-wide) is never unknown', flags: ['--session', S1, '--group', 'global'], warning: '' },
    { name: 'no --group: session-wide, nothing', flags: ['--session', S2], warning: '' },
    {
      name: 'Emergency zone (no database read): nothing',
      flags: ['--session', 'nope', '--group', 'X', '--current-tokens', '199000'],
      warning: '',
    },
  ])('$name', ({ flags, warning }) => {
    const r = assemble(p, flags);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(warning);
    expect(r.stdout.startsWith('## Context for developer')).toBe(true);
    expect(r.stdout).not.toContain(FALLBACK);
  });

  it('the block itself is unchanged: an unknown session prints the empty block (golden empty.md)', () => {
    const r = assemble(p, ['--session', 'bazinga_20990101_000000']);
    expect(r.stdout).toBe(fs.readFileSync(path.join(REPO_ROOT, 'test', 'golden', 'empty.md'), 'utf8'));
  });

  it('as a real process through the launcher: the block on stdout, the one warning on stderr, exit 0', () => {
    const bin = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
    const env = { ...process.env };
    delete env.CLAUDE_PROJECT_DIR;
    delete env.BAZINGA_ROOT;
    const r = spawnSync(process.execPath, [bin, '--project-root', p.root, '--session', S1, '--group', 'PAYMENTS', '--agent', 'developer', '--now', NOW, '--dry-run'], {
      cwd: p.root,
      env,
      encoding: 'utf8',
      timeout: 15_000, // hang guard only
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.startsWith('## Context for developer')).toBe(true);
    expect(r.stderr).toBe(`⚠ context-assembler: group 'PAYMENTS' not found in session ${S1}; groups: AUTH, CART\n`);
  });
});

describe('bounded: many sessions, many groups, none at all (fresh database)', () => {
  let p: Project;
  let db: DB;
  const SESSIONS = SESSIONS_COUNTED + 5;
  const sessionId = (i: number) => `s${String(i).padStart(4, '0')}`;
  beforeAll(() => {
    p = makeProject('ca-unknown-many-');
    db = openDatabase({ dbPath: p.dbPath });
    writeTransaction(db, () => {
      for (let i = 0; i < SESSIONS; i++) insertSession(db, { sessionId: sessionId(i), mode: 'simple', requirements: 'r', initialBranch: 'main', metadata: null });
      for (let g = 0; g < GROUPS_NAMED + 2; g++) upsertTaskGroup(db, { id: `G${String(g).padStart(2, '0')}`, sessionId: sessionId(0), name: `group ${g}` });
    });
  });
  afterAll(() => {
    db.close();
    p.cleanup();
  });

  it(`an unknown session names the ${SESSIONS_NAMED} most recently created and counts up to ${SESSIONS_COUNTED}+`, () => {
    const newest = [SESSIONS - 1, SESSIONS - 2, SESSIONS - 3].map(sessionId).join(', ');
    expect(unknownTargetWarning(db, { session: 'nope', group: 'global' }, [])).toBe(
      `context-assembler: session 'nope' not found; sessions: ${newest} (3 most recent of ${SESSIONS_COUNTED}+)`,
    );
  });

  it(`an unknown group names the first ${GROUPS_NAMED} groups and how many there are`, () => {
    const ids = Array.from({ length: GROUPS_NAMED + 2 }, (_, g) => `G${String(g).padStart(2, '0')}`);
    expect(unknownTargetWarning(db, { session: sessionId(0), group: 'NOPE' }, ids)).toBe(
      `context-assembler: group 'NOPE' not found in session ${sessionId(0)}; groups: ${ids.slice(0, GROUPS_NAMED).join(', ')} (${GROUPS_NAMED} of ${ids.length})`,
    );
    // Through the assembler, which lists the groups itself.
    const r = assemble(p, ['--session', sessionId(0), '--group', 'NOPE']);
    expect(r.stderr).toBe(`⚠ context-assembler: group 'NOPE' not found in session ${sessionId(0)}; groups: ${ids.slice(0, GROUPS_NAMED).join(', ')} (${GROUPS_NAMED} of ${ids.length})\n`);
  });

  it('a session without task groups: a group in it is unknown, the session is not', () => {
    const r = assemble(p, ['--session', sessionId(7), '--group', 'AUTH']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`⚠ context-assembler: group 'AUTH' not found in session ${sessionId(7)}; the session has no task groups\n`);
    expect(assemble(p, ['--session', sessionId(7)]).stderr).toBe('');
  });

  it('the statements behind it are bounded: no sort of the sessions, every scan cut by a LIMIT', () => {
    // A connection of its own, so that its statements are prepared (and recorded) here.
    const own = openDatabase({ dbPath: p.dbPath });
    const seen: string[] = [];
    const prepare = own.prepare.bind(own);
    own.prepare = ((sql: string) => (seen.push(sql), prepare(sql))) as typeof own.prepare;
    try {
      expect(unknownTargetWarning(own, { session: 'nope', group: 'global' }, [])).toMatch(/not found/);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      for (const sql of seen) {
        const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...sql.split('?').slice(1).map(() => 3)) as { detail: string }[]).map((r) => r.detail);
        expect(plan.join(' | '), sql).not.toMatch(/TEMP B-TREE/);
        if (plan.some((d) => /^SCAN /.test(d))) expect(sql, plan.join(' | ')).toMatch(/LIMIT \?/);
      }
    } finally {
      own.close();
    }
  });

  it('an empty database: the session is unknown and there is none to name', () => {
    const empty = makeProject('ca-unknown-empty-');
    try {
      const e = openDatabase({ dbPath: empty.dbPath });
      try {
        expect(unknownTargetWarning(e, { session: 'S', group: 'AUTH' }, [])).toBe(`context-assembler: session 'S' not found; the database has no sessions`);
      } finally {
        e.close();
      }
    } finally {
      empty.cleanup();
    }
  });
});
