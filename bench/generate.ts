/**
 * Deterministic generators of BAZINGA databases for the benchmark.
 *
 * generateBench (what `npm run bench` measures): a project database of 1,000 sessions holding N
 * context packages in total. One of them, BENCH_SESSION, looks like a busy real session (6 task
 * groups, min(2,000, N / 2) packages designated to consumers as BAZINGA designates them, 3 reasoning
 * entries per package, prior iterations with consumption rows); the 999 others carry the rest with a
 * heavy-tailed size distribution (a few large sessions, many small ones), mostly completed, their
 * packages largely consumed, one reasoning entry per package. Error patterns (1 per 100 packages,
 * at least 300) and strategies (1 per 500, at least 100) over 20 projects. Rows are written with
 * prepared statements in large transactions (the 1M database in minutes); the bench session's prior
 * consumption goes through the product's own markPackageConsumed. Cached in bench/out/ by (size,
 * seed, generator version).
 *
 * generate (legacy, used by test/relevance.exact.test.ts): one large session with `packages`
 * packages in 10 groups, 5× as many reasoning entries, written through the repository functions.
 *
 * Run alone, it generates the bench's databases ahead of a run (or finds them cached):
 *   npx tsx bench/generate.ts [--scales 1k,10k] [--seed S] [--out DIR] [--help]
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  consumptionScopeId,
  errorPatternOf,
  findPackage,
  insertConsumer,
  insertErrorPattern,
  insertPackage,
  insertReasoning,
  insertSession,
  markPackageConsumed,
  openDatabase,
  PACKAGE_TYPES,
  PRIORITIES,
  pyJsonDumps,
  REASONING_PHASES,
  setErrorConfidence,
  SPAWNED_AGENTS,
  upsertStrategy,
  writeTransaction,
} from '../skills/bazinga-db/scripts/lib/index.ts';

export const BENCH_SESSION = 'bench_session_0001';
export const BENCH_PROJECT = 'bench-project';
export const GROUPS = Array.from({ length: 10 }, (_, i) => `G${String(i).padStart(2, '0')}`);
/** Bump when the generated content changes, so cached databases are rebuilt. */
export const GENERATOR_VERSION = 3;

/** mulberry32: a small, fast, seedable PRNG. */
export function rng(seed: number): () => number {
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

/** Legacy single-session database (see the header): creates or reuses the database for `packages`. */
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
      const { hash, signature } = errorPatternOf(
        pick(r, ['TypeError', 'ModuleNotFound', 'JestTimeout', 'SyntaxError', 'NetworkError']),
        `${sentence(r, 6)} at /src/${pick(r, WORDS)}_${i}.ts line ${i}`,
      );
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

// ---------------------------------------------------------------------------------------------
// The benchmark's project database: 1,000 sessions, N packages in total (see the header).

/** Bump when the content generateBench writes changes, so cached databases are rebuilt. */
export const BENCH_GENERATOR_VERSION = 3;
export const SESSIONS = 1000;
/** The bench session's task groups (other sessions reuse the same ids, as BAZINGA does). */
export const BENCH_GROUPS = Array.from({ length: 6 }, (_, i) => `G${String(i).padStart(2, '0')}`);
/** Iterations each bench group has completed before the bench starts (1–3). */
export const BENCH_HISTORY: Readonly<Record<string, number>> = Object.fromEntries(BENCH_GROUPS.map((g, i) => [g, 1 + (i % 3)]));
/** Packages the orchestrator hands out per agent (the default retrieval_limits). */
const RETRIEVAL: Record<string, number> = { developer: 3, qa_expert: 5, tech_lead: 5 };
const PROJECTS = [BENCH_PROJECT, ...Array.from({ length: 19 }, (_, i) => `project-${String(i + 1).padStart(2, '0')}`)];

/** Who produces what, and for whom (BAZINGA's designations): producer → [type, consumers][]. */
const DESIGNATIONS: Record<string, [string, string[]][]> = {
  developer: [['handoff', ['qa_expert', 'tech_lead']], ['decisions', ['tech_lead']]],
  senior_software_engineer: [['handoff', ['qa_expert', 'tech_lead']], ['decisions', ['tech_lead', 'developer']]],
  qa_expert: [['failures', ['developer', 'senior_software_engineer']]],
  tech_lead: [['decisions', ['developer', 'senior_software_engineer']], ['research', ['developer']]],
  investigator: [['investigation', ['developer', 'senior_software_engineer', 'tech_lead']]],
  requirements_engineer: [['research', ['developer', 'tech_lead', 'qa_expert']]],
};
const PRODUCERS: [string, number][] = [
  ['developer', 0.3], ['qa_expert', 0.2], ['tech_lead', 0.2], ['investigator', 0.1], ['requirements_engineer', 0.1], ['senior_software_engineer', 0.1],
];
const PRIORITY_WEIGHTS: [string, number][] = [['medium', 0.45], ['high', 0.3], ['low', 0.15], ['critical', 0.1]];

function weighted(r: () => number, items: readonly [string, number][]): string {
  let x = r();
  for (const [v, w] of items) {
    x -= w;
    if (x < 0) return v;
  }
  return items[items.length - 1]![0];
}

const sqlTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

export interface BenchDb {
  /** The generated database (indexed copies are made beside it by bench/relevance.ts). */
  dbPath: string;
  /** Its project folder (bazinga/artifacts holds the bench session's artifact files). */
  root: string;
  packages: number;
  seed: number;
  cached: boolean;
  /** How long generating took (when it was cached: how long it took then). */
  generation_ms: number;
  generated_at: string;
  rows: { sessions: number; task_groups: number; packages: number; consumers: number; consumption_scope: number; reasoning: number; error_patterns: number; strategies: number; token_counts: number };
  bench_packages: number;
}

/** Package totals: "1k", "10k", "100k", "1M" and plain numbers. */
export function parseScale(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(s.trim());
  if (!m) throw new Error(`bad scale '${s}' (use 1k, 10k, 100k, 1M or a number)`);
  return Math.round(Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2]!) ? 1e3 : 1e6));
}
export const scaleName = (n: number) => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));

/** Creates (or reuses, when complete) the 1,000-session database with `packages` packages in total. */
export function generateBench(outDir: string, packages: number, seed = 42, log: (line: string) => void = () => {}): BenchDb {
  const root = path.join(outDir, `db-${scaleName(packages)}-s${seed}-g${BENCH_GENERATOR_VERSION}`);
  const dbPath = path.join(root, 'bazinga', 'bazinga.db');
  const done = path.join(root, '.complete.json');
  if (fs.existsSync(done)) {
    const meta = JSON.parse(fs.readFileSync(done, 'utf8')) as Omit<BenchDb, 'cached' | 'dbPath' | 'root'>;
    return { ...meta, dbPath, root, cached: true };
  }
  const started = performance.now();
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
  const benchArtifacts = path.join(root, 'bazinga', 'artifacts', BENCH_SESSION);
  fs.mkdirSync(benchArtifacts, { recursive: true });
  const db = openDatabase({ dbPath });
  // Bulk loading: no journal, no syncs (a failed run leaves no .complete marker and is redone), then
  // the WAL mode every BAZINGA database runs in.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1000000');
  db.pragma('temp_store = MEMORY');
  const r = rng(seed);
  // Timestamps are relative to the generation time: the bench session spans the last 3 days (its
  // newest rows minutes old), the others the last 180 days.
  const anchor = Math.floor(Date.now() / 1000) * 1000;
  const generatedAt = new Date(anchor).toISOString();
  const DAY = 86400_000;
  const ins = {
    session: db.prepare(
      `INSERT INTO sessions (session_id, start_time, end_time, mode, original_requirements, status, initial_branch, metadata, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 'main', ?, ?)`,
    ),
    group: db.prepare(
      `INSERT INTO task_groups (id, session_id, name, status, assigned_to, component_path, review_iteration, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    pkg: db.prepare(
      `INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary, size_bytes,
                                     version, supersedes_id, scope, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, NULL, ?, ?)`,
    ),
    consumer: db.prepare('INSERT INTO context_package_consumers (package_id, agent_type, consumed_at, iteration) VALUES (?, ?, ?, ?)'),
    scope: db.prepare(
      `INSERT INTO consumption_scope (scope_id, session_id, group_id, agent_type, iteration, package_id, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    reasoning: db.prepare(
      `INSERT INTO orchestration_logs (session_id, iteration, agent_type, agent_id, content, log_type, reasoning_phase,
                                       confidence_level, references_json, redacted, group_id, timestamp)
       VALUES (?, ?, ?, NULL, ?, 'reasoning', ?, ?, ?, 0, ?, ?)`,
    ),
    pattern: db.prepare(
      `INSERT OR IGNORE INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 90)`,
    ),
    // Token counts an assembler and the CLI would have cached for the other sessions' texts (their
    // reasoning entries, the packages they handed out): never read by the bench session's calls,
    // they give ca_token_counts its realistic size. Keys are opaque hashes.
    count: db.prepare('INSERT OR IGNORE INTO ca_token_counts (text_hash, tokens, created_at) VALUES (?, ?, ?)'),
    strategy: db.prepare(
      `INSERT OR IGNORE INTO strategies (strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
  const rows = { sessions: 0, task_groups: 0, packages: 0, consumers: 0, consumption_scope: 0, reasoning: 0, error_patterns: 0, strategies: 0, token_counts: 0 };
  let fillers = 0;
  const filler = (tokens: number, at: string) => {
    const hash = createHash('sha256').update(`filler:${seed}:${fillers++}`).digest('hex').slice(0, 32);
    rows.token_counts += ins.count.run(hash, tokens, at).changes;
  };
  const CONSUMING = new Set(['developer', 'qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator']);
  const components = ['src/auth/', 'src/cart/', 'src/sync/', 'src/api/', 'src/ui/', 'src/payments/'];

  /** One package with its consumers; returns its id, group and consumers. */
  const addPackage = (r: () => number, sid: string, groups: readonly string[], createdMs: number, summaryWords: [number, number], k: number) => {
    const producer = weighted(r, PRODUCERS);
    const [type, designated] = pick(r, DESIGNATIONS[producer]!);
    const consumers = new Set(designated);
    if (r() < 0.2) consumers.add(pick(r, SPAWNED_AGENTS));
    const global = r() < 0.15;
    const group = global ? null : pick(r, groups);
    const summary = sentence(r, summaryWords[0] + Math.floor(r() * (summaryWords[1] - summaryWords[0])));
    const file = `bazinga/artifacts/${sid}/${type}_${group ?? 'global'}_${k}.md`;
    const size = 300 + Math.floor(r() * 2700);
    const id = Number(ins.pkg.run(sid, group, type, file, producer, weighted(r, PRIORITY_WEIGHTS), summary, size, global ? 'global' : 'group', sqlTime(createdMs)).lastInsertRowid);
    rows.packages++;
    return { id, group, consumers: [...consumers], file, summary, size, type };
  };

  // Sizes of the other sessions: heavy-tailed weights scaled to the packages they carry.
  const benchPackages = Math.min(2000, Math.floor(packages / 2));
  const otherTotal = packages - benchPackages;
  const weights = Array.from({ length: SESSIONS - 1 }, () => Math.pow(r(), -0.6));
  const wsum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.floor((w / wsum) * otherTotal));
  for (let i = 0, left = otherTotal - sizes.reduce((a, b) => a + b, 0); left > 0; i = (i + 1) % sizes.length, left--) sizes[i]!++;

  // The 999 other sessions, in creation order, a transaction per ~50k packages.
  let pending = 0;
  db.exec('BEGIN');
  for (let s = 0; s < SESSIONS - 1; s++) {
    const startMs = anchor - 4 * DAY - Math.floor(r() * 176 * DAY);
    const sid = `bazinga_${new Date(startMs).toISOString().slice(0, 10).replace(/-/g, '')}_${String(s + 2).padStart(4, '0')}`;
    const spanMs = 3600_000 + Math.floor(r() * 47 * 3600_000);
    const statusDraw = r();
    const status = statusDraw < 0.9 ? 'completed' : statusDraw < 0.95 ? 'failed' : 'active';
    const project = s % 10 === 0 ? BENCH_PROJECT : PROJECTS[1 + (s % 19)]!;
    ins.session.run(sid, sqlTime(startMs), status === 'active' ? null : sqlTime(startMs + spanMs), r() < 0.6 ? 'parallel' : 'simple', sentence(r, 20), status, JSON.stringify({ project_id: project }), sqlTime(startMs));
    rows.sessions++;
    const groups = BENCH_GROUPS.slice(0, 1 + Math.floor(r() * BENCH_GROUPS.length));
    for (const g of groups) {
      ins.group.run(g, sid, `group ${g}`, status === 'active' ? 'in_progress' : 'completed', 'developer', pick(r, components), 1 + Math.floor(r() * 3), sqlTime(startMs), sqlTime(startMs + spanMs));
      rows.task_groups++;
    }
    const consumeP = status === 'active' ? 0.4 : 0.8;
    for (let k = 0; k < sizes[s]!; k++) {
      const createdMs = startMs + Math.floor(r() * spanMs);
      const p = addPackage(r, sid, groups, createdMs, [10, 45], k);
      for (const agent of p.consumers) {
        if (r() < consumeP) {
          const it = 1 + Math.floor(r() * 3);
          const at = sqlTime(createdMs + 60_000 + Math.floor(r() * 3600_000));
          ins.consumer.run(p.id, agent, at, it);
          rows.consumers++;
          filler(20 + Math.floor(p.summary.length / 4), at);
          if (CONSUMING.has(agent)) {
            const scopeGroup = p.group ?? 'global';
            for (const iteration of r() < 0.25 ? [it, it + 1] : [it]) {
              rows.consumption_scope += ins.scope.run(consumptionScopeId(sid, scopeGroup, agent, iteration, p.id), sid, scopeGroup, agent, iteration, p.id, at).changes;
            }
          }
        } else {
          ins.consumer.run(p.id, agent, null, 1);
          rows.consumers++;
        }
      }
      // One reasoning entry per package, short.
      const content = sentence(r, 15 + Math.floor(r() * 45));
      const loggedAt = sqlTime(startMs + Math.floor(r() * spanMs));
      ins.reasoning.run(
        sid, 1 + Math.floor(r() * 3), pick(r, SPAWNED_AGENTS), content, pick(r, REASONING_PHASES),
        pick(r, ['high', 'medium', 'low']), null, r() < 0.1 ? 'global' : pick(r, groups), loggedAt,
      );
      rows.reasoning++;
      filler(Math.ceil(content.length / 4), loggedAt);
      if (++pending >= 50_000) {
        db.exec('COMMIT');
        db.exec('BEGIN');
        pending = 0;
        log(`    … ${rows.packages} packages (${Math.round((performance.now() - started) / 1000)} s)`);
      }
    }
  }
  db.exec('COMMIT');

  // The bench session: busy, recent, with artifact files and prior iterations. Drawn from its own
  // stream, so that it is the same at every scale where it has the same size.
  {
    const r = rng(seed * 7919 + 17);
    const benchStart = anchor - 3 * DAY;
    db.exec('BEGIN');
    ins.session.run(BENCH_SESSION, sqlTime(benchStart), null, 'parallel', 'Benchmark session: refresh token rotation, offline cart sync, flaky checkout tests', 'active', JSON.stringify({ project_id: BENCH_PROJECT }), sqlTime(benchStart));
    rows.sessions++;
    BENCH_GROUPS.forEach((g, i) => {
      ins.group.run(g, BENCH_SESSION, `group ${g}`, 'in_progress', 'developer', components[i]!, BENCH_HISTORY[g]!, sqlTime(benchStart), sqlTime(anchor - 600_000));
      rows.task_groups++;
    });
    const benchPkgs: { id: number; group: string | null; consumers: string[] }[] = [];
    for (let k = 0; k < benchPackages; k++) {
      const createdMs = benchStart + Math.floor((k / benchPackages) * (3 * DAY - 600_000));
      const p = addPackage(r, BENCH_SESSION, BENCH_GROUPS, createdMs, [12, 60], k);
      for (const agent of p.consumers) {
        ins.consumer.run(p.id, agent, null, 1);
        rows.consumers++;
      }
      benchPkgs.push(p);
      const paragraphs = [`# ${p.type}: ${p.summary.slice(0, 60)}`, '', p.summary, ''];
      let text = paragraphs.join('\n');
      while (text.length < p.size) text += sentence(r, 30) + '\n';
      fs.writeFileSync(path.join(root, p.file), text.slice(0, p.size));
    }
    for (let k = 0; k < benchPackages * 3; k++) {
      const refs = r() < 0.3 ? JSON.stringify([`src/${pick(r, WORDS)}/${pick(r, WORDS)}.ts`]) : null;
      const group = r() < 0.1 ? 'global' : pick(r, BENCH_GROUPS);
      const iteration = 1 + Math.floor(r() * (BENCH_HISTORY[group] ?? 1));
      ins.reasoning.run(
        BENCH_SESSION, iteration, pick(r, SPAWNED_AGENTS), sentence(r, 30 + Math.floor(r() * 120)), pick(r, REASONING_PHASES),
        pick(r, ['high', 'medium', 'low']), refs, group, sqlTime(benchStart + Math.floor((k / (benchPackages * 3)) * (3 * DAY - 600_000))),
      );
      rows.reasoning++;
    }
    db.exec('COMMIT');
    // Prior consumption of the bench session, through the product's own rule: at each completed
    // iteration of each group, developer, QA and tech lead were handed their retrieval limit of the
    // packages designated to them (of the group or session-wide).
    writeTransaction(db, () => {
      for (const g of BENCH_GROUPS) {
        for (let it = 1; it <= BENCH_HISTORY[g]!; it++) {
          for (const agent of ['developer', 'qa_expert', 'tech_lead']) {
            const designated = benchPkgs.filter((p) => (p.group === g || p.group === null) && p.consumers.includes(agent));
            for (let n = 0; n < RETRIEVAL[agent]! && designated.length > 0; n++) {
              const p = designated.splice(Math.floor(r() * designated.length), 1)[0]!;
              const mark = markPackageConsumed(db, findPackage(db, p.id)!, agent, it);
              if (mark.scope_inserted) rows.consumption_scope++;
            }
          }
        }
      }
    });
  }

  // Error patterns and strategies of the 20 projects (30 % of them the bench project's).
  const patterns = Math.max(300, Math.round(packages / 100));
  const strategies = Math.max(100, Math.round(packages / 500));
  db.exec('BEGIN');
  for (let i = 0; i < patterns; i++) {
    const project = r() < 0.3 ? BENCH_PROJECT : pick(r, PROJECTS);
    const { hash, signature } = errorPatternOf(
      pick(r, ['TypeError', 'ModuleNotFound', 'JestTimeout', 'SyntaxError', 'NetworkError']),
      `${sentence(r, 6)} at /src/${pick(r, WORDS)}_${i}.ts line ${i}`,
    );
    const seen = sqlTime(anchor - Math.floor(r() * 120 * DAY));
    rows.error_patterns += ins.pattern.run(
      hash, project, pyJsonDumps(signature), sentence(r, 15), Math.round((0.3 + r() * 0.7) * 100) / 100,
      1 + Math.floor(r() * 5), r() < 0.7 ? 'typescript' : 'python', seen, seen,
    ).changes;
  }
  for (let i = 0; i < strategies; i++) {
    const project = r() < 0.3 ? BENCH_PROJECT : pick(r, PROJECTS);
    const topic = pick(r, ['implementation', 'architecture', 'methodology', 'general']);
    const seen = sqlTime(anchor - Math.floor(r() * 120 * DAY));
    rows.strategies += ins.strategy.run(
      `${project}_${topic}_${String(i).padStart(16, '0')}`, project, topic, sentence(r, 20), Math.floor(r() * 5),
      r() < 0.5 ? 'typescript' : null, r() < 0.5 ? 'react-native' : null, seen, seen,
    ).changes;
  }
  db.exec('COMMIT');
  db.pragma('synchronous = NORMAL');
  db.pragma('journal_mode = WAL');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const meta = {
    packages,
    seed,
    generation_ms: Math.round(performance.now() - started),
    generated_at: generatedAt,
    rows,
    bench_packages: benchPackages,
  };
  fs.writeFileSync(done, JSON.stringify(meta, null, 2) + '\n');
  return { ...meta, dbPath, root, cached: false };
}

/** Deterministic text of `words` words drawn like the generated rows', for the agents' writes during the bench. */
export function benchText(seed: number, words: number): string {
  return sentence(rng(seed), words);
}

/** A deterministic source path of the generated vocabulary. */
export function benchPath(seed: number): string {
  const r = rng(seed);
  return `src/${pick(r, WORDS)}/${pick(r, WORDS)}.ts`;
}

const HELP = `bench/generate: the benchmark's databases of ${SESSIONS} sessions, generated ahead of npm run bench (or found
cached: by size, seed and generator version); prints the folder of each

Usage: npx tsx bench/generate.ts [--scales 1k,10k,100k,1M] [--seed S] [--out DIR]

  --scales   package totals (default 1k)
  --seed     the generator's seed (default 42, as npm run bench)
  --out      where the databases go (default bench/out, where npm run bench looks)
`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name: string) => {
    const i = args.indexOf(name);
    return i === -1 ? undefined : args[i + 1];
  };
  if (args.some((a) => a === '--help' || a === '-h')) process.stdout.write(HELP);
  else {
    const out = path.resolve(option('--out') ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'out'));
    const seed = Number(option('--seed') ?? 42);
    for (const n of (option('--scales') ?? '1k').split(',').map(parseScale)) {
      const g = generateBench(out, n, seed, (line) => console.log(line));
      console.log(`${scaleName(n)}: ${g.root} (${g.cached ? 'cached' : `generated in ${(g.generation_ms / 1000).toFixed(1)} s`})`);
    }
  }
}
