/**
 * The relevance evaluation: every labelled case in test/relevance/cases/ becomes a real SQLite
 * database (written through the bazinga-db repositories, indexed as the write commands index),
 * the assembler's rank and reasoning steps run in process for the case's request under several
 * modes, and what each mode puts in front of the agent is scored against the labels.
 *
 * Usage: tsx test/relevance/eval.ts [--json] [--tokenizers] [--sweep] [--case NAME] [--help]
 *   --json        print the figures as JSON instead of tables
 *   --tokenizers  also compare FTS5 tokenizers (the index's tokenizer was chosen with this)
 *   --case NAME   only the case with this name, with what each mode showed
 *   --sweep       overall figures of the combined modes for other relevance and scope weights
 *
 * Modes: heuristic (priority, group, type affinity, recency: the assembler before relevance),
 * fts (full-text relevance alone), combined (the shipped defaults); each of the last two with the
 * explicit request (--task, --error, --scope) and with the implicit task only (what a BAZINGA
 * orchestrator passing session, group and agent gets).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, writeTransaction, type DB } from '../../skills/bazinga-db/scripts/lib/db.ts';
import { errorPatternOf } from '../../skills/bazinga-db/scripts/lib/hashing.ts';
import { pyJsonDumps } from '../../skills/bazinga-db/scripts/lib/pyjson.ts';
import { insertConsumer, insertPackage } from '../../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { insertErrorPattern, recordErrorOccurrence, setErrorConfidence } from '../../skills/bazinga-db/scripts/lib/repo/errorPatterns.ts';
import { insertReasoning } from '../../skills/bazinga-db/scripts/lib/repo/reasoning.ts';
import { resetSearchIndex, syncSearchIndex } from '../../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { insertSession } from '../../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { addStrategyHelpfulness, upsertStrategy } from '../../skills/bazinga-db/scripts/lib/repo/strategies.ts';
import { upsertTaskGroup } from '../../skills/bazinga-db/scripts/lib/repo/taskGroups.ts';
import { SEARCH_TABLES, searchDdl } from '../../skills/bazinga-db/scripts/lib/schema.ts';
import { SEARCH_TOKENIZER } from '../../skills/bazinga-db/scripts/lib/searchText.ts';
import { DEFAULT_POLICY, redactionMemo, redactText } from '../../skills/bazinga-db/scripts/lib/redact.ts';
import { DEFAULT_CONFIG, type Config } from '../../skills/context-assembler/scripts/lib/config.ts';
import type { AssemblyDoc, AssemblyRequest } from '../../skills/context-assembler/scripts/lib/contract.ts';
import { advance, rankStep, reasoningStep, zoneStep, type Deps } from '../../skills/context-assembler/scripts/lib/pipeline.ts';
import { exactCounter } from '../../skills/context-assembler/scripts/lib/core/pack.ts';

/** One redaction memo for the whole evaluation, as a script's process has one (shell.ts makeDeps). */
const redactMemo = redactionMemo();

export const CASES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'cases');

export interface CasePackage {
  key: string;
  group: string | null;
  type: string;
  priority: string;
  producer: string;
  consumers: string[];
  summary: string;
  artifact?: string;
  age_hours: number;
}

export interface Case {
  name: string;
  story?: string;
  session: { requirements: string; project_id: string };
  group: { id: string; name: string; component_path?: string | null; specializations?: string[] };
  other_groups?: { id: string; name: string; component_path?: string | null; specializations?: string[] }[];
  request: { agent: string; iteration: number; task: string | null; error: string | null; scope: string | null };
  packages: CasePackage[];
  reasoning: { key: string; group: string | null; agent: string; phase: string; content: string; age_hours: number; references?: string[] }[];
  patterns: { key: string; error_type: string; message: string; solution: string; confidence: number; occurrences: number; lang?: string | null }[];
  strategies: { key: string; topic: string; insight: string; helpfulness: number; lang?: string | null; framework?: string | null }[];
  relevant: string[];
}

export function loadCases(dir = CASES_DIR): Case[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Case);
}

const SESSION = 'bazinga_eval_session';
const SUMMARY_MAX = 200;
const DAY = 86_400_000;

function sqliteTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** What each stored row is, by the case's keys. */
interface CaseDb {
  db: DB;
  root: string;
  keyOf: { package: Map<number, string>; reasoning: Map<number, string>; pattern: Map<string, string>; strategy: Map<string, string> };
  close(): void;
}

/**
 * Writes the case into a fresh database in a temporary project, as agents would have: artifact
 * files on disk, summaries cut to 200 characters as save-context-package stores them.
 */
export function buildCaseDb(c: Case, nowMs: number, tokenizer = SEARCH_TOKENIZER): CaseDb {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-eval-'));
  fs.mkdirSync(path.join(root, '.claude'));
  const artifacts = path.join(root, 'bazinga', 'artifacts', SESSION);
  fs.mkdirSync(artifacts, { recursive: true });
  const db = openDatabase({ dbPath: path.join(root, 'bazinga', 'bazinga.db') });
  const keyOf: CaseDb['keyOf'] = { package: new Map(), reasoning: new Map(), pattern: new Map(), strategy: new Map() };
  writeTransaction(db, () => {
    if (tokenizer !== SEARCH_TOKENIZER) {
      for (const t of SEARCH_TABLES) db.exec(`DROP TABLE ${t}`);
      for (const ddl of searchDdl(tokenizer)) db.exec(ddl);
      resetSearchIndex(db);
    }
    insertSession(db, { sessionId: SESSION, mode: 'parallel', requirements: c.session.requirements, initialBranch: 'main', metadata: JSON.stringify({ project_id: c.session.project_id }) });
    for (const g of [c.group, ...(c.other_groups ?? [])]) {
      const specs = (g.specializations ?? []).map((s) => `bazinga/templates/specializations/${s}.md`);
      upsertTaskGroup(db, {
        id: g.id,
        sessionId: SESSION,
        name: g.name,
        status: 'in_progress',
        specializations: specs.length > 0 ? JSON.stringify(specs) : undefined,
        componentPath: g.component_path ?? undefined,
      });
    }
    for (const p of c.packages) {
      const file = `bazinga/artifacts/${SESSION}/${p.key}-${p.type}.md`;
      if (p.artifact) fs.writeFileSync(path.join(root, file), p.artifact);
      const summary = Array.from(p.summary.replace(/[\r\n]/g, ' '));
      const id = insertPackage(db, {
        sessionId: SESSION,
        groupId: p.group,
        scope: p.group === null ? 'global' : 'group',
        packageType: p.type,
        filePath: file,
        producerAgent: p.producer,
        priority: p.priority,
        summary: summary.length <= SUMMARY_MAX ? summary.join('') : summary.slice(0, SUMMARY_MAX - 3).join('') + '...',
        sizeBytes: p.artifact ? Buffer.byteLength(p.artifact) : null,
        createdAt: sqliteTime(nowMs - p.age_hours * 3_600_000),
      });
      for (const consumer of new Set(p.consumers)) insertConsumer(db, id, consumer);
      keyOf.package.set(id, p.key);
    }
    for (const r of c.reasoning) {
      const { id } = insertReasoning(db, {
        sessionId: SESSION,
        groupId: r.group ?? 'global',
        agentType: r.agent,
        agentId: null,
        iteration: null,
        phase: r.phase,
        confidence: 'medium',
        content: r.content,
        referencesJson: r.references ? JSON.stringify(r.references) : null,
        redacted: false,
        timestamp: sqliteTime(nowMs - r.age_hours * 3_600_000),
      });
      keyOf.reasoning.set(id, r.key);
    }
    for (const e of c.patterns) {
      const { hash, signature } = errorPatternOf(e.error_type, e.message);
      insertErrorPattern(db, { hash, projectId: c.session.project_id, signatureJson: pyJsonDumps(signature), solution: e.solution, lang: e.lang ?? null });
      for (let i = 1; i < e.occurrences; i++) recordErrorOccurrence(db, hash, c.session.project_id, null);
      setErrorConfidence(db, hash, c.session.project_id, e.confidence);
      keyOf.pattern.set(hash, e.key);
    }
    for (const s of c.strategies) {
      const id = `${c.session.project_id}_${s.topic}_${s.key}`;
      upsertStrategy(db, { strategyId: id, projectId: c.session.project_id, topic: s.topic, insight: s.insight, lang: s.lang ?? null, framework: s.framework ?? null });
      if (s.helpfulness > 1) addStrategyHelpfulness(db, id, s.helpfulness - 1);
      keyOf.strategy.set(id, s.key);
    }
    syncSearchIndex(db, { projectRoot: root, artifactBytes: DEFAULT_CONFIG.relevance.artifact_index_bytes });
  });
  return { db, root, keyOf, close: () => (db.close(), fs.rmSync(root, { recursive: true, force: true })) };
}

export const MODES = ['heuristic', 'fts', 'combined', 'fts-implicit', 'combined-implicit'] as const;
export type Mode = (typeof MODES)[number];

function configFor(mode: Mode, weights?: Partial<Config['ranking']['weights']>): Config {
  const base = structuredClone(DEFAULT_CONFIG);
  if (weights) Object.assign(base.ranking.weights, weights);
  if (mode === 'heuristic') {
    base.enable_fts5 = false;
    base.ranking.weights.scope = 0;
  }
  if (mode === 'fts' || mode === 'fts-implicit') {
    base.ranking.weights = { priority: 0, same_group: 0, type_affinity: 0, recency: 0, relevance: 1, scope: 0, paths: 0, match: 0, designated: 0 };
  }
  return base;
}

export const SECTIONS = ['packages', 'reasoning', 'patterns', 'strategies'] as const;
export type Section = (typeof SECTIONS)[number];

/** The case keys each section showed, in order. */
export type Shown = Record<Section, string[]>;

/**
 * The case's request as the orchestrator would make it: its agent and iteration, for `group`;
 * with `implicit`, without the task, error and scope (what a BAZINGA orchestrator passes).
 */
function requestFor(c: Case, opts: { group: string; implicit: boolean; limit: number | null }, nowMs: number): AssemblyRequest {
  return {
    session: SESSION,
    group: opts.group,
    agent: c.request.agent as AssemblyRequest['agent'],
    model: 'sonnet',
    current_tokens: 0,
    iteration: c.request.iteration,
    limit: opts.limit,
    include_reasoning: true,
    reasoning_level: 'medium',
    now: new Date(nowMs).toISOString(),
    // Redacted at the edge, as the scripts' shell does (the request's texts are redacted: assembly-document.md).
    task: opts.implicit || c.request.task === null ? null : redactText(c.request.task),
    error: opts.implicit || c.request.error === null ? null : redactText(c.request.error),
    scope: opts.implicit ? null : c.request.scope,
    lang: null,
    framework: null,
  };
}

/** The steps' dependencies on a case's database: a dry run, one token per four characters. */
function depsFor(built: CaseDb, config: Config): Deps {
  return {
    config,
    counter: exactCounter((text) => Math.ceil(text.length / 4)),
    redact: (t) => redactMemo(t, DEFAULT_POLICY),
    db: () => built.db,
    projectRoot: built.root,
    explain: false,
    dryRun: true,
    warn: () => {},
  };
}

/** Runs the rank and reasoning steps for the case under one mode; returns what was shown. */
export function showFor(c: Case, built: CaseDb, mode: Mode, nowMs: number, weights?: Partial<Config['ranking']['weights']>, limit: number | null = null): Shown {
  const implicit = mode.endsWith('implicit');
  const request = requestFor(c, { group: c.group.id, implicit, limit }, nowMs);
  const config = configFor(mode, weights);
  const deps = depsFor(built, config);
  let doc: AssemblyDoc = zoneStep(request, config);
  doc = reasoningStep(rankStep(doc, deps), deps);
  return {
    packages: (doc.candidates ?? []).map((p) => built.keyOf.package.get(p.id) ?? `#${p.id}`),
    reasoning: (doc.reasoning?.entries ?? []).map((e) => built.keyOf.reasoning.get(e.id) ?? `#${e.id}`),
    patterns: (doc.error_patterns ?? []).map((e) => built.keyOf.pattern.get(e.pattern_hash) ?? e.pattern_hash),
    strategies: (doc.strategies ?? []).map((s) => built.keyOf.strategy.get(s.strategy_id) ?? s.strategy_id),
  };
}

export interface Scores {
  recall: number;
  precision: number;
  ndcg: number;
}

/** recall@k (of what k slots could hold), precision and binary nDCG@k of one ranked list. */
export function scoreList(shown: readonly string[], relevant: ReadonlySet<string>, k: number): Scores {
  const top = shown.slice(0, k);
  const hits = top.filter((s) => relevant.has(s)).length;
  const ideal = Math.min(relevant.size, k);
  let dcg = 0;
  top.forEach((s, i) => {
    if (relevant.has(s)) dcg += 1 / Math.log2(i + 2);
  });
  let idcg = 0;
  for (let i = 0; i < ideal; i++) idcg += 1 / Math.log2(i + 2);
  return { recall: ideal === 0 ? 0 : hits / ideal, precision: top.length === 0 ? 0 : hits / top.length, ndcg: idcg === 0 ? 0 : dcg / idcg };
}

/** How many slots each section has for the case's agent under the default config. */
function slots(c: Case): Record<Section, number> {
  const limits = DEFAULT_CONFIG.retrieval_limits;
  return {
    packages: limits[c.request.agent] ?? limits.unknown ?? 3,
    reasoning: DEFAULT_CONFIG.reasoning.max_total,
    patterns: DEFAULT_CONFIG.error_patterns.max,
    strategies: DEFAULT_CONFIG.strategies.max,
  };
}

function sectionOf(c: Case, key: string): Section | undefined {
  if (c.packages.some((p) => p.key === key)) return 'packages';
  if (c.reasoning.some((p) => p.key === key)) return 'reasoning';
  if (c.patterns.some((p) => p.key === key)) return 'patterns';
  if (c.strategies.some((p) => p.key === key)) return 'strategies';
  return undefined;
}

export interface ModeResult {
  mode: Mode;
  /** Mean over (case, section) pairs that have labelled items, per section and overall. */
  sections: Record<Section, Scores & { n: number }>;
  overall: Scores & { n: number };
}

export interface EvalResult {
  cases: number;
  items: number;
  labelled: number;
  tokenizer: string;
  modes: ModeResult[];
  perCase: { name: string; mode: Mode; shown: Shown }[];
}

/** Runs every mode on every case. */
export function evaluate(
  cases: readonly Case[],
  opts: { tokenizer?: string; modes?: readonly Mode[]; weights?: Partial<Config['ranking']['weights']> } = {},
): EvalResult {
  const nowMs = Math.floor(Date.now() / DAY) * DAY + DAY / 2;
  const modes = opts.modes ?? MODES;
  const sums = new Map<Mode, Record<Section | 'overall', Scores & { n: number }>>();
  const zero = () => ({ recall: 0, precision: 0, ndcg: 0, n: 0 });
  for (const m of modes) sums.set(m, { packages: zero(), reasoning: zero(), patterns: zero(), strategies: zero(), overall: zero() });
  const perCase: EvalResult['perCase'] = [];
  let items = 0;
  let labelled = 0;
  for (const c of cases) {
    items += c.packages.length + c.reasoning.length + c.patterns.length + c.strategies.length;
    labelled += c.relevant.length;
    const built = buildCaseDb(c, nowMs, opts.tokenizer);
    try {
      const k = slots(c);
      for (const m of modes) {
        const shown = showFor(c, built, m, nowMs, opts.weights);
        perCase.push({ name: c.name, mode: m, shown });
        const acc = sums.get(m) as Record<Section | 'overall', Scores & { n: number }>;
        for (const s of SECTIONS) {
          const rel = new Set(c.relevant.filter((key) => sectionOf(c, key) === s));
          if (rel.size === 0) continue;
          const sc = scoreList(shown[s], rel, k[s]);
          for (const target of [acc[s], acc.overall]) {
            target.recall += sc.recall;
            target.precision += sc.precision;
            target.ndcg += sc.ndcg;
            target.n += 1;
          }
        }
      }
    } finally {
      built.close();
    }
  }
  const mean = (x: Scores & { n: number }) => ({ recall: x.recall / (x.n || 1), precision: x.precision / (x.n || 1), ndcg: x.ndcg / (x.n || 1), n: x.n });
  return {
    cases: cases.length,
    items,
    labelled,
    tokenizer: opts.tokenizer ?? SEARCH_TOKENIZER,
    modes: modes.map((m) => {
      const acc = sums.get(m) as Record<Section | 'overall', Scores & { n: number }>;
      return {
        mode: m,
        sections: { packages: mean(acc.packages), reasoning: mean(acc.reasoning), patterns: mean(acc.patterns), strategies: mean(acc.strategies) },
        overall: mean(acc.overall),
      };
    }),
    perCase,
  };
}

const f3 = (x: number) => x.toFixed(3);

export function formatTable(result: EvalResult): string {
  const lines = [
    `${result.cases} cases, ${result.items} stored items, ${result.labelled} labelled relevant; tokenizer '${result.tokenizer}'`,
    '',
    '| mode | packages R / P / nDCG | reasoning R / P / nDCG | patterns R / P / nDCG | strategies R / P / nDCG | all R / P / nDCG |',
    '|---|---|---|---|---|---|',
  ];
  for (const m of result.modes) {
    const cell = (s: Scores) => `${f3(s.recall)} / ${f3(s.precision)} / ${f3(s.ndcg)}`;
    lines.push(`| ${m.mode} | ${SECTIONS.map((s) => cell(m.sections[s])).join(' | ')} | ${cell(m.overall)} |`);
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// The crowded store: each case's items beside those of three unrelated tasks of the same session
// ---------------------------------------------------------------------------------------------

/** The three cases whose items crowd case `i`: spread over the set, so never a neighbour of the same topic. */
export const crowdersOf = (i: number, n: number): number[] => [11, 22, 33].map((d) => (i + d) % n);

/**
 * Case `c` with the items of `others` added to its session: their groups (renamed `X<j>_<id>`)
 * become other groups of the session, their group packages and reasoning belong to those groups,
 * their session-wide packages stay session-wide, their error patterns and strategies join the
 * project's. Keys are prefixed (`x<j>:`); the labels stay the case's own.
 */
export function crowded(c: Case, others: readonly Case[]): Case {
  const out: Case = structuredClone(c);
  out.other_groups = [...(c.other_groups ?? [])];
  others.forEach((o, j) => {
    const rename = (g: string | null) => (g === null ? null : `X${j}_${g}`);
    for (const g of [o.group, ...(o.other_groups ?? [])]) out.other_groups!.push({ ...g, id: rename(g.id) as string });
    const key = (k: string) => `x${j}:${k}`;
    out.packages.push(...o.packages.map((p) => ({ ...p, key: key(p.key), group: rename(p.group) })));
    out.reasoning.push(...o.reasoning.map((r) => ({ ...r, key: key(r.key), group: rename(r.group) })));
    out.patterns.push(...o.patterns.map((e) => ({ ...e, key: key(e.key) })));
    out.strategies.push(...o.strategies.map((st) => ({ ...st, key: key(st.key) })));
  });
  return out;
}

/** A seeded shuffle (mulberry32), the same order for the same seed. */
function shuffled<T>(items: readonly T[], seedText: string): T[] {
  let seed = 0;
  for (const ch of seedText) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) | 0;
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export const BASELINES = ['this product', 'BM25 (task + error text)', 'random'] as const;
export type Baseline = (typeof BASELINES)[number];

/** The packages each system puts first (the top 5) for a case's explicit request. */
function firstFive(c: Case, built: CaseDb, system: Baseline, nowMs: number): string[] {
  if (system === 'this product') return showFor(c, built, 'combined', nowMs, undefined, 5).packages;
  if (system === 'BM25 (task + error text)') return showFor(c, built, 'fts', nowMs, undefined, 5).packages;
  // Every eligible package (the heuristic's full order), shuffled by the case's name.
  return shuffled(showFor(c, built, 'heuristic', nowMs, undefined, 10_000).packages.sort(), c.name).slice(0, 5);
}

export interface StoreFigures {
  recall: number;
  precision: number;
  /** Cases with labelled packages (the mean's n). */
  n: number;
}

/** Package recall@5 and precision@5 of each system, on the plain and on the crowded stores. */
export function crowdedEvaluation(cases: readonly Case[]): Record<Baseline, { plain: StoreFigures; crowded: StoreFigures }> {
  const nowMs = Math.floor(Date.now() / DAY) * DAY + DAY / 2;
  const zero = (): StoreFigures => ({ recall: 0, precision: 0, n: 0 });
  const acc = Object.fromEntries(BASELINES.map((b) => [b, { plain: zero(), crowded: zero() }])) as Record<Baseline, { plain: StoreFigures; crowded: StoreFigures }>;
  cases.forEach((c, i) => {
    const relevant = new Set(c.relevant.filter((k) => c.packages.some((p) => p.key === k)));
    if (relevant.size === 0) return;
    const stores = { plain: c, crowded: crowded(c, crowdersOf(i, cases.length).map((j) => cases[j] as Case)) };
    for (const [store, variant] of Object.entries(stores) as ['plain' | 'crowded', Case][]) {
      const built = buildCaseDb(variant, nowMs);
      try {
        for (const b of BASELINES) {
          const sc = scoreList(firstFive(variant, built, b, nowMs), relevant, 5);
          const t = acc[b][store];
          t.recall += sc.recall;
          t.precision += sc.precision;
          t.n += 1;
        }
      } finally {
        built.close();
      }
    }
  });
  for (const b of BASELINES) {
    for (const store of ['plain', 'crowded'] as const) {
      const t = acc[b][store];
      t.recall /= t.n || 1;
      t.precision /= t.n || 1;
    }
  }
  return acc;
}

/** What the whole block holds at a tight budget, per store: the budget held or a stated Tier 1 overrun. */
export interface BudgetFigures {
  blocks: number;
  /** Mean packages and counted tokens of the block (truncation.used). */
  packages: number;
  tokens: number;
  /** Blocks past the budget without a stated overrun (must be 0), and blocks with one. */
  unstated: number;
  overruns: number;
}

export const TIGHT_BUDGET = 400;

/** Every case's block (zone → reasoning, dry run) at a budget of TIGHT_BUDGET tokens, on the plain and the crowded stores, explicit and session-wide. */
export function budgetEvaluation(cases: readonly Case[]): { plain: BudgetFigures; crowded: BudgetFigures } {
  const nowMs = Math.floor(Date.now() / DAY) * DAY + DAY / 2;
  const zero = (): BudgetFigures => ({ blocks: 0, packages: 0, tokens: 0, unstated: 0, overruns: 0 });
  const out = { plain: zero(), crowded: zero() };
  cases.forEach((c, i) => {
    const stores = { plain: c, crowded: crowded(c, crowdersOf(i, cases.length).map((j) => cases[j] as Case)) };
    for (const [store, variant] of Object.entries(stores) as ['plain' | 'crowded', Case][]) {
      const built = buildCaseDb(variant, nowMs);
      try {
        for (const group of [variant.group.id, 'global']) {
          const request = requestFor(variant, { group, implicit: false, limit: null }, nowMs);
          const deps = depsFor(built, DEFAULT_CONFIG);
          const doc = advance({ ...zoneStep(request, DEFAULT_CONFIG), context_budget: TIGHT_BUDGET }, 'reasoning', deps);
          const t = doc.truncation;
          const f = out[store];
          f.blocks += 1;
          f.packages += (doc.packages ?? []).length;
          f.tokens += t?.used ?? 0;
          if (t && t.used > t.budget) {
            if (t.overrun > 0 && t.tiers[0] && t.tiers[0].items === 1) f.overruns += 1;
            else f.unstated += 1;
          }
        }
      } finally {
        built.close();
      }
    }
  });
  for (const f of [out.plain, out.crowded]) {
    f.packages /= f.blocks || 1;
    f.tokens /= f.blocks || 1;
  }
  return out;
}

export function formatBudget(r: ReturnType<typeof budgetEvaluation>): string {
  const row = (name: string, f: BudgetFigures) =>
    `| ${name} | ${f.blocks} | ${f.packages.toFixed(1)} | ${f.tokens.toFixed(0)} | ${f.unstated} | ${f.overruns} |`;
  return [
    `The whole block at a budget of ${TIGHT_BUDGET} tokens (each case's task and its group, and the same request session-wide):`,
    '',
    '| store | blocks | packages (mean) | tokens used (mean) | past the budget, unstated | stated Tier 1 overruns (one item) |',
    '|---|---:|---:|---:|---:|---:|',
    row('plain', r.plain),
    row('crowded', r.crowded),
  ].join('\n') + '\n';
}

/**
 * On the crowded stores: how often the first error pattern or strategy shown is another task's
 * (a key of a crowding case), per mode: the explicit request, the implicit task, relevance off.
 */
export function crowdedLeads(cases: readonly Case[]): { mode: Mode; cases: number; patterns: number; strategies: number }[] {
  const nowMs = Math.floor(Date.now() / DAY) * DAY + DAY / 2;
  const modes: Mode[] = ['combined', 'combined-implicit', 'heuristic'];
  const out = modes.map((mode) => ({ mode, cases: 0, patterns: 0, strategies: 0 }));
  cases.forEach((c, i) => {
    const variant = crowded(c, crowdersOf(i, cases.length).map((j) => cases[j] as Case));
    const built = buildCaseDb(variant, nowMs);
    try {
      modes.forEach((mode, m) => {
        const shown = showFor(variant, built, mode, nowMs);
        const o = out[m] as (typeof out)[number];
        o.cases += 1;
        if ((shown.patterns[0] ?? '').startsWith('x')) o.patterns += 1;
        if ((shown.strategies[0] ?? '').startsWith('x')) o.strategies += 1;
      });
    } finally {
      built.close();
    }
  });
  return out;
}

export function formatLeads(rows: ReturnType<typeof crowdedLeads>): string {
  return [
    "Crowded stores: cases whose first error pattern or strategy shown is another task's:",
    '',
    '| mode | cases | pattern led by another task | strategy led by another task |',
    '|---|---:|---:|---:|',
    ...rows.map((r) => `| ${r.mode} | ${r.cases} | ${r.patterns} | ${r.strategies} |`),
  ].join('\n') + '\n';
}

export function formatCrowded(r: ReturnType<typeof crowdedEvaluation>): string {
  const lines = [
    'Packages put first (recall@5 / precision@5), on each case\'s store and on the same store crowded with three unrelated tasks of the session:',
    '',
    '| system | plain store | crowded store | mean recall@5 |',
    '|---|---|---|---|',
  ];
  for (const b of BASELINES) {
    const { plain, crowded: busy } = r[b];
    lines.push(`| ${b} | ${f3(plain.recall)} / ${f3(plain.precision)} | ${f3(busy.recall)} / ${f3(busy.precision)} | ${f3((plain.recall + busy.recall) / 2)} |`);
  }
  return lines.join('\n') + '\n';
}

const HELP = `eval.ts: score the assembler's choices against the labelled relevance set (test/relevance/cases)

Usage: tsx test/relevance/eval.ts [--json] [--tokenizers] [--sweep] [--case NAME]
  --json        the figures as JSON
  --tokenizers  also compare the FTS5 tokenizers (combined mode, explicit and implicit)
  --case NAME   one case, with what each mode showed and the labels
  --sweep       overall figures of the combined modes for other relevance and scope weights
`;

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const known = new Set(['--json', '--tokenizers', '--case', '--sweep']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!known.has(a)) {
      process.stderr.write(`Unknown argument '${a}'. ${HELP}`);
      return 2;
    }
    if (a === '--case') i++;
  }
  let cases = loadCases();
  const caseIndex = argv.indexOf('--case');
  if (caseIndex !== -1) {
    const name = argv[caseIndex + 1];
    cases = cases.filter((c) => c.name === name);
    if (cases.length === 0) {
      process.stderr.write(`No case named '${name ?? ''}'\n`);
      return 2;
    }
  }
  const result = evaluate(cases);
  if (argv.includes('--json')) {
    process.stdout.write(JSON.stringify({ ...result, perCase: caseIndex === -1 ? undefined : result.perCase }, null, 2) + '\n');
  } else {
    process.stdout.write(formatTable(result));
    if (caseIndex === -1) process.stdout.write('\n' + formatCrowded(crowdedEvaluation(cases)) + '\n' + formatLeads(crowdedLeads(cases)) + '\n' + formatBudget(budgetEvaluation(cases)));
    if (caseIndex !== -1) {
      const c = cases[0] as Case;
      process.stdout.write(`\nlabelled: ${c.relevant.join(', ')}\n`);
      for (const p of result.perCase) process.stdout.write(`${p.mode}: ${JSON.stringify(p.shown)}\n`);
    }
  }
  if (argv.includes('--sweep')) {
    process.stdout.write('\n| w_relevance | w_scope | combined R / nDCG | combined-implicit R / nDCG |\n|---:|---:|---|---|\n');
    for (const relevance of [12, 40, 60, 100, 150]) {
      for (const scope of [0, 1.5, 3]) {
        const r = evaluate(cases, { modes: ['combined', 'combined-implicit'], weights: { relevance, scope } });
        const cell = (m: ModeResult) => `${f3(m.overall.recall)} / ${f3(m.overall.ndcg)}`;
        process.stdout.write(`| ${relevance} | ${scope} | ${cell(r.modes[0] as ModeResult)} | ${cell(r.modes[1] as ModeResult)} |\n`);
      }
    }
  }
  if (argv.includes('--tokenizers')) {
    for (const tokenizer of ['unicode61 remove_diacritics 2', 'porter unicode61 remove_diacritics 2', 'trigram']) {
      const r = evaluate(cases, { tokenizer, modes: ['combined', 'combined-implicit'] });
      process.stdout.write('\n' + formatTable(r));
    }
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
