/**
 * The hot path's queries stay inside the request's session: every statement an assembly runs is
 * captured (on a real SQLite file with other sessions around it) and its EXPLAIN QUERY PLAN is
 * checked: no full scan of a table that grows across sessions, and consumer rows looked up by
 * package, never by agent across every session. The error patterns and strategies of every
 * project, which the search index's freshness check reads on every assembly, are never scanned at
 * all, also when it catches up with what another tool wrote.
 */
import { describe, expect, it } from 'vitest';
import { openDatabase, writeTransaction, type DB } from '../skills/bazinga-db/scripts/lib/db.ts';
import { insertConsumer, insertPackage } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { insertSession, projectScope } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { mergeFaults, withFaultKeys } from '../skills/bazinga-db/scripts/lib/patternFaults.ts';
import { upsertTaskGroup } from '../skills/bazinga-db/scripts/lib/repo/taskGroups.ts';
import { insertErrorPattern, listErrorPatterns } from '../skills/bazinga-db/scripts/lib/repo/errorPatterns.ts';
import { upsertStrategy } from '../skills/bazinga-db/scripts/lib/repo/strategies.ts';
import { searchIndexBehind } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { isExpired, isShowablePattern, selectErrorPatterns } from '../skills/context-assembler/scripts/lib/core/learning.ts';
import { markPackageConsumed } from '../skills/bazinga-db/scripts/lib/consume.ts';
import { DEFAULT_CONFIG, type Config } from '../skills/context-assembler/scripts/lib/config.ts';
import { advance, AVAILABLE_CAP, zoneStep, type Deps } from '../skills/context-assembler/scripts/lib/pipeline.ts';
import { exactCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';
import { renderMarkdown } from '../skills/context-assembler/scripts/lib/core/render.ts';
import type { AssemblyRequest } from '../skills/context-assembler/scripts/lib/contract.ts';
import { makeProject, writeArtifact } from './helpers.ts';

/**
 * Learning tables of every project, read by the search index's freshness check on every assembly:
 * only ever SEARCHed (MIN/MAX through an index is a SEARCH too), never SCANned, not even along an
 * index (but for the strategies a session read as one project shows: along their order's index,
 * up to the limit).
 */
const NEVER_SCANNED = ['error_patterns', 'strategies'];
/** Tables whose size grows with every session: a hot query may only search them by an index. */
const GROWING = ['context_packages', 'context_package_consumers', 'consumption_scope', 'orchestration_logs', 'ca_package_paths', ...NEVER_SCANNED];

function seed(db: DB, root: Parameters<typeof writeArtifact>[0]): void {
  writeTransaction(db, () => {
    for (let s = 0; s < 6; s++) {
      const session = `S${s}`;
      insertSession(db, { sessionId: session, mode: 'parallel', requirements: 'Login', initialBranch: 'main', metadata: JSON.stringify({ project_id: `P${s % 3}` }) });
      upsertTaskGroup(db, { id: 'AUTH', sessionId: session, name: 'Authentication', componentPath: 'src/auth/' });
      for (let i = 0; i < 40; i++) {
        const id = insertPackage(db, {
          sessionId: session,
          groupId: i % 4 === 0 ? null : 'AUTH',
          scope: i % 4 === 0 ? 'global' : 'group',
          packageType: ['research', 'failures', 'decisions', 'handoff', 'investigation'][i % 5] as string,
          filePath: writeArtifact(root, session, `p${i}.md`, `# p${i}\nsrc/auth/login.ts\n`),
          producerAgent: 'investigator',
          priority: ['low', 'medium', 'high', 'critical'][i % 4] as string,
          summary: `Package ${i}: login flow in src/auth`,
          sizeBytes: 30,
        });
        insertConsumer(db, id, 'developer');
        if (i % 3 === 0) markPackageConsumed(db, { id, session_id: session, group_id: i % 4 === 0 ? null : 'AUTH', scope: i % 4 === 0 ? 'global' : 'group' }, 'developer', 1);
      }
    }
    // Error patterns and strategies of three projects, seen over a few weeks.
    for (let i = 0; i < 90; i++) {
      const projectId = `P${i % 3}`;
      insertErrorPattern(db, {
        hash: `h${i}`,
        projectId,
        signatureJson: JSON.stringify({ error_type: 'TypeError', message_pattern: `token ${i} is undefined in the login flow`, context_hints: [] }),
        solution: `Guard token ${i} before reading it`,
        lang: null,
      });
      db.prepare("UPDATE error_patterns SET confidence = 0.8, last_seen = datetime('2025-11-01', ?) WHERE pattern_hash = ?").run(`+${i % 30} days`, `h${i}`);
      upsertStrategy(db, { strategyId: `st${i}`, projectId, topic: 'testing', insight: `Replay the login flow ${i} with a fresh token`, lang: null, framework: null });
    }
  });
}

/** The plan lines of the captured reads that break the rules above. */
function planProblems(db: DB, seen: Map<string, unknown[]>): string[] {
  const reads = [...seen].filter(([sql]) => /^\s*(WITH|SELECT)/i.test(sql));
  expect(reads.length).toBeGreaterThan(5);
  const problems: string[] = [];
  for (const [sql, args] of reads) {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as [])) as { parent: number; detail: string }[];
    const plan = rows.map((p) => p.detail);
    // The newest matches are read in the index's rowid order and reading stops at the limit: no sort inside.
    if (/0\.0 AS bm25 FROM ca_fts_packages/.test(sql) && rows.some((p) => p.parent !== 0 && /^USE TEMP B-TREE/.test(p.detail))) {
      problems.push(`every match of the session sorted for the newest few: ${sql.replace(/\s+/g, ' ').slice(0, 90)}`);
    }
    for (const d of plan) {
      const scan = /^SCAN (\w+)(?: AS \w+)?(?! USING)/.exec(d);
      const table = scan ? tableOf(sql, scan[1] as string) : undefined;
      const anyScan = /^SCAN (\w+)/.exec(d);
      // A session read as one project reads the few strategies it shows along their order's own index, up to its limit.
      const inShownOrder = /^SCAN strategies USING INDEX ca_idx_strategies_shown_all$/.test(d) && /\bLIMIT @limit\b/.test(sql);
      if (anyScan && NEVER_SCANNED.includes(tableOf(sql, anyScan[1] as string)) && !inShownOrder) problems.push(`${d} in ${sql.replace(/\s+/g, ' ').slice(0, 90)}`);
      else if (scan && !/USING (?:COVERING )?INDEX/.test(d) && table && GROWING.includes(table)) problems.push(`${d} in ${sql.replace(/\s+/g, ' ').slice(0, 90)}`);
      if (/USING (?:COVERING )?INDEX (?:ca_idx_cpc_consumed|idx_cpc_agent)\b/.test(d)) problems.push(`consumer rows of every session: ${d}`);
      // A session's full-text match reads only the session's band of each term's document list.
      if (/^SCAN f VIRTUAL TABLE INDEX \d+:M/.test(d) && /(ca_fts_packages|ca_fts_reasoning) MATCH @match/.test(sql) && !/></.test(d)) {
        problems.push(`full-text match over every session: ${d} in ${sql.replace(/\s+/g, ' ').slice(0, 90)}`);
      }
      // The shown patterns are read in index order and reading stops at the few shown: no sort of the project's patterns.
      if (/^USE TEMP B-TREE/.test(d) && /FROM error_patterns\s+WHERE project_id = @projectId AND ROUND/.test(sql)) problems.push(`every pattern of the project sorted: ${d}`);
    }
  }
  return problems;
}

/**
 * Runs one assembly with every prepared statement recorded with the parameters it first ran with
 * (and, in `rounds` when given, every distinct set of parameters it ran with).
 */
function captureAssembly(db: DB, projectRoot: string, config: Config, request: Partial<AssemblyRequest>, rounds?: Map<string, string[]>): Map<string, unknown[]> {
  const seen = new Map<string, unknown[]>();
  const prepare = db.prepare.bind(db);
  const watched = new Proxy(db, {
    get(target, key) {
      if (key !== 'prepare') {
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return (sql: string) => {
        const st = prepare(sql);
        return new Proxy(st, {
          get(t, k) {
            const v = Reflect.get(t, k, t);
            if (typeof v !== 'function') return v;
            return (...args: unknown[]) => {
              if (['all', 'get', 'run', 'iterate'].includes(String(k))) {
                if (!seen.has(sql)) seen.set(sql, args);
                const key = JSON.stringify(args);
                const list = rounds?.get(sql) ?? [];
                if (rounds && !list.includes(key)) rounds.set(sql, [...list, key]);
              }
              const r = v.apply(t, args);
              return r === t ? st : r;
            };
          },
        });
      };
    },
  }) as DB;
  const full: AssemblyRequest = {
    session: 'S3', group: 'AUTH', agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: 1, limit: null,
    include_reasoning: true, reasoning_level: 'medium', now: '2026-01-01T00:00:00.000Z', task: null, error: null, scope: null, lang: null, framework: null,
    ...request,
  };
  const deps: Deps = {
    config,
    counter: exactCounter((t) => Math.ceil(t.length / 4)),
    redact: (t) => t,
    db: () => watched,
    projectRoot,
    explain: false,
    dryRun: true,
    warn: () => {},
  } as Deps;
  advance(zoneStep(full, config), 'consume', deps);
  return seen;
}

describe('query plans of the hot path', () => {
  it.each([
    ['with the full-text index and a task', true, { task: 'fix the login flow', error: 'TypeError: token is undefined' }],
    ['without the index, with a scope', false, { scope: 'src/auth' }],
  ] as const)('%s: no full scan of a growing table, consumer rows by package', (_label, fts, request) => {
    const project = makeProject('ca-plans-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      seed(db, project);
      const config = structuredClone(DEFAULT_CONFIG);
      config.enable_fts5 = fts;
      const seen = captureAssembly(db, project.root, config, request);
      expect(planProblems(db, seen)).toEqual([]);
    } finally {
      db.close();
      project.cleanup();
    }
  });

  it.each([
    ['with a task and an error text', { task: 'fix the login flow', error: 'TypeError: token is undefined' }],
    ['with nothing to rank by', {}],
  ] as const)('a session that records no project id (every project read) %s: the patterns and strategies it shows read in the order shown, nothing scanned whole', (_label, request) => {
    const project = makeProject('ca-plans-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      seed(db, project);
      writeTransaction(db, () => {
        insertSession(db, { sessionId: 'S9', mode: 'simple', requirements: 'Login', initialBranch: 'main', metadata: null });
        upsertTaskGroup(db, { id: 'AUTH', sessionId: 'S9', name: 'Authentication', componentPath: 'src/auth/' });
      });
      const seen = captureAssembly(db, project.root, structuredClone(DEFAULT_CONFIG), { ...request, session: 'S9' });
      expect(planProblems(db, seen)).toEqual([]);
      // Every project's patterns, in the order shown (not one project's index).
      const plans = [...seen].flatMap(([sql, args]) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as [])) as { detail: string }[]).map((p) => p.detail));
      expect(plans.some((d) => /USING INDEX ca_idx_patterns_shown_all/.test(d))).toBe(true);
    } finally {
      db.close();
      project.cleanup();
    }
  });

  it('the exactness rounds: a second round of the full-text and scope searches and of the bucket heads stays in the session band', () => {
    const project = makeProject('ca-plans-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      seed(db, project);
      const config = structuredClone(DEFAULT_CONFIG);
      // One candidate read at first, and a task some packages match better than others: the check
      // cannot prove the first round's selection, so a second round reads four times as many.
      config.relevance.candidates = 1;
      const rounds = new Map<string, string[]>();
      const seen = captureAssembly(db, project.root, config, { task: '7 13 21 29 login', scope: 'src/auth', limit: 3 }, rounds);
      const runs = (part: RegExp) => [...rounds].filter(([sql]) => part.test(sql)).flatMap(([sql, argSets]) => argSets.map((a) => [sql, JSON.parse(a)] as [string, unknown[]]));
      const search = runs(/bm25\(ca_fts_packages/);
      const scoped = runs(/0\.0 AS bm25 FROM ca_fts_packages/);
      const heads = runs(/INDEXED BY ca_idx_cp_group_bucket[\s\S]*INDEXED BY ca_idx_cp_scope_bucket/);
      // Each ran more than once, with a larger bound each round.
      for (const [name, list] of [['search', search], ['scope search', scoped]] as const) {
        expect(new Set(list.map(([, a]) => (a[0] as { limit: number }).limit)).size, name).toBeGreaterThan(1);
      }
      expect(heads.length).toBeGreaterThanOrEqual(1);
      // Every round's plan: the band of row ids in the full-text match, bucket indexes for the heads.
      for (const [sql, args] of [...search, ...scoped, ...heads]) {
        expect(planProblems(db, new Map(seen).set(sql, args))).toEqual([]);
      }
      const headPlan = (db.prepare(`EXPLAIN QUERY PLAN ${heads[0]?.[0]}`).all(...(heads[0]?.[1] as [])) as { detail: string }[]).map((p) => p.detail).join('\n');
      expect(headPlan).toContain('USING INDEX ca_idx_cp_group_bucket');
      expect(headPlan).toContain('USING INDEX ca_idx_cp_scope_bucket');
    } finally {
      db.close();
      project.cleanup();
    }
  });

  it('after another tool added, rewrote and deleted error patterns and strategies: the freshness check and the catch-up never scan them', () => {
    const project = makeProject('ca-plans-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      seed(db, project);
      const config = structuredClone(DEFAULT_CONFIG);
      const request = { task: 'fix the login flow', error: 'TypeError: token is undefined' };
      captureAssembly(db, project.root, config, request);
      expect(searchIndexBehind(db)).toEqual([]);
      // The original tool at work: plain SQL, no code of this layer.
      db.exec(`
        INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences)
          VALUES ('py1', 'P0', '{"error_type":"TypeError","message_pattern":"token is undefined after refresh"}', 'Refresh the token first', 0.9, 1);
        UPDATE error_patterns SET occurrences = occurrences + 1, last_seen = datetime('now'), solution = solution || ' and log the token id' WHERE pattern_hash = 'h3';
        DELETE FROM error_patterns WHERE pattern_hash = 'h0';
        DELETE FROM strategies WHERE rowid = (SELECT MAX(rowid) FROM strategies);
        INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness) VALUES ('py-st', 'P0', 'testing', 'Expire the token in the login flow test', 1);
        UPDATE strategies SET helpfulness = helpfulness + 1, last_seen = datetime('now') WHERE strategy_id = 'st3';
      `);
      expect(searchIndexBehind(db)).toEqual(['patterns', 'strategies']);
      const seen = captureAssembly(db, project.root, config, request);
      expect(planProblems(db, seen)).toEqual([]);
      const sql = [...seen.keys()].map((q) => q.replace(/\s+/g, ' '));
      // The check, the re-read of rewritten rows, the sweep after a seen deletion, the rows that
      // took a deleted row's rowid, and the read of the index joined back to its rows all ran.
      for (const part of ['MAX(last_seen)', 'WHERE last_seen >= ?', 'NOT EXISTS (SELECT 1 FROM error_patterns e', 'NOT EXISTS (SELECT 1 FROM strategies e', 'ORDER BY rowid DESC LIMIT 64', 'EXISTS (SELECT 1 FROM error_patterns e WHERE e.rowid = f.rowid']) {
        expect(sql.some((q) => q.includes(part)), part).toBe(true);
      }
      // Rewritten rows are found by last_seen, not by a rowid range that spans the whole table.
      const [rewrite, args] = [...seen].find(([q]) => q.includes('WHERE last_seen >= ?')) as [string, unknown[]];
      expect((db.prepare(`EXPLAIN QUERY PLAN ${rewrite}`).all(...(args as [])) as { detail: string }[]).map((p) => p.detail)).toEqual([
        'SEARCH error_patterns USING INDEX idx_patterns_ttl (last_seen>?)',
      ]);
      expect(searchIndexBehind(db)).toEqual([]);
    } finally {
      db.close();
      project.cleanup();
    }
  });
});

/** The table an alias (or a table name) in a plan line stands for in the statement. */
function tableOf(sql: string, name: string): string {
  if (GROWING.includes(name)) return name;
  // `table alias` or `table AS alias`, not `SELECT alias.column` or `ON alias.id`.
  for (const m of sql.matchAll(new RegExp(`\\b(\\w+)\\s+(?:AS\\s+)?${name}\\b(?!\\s*\\.)`, 'gi'))) {
    if (!SQL_WORDS.has((m[1] as string).toUpperCase())) return m[1] as string;
  }
  return name;
}
const SQL_WORDS = new Set(['SELECT', 'FROM', 'JOIN', 'ON', 'WHERE', 'AND', 'OR', 'NOT', 'BY', 'AS', 'IN', 'EXISTS', 'DISTINCT', 'UNION', 'ALL', 'CROSS', 'LEFT', 'INNER', 'INDEXED']);

describe('the available count is bounded', () => {
  it(`stops at AVAILABLE_CAP a half and says so: "(3/${AVAILABLE_CAP}+)" and "+${AVAILABLE_CAP - 3}+ more"`, () => {
    const project = makeProject('ca-cap-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      const file = writeArtifact(project, 'S0', 'p.md', '# p\n');
      writeTransaction(db, () => {
        insertSession(db, { sessionId: 'S0', mode: 'simple', requirements: 'Login', initialBranch: 'main', metadata: null });
        upsertTaskGroup(db, { id: 'AUTH', sessionId: 'S0', name: 'Authentication', componentPath: 'src/auth/' });
        for (let i = 0; i < AVAILABLE_CAP + 100; i++) {
          const id = insertPackage(db, { sessionId: 'S0', groupId: 'AUTH', scope: 'group', packageType: 'research', filePath: file, producerAgent: 'investigator', priority: 'high', summary: `Package ${i}`, sizeBytes: 4 });
          insertConsumer(db, id, 'developer');
        }
      });
      const config = structuredClone(DEFAULT_CONFIG);
      const request = { session: 'S0', group: 'AUTH', agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: 0, limit: 3, include_reasoning: false, reasoning_level: 'medium', now: '2026-01-01T00:00:00.000Z', task: null, error: null, scope: null, lang: null, framework: null } as const;
      const deps = { config, counter: exactCounter((t: string) => Math.ceil(t.length / 4)), redact: (t: string) => t, db: () => db, projectRoot: project.root, explain: false, dryRun: true, warn: () => {} } as unknown as Deps;
      const doc = advance(zoneStep(request, config), 'consume', deps);
      expect(doc.total_available).toBe(AVAILABLE_CAP);
      expect(doc.total_capped).toBe(true);
      const block = renderMarkdown(doc);
      // The three ranked (newest, then the highest id); the builder's own five (which five depends
      // on the second each row was written in) are past the request's explicit limit.
      expect(block).toContain(`### Relevant Packages (3/${AVAILABLE_CAP}+)`);
      expect(block).toContain(`📦 +${AVAILABLE_CAP - 3}+ more packages available`);
      const builders = doc.floor?.packages ?? [];
      expect(builders).toHaveLength(5);
      // Those of them the block does not show (all five when the rows share one second; fewer when
      // the writes crossed into the next, whose newest rows both the ranking and the builder take).
      const shown = new Set(doc.packages?.map((p) => p.id));
      const missing = builders.filter((id) => !shown.has(id));
      expect(missing.length).toBeGreaterThanOrEqual(2);
      expect(block).toContain(`- Also in BAZINGA's own context section, not shown here: ${missing.map((id) => `package ${id}`).join(', ')} (past the limit)`);
    } finally {
      db.close();
      project.cleanup();
    }
  });
});

describe('error patterns without an error text are read top-N', () => {
  it('the first valid faults in confidence order equal the selection over the whole table, rows of one fault merged (random tables)', () => {
    const project = makeProject('ca-patterns-');
    const db = openDatabase({ dbPath: project.dbPath });
    try {
      let x = 20261123;
      const rand = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
      writeTransaction(db, () => {
        insertSession(db, { sessionId: 'S0', mode: 'simple', requirements: 'Login', initialBranch: 'main', metadata: JSON.stringify({ project_id: 'p1' }) });
        for (let i = 0; i < 300; i++) {
          // Every third message twice (one fault met in two rows, as two files give BAZINGA two rows).
          const message = `m${i - (i % 3 === 1 ? 1 : 0)} at line ${i}`;
          insertErrorPattern(db, { hash: `h${String(i).padStart(3, '0')}`, projectId: i % 7 === 0 ? 'other' : 'p1', signatureJson: JSON.stringify({ error_type: 'E', message_pattern: message }), solution: `fix ${i}`, lang: [null, 'ts', 'py'][i % 3] as string | null });
        }
        // Ties on purpose: few confidence and occurrence values, a few days of last_seen, short TTLs.
        const update = db.prepare('UPDATE error_patterns SET confidence = ?, occurrences = ?, last_seen = ?, ttl_days = ? WHERE pattern_hash = ?');
        for (let i = 0; i < 300; i++) {
          update.run([0.6, 0.7, 0.8, 0.9, 1][Math.floor(rand() * 5)], 1 + Math.floor(rand() * 3), `2025-12-0${1 + Math.floor(rand() * 5)} 10:00:00`, 1 + Math.floor(rand() * 3), `h${String(i).padStart(3, '0')}`);
        }
      });
      // Some block shows a fault of two rows (else the merge went untested here).
      let merged = false;
      for (const lang of [null, 'ts', 'py']) {
        for (const now of ['2025-12-03T00:00:00.000Z', '2025-12-06T12:00:00.000Z']) {
          const config = structuredClone(DEFAULT_CONFIG);
          const request = { session: 'S0', group: 'global', agent: 'developer', model: 'sonnet', current_tokens: 0, iteration: 0, limit: 3, include_reasoning: false, reasoning_level: 'medium', now, task: null, error: null, scope: null, lang, framework: null } as const;
          const deps = { config, counter: exactCounter((t: string) => Math.ceil(t.length / 4)), redact: (t: string) => t, db: () => db, projectRoot: project.root, explain: false, dryRun: true, warn: () => {} } as unknown as Deps;
          const ranked = advance(zoneStep(request, config), 'rank', deps);
          const shown = ranked.error_patterns ?? [];
          // The builder's own faults (its most confident of every project) follow the ranking's three.
          const floor = new Set(ranked.floor?.error_patterns ?? []);
          const nowMs = Date.parse(now);
          const rows = withFaultKeys(db, listErrorPatterns(db, { scope: projectScope('p1'), lang: null, minConfidence: 0, limit: -1 }));
          const expected = selectErrorPatterns({
            rows: mergeFaults(rows, {
              eligible: (r) => isShowablePattern(r, config.error_patterns.min_confidence, nowMs, lang),
              counted: (r) => !isExpired(r.last_seen, r.ttl_days, nowMs),
            }),
            nowMs: Date.parse(now),
            minConfidence: config.error_patterns.min_confidence,
            max: config.error_patterns.max,
            solutionChars: config.error_patterns.solution_chars,
            lang,
            error: null,
            // --lang is the group's stack: its patterns go before the project-wide ones.
            stack: new Set(lang === null ? [] : [lang]),
            redact: (t) => t,
          });
          expect(expected).toHaveLength(3);
          expect(shown.slice(0, 3).map((p) => [p.pattern_hash, p.occurrences])).toEqual(expected.map((p) => [p.pattern_hash, p.occurrences]));
          expect(shown.slice(3).every((p) => floor.has(p.fault_hash))).toBe(true);
          merged ||= shown.some((p) => expected.find((e) => e.fault_hash === p.fault_hash) !== undefined && rows.filter((r) => r.fault_hash === p.fault_hash).length > 1);
        }
      }
      expect(merged).toBe(true);
    } finally {
      db.close();
      project.cleanup();
    }
  });
});
