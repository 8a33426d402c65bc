/**
 * Recorded once: assemblies started together for the same session, group, agent and iteration
 * each deliver their whole block (a record of delivery hides nothing from another spawn), and every
 * package delivered is recorded consumed for that iteration exactly once, however many runs
 * delivered it. A request the warm assembler took and its caller then ran itself (the server gave no
 * answer in time) is recorded once, as the caller's block, whichever of the two runs recorded first. Real `assemble.ts` and `consume.ts` processes on a real SQLite file seeded through the
 * repository functions.
 *
 * To make the runs collide rather than merely overlap, every child loads the assembler's modules
 * and then waits at a gate (a preload module polling for a file) until all of them are ready; the
 * test opens the gate once. No timing is asserted: a run that cannot take the write lock within
 * its busy budget falls back (no packages, which is allowed), everything else must deliver.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { claimPackages } from '../skills/bazinga-db/scripts/lib/consume.ts';
import { openDatabase, writeTransaction } from '../skills/bazinga-db/scripts/lib/db.ts';
import { PACKAGE_TYPES, PRIORITIES } from '../skills/bazinga-db/scripts/lib/enums.ts';
import { insertConsumer, insertPackage } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { insertSession } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { upsertTaskGroup } from '../skills/bazinga-db/scripts/lib/repo/taskGroups.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import { COMMON_FLAGS, parseFlags, requestFromFlags } from '../skills/context-assembler/scripts/lib/params.ts';
import { advance, zoneStep, type Deps } from '../skills/context-assembler/scripts/lib/pipeline.ts';
import { loadEnvironment, makeDeps, runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { ASSEMBLE } from '../skills/context-assembler/scripts/lib/main.ts';
import { consumeIds, consumeIdsRequest } from '../skills/context-assembler/scripts/lib/consumeIds.ts';
import { assemblyRecord, settleDelivery, writeRecord, type Delivery } from '../skills/context-assembler/scripts/lib/record.ts';
import { REPO_ROOT, makeProject, writeArtifact, type Project } from './helpers.ts';
import { capturingIo } from './inProcess.ts';

const SCRIPTS = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts');
const TSX = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
/** Sanity bound that catches hangs; not a performance assertion. */
const HANG_GUARD_MS = 60_000;
const S = 'sess_once';
const GROUP = 'AUTH';
const AGENT = 'developer';
const ITERATION = 1;
const NOW = '2025-12-02T12:00:00Z';
const PROCESSES = 5;
const LIMIT = 4;
/** Enough that every run, served one after another, gets LIMIT fresh packages. */
const PACKAGES = 40;
const PIPED_CONSUMERS = 3;

const ENV: NodeJS.ProcessEnv = { ...process.env };
delete ENV.CLAUDE_PROJECT_DIR;
delete ENV.BAZINGA_ROOT;

/** The preload: load the assembler (so the gate, not module loading, decides when a run starts), say ready, wait. */
const GATE_MODULE = `import fs from 'node:fs';
import path from 'node:path';
const dir = process.env.CA_TEST_GATE_DIR;
await import(process.env.CA_TEST_WARM_URL);
fs.writeFileSync(path.join(dir, 'ready-' + process.pid), '');
while (!fs.existsSync(path.join(dir, 'open'))) await new Promise((resolve) => setTimeout(resolve, 5));
`;

interface Child {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A session with PACKAGES packages in GROUP and session-wide, all for developer and qa_expert. */
function seed(project: Project): void {
  const db = openDatabase({ dbPath: project.dbPath });
  try {
    writeTransaction(db, () => {
      insertSession(db, { sessionId: S, mode: 'parallel', requirements: 'Login with refresh tokens', initialBranch: 'main', metadata: null });
      upsertTaskGroup(db, { id: GROUP, sessionId: S, name: 'Authentication', componentPath: 'src/auth/' });
      for (let i = 0; i < PACKAGES; i++) {
        const global = i % 5 === 0;
        const id = insertPackage(db, {
          sessionId: S,
          groupId: global ? null : GROUP,
          scope: global ? 'global' : 'group',
          packageType: PACKAGE_TYPES[i % PACKAGE_TYPES.length] as string,
          filePath: writeArtifact(project, S, `p${i}.md`, `# package ${i}\n\nNotes on the auth flow, part ${i}.\n`),
          producerAgent: 'investigator',
          priority: PRIORITIES[i % PRIORITIES.length] as string,
          summary: `Package ${i}: auth flow notes`,
          sizeBytes: 40,
          createdAt: `2025-12-01 ${String(8 + Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
        });
        insertConsumer(db, id, AGENT);
        insertConsumer(db, id, 'qa_expert');
      }
    });
    // Indexed, as the plugin's background indexer leaves a project: the read-only steps never index.
    writeTransaction(db, () => syncSearchIndex(db, { projectRoot: project.root, artifactBytes: DEFAULT_CONFIG.relevance.artifact_index_bytes }));
  } finally {
    db.close();
  }
}

/**
 * Starts one process per entry of `runs` (script, arguments, stdin), each held at the gate until
 * all are ready; then opens the gate and returns their results in order.
 */
async function startTogether(project: Project, runs: { script: string; args: readonly string[]; input?: string }[]): Promise<Child[]> {
  const gateDir = fs.mkdtempSync(path.join(project.root, 'gate-'));
  const gateModule = path.join(gateDir, 'gate.mjs');
  fs.writeFileSync(gateModule, GATE_MODULE);
  const env = { ...ENV, CA_TEST_GATE_DIR: gateDir, CA_TEST_WARM_URL: pathToFileURL(path.join(SCRIPTS, 'lib', 'main.ts')).href };
  let exited = 0;
  const results = runs.map(
    ({ script, args, input }) =>
      new Promise<Child>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', TSX, '--import', pathToFileURL(gateModule).href, path.join(SCRIPTS, script), ...args], {
          cwd: REPO_ROOT,
          env,
          timeout: HANG_GUARD_MS,
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => {
          exited++;
          resolve({ code, stdout, stderr });
        });
        child.stdin.end(input ?? '');
      }),
  );
  const ready = () => fs.readdirSync(gateDir).filter((f) => f.startsWith('ready-')).length;
  // A child that dies before the gate would keep the others waiting: stop waiting when one exits.
  while (ready() < runs.length && exited === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  fs.writeFileSync(path.join(gateDir, 'open'), '');
  return Promise.all(results);
}

const request = (project: Project, extra: readonly string[] = []) => [
  '--project-root', project.root,
  '--session', S,
  '--group', GROUP,
  '--agent', AGENT,
  '--iteration', String(ITERATION),
  '--now', NOW,
  ...extra,
];

/** The output document of a run; a fallback is allowed only when the database was locked. */
function documentOf(run: Child, what: string): { fallback: true } | { fallback: false; doc: any } {
  expect(run.code, `${what}: ${run.stderr}`).toBe(0);
  const out = JSON.parse(run.stdout);
  if (out.fallback === true) {
    expect(out.error, `${what} fell back`).toMatch(/locked|busy/i);
    return { fallback: true };
  }
  expect(run.stderr.split('\n').filter((l) => l && !/by another run; withdrawn/.test(l)), what).toEqual([]);
  return { fallback: false, doc: out };
}

/** The packages recorded consumed by AGENT at ITERATION: scope rows and consumer rows, by package id. */
function recorded(dbPath: string): { scopes: Map<number, number>; consumers: number[] } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const scopes = db
      .prepare('SELECT package_id, COUNT(*) AS n FROM consumption_scope WHERE session_id = ? AND agent_type = ? AND iteration = ? GROUP BY package_id')
      .all(S, AGENT, ITERATION) as { package_id: number; n: number }[];
    const consumers = db
      .prepare('SELECT package_id FROM context_package_consumers WHERE agent_type = ? AND consumed_at IS NOT NULL AND iteration = ? ORDER BY package_id')
      .all(AGENT, ITERATION) as { package_id: number }[];
    return { scopes: new Map(scopes.map((r) => [r.package_id, r.n])), consumers: consumers.map((r) => r.package_id) };
  } finally {
    db.close();
  }
}

const sorted = (ids: readonly number[]) => [...ids].sort((a, b) => a - b);

/** Every delivered package is recorded exactly once for (AGENT, ITERATION), and nothing else is. */
function expectRecordedExactly(dbPath: string, delivered: readonly number[]): void {
  const { scopes, consumers } = recorded(dbPath);
  expect(sorted([...scopes.keys()])).toEqual(sorted(delivered));
  for (const [id, n] of scopes) expect(n, `scope rows of package ${id}`).toBe(1);
  expect(consumers).toEqual(sorted(delivered));
}

describe('exactly once under concurrent processes', () => {
  const projects: Project[] = [];
  afterEach(() => {
    for (const p of projects.splice(0)) p.cleanup();
  });

  it(
    `${PROCESSES} assemble.ts processes released together (limit ${LIMIT}, ${PACKAGES} packages) each deliver the same block, each package recorded once`,
    async () => {
      const project = makeProject('ca-once-');
      projects.push(project);
      seed(project);
      const runs = await startTogether(
        project,
        Array.from({ length: PROCESSES }, () => ({ script: 'assemble.ts', args: request(project, ['--limit', String(LIMIT), '--format', 'json']) })),
      );
      const blocks: number[][] = [];
      const recordedBy: number[] = [];
      runs.forEach((run, i) => {
        const out = documentOf(run, `assemble ${i}`);
        if (out.fallback) return;
        const ids = out.doc.packages.map((p: any) => p.id as number);
        expect(out.doc.consumption).toBe('recorded');
        expect(out.doc.excluded.filter((e: any) => e.reason === 'consumed')).toEqual([]);
        blocks.push(sorted(ids));
        recordedBy.push(...out.doc.consumed);
      });
      expect(blocks.length).toBeGreaterThan(0);
      for (const b of blocks) expect(b).toEqual(blocks[0]);
      // Whoever recorded a package first recorded it; the others found it recorded.
      expect(sorted(recordedBy)).toEqual(blocks[0]);
      expectRecordedExactly(project.dbPath, blocks[0] as number[]);
    },
    4 * HANG_GUARD_MS,
  );

  it(
    `the piped chain: ${PIPED_CONSUMERS} consume.ts processes given the same document each deliver it, each package recorded once`,
    async () => {
      const project = makeProject('ca-once-pipe-');
      projects.push(project);
      seed(project);
      // One document, as `zone | rank | pack | reasoning` prints it; handed to every consume step at once.
      const [reasoning] = await startTogether(project, [{ script: 'reasoning.ts', args: request(project, ['--limit', String(LIMIT)]) }]);
      const first = documentOf(reasoning as Child, 'reasoning.ts');
      if (first.fallback) throw new Error('reasoning.ts fell back');
      const chosen = first.doc.packages.map((p: any) => p.id as number);
      // The top LIMIT, and the prompt builder's own five the ranking left out.
      expect(chosen.length).toBeGreaterThanOrEqual(LIMIT);

      const runs = await startTogether(
        project,
        Array.from({ length: PIPED_CONSUMERS }, () => ({ script: 'consume.ts', args: ['--project-root', project.root], input: JSON.stringify(first.doc) })),
      );
      const delivered: number[] = [];
      runs.forEach((run, i) => {
        const out = documentOf(run, `consume ${i}`);
        if (out.fallback) return;
        const ids = out.doc.packages.map((p: any) => p.id as number);
        expect(out.doc.consumption).toBe('recorded');
        // Every consume step delivers the whole document; only the first records each package.
        expect(sorted(ids)).toEqual(sorted(chosen));
        expect(out.doc.excluded.filter((e: any) => e.reason === 'consumed')).toEqual([]);
        delivered.push(...out.doc.consumed);
      });
      expect(sorted(delivered)).toEqual(sorted(chosen));
      expectRecordedExactly(project.dbPath, delivered);
    },
    4 * HANG_GUARD_MS,
  );
});

describe('claims an agent without per-iteration rows cannot record', () => {
  it('requirements_engineer: claimed at its first iteration, unrecorded (not "claimed") at the next', () => {
    const project = makeProject('ca-once-re-');
    try {
      const db = openDatabase({ dbPath: project.dbPath });
      try {
        const id = writeTransaction(db, () => {
          insertSession(db, { sessionId: S, mode: 'simple', requirements: 'Build', initialBranch: 'main', metadata: null });
          const pkg = insertPackage(db, {
            sessionId: S,
            groupId: GROUP,
            scope: 'group',
            packageType: 'research',
            filePath: writeArtifact(project, S, 're.md', '# notes\n'),
            producerAgent: 'developer',
            priority: 'high',
            summary: 'Requirements notes',
            sizeBytes: 8,
          });
          insertConsumer(db, pkg, 'requirements_engineer');
          return pkg;
        });
        const claim = (iteration: number) => writeTransaction(db, () => claimPackages(db, [id], 'requirements_engineer', iteration));
        expect(claim(0)).toEqual({ claimed: [id], unrecorded: [], taken: [] });
        expect(claim(0)).toEqual({ claimed: [], unrecorded: [], taken: [id] });
        expect(claim(1)).toEqual({ claimed: [], unrecorded: [id], taken: [] });
      } finally {
        db.close();
      }
    } finally {
      project.cleanup();
    }
  });
});

describe('a request the warm assembler took: recorded once, by the run whose block was printed', () => {
  const KEY = 'request-key-1';
  const iteration = 7;

  /** assemble in this process for (AGENT, iteration), as the server's run or the caller's own run of the request KEY. */
  function assembleAs(project: Project, supersedes: boolean): { doc: any; err: string } {
    const { io, out, err } = capturingIo(request(project, ['--limit', String(LIMIT), '--format', 'json']).map((a, i, all) => (all[i - 1] === '--iteration' ? String(iteration) : a)), {
      cwd: project.root,
      env: ENV,
      now: NOW,
    });
    expect(runScript(ASSEMBLE, { ...io, delivery: { key: KEY, supersedes } })).toBe(0);
    return { doc: JSON.parse(out()), err: err() };
  }

  /** The records of the request and of (AGENT, iteration), and the packages recorded consumed at that iteration (scope rows, consumer rows). */
  function stored(dbPath: string) {
    const db = new Database(dbPath, { readonly: true });
    try {
      const records = (db.prepare('SELECT * FROM ca_assemblies WHERE session_id = ? AND agent_type = ? AND iteration = ?').all(S, AGENT, iteration) as { request_key?: string; detail: string }[]).map((r) => ({
        key: r.request_key ?? null,
        delivered: sorted(JSON.parse(r.detail).delivered as number[]),
      }));
      const scopes = (db.prepare('SELECT package_id FROM consumption_scope WHERE session_id = ? AND agent_type = ? AND iteration = ? ORDER BY package_id').all(S, AGENT, iteration) as { package_id: number }[]).map((r) => r.package_id);
      const consumers = (db.prepare('SELECT package_id FROM context_package_consumers WHERE agent_type = ? AND iteration = ? AND consumed_at IS NOT NULL ORDER BY package_id').all(AGENT, iteration) as { package_id: number }[]).map((r) => r.package_id);
      return { records, scopes, consumers };
    } finally {
      db.close();
    }
  }

  /** A critical package, newer than every other: the next block shows it in place of one it showed. */
  function addCriticalPackage(project: Project): number {
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      return writeTransaction(db, () => {
        const id = insertPackage(db, {
          sessionId: S,
          groupId: GROUP,
          scope: 'group',
          packageType: 'research',
          filePath: writeArtifact(project, S, 'late.md', '# late\n\nThe token refresh race, found since.\n'),
          producerAgent: 'investigator',
          priority: 'critical',
          summary: 'Late finding: the token refresh race',
          sizeBytes: 40,
          createdAt: '2025-12-02 11:00:00',
        });
        insertConsumer(db, id, AGENT);
        return id;
      });
    } finally {
      db.close();
    }
  }

  const projects: Project[] = [];
  afterEach(() => {
    for (const p of projects.splice(0)) p.cleanup();
  });

  it("the server's run recorded and its caller ran the request itself after the state moved on: one record, the caller's, and only its block's packages recorded consumed", () => {
    const project = makeProject('ca-once-key-');
    projects.push(project);
    seed(project);
    const server = assembleAs(project, false).doc;
    const serverIds = sorted(server.packages.map((p: any) => p.id as number));
    expect(stored(project.dbPath).records).toEqual([{ key: KEY, delivered: serverIds }]);
    const late = addCriticalPackage(project);
    const caller = assembleAs(project, true).doc;
    const callerIds = sorted(caller.packages.map((p: any) => p.id as number));
    // The two blocks differ (the late package in, one of the server's out): the case that matters.
    expect(callerIds).toContain(late);
    expect(serverIds.filter((id) => !callerIds.includes(id)).length).toBeGreaterThan(0);
    expect(caller.consumption).toBe('recorded');
    expect(sorted(caller.consumed)).toEqual(callerIds);
    expect(stored(project.dbPath)).toEqual({ records: [{ key: KEY, delivered: callerIds }], scopes: callerIds, consumers: callerIds });
  });

  it("the prompt hook's recording (consume --ids): a run records as delivered only what it recorded itself, so its request's later run never takes back another spawn's consumption", () => {
    const project = makeProject('ca-once-hook-');
    projects.push(project);
    seed(project);
    // A real document to record (a dry run records nothing).
    const dry = capturingIo(request(project, ['--limit', String(LIMIT), '--format', 'json', '--dry-run']).map((a, i, all) => (all[i - 1] === '--iteration' ? String(iteration) : a)), { cwd: project.root, env: ENV, now: NOW });
    expect(runScript(ASSEMBLE, dry.io)).toBe(0);
    const doc = JSON.parse(dry.out());
    const [a, b, c] = sorted(doc.packages.map((p: any) => p.id as number));
    expect(c).toBeDefined();
    /** The hook's recording of `ids`, under `delivery` when given; returns what the run says it recorded. */
    const record = (ids: number[], delivery?: Delivery): number[] | undefined => {
      const flags = parseFlags(['--project-root', project.root, '--session', S, '--agent', AGENT, '--iteration', String(iteration), '--ids', ids.join(',')], { ...COMMON_FLAGS, '--ids': 'string' });
      let recorded: number[] | undefined;
      const { io } = capturingIo([], { cwd: project.root, env: ENV, now: NOW });
      const code = consumeIds(
        consumeIdsRequest(flags),
        flags,
        io,
        (db, mine) => {
          recorded = mine;
          writeRecord(db, assemblyRecord({ ...doc, consumption: 'recorded', consumed: mine }, { source: 'prompt-hook', durationMs: 1, outcome: 'recorded' }), delivery);
        },
        false,
        delivery === undefined ? undefined : (db, delivering) => settleDelivery(db, delivery, delivering),
      );
      expect(code).toBe(0);
      return recorded;
    };
    // Another spawn recorded a and b at this iteration first.
    expect(record([a as number, b as number])).toEqual([a, b]);
    // The server's run of a request delivers a, b and c: it recorded c only.
    expect(record([a as number, b as number, c as number], { key: 'hook-key', supersedes: false })).toEqual([c]);
    // Its caller ran the request itself and delivered c: a and b stay recorded, the other spawn's.
    expect(record([c as number], { key: 'hook-key', supersedes: true })).toEqual([c]);
    expect(stored(project.dbPath).scopes).toEqual(sorted([a as number, b as number, c as number]));
  });

  it("the caller's own run recorded first: the server's run of the same request, resumed later, records nothing", () => {
    const project = makeProject('ca-once-key-late-');
    projects.push(project);
    seed(project);
    const caller = assembleAs(project, true).doc;
    const callerIds = sorted(caller.packages.map((p: any) => p.id as number));
    expect(callerIds.length).toBeGreaterThan(0);
    addCriticalPackage(project);
    const server = assembleAs(project, false);
    // Its answer is nobody's to print: it fell back, recording nothing.
    expect(server.doc.fallback).toBe(true);
    expect(stored(project.dbPath)).toEqual({ records: [{ key: KEY, delivered: callerIds }], scopes: callerIds, consumers: callerIds });
  });
});
