/**
 * Deterministic generator of BAZINGA databases for the benchmark: one large session with
 * `packages` context packages (10 groups plus session-wide ones), 5× as many reasoning entries,
 * 1,000 error patterns and 200 strategies of its project, consumers and consumption rows in
 * realistic proportions. Everything is written through the bazinga-db repository functions, in
 * one transaction; the same seed and size always give the same rows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { markPackageConsumed } from '../skills/bazinga-db/scripts/lib/consume.ts';
import { openDatabase, writeTransaction } from '../skills/bazinga-db/scripts/lib/db.ts';
import { SPAWNED_AGENTS, PACKAGE_TYPES, PRIORITIES, REASONING_PHASES } from '../skills/bazinga-db/scripts/lib/enums.ts';
import { errorPatternHash, normaliseErrorMessage } from '../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../skills/bazinga-db/scripts/lib/pyjson.ts';
import { findPackage, insertConsumer, insertPackage } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { insertErrorPattern, setErrorConfidence } from '../skills/bazinga-db/scripts/lib/repo/errorPatterns.ts';
import { insertReasoning } from '../skills/bazinga-db/scripts/lib/repo/reasoning.ts';
import { insertSession } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { upsertStrategy } from '../skills/bazinga-db/scripts/lib/repo/strategies.ts';

export const BENCH_SESSION = 'bench_session_0001';
export const BENCH_PROJECT = 'bench-project';
export const GROUPS = Array.from({ length: 10 }, (_, i) => `G${String(i).padStart(2, '0')}`);
/** Bump when the generated content changes, so cached databases are rebuilt. */
export const GENERATOR_VERSION = 3;

/** mulberry32: a small, fast, seedable PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'auth token refresh expiry cart sync offline queue retry reducer selector test flaky timeout mock fixture ' +
  'module import alias cache metro bundle build deploy schema migration index query latency memory leak ' +
  'render hook state effect navigation screen api client server header cookie session rotate verify sign ' +
  'payment webhook refund invoice currency order checkout price discount coupon tax shipping address user ' +
  'profile avatar upload image resize thumbnail bucket storage stream socket reconnect heartbeat channel ' +
  'message notification email template locale plural translation date timezone schedule cron job worker ' +
  'lock deadlock transaction pool connection replica shard partition vacuum backup restore search suggest ' +
  'facet filter sort paginate cursor limit throttle quota permission role policy tenant audit log trace ' +
  'span metric alert dashboard chart export import csv parser encoding validation form input button modal ' +
  'dialog focus keyboard accessibility contrast theme layout grid mobile tablet push deeplink biometric'
).split(' ');

/**
 * The words of generated text: the domain words above, then identifiers and paths made of them
 * (camelCase, snake_case, kebab-case, source paths), as agents write. Drawn with a heavy head (a
 * few words are everywhere, most are rare), as in real project text.
 */
const VOCABULARY: readonly string[] = (() => {
  const out = [...WORDS];
  const r = rng(1234);
  for (let i = 0; i < 4000; i++) {
    const a = pick(r, WORDS);
    const b = pick(r, WORDS);
    const form = i % 4;
    out.push(
      form === 0
        ? `${a}${b[0]?.toUpperCase()}${b.slice(1)}`
        : form === 1
          ? `${a}_${b}`
          : form === 2
            ? `${a}-${b}`
            : `src/${a}/${b}.ts`,
    );
  }
  return out;
})();

function sentence(r: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(VOCABULARY[Math.floor(Math.pow(r(), 3) * VOCABULARY.length)] as string);
  return out.join(' ');
}

function pick<T>(r: () => number, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)] as T;
}

/** SQLite time text `days` days and some seconds before 2026-01-01 00:00:00 UTC. */
function timeBefore(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) - seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

export interface GeneratedDb {
  dbPath: string;
  root: string;
  packages: number;
}

/** Creates (or reuses, when present and of this generator version) the database for `packages`. */
export function generate(outDir: string, packages: number, seed = 42): GeneratedDb {
  const root = path.join(outDir, `p${packages}-s${seed}-v${GENERATOR_VERSION}`);
  const dbPath = path.join(root, 'bazinga', 'bazinga.db');
  const done = path.join(root, '.complete');
  if (fs.existsSync(done)) return { dbPath, root, packages };
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
  fs.mkdirSync(path.join(root, 'bazinga', 'artifacts', BENCH_SESSION), { recursive: true });
  const db = openDatabase({ dbPath });
  const r = rng(seed);
  const span = 30 * 86400;
  writeTransaction(db, () => {
    insertSession(db, {
      sessionId: BENCH_SESSION,
      mode: 'parallel',
      requirements: 'Benchmark session',
      initialBranch: 'main',
      metadata: JSON.stringify({ project_id: BENCH_PROJECT }),
    });
    for (let i = 0; i < packages; i++) {
      const global = r() < 0.2;
      const group = pick(r, GROUPS);
      const id = insertPackage(db, {
        sessionId: BENCH_SESSION,
        groupId: global ? null : group,
        scope: global ? 'global' : 'group',
        packageType: pick(r, PACKAGE_TYPES),
        filePath: `bazinga/artifacts/${BENCH_SESSION}/pkg_${i}.md`,
        producerAgent: pick(r, SPAWNED_AGENTS),
        priority: pick(r, PRIORITIES),
        summary: sentence(r, 12 + Math.floor(r() * 40)),
        sizeBytes: 200 + Math.floor(r() * 4000),
        createdAt: timeBefore(Math.floor(r() * span)),
      });
      const consumers = new Set<string>();
      if (r() < 0.7) consumers.add('developer');
      const extra = 1 + Math.floor(r() * 2);
      for (let k = 0; k < extra; k++) consumers.add(pick(r, SPAWNED_AGENTS));
      for (const agent of consumers) insertConsumer(db, id, agent);
      if (r() < 0.1) {
        const pkg = findPackage(db, id)!;
        for (const agent of consumers) markPackageConsumed(db, pkg, agent, 1);
      }
    }
    for (let i = 0; i < packages * 5; i++) {
      insertReasoning(db, {
        sessionId: BENCH_SESSION,
        groupId: r() < 0.1 ? 'global' : pick(r, GROUPS),
        agentType: pick(r, SPAWNED_AGENTS),
        agentId: null,
        iteration: Math.floor(r() * 3),
        phase: pick(r, REASONING_PHASES),
        confidence: pick(r, ['high', 'medium', 'low']),
        content: sentence(r, 20 + Math.floor(r() * 80)),
        referencesJson: null,
        redacted: false,
        timestamp: timeBefore(Math.floor(r() * span)),
      });
    }
    for (let i = 0; i < 1000; i++) {
      const signature = {
        error_type: pick(r, ['TypeError', 'ModuleNotFound', 'JestTimeout', 'SyntaxError', 'NetworkError']),
        message_pattern: normaliseErrorMessage(`${sentence(r, 6)} at /src/${pick(r, WORDS)}_${i}.ts line ${i}`),
        context_hints: [] as string[],
        stack_pattern: [] as unknown[],
      };
      const hash = errorPatternHash(signature);
      insertErrorPattern(db, { hash, projectId: BENCH_PROJECT, signatureJson: pyJsonDumps(signature), solution: sentence(r, 15), lang: 'typescript' });
      setErrorConfidence(db, hash, BENCH_PROJECT, Math.round((0.3 + r() * 0.7) * 100) / 100);
    }
    for (let i = 0; i < 200; i++) {
      upsertStrategy(db, {
        strategyId: `${BENCH_PROJECT}_implementation_${String(i).padStart(16, '0')}`,
        projectId: BENCH_PROJECT,
        topic: pick(r, ['implementation', 'architecture', 'methodology', 'general']),
        insight: sentence(r, 20),
        lang: r() < 0.5 ? 'typescript' : null,
        framework: r() < 0.5 ? 'react-native' : null,
      });
    }
  });
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  fs.writeFileSync(done, new Date().toISOString() + '\n');
  return { dbPath, root, packages };
}
