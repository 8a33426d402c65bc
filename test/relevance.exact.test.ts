/**
 * The fast candidate read (bucket heads ∪ best full-text hits ∪ packages naming a scope path,
 * widened until provesExact holds) gives exactly the selection ranking every eligible package
 * gives. Property test over seeded databases of 1,200 packages in which every (priority, type)
 * bucket holds many packages, with random requests: groups, agents, iterations with prior
 * consumption, task text or none, scope or none, Normal and Conservative zones, limits 1–10 and
 * full-text candidate counts from 1 (forcing several rounds) to 40.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate, GROUPS, BENCH_SESSION } from '../bench/generate.ts';
import { openDatabase, writeTransaction, type DB } from '../skills/bazinga-db/scripts/lib/db.ts';
import { countRequestPackages, findPackage, insertConsumer, insertPackage, listConsumedPackages } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { markPackageConsumed } from '../skills/bazinga-db/scripts/lib/consume.ts';
import { insertSession } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { upsertTaskGroup } from '../skills/bazinga-db/scripts/lib/repo/taskGroups.ts';
import { DEFAULT_CONFIG, type Config, type Zone } from '../skills/context-assembler/scripts/lib/config.ts';
import type { AssemblyRequest } from '../skills/context-assembler/scripts/lib/contract.ts';
import { planSearch, selectPackages } from '../skills/context-assembler/scripts/lib/search.ts';
import { AVAILABLE_CAP } from '../skills/context-assembler/scripts/lib/pipeline.ts';

let dir: string;
let db: DB;
let words: string[];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-exact-'));
  const g = generate(dir, 1200, 7);
  db = openDatabase({ dbPath: g.dbPath });
  writeTransaction(db, () => {
    GROUPS.forEach((id, i) => upsertTaskGroup(db, { id, sessionId: BENCH_SESSION, name: `group ${id}`, componentPath: i % 2 === 0 ? `src/${['auth', 'cart', 'sync', 'cache', 'queue'][i / 2]}/` : undefined }));
    // Packages written in the same second (SQLite's times have one-second resolution): ties in every
    // signal but the id, in every bucket.
    const priorities = ['critical', 'high', 'medium', 'low'];
    const types = ['research', 'failures', 'decisions', 'handoff', 'investigation'];
    for (let i = 0; i < 300; i++) {
      const id = insertPackage(db, {
        sessionId: BENCH_SESSION,
        groupId: i % 3 === 0 ? null : GROUPS[i % 4] as string,
        scope: i % 3 === 0 ? 'global' : 'group',
        packageType: types[i % 5] as string,
        filePath: `bazinga/artifacts/${BENCH_SESSION}/tie_${i}.md`,
        producerAgent: 'qa_expert',
        priority: priorities[(i >> 2) % 4] as string,
        summary: i % 2 === 0 ? 'auth token refresh cache' : 'cart sync queue retry',
        sizeBytes: null,
        createdAt: '2025-12-31 12:00:00',
      });
      insertConsumer(db, id, 'developer');
      insertConsumer(db, id, 'qa_expert');
    }
    syncSearchIndex(db, { projectRoot: g.root, artifactBytes: 16384 });
  });
  const summaries = db.prepare('SELECT summary FROM context_packages ORDER BY id LIMIT 300').all() as { summary: string }[];
  words = [...new Set(summaries.flatMap((s) => s.summary.split(' ')))].sort();
});

afterAll(() => {
  db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const AGENTS = ['developer', 'senior_software_engineer', 'qa_expert', 'tech_lead', 'investigator', 'requirements_engineer'] as const;

describe('fast read = ranking every eligible package', () => {
  it('holds for random requests', () => {
    let widened = 0;
    let withHits = 0;
    fc.assert(
      fc.property(
        fc.record({
          group: fc.constantFrom(...GROUPS, 'global'),
          agent: fc.constantFrom(...AGENTS),
          iteration: fc.constantFrom(0, 1),
          task: fc.option(fc.array(fc.nat(10_000), { minLength: 1, maxLength: 6 }), { nil: null }),
          scope: fc.option(fc.constantFrom('src/auth', 'src/cart,src/queue', 'src/sync/', 'src'), { nil: null }),
          zone: fc.constantFrom<Zone>('Normal', 'Normal', 'Conservative'),
          limit: fc.integer({ min: 1, max: 10 }),
          candidates: fc.constantFrom(1, 3, 40),
          weights: fc.constantFrom(
            {},
            { relevance: 12, scope: 3 },
            { relevance: 30, scope: 0 },
            // Weights with many decimals: scores round to 6 places, and a bound must round the same way.
            { relevance: 3.1234567, scope: 0.0000005, recency: 1.0000003, type_affinity: 1.4999999 },
          ),
        }),
        (p) => {
          const config: Config = structuredClone(DEFAULT_CONFIG);
          config.relevance.candidates = p.candidates;
          Object.assign(config.ranking.weights, p.weights);
          const task = p.task === null ? null : p.task.map((i) => words[i % words.length]).join(' ');
          const request: AssemblyRequest = {
            session: BENCH_SESSION,
            group: p.group,
            agent: p.agent,
            model: 'sonnet',
            current_tokens: 0,
            iteration: p.iteration,
            limit: p.limit,
            include_reasoning: false,
            reasoning_level: 'medium',
            now: '2026-01-01T00:00:00.000Z',
            task,
            error: null,
            scope: p.scope,
            lang: null,
            framework: null,
          };
          const query = { sessionId: BENCH_SESSION, groupId: p.group, agentType: p.agent, iteration: p.iteration };
          const consumed = listConsumedPackages(db, query);
          const plan = planSearch(db, request, config, (t) => t, true);
          const common = {
            db,
            query,
            plan,
            zone: p.zone,
            limit: p.limit,
            nowMs: Date.parse(request.now),
            config,
            explain: false,
            totalAvailable: countRequestPackages(db, query, AVAILABLE_CAP).count - consumed.length,
            consumed,
          };
          const fast = selectPackages(common);
          const full = selectPackages({ ...common, exhaustive: true });
          if (fast.rounds > 1) widened++;
          if (plan.inSession !== null) withHits++;
          const view = (s: typeof fast) => s.ranked.selected.map((x) => `${x.id}:${x.score}`);
          expect(view(fast)).toEqual(view(full));
          expect(fast.ranked.priority_used).toBe(full.ranked.priority_used);
          expect(fast.ranked.total_available).toBe(full.ranked.total_available);
        },
      ),
      { numRuns: 150, seed: 20261123 },
    );
    // The property ran on requests that had to widen the read, and on requests with a query.
    expect(widened).toBeGreaterThan(5);
    expect(withHits).toBeGreaterThan(50);
  });
});

/**
 * A developer's request in session S, selected by the fast read and by ranking every eligible
 * package: the two must select the same packages with the same scores. Returns the fast selection
 * (with --explain's components).
 */
function selectedBothWays(
  conn: DB,
  p: { group: string; iteration: number; limit: number; task: string | null; scope: string | null; zone: Zone; candidates: number },
  weights: Partial<Config['ranking']['weights']>,
): ReturnType<typeof selectPackages> {
  const config: Config = structuredClone(DEFAULT_CONFIG);
  config.relevance.candidates = p.candidates;
  Object.assign(config.ranking.weights, weights);
  const request: AssemblyRequest = {
    session: 'S', group: p.group, agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: p.iteration, limit: p.limit,
    include_reasoning: false, reasoning_level: 'medium', now: '2025-12-02T00:00:00.000Z', task: p.task,
    error: null, scope: p.scope, lang: null, framework: null,
  };
  const query = { sessionId: 'S', groupId: p.group, agentType: 'developer', iteration: p.iteration };
  const consumed = listConsumedPackages(conn, query);
  const plan = planSearch(conn, request, config, (t) => t, true);
  const common = { db: conn, query, plan, zone: p.zone, limit: p.limit, nowMs: Date.parse(request.now), config, explain: true, totalAvailable: countRequestPackages(conn, query, AVAILABLE_CAP).count - consumed.length, consumed };
  const fast = selectPackages(common);
  const view = (s: ReturnType<typeof selectPackages>) => s.ranked.selected.map((x) => `${x.id}:${x.score}`);
  expect(view(fast)).toEqual(view(selectPackages({ ...common, exhaustive: true })));
  return fast;
}

describe('fast read = ranking every eligible package, on a store made of ties', () => {
  // Few words, three timestamps one second apart, weights with many decimals: scores tie or differ
  // in the sixth decimal, where a bound rounded differently from a score would show.
  it('holds for random requests and weights', () => {
    const dir2 = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-ties-'));
    const conn = openDatabase({ dbPath: path.join(dir2, 'ties.db') });
    try {
      const words = ['alpha', 'beta', 'gamma', 'delta', 'src/auth/x.ts', 'src/cart/y.ts', 'omega'];
      const times = ['2025-12-01 10:00:00', '2025-12-01 10:00:01', '2025-12-01 10:00:02'];
      const prng = fc.sample(fc.array(fc.nat(1_000_000), { minLength: 1200, maxLength: 1200 }), { numRuns: 1, seed: 7 })[0] as number[];
      let at = 0;
      const next = (n: number) => (prng[at++ % prng.length] as number) % n;
      writeTransaction(conn, () => {
        insertSession(conn, { sessionId: 'S', mode: 'parallel', requirements: 'alpha beta', initialBranch: 'main', metadata: '{}' });
        upsertTaskGroup(conn, { id: 'A', sessionId: 'S', name: 'alpha group', componentPath: 'src/auth/' });
        upsertTaskGroup(conn, { id: 'B', sessionId: 'S', name: 'beta group', componentPath: 'src/cart/' });
        for (let i = 0; i < 300; i++) {
          const group = next(10) < 3 ? null : (['A', 'B'][next(2)] as string);
          const summary = Array.from({ length: 1 + next(3) }, () => words[next(words.length)]).join(' ');
          const id = insertPackage(conn, {
            sessionId: 'S', groupId: group, scope: group === null ? 'global' : 'group', packageType: ['research', 'failures'][next(2)] as string,
            filePath: `bazinga/artifacts/S/${i}.md`, producerAgent: 'qa_expert', priority: ['low', 'medium', 'high', 'critical'][next(4)] as string,
            summary, sizeBytes: null, createdAt: times[next(3)] as string,
          });
          insertConsumer(conn, id, 'developer');
          if (next(100) < 15) markPackageConsumed(conn, findPackage(conn, id)!, 'developer', 1);
        }
        syncSearchIndex(conn, { projectRoot: null, artifactBytes: 0 });
      });
      fc.assert(
        fc.property(
          fc.record({
            group: fc.constantFrom('A', 'B', 'global'),
            task: fc.option(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 2 }), { nil: null }),
            scope: fc.constantFrom(null, 'src/auth', 'src/cart', 'src'),
            zone: fc.constantFrom<Zone>('Normal', 'Conservative'),
            limit: fc.integer({ min: 1, max: 4 }),
            iteration: fc.constantFrom(0, 1),
            candidates: fc.constantFrom(1, 2, 3),
            relevance: fc.constantFrom(0.0000013, 0.3333337, 7.1234567),
            recency: fc.constantFrom(0.4444449, 1.0000005),
            scopeWeight: fc.constantFrom(0, 0.0000005, 2.5000005),
          }),
          (p) => {
            selectedBothWays(conn, { ...p, task: p.task === null ? null : p.task.join(' ') }, { relevance: p.relevance, recency: p.recency, scope: p.scopeWeight });
          },
        ),
        { numRuns: 400, seed: 12 },
      );
    } finally {
      conn.close();
      fs.rmSync(dir2, { recursive: true, force: true });
    }
  });
});

describe('fast read = ranking every eligible package, with the paths signal between 0 and 1', () => {
  // Artifacts naming paths from a small vocabulary, tasks made of path and summary words: many
  // packages hold some of a task's words in their paths, a few most of them.
  it('holds for random requests and weights', () => {
    const dir3 = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-paths-'));
    const conn = openDatabase({ dbPath: path.join(dir3, 'bazinga', 'bazinga.db') });
    let partial = 0;
    try {
      const dirs = ['routes', 'services', 'models', 'adapters'];
      const files = ['analytics', 'orders', 'webhook', 'users', 'email'];
      const prose = ['handler', 'retry', 'analytics', 'cache', 'orders'];
      const prng = fc.sample(fc.array(fc.nat(1_000_000), { minLength: 2000, maxLength: 2000 }), { numRuns: 1, seed: 11 })[0] as number[];
      let at = 0;
      const next = (n: number) => (prng[at++ % prng.length] as number) % n;
      fs.mkdirSync(path.join(dir3, 'bazinga', 'artifacts', 'S'), { recursive: true });
      writeTransaction(conn, () => {
        insertSession(conn, { sessionId: 'S', mode: 'parallel', requirements: 'analytics', initialBranch: 'main', metadata: '{}' });
        upsertTaskGroup(conn, { id: 'A', sessionId: 'S', name: 'alpha group', componentPath: 'src/routes/' });
        for (let i = 0; i < 300; i++) {
          const group = next(10) < 4 ? null : 'A';
          const named = Array.from({ length: next(3) }, () => `src/${dirs[next(dirs.length)]}/${files[next(files.length)]}.ts`);
          const file = `bazinga/artifacts/S/note_${i}.md`;
          fs.writeFileSync(path.join(dir3, file), `# Note ${i}\n\n${named.map((n) => `affected: ${n}`).join('\n')}\n`);
          const id = insertPackage(conn, {
            sessionId: 'S', groupId: group, scope: group === null ? 'global' : 'group', packageType: ['research', 'failures', 'decisions'][next(3)] as string,
            filePath: file, producerAgent: 'qa_expert', priority: ['low', 'medium', 'high', 'critical'][next(4)] as string,
            summary: Array.from({ length: 1 + next(3) }, () => prose[next(prose.length)]).join(' '), sizeBytes: null,
            createdAt: `2025-12-01 10:00:0${next(3)}`,
          });
          insertConsumer(conn, id, 'developer');
          if (next(100) < 10) markPackageConsumed(conn, findPackage(conn, id)!, 'developer', 1);
        }
        syncSearchIndex(conn, { projectRoot: dir3, artifactBytes: 16384 });
      });
      const vocabulary = [...dirs, ...files, ...prose];
      fc.assert(
        fc.property(
          fc.record({
            group: fc.constantFrom('A', 'global'),
            task: fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 4 }),
            zone: fc.constantFrom<Zone>('Normal', 'Conservative'),
            limit: fc.integer({ min: 1, max: 6 }),
            iteration: fc.constantFrom(0, 1),
            candidates: fc.constantFrom(1, 3, 40),
            relevance: fc.constantFrom(0.3333337, 100),
            paths: fc.constantFrom(0, 25, 60.0000007),
            match: fc.constantFrom(0, 30),
          }),
          (p) => {
            const fast = selectedBothWays(conn, { ...p, task: p.task.join(' '), scope: null }, { relevance: p.relevance, paths: p.paths, match: p.match });
            if (fast.ranked.selected.some((x) => (x.components?.paths ?? 0) > 0 && (x.components?.paths ?? 0) < 1)) partial++;
          },
        ),
        { numRuns: 300, seed: 21 },
      );
      // The property ran where the signal told packages apart, not only where it was 0 or 1.
      expect(partial).toBeGreaterThan(50);
    } finally {
      conn.close();
      fs.rmSync(dir3, { recursive: true, force: true });
    }
  });
});
