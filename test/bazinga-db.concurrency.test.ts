/**
 * Concurrency (spec §2.4, §5.1, F21): many CLI processes writing and reading one database at the
 * same time all succeed, lose nothing, and never report "database is locked"; a database that
 * does not exist yet is created exactly once when several processes start together.
 *
 * The concurrent calls are real processes; the setup before them and the checks after them (one
 * call at a time) run through `runCli` in this process (test/inProcess.ts).
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BAZINGA_DB_SCRIPT, bazingaDbAsync, makeProject, runScriptAsync, writeArtifact, type Project, type RunResult } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';
import { CA_SCHEMA_VERSION } from '../skills/bazinga-db/scripts/lib/schema.ts';

const S = 'sess_conc';
const GROUP = 'grp1';
const WRITERS = 6;
const N = 5;
const READERS = 2;

const openRo = (p: string) => new Database(p, { readonly: true, fileMustExist: true });

function expectOk(r: RunResult, what: string): void {
  expect(r.stderr, what).not.toContain('database is locked');
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  expect(r.stderr, what).toBe('');
}

describe('bazinga-db under concurrent processes', () => {
  const projects: Project[] = [];
  afterEach(() => {
    for (const p of projects.splice(0)) p.cleanup();
  });

  it(
    `${WRITERS} writers (save-context-package ×${N}, save-reasoning ×${N} each) and ${READERS} readers at once`,
    async () => {
      const project = makeProject('ca-conc-');
      projects.push(project);
      expect(bazingaDbIn(project, ['create-session', S, 'parallel', 'Concurrency run']).code).toBe(0);
      expect(bazingaDbIn(project, ['create-task-group', GROUP, S, 'Group one']).code).toBe(0);
      const artifact = (w: number, i: number) => writeArtifact(project, S, `w${w}-p${i}.md`, `# writer ${w} package ${i}\n`);

      let running = 0;
      let maxRunning = 0;
      const track = async (p: Promise<RunResult>) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        try {
          return await p;
        } finally {
          running--;
        }
      };

      let writersDone = false;
      const writer = async (w: number) => {
        const packages: RunResult[] = [];
        const reasoning: RunResult[] = [];
        for (let i = 0; i < N; i++) {
          packages.push(
            await track(
              bazingaDbAsync(project, [
                'save-context-package',
                S,
                GROUP,
                'research',
                artifact(w, i),
                'developer',
                '["developer", "qa_expert"]',
                'high',
                `writer ${w} package ${i}`,
              ]),
            ),
          );
          reasoning.push(
            await track(
              bazingaDbAsync(project, [
                'save-reasoning',
                S,
                GROUP,
                'developer',
                'understanding',
                `writer ${w} reasoning ${i}`,
                '--agent_id',
                `w${w}`,
                '--iteration',
                String(i),
              ]),
            ),
          );
        }
        return { packages, reasoning };
      };

      /** Polls until the writers finish (and at least 3 times); returns every result. */
      const reader = async (args: string[]) => {
        const results: RunResult[] = [];
        while (!writersDone || results.length < 3) results.push(await track(bazingaDbAsync(project, args)));
        return results;
      };

      const readers = Promise.all([
        reader(['get-context-packages', S, GROUP, 'developer', '50', '--iteration', '1', '--with-total']),
        reader(['get-reasoning', S, '--group_id', GROUP, '--limit', '1000']),
      ]);
      const writes = await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
      writersDone = true;
      const [packageReads, reasoningReads] = await readers;

      expect(maxRunning).toBeGreaterThanOrEqual(WRITERS);

      // Every process succeeded, none saw the lock.
      const packageIds: number[] = [];
      const logIds: number[] = [];
      writes.forEach(({ packages, reasoning }, w) => {
        packages.forEach((r, i) => {
          expectOk(r, `writer ${w} package ${i}`);
          expect(r.json).toMatchObject({ success: true, consumers_created: 2, file_path: `bazinga/artifacts/${S}/w${w}-p${i}.md` });
          packageIds.push(r.json.package_id);
        });
        reasoning.forEach((r, i) => {
          expectOk(r, `writer ${w} reasoning ${i}`);
          expect(r.json).toMatchObject({ success: true, group_id: GROUP, reasoning_phase: 'understanding' });
          logIds.push(r.json.log_id);
        });
      });
      expect(new Set(packageIds).size).toBe(WRITERS * N);
      expect(new Set(logIds).size).toBe(WRITERS * N);

      // Readers always succeeded and only ever saw the data grow.
      let lastTotal = -1;
      for (const r of packageReads) {
        expectOk(r, 'get-context-packages');
        expect(r.json.packages.length).toBe(Math.min(50, r.json.total_available));
        expect(r.json.total_available).toBeGreaterThanOrEqual(lastTotal);
        lastTotal = r.json.total_available;
      }
      let lastCount = -1;
      for (const r of reasoningReads) {
        expectOk(r, 'get-reasoning');
        expect(Array.isArray(r.json)).toBe(true);
        expect(r.json.length).toBeGreaterThanOrEqual(lastCount);
        lastCount = r.json.length;
      }

      // Everything written is there, exactly once.
      const db = openRo(project.dbPath);
      try {
        const summaries = (db.prepare('SELECT id, summary, size_bytes FROM context_packages WHERE session_id = ? ORDER BY id').all(S) as {
          id: number;
          summary: string;
          size_bytes: number;
        }[]);
        expect(summaries).toHaveLength(WRITERS * N);
        expect(summaries.map((s) => s.id).sort((a, b) => a - b)).toEqual([...packageIds].sort((a, b) => a - b));
        const expectedSummaries = Array.from({ length: WRITERS }, (_, w) => Array.from({ length: N }, (_, i) => `writer ${w} package ${i}`)).flat();
        expect(summaries.map((s) => s.summary).sort()).toEqual(expectedSummaries.sort());
        expect(summaries.every((s) => s.size_bytes > 0)).toBe(true);

        const consumers = db
          .prepare('SELECT package_id, group_concat(agent_type) AS agents, count(*) AS n FROM context_package_consumers GROUP BY package_id')
          .all() as { package_id: number; agents: string; n: number }[];
        expect(consumers).toHaveLength(WRITERS * N);
        for (const c of consumers) {
          expect(c.n).toBe(2);
          expect(c.agents.split(',').sort()).toEqual(['developer', 'qa_expert']);
        }

        const reasoning = db
          .prepare("SELECT id, content, agent_id, iteration FROM orchestration_logs WHERE session_id = ? AND log_type = 'reasoning'")
          .all(S) as { id: number; content: string; agent_id: string; iteration: number }[];
        expect(reasoning).toHaveLength(WRITERS * N);
        expect(reasoning.map((r) => r.id).sort((a, b) => a - b)).toEqual([...logIds].sort((a, b) => a - b));
        const expectedReasoning = Array.from({ length: WRITERS }, (_, w) => Array.from({ length: N }, (_, i) => `writer ${w} reasoning ${i}`)).flat();
        expect(reasoning.map((r) => r.content).sort()).toEqual(expectedReasoning.sort());
        for (const r of reasoning) {
          const [, w, i] = /^writer (\d+) reasoning (\d+)$/.exec(r.content) ?? [];
          expect(r.agent_id).toBe(`w${w}`);
          expect(r.iteration).toBe(Number(i));
        }
        expect(db.prepare('SELECT count(*) AS n FROM schema_version').get()).toEqual({ n: 1 });
      } finally {
        db.close();
      }

      // Seen through the CLI as well.
      const total = bazingaDbIn(project, ['get-context-packages', S, GROUP, 'qa_expert', '50', '--with-total']);
      expect(total.json.total_available).toBe(WRITERS * N);
      expect(total.json.packages).toHaveLength(WRITERS * N);
      const reasoning = bazingaDbIn(project, ['get-reasoning', S, '--group_id', GROUP, '--limit', '1000']);
      expect(reasoning.json).toHaveLength(WRITERS * N);
      const integrity = bazingaDbIn(project, ['integrity-check']);
      expect(integrity.code, integrity.stderr).toBe(0);
      expect(integrity.json).toEqual({ ok: true, details: 'Database integrity check passed' });
    },
    300_000,
  );

  it(
    `${WRITERS} processes starting at once on a database that does not exist yet: every write succeeds (a read before it exists is NOT_FOUND), the schema is created once`,
    async () => {
      for (let round = 0; round < 3; round++) {
        const project = makeProject('ca-conc-fresh-');
        projects.push(project);
        expect(fs.existsSync(project.dbPath)).toBe(false);

        // Without --quiet, the one process that creates the database says so on stderr.
        const results = await Promise.all(
          Array.from({ length: WRITERS }, (_, i) =>
            runScriptAsync(BAZINGA_DB_SCRIPT, [
              '--db',
              project.dbPath,
              '--project-root',
              project.root,
              ...(i % 2 === 0 ? ['create-session', `sess_${i}`, 'simple', `requirements ${i}`] : ['list-sessions', '100']),
            ]),
          ),
        );
        results.forEach((r, i) => {
          expect(r.stderr, `round ${round} process ${i}`).not.toContain('database is locked');
          // A read never creates the database: one that starts before it exists says NOT_FOUND.
          if (i % 2 === 1 && r.code !== 0) {
            expect(r.error, `round ${round} process ${i}: ${r.stderr}`).toMatchObject({ code: 'NOT_FOUND' });
            return;
          }
          expect(r.code, `round ${round} process ${i}: ${r.stderr}`).toBe(0);
          expect(r.stdout).not.toBe('');
        });
        const creations = results.flatMap((r) => r.stderr.split('\n')).filter((l) => l.includes('Created BAZINGA database'));
        expect(creations, `round ${round}`).toHaveLength(1);

        const db = openRo(project.dbPath);
        try {
          expect(db.prepare('SELECT version, description FROM schema_version').all()).toEqual([
            { version: 19, description: 'Schema v19: SpecKit task ID tracking' },
          ]);
          expect(db.prepare('SELECT key, value FROM ca_meta').all()).toEqual([{ key: 'ca_schema', value: String(CA_SCHEMA_VERSION) }]);
          expect((db.prepare('SELECT session_id FROM sessions ORDER BY session_id').all() as { session_id: string }[]).map((r) => r.session_id)).toEqual([
            'sess_0',
            'sess_2',
            'sess_4',
          ]);
          const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ca\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").get();
          expect(tables).toEqual({ n: 17 });
          expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        } finally {
          db.close();
        }
      }

      // The same with --quiet through bazingaDbAsync: all six write, nothing on stderr.
      const project = makeProject('ca-conc-fresh-quiet-');
      projects.push(project);
      const quiet = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) => bazingaDbAsync(project, ['create-session', `sess_${i}`, 'parallel', `requirements ${i}`])),
      );
      quiet.forEach((r, i) => {
        expectOk(r, `quiet process ${i}`);
        expect(r.json).toMatchObject({ success: true, session_id: `sess_${i}`, existing: false });
      });
      const db = openRo(project.dbPath);
      try {
        expect(db.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: WRITERS });
        expect(db.prepare('SELECT count(*) AS n FROM schema_version').get()).toEqual({ n: 1 });
      } finally {
        db.close();
      }
    },
    300_000,
  );

  it(
    `${WRITERS} processes at once on an existing empty file, half of them failing: the others' writes are kept, the failures undo only their own`,
    async () => {
      const project = makeProject('ca-conc-empty-');
      projects.push(project);
      fs.mkdirSync(project.root + '/bazinga', { recursive: true });
      fs.writeFileSync(project.dbPath, '');
      const results = await Promise.all(
        Array.from({ length: WRITERS }, (_, i) =>
          bazingaDbAsync(project, i % 2 === 0 ? ['create-session', `sess_${i}`, 'simple', `requirements ${i}`] : ['update-strategy-helpfulness', `no_such_${i}`, '1']),
        ),
      );
      results.forEach((r, i) => {
        expect(r.stderr, `process ${i}`).not.toContain('database is locked');
        if (i % 2 === 0) expectOk(r, `process ${i}`);
        else expect(r.error, `process ${i}: ${r.stderr}`).toMatchObject({ code: 'NOT_FOUND', error: 'Strategy not found' });
      });
      const db = openRo(project.dbPath);
      try {
        expect((db.prepare('SELECT session_id FROM sessions ORDER BY session_id').all() as { session_id: string }[]).map((r) => r.session_id)).toEqual(['sess_0', 'sess_2', 'sess_4']);
        expect(db.prepare('SELECT count(*) AS n FROM schema_version').get()).toEqual({ n: 1 });
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        db.close();
      }
    },
    120_000,
  );
});
