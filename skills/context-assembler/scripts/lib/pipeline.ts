/**
 * The assembly steps over the shared document: zone → rank → pack → reasoning → consume. Each
 * step takes the document its predecessor produced and adds its own fields; `advance` runs
 * whatever steps are missing up to a target, so a pipe of scripts and one in-process run give the
 * same document. Database reads and writes go through the bazinga-db repositories; everything
 * else is the pure core.
 */
import type { DB } from '../../../bazinga-db/scripts/lib/db.ts';
import { writeTransaction } from '../../../bazinga-db/scripts/lib/db.ts';
import { markPackageConsumed } from '../../../bazinga-db/scripts/lib/consume.ts';
import {
  countDesignatedPackages,
  findPackage,
  listConsumedPackages,
} from '../../../bazinga-db/scripts/lib/repo/contextPackages.ts';
import { listErrorPatterns } from '../../../bazinga-db/scripts/lib/repo/errorPatterns.ts';
import { listReasoningByIds, listRecentReasoningOf, type ReasoningRow } from '../../../bazinga-db/scripts/lib/repo/reasoning.ts';
import { matchLearning, searchReasoning } from '../../../bazinga-db/scripts/lib/repo/searchIndex.ts';
import { buildMatch, type QueryTerm } from '../../../bazinga-db/scripts/lib/searchText.ts';
import { getProjectId } from '../../../bazinga-db/scripts/lib/repo/sessions.ts';
import { listStrategies } from '../../../bazinga-db/scripts/lib/repo/strategies.ts';
import type { Config } from './config.ts';
import { STEPS, type AssemblyDoc, type AssemblyRequest, type Step } from './contract.ts';
import { selectErrorPatterns, prepareStrategies } from './core/learning.ts';
import type { CountTokens } from './core/pack.ts';
import { packPackages } from './core/packages.ts';
import { parseSqliteTime, recencyOf } from './core/rank.ts';
import { normaliseBm25, parseStringList, scopeSignal, termScores } from './core/relevance.ts';
import { selectReasoning } from './core/reasoning.ts';
import { explainMatches, planSearch, refreshSearchIndex, selectPackages, type SearchPlan } from './search.ts';
import { computeZone } from './core/zone.ts';

export interface Deps {
  config: Config;
  countTokens: CountTokens;
  redact: (text: string) => string;
  /** The database, opened on first use. */
  db: () => DB;
  /** The project root (artifact files are indexed from it); null when unknown. */
  projectRoot: string | null;
  explain: boolean;
  dryRun: boolean;
  warn: (message: string) => void;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
const queries = (zone: string) => zone !== 'Wrap-up' && zone !== 'Emergency';

/** Step 1: zone and budgets; resolves the config-dependent defaults of the request. */
export function zoneStep(request: AssemblyRequest, config: Config): AssemblyDoc {
  const z = computeZone(request.model, request.current_tokens, request.agent, config);
  const limits = config.retrieval_limits;
  return {
    step: 'zone',
    request,
    zone: z.zone,
    usage_pct: round4(z.usage_pct),
    effective_limit: z.effective_limit,
    remaining_budget: z.remaining_budget,
    context_budget: z.context_budget,
    limit: request.limit ?? limits[request.agent] ?? limits.unknown ?? 3,
    include_reasoning: request.include_reasoning ?? (request.agent !== 'developer' || request.iteration > 0),
  };
}

/** Step 2: eligible packages ranked and cut to the limit; error patterns and strategies chosen. */
export function rankStep(doc: AssemblyDoc, deps: Deps): AssemblyDoc {
  const r = doc.request;
  if (!queries(doc.zone)) {
    return { ...doc, step: 'rank', total_available: 0, priority_used: null, candidates: [], error_patterns: [], strategies: [], excluded: [] };
  }
  const db = deps.db();
  const nowMs = Date.parse(r.now);
  const query = { sessionId: r.session, groupId: r.group, agentType: r.agent, iteration: r.iteration };
  const fts = deps.config.enable_fts5;
  if (fts) refreshSearchIndex(db, deps.projectRoot, deps.config, deps.warn);
  const consumed = listConsumedPackages(db, query);
  const select = (plan: SearchPlan) =>
    selectPackages({
      db,
      query,
      plan,
      zone: doc.zone,
      limit: doc.limit,
      nowMs,
      config: deps.config,
      explain: deps.explain,
      totalAvailable: countDesignatedPackages(db, query) - consumed.length,
      consumed,
    });
  // The index is derived data: when it cannot be read, rank without relevance rather than not at all.
  let plan = planSearch(db, r, deps.config, deps.redact, false);
  let selection: ReturnType<typeof selectPackages>;
  try {
    if (fts) plan = planSearch(db, r, deps.config, deps.redact, true);
    selection = select(plan);
  } catch (err) {
    if (!fts) throw err;
    deps.warn(`context-assembler: relevance unavailable (${(err as Error).message}); ranked without it`);
    plan = planSearch(db, r, deps.config, deps.redact, false);
    selection = select(plan);
  }
  const ranked = selection.ranked;
  const matches = deps.explain ? guarded(deps, () => explainMatches(db, plan, ranked.selected, deps.projectRoot, deps.config), new Map()) : new Map();
  const projectId = getProjectId(db, r.session);
  const ep = deps.config.error_patterns;
  // Each term asked for on its own: which of the project's rows hold it.
  const learned = (table: 'patterns' | 'strategies', terms: readonly QueryTerm[]) => {
    if (terms.length === 0) return undefined;
    return guarded(
      deps,
      () => {
        const m = matchLearning(db, table, projectId, terms.map((t) => buildMatch([t]) as string));
        return termScores(m.perTerm, m.total);
      },
      undefined,
    );
  };
  const patternRows = listErrorPatterns(db, { projectId, lang: null, minConfidence: ep.min_confidence, limit: -1 });
  const patternRelevance = learned('patterns', plan.errorTerms);
  const patterns = selectErrorPatterns({
    rows: patternRows,
    nowMs,
    minConfidence: ep.min_confidence,
    max: ep.max,
    solutionChars: ep.solution_chars,
    lang: r.lang,
    error: r.error,
    ...(patternRelevance ? { relevance: patternRelevance } : {}),
    redact: deps.redact,
  });
  const st = deps.config.strategies;
  const strategyRows = listStrategies(db, { projectId, lang: r.lang, framework: r.framework, topic: null, limit: plan.terms.length === 0 ? st.max : -1 });
  const strategyRelevance = learned('strategies', plan.terms);
  const strategies = prepareStrategies(
    strategyRows,
    { max: st.max, insightChars: st.insight_chars, redact: deps.redact, relevanceFirst: plan.info.source === 'explicit', ...(strategyRelevance ? { relevance: strategyRelevance } : {}) },
  );
  return {
    ...doc,
    step: 'rank',
    project_id: projectId,
    query: { ...plan.info, ...(plan.info.source !== 'none' ? { fts_hits: selection.hits, rounds: selection.rounds } : {}) },
    total_available: ranked.total_available,
    priority_used: ranked.priority_used,
    // Redacted here already: this document is printed too (rank.ts), not only the final block.
    candidates: ranked.selected.map((p) => {
      const match = matches.get(p.id);
      return { ...p, summary: deps.redact(p.summary), file_path: deps.redact(p.file_path), ...(deps.explain ? { match: match ?? { terms: [], fields: [] } } : {}) };
    }),
    error_patterns: patterns,
    strategies,
    excluded: ranked.excluded,
  };
}

/** Step 3: redact, truncate, count and admit the ranked packages within the context budget. */
export function packStep(doc: AssemblyDoc, deps: Deps): AssemblyDoc {
  const { candidates = [], ...rest } = doc;
  const total = doc.total_available ?? 0;
  if (!queries(doc.zone)) {
    return { ...rest, step: 'pack', packages: [], packages_tokens: 0, overflow_count: 0 };
  }
  const packed = packPackages({
    selected: candidates,
    zone: doc.zone,
    totalAvailable: total,
    priorityUsed: doc.priority_used ?? null,
    budget: doc.context_budget,
    summaryCap: deps.config.summary_caps[doc.zone] ?? 400,
    redact: deps.redact,
    countTokens: deps.countTokens,
  });
  return {
    ...rest,
    step: 'pack',
    packages: packed.packages,
    packages_tokens: packed.tokens,
    overflow_count: Math.max(0, total - packed.packages.length),
    excluded: [...(doc.excluded ?? []), ...packed.excluded],
  };
}

/** Step 4: prior agents' reasoning for this recipient, within the reasoning level's budget. */
export function reasoningStep(doc: AssemblyDoc, deps: Deps): AssemblyDoc {
  const r = doc.request;
  const budget = deps.config.reasoning.level_budgets[r.reasoning_level] ?? 800;
  const empty = { included: false, level: r.reasoning_level, budget, used_tokens: 0, entries: [] };
  if (!doc.include_reasoning || !queries(doc.zone)) return { ...doc, step: 'reasoning', reasoning: empty };
  const cfg = deps.config.reasoning;
  const producers = cfg.relevant_producers[r.agent] ?? [];
  const db = deps.db();
  // The newest few of each relevant producer, in the group and session-wide. With an explicit query
  // (--task, --error or --scope), a wider window of recent entries and the best full-text hits
  // compete on relevance and scope as well; the implicit task is too weak a guess to displace the
  // latest handoff.
  const groups = r.group === 'global' ? ['global'] : [r.group, 'global'];
  const plan = deps.config.enable_fts5 ? guarded(deps, () => planSearch(db, r, deps.config, deps.redact, true), undefined) : undefined;
  const explicit = plan !== undefined && (plan.info.source === 'explicit' || plan.info.scope_source === 'explicit');
  const ranked = explicit && plan !== undefined && (plan.reasoningInSession !== null || plan.scopes.length > 0);
  const window = ranked ? Math.max(cfg.max_per_producer, deps.config.relevance.reasoning_window) : cfg.max_per_producer;
  const rows = new Map<number, ReasoningRow>();
  for (const row of producers.flatMap((agent) => groups.flatMap((g) => listRecentReasoningOf(db, r.session, g, agent, window)))) rows.set(row.id, row);
  let score: Map<number, number> | undefined;
  if (ranked && plan) {
    const match = plan.reasoningInSession;
    const hits =
      match === null
        ? []
        : guarded(deps, () => searchReasoning(db, { match, sessionId: r.session, groups, agents: producers, limit: deps.config.relevance.candidates }), []);
    for (const row of listReasoningByIds(db, hits.filter((h) => !rows.has(h.id)).map((h) => h.id))) rows.set(row.id, row);
    score = reasoningScores([...rows.values()], normaliseBm25(hits.map((h) => ({ key: h.id, bm25: h.bm25 }))), plan, Date.parse(r.now), deps.config);
  }
  const selected = selectReasoning({
    rows: [...rows.values()],
    producers,
    maxPerProducer: cfg.max_per_producer,
    maxTotal: cfg.max_total,
    contentChars: cfg.content_chars,
    budget,
    redact: deps.redact,
    countTokens: deps.countTokens,
    ...(score ? { score } : {}),
  });
  return {
    ...doc,
    step: 'reasoning',
    reasoning: { included: true, level: r.reasoning_level, budget, used_tokens: selected.used_tokens, entries: selected.entries },
    excluded: [...(doc.excluded ?? []), ...selected.excluded],
  };
}

/** Runs a read of the (derived, rebuildable) search index; on failure says so and goes on without it. */
function guarded<T>(deps: Deps, read: () => T, fallback: T): T {
  try {
    return read();
  } catch (err) {
    deps.warn(`context-assembler: search index read failed (${(err as Error).message}); going on without it`);
    return fallback;
  }
}

/**
 * A reasoning entry's standing for this request: recency as for packages, plus relevance and
 * scope (its references, the paths its content names, its group's component path).
 */
function reasoningScores(
  rows: readonly ReasoningRow[],
  relevance: ReadonlyMap<number, number>,
  plan: SearchPlan,
  nowMs: number,
  config: Config,
): Map<number, number> {
  const w = config.reasoning.weights;
  const out = new Map<number, number>();
  for (const row of rows) {
    const recency = recencyOf(parseSqliteTime(row.timestamp), nowMs, config.ranking.recency_half_life_hours);
    // A session-wide entry has no group, so no component path.
    const componentPath = row.group_id === null ? '' : (plan.groupPaths.get(row.group_id) ?? '');
    const scope = scopeSignal({ paths: [componentPath, ...parseStringList(row.references_json)], texts: [row.content] }, plan.scopes);
    out.set(row.id, w.recency * recency + w.relevance * (relevance.get(row.id) ?? 0) + w.scope * scope);
  }
  return out;
}

/**
 * Step 5: in Normal and Soft_Warning, mark every delivered package consumed for (agent,
 * iteration) — the consumer row and the iteration-aware scope row — unless this is a dry run. A
 * failure here is reported, never thrown: the block was already assembled.
 */
export function consumeStep(doc: AssemblyDoc, deps: Deps): AssemblyDoc {
  const ids = (doc.packages ?? []).map((p) => p.id);
  const done = (consumption: NonNullable<AssemblyDoc['consumption']>, consumed: number[] = []): AssemblyDoc => ({
    ...doc,
    step: 'consume',
    consumed,
    consumption,
  });
  if (doc.zone !== 'Normal' && doc.zone !== 'Soft_Warning') return done('skipped-zone');
  if (ids.length === 0) return done('nothing-delivered');
  if (deps.dryRun) return done('dry-run');
  try {
    const db = deps.db();
    const r = doc.request;
    const consumed = writeTransaction(db, () => {
      const marked: number[] = [];
      for (const id of ids) {
        const pkg = findPackage(db, id);
        if (pkg) {
          markPackageConsumed(db, pkg, r.agent, r.iteration);
          marked.push(id);
        }
      }
      return marked;
    });
    return done('recorded', consumed);
  } catch (err) {
    deps.warn(`context-assembler: could not record consumption (${(err as Error).message}); the block is still valid`);
    return done('failed');
  }
}

const RUNNERS: Record<Exclude<Step, 'zone'>, (doc: AssemblyDoc, deps: Deps) => AssemblyDoc> = {
  rank: rankStep,
  pack: packStep,
  reasoning: reasoningStep,
  consume: consumeStep,
};

/** Runs every step after `doc.step` up to and including `target`. */
export function advance(doc: AssemblyDoc, target: Step, deps: Deps): AssemblyDoc {
  let current = doc;
  for (const step of STEPS.slice(STEPS.indexOf(doc.step) + 1, STEPS.indexOf(target) + 1)) {
    current = RUNNERS[step as Exclude<Step, 'zone'>](current, deps);
  }
  return current;
}
