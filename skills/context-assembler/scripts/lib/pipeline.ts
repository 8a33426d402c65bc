/**
 * The assembly steps over the shared document: zone → rank → pack → reasoning → consume. Each
 * step takes the document its predecessor produced and adds its own fields; `advance` runs
 * whatever steps are missing up to a target, so a pipe of scripts and one in-process run give the
 * same document. Database reads and writes go through the bazinga-db repositories; everything
 * else is the pure core.
 */
import {
  claimPackages,
  countRequestPackages,
  getProjectId,
  getProjectScope,
  hasMemoryTables,
  indexedArtifactText,
  memoryLine,
  parseMemory,
  searchScore,
  selectMemories,
  isConsumedAtIteration,
  listConsumedPackages,
  listGroupFailures,
  artifactTail,
  markStoredCut,
  oneLine,
  listEligibleByIds,
  findNewestCompletion,
  listBuilderErrorPatterns,
  listBuilderPackages,
  listBuilderReasoning,
  mergeFaults,
  rowsOfFaults,
  withLearning,
  withFaultKeys,
  listGroupReviews,
  fixTallies,
  listPackageProducers,
  listReasoningByIds,
  listSessionFailures,
  listRecentReasoningOf,
  listVerdicts,
  listStrategies,
  searchReasoning,
  writeTransaction,
  type DB,
  type ErrorPatternRow,
  type ProjectScope,
  type ReasoningRow,
  type ShownVerdict,
} from '../../../bazinga-db/scripts/lib/index.ts';
import { countsOf, outcomeTable, termOf, type OutcomeTable } from './core/outcomes.ts';
import { purposeOf, splitOf, standingRulesOf, type Config, type Zone } from './config.ts';
import {
  DOC_VERSION,
  STEPS,
  type AssemblyDoc,
  type AssemblyRequest,
  type BlockPool,
  type Counting,
  type ErrorPatternItem,
  type Exclusion,
  type FloorItems,
  type MemoryItem,
  type PackDoc,
  type PackFields,
  type PackedPackage,
  type RankDoc,
  type ReasoningFields,
  type ReasoningItem,
  type RankedPackage,
  type Step,
  type TruncationReport,
  type ZoneDoc,
} from './contract.ts';
import { fitBlock, keyOf, reportWithExcluded, type BlockInput } from './core/block.ts';
import { ITEM_KINDS, purposeRules, tierOf, tierRuleOf, type ItemKind, type Purpose, type Tier, type TierSubject } from './core/tiers.ts';
import { KINDS, type ItemOf, type KindRow } from './core/kinds.ts';
import { isExpired, isShowablePattern, patternText, selectErrorPatterns, prepareStrategies } from './core/learning.ts';
import type { TokenCounter } from './core/pack.ts';
import { preparePackages, packageSectionTokens } from './core/packages.ts';
import { conclusionOf } from './core/text.ts';
import { keepFailuresAbove, parseSqliteTime, rankPackages, recencyOf, type RankOutput } from './core/rank.ts';
import { BUILDER_LIMITS, BUILDER_PATTERN_CONFIDENCE, BUILDER_PRODUCERS, BUILDER_SOFT_BUDGET, builderFloor } from './core/floor.ts';
import {
  ageBefore,
  applyStanding,
  failureIteration,
  standingBand,
  packageProvenance,
  packageStanding,
  patternOrigin,
  patternProvenance,
  reasoningProvenance,
  reasoningStanding,
  REVIEWERS,
  standingFields,
  standingReason,
  strategyProvenance,
  type Failure,
  type GroupReview,
  type StandingOf,
} from './core/standing.ts';
import { availableText, DEFAULT_LAUNCHER, moreCommand, renderFloorLeftOut, renderPackageHeader } from './core/render.ts';
import { normaliseBm25, parseStringList, scopeSignal, wordMatches, wordScores } from './core/relevance.ts';
import { selectReasoning } from './core/reasoning.ts';
import { explainMatches, planSearch, refreshSearchIndex, selectPackages, type SearchPlan } from './search.ts';
import { computeZone, summaryCapOf, tighterSummaryCap, ZONE_RULES } from './core/zone.ts';
import { faultPatterns } from './faultPatterns.ts';
import { failureFaults, newestGroupFailure } from './failureFaults.ts';
import { unknownTargetWarning } from './unknownTarget.ts';

export interface Deps {
  config: Config;
  counter: TokenCounter;
  /**
   * Redacts one text. A process's scripts pass their redaction memo (shell.ts makeDeps over
   * redactionMemo), so a text met again (each summary at every summary cap pack tries) is redacted once.
   */
  redact: (text: string) => string;
  /** The database, opened on first use. */
  db: () => DB;
  /** The project root (artifact files are indexed from it); null when unknown. */
  projectRoot: string | null;
  explain: boolean;
  dryRun: boolean;
  /**
   * How an agent runs this skill's launcher (`node <path>/context-assembler.cjs`), for the command
   * the block's `+N more` line names; absent: the installed package's name (render.ts DEFAULT_LAUNCHER).
   */
  launcher?: string;
  warn: (message: string) => void;
  /**
   * Set for a run that records (not a dry run): writes the assembly record of the final document
   * inside the caller's write transaction (record.ts writeRecord: never fails that transaction).
   */
  record?: (db: DB, doc: AssemblyDoc) => void;
  /**
   * Set with `record`: writes the record of a run that records no consumption (nothing delivered,
   * a zone that records none) in a connection and transaction of its own, waiting briefly for a
   * lock and silent when it cannot (record.ts writeRecordAlone).
   */
  recordAlone?: (doc: AssemblyDoc) => void;
  /**
   * Set for a run of a request the launcher sent the warm assembler (record.ts settleDelivery):
   * called inside the write transaction that claims `delivering`, before the claim; returns the
   * packages an earlier run of the request recorded that this one delivers too (they count as this
   * run's), or throws when this run may record nothing (the server's run of a request the caller
   * recorded itself).
   */
  settle?: (db: DB, delivering: readonly number[]) => number[];
  /**
   * Set for a run that records: before the spawn is assembled or recorded, settles the verdicts
   * now known of what earlier spawns were shown and learns from the session's retries (bazinga-db
   * capture.ts captureBeforeSpawn), so that a fault fixed once is known when it recurs. Never fails
   * the run.
   */
  learn?: (request: AssemblyRequest) => void;
  /**
   * The verdicts that followed the showing of a kind's items (outcome feedback): bazinga-db's
   * listVerdicts unless given (the evaluation gives its own: test/outcomes/simulate.ts).
   */
  outcomeSource?: (db: DB, q: OutcomeQuery) => ShownVerdict[];
}

/** Whose verdicts an outcome read asks for: a kind's items by id, or (ids null) all of the session's. */
export interface OutcomeQuery {
  projectId: string;
  /** The session reads every project's (bazinga-db ProjectScope): the verdicts of every project's sessions count. */
  wholeDatabase?: boolean;
  sessionId: string;
  kind: ItemKind;
  ids: readonly (string | number)[] | null;
}

/**
 * The outcome counts of a kind's items (core/outcomes.ts); undefined with outcome_feedback off or
 * the kind's weight 0. Packages and reasoning entries belong to one session: theirs are read by session.
 */
function outcomesOf(deps: Deps, db: DB, q: OutcomeQuery, nowMs: number): OutcomeTable | undefined {
  const cfg = deps.config.outcome_feedback;
  if (!cfg.enabled || cfg.weights[q.kind] === 0) return undefined;
  // Derived from the record: when it cannot be read, rank without it.
  return guarded(deps, () => outcomeTable((deps.outcomeSource ?? listVerdicts)(db, q), nowMs, cfg.half_life_days, cfg.prior), undefined);
}

/** The weighted outcome term of each item of a kind in `table`, keyed as the kind's ranking keys it. */
function weightedTerms<K extends string | number>(table: OutcomeTable | undefined, kind: ItemKind, weight: number, parse: (id: string) => K): Map<K, number> | undefined {
  if (table === undefined || weight === 0) return undefined;
  const out = new Map<K, number>();
  const prefix = `${kind}:`;
  for (const [key, c] of table) if (key.startsWith(prefix) && c.term !== 0) out.set(parse(key.slice(prefix.length)), weight * c.term);
  return out;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
const queries = (zone: Zone) => ZONE_RULES[zone].queries;

/** Words of --error a pattern's type and message must share with it to match it (the words of any error left out: wordsOf). */
const ERROR_MATCH_WORDS = 1;

/**
 * The most error patterns (the first valid ones in the order they are shown: confidence,
 * occurrences; expired ones and other languages skipped) and strategies (by helpfulness, of the
 * request's language and framework) a call reads to match their words in memory. A project's rows
 * grow with its history (the 1M bench project holds 3,409 patterns and 682 strategies: reading and
 * matching them all cost about 14 ms a call); past this many, the less confident or helpful rest is
 * not considered for the task's words. A call with an error text reads every pattern: the one its
 * error matches must be found wherever it ranks.
 */
export const WORD_MATCHED_ROWS_MAX = 500;

/** Designated packages counted at most, per half (group, session-wide); past it the block says "N+". */
export const AVAILABLE_CAP = 1000;

/** Step 1: zone and budgets; resolves the config-dependent defaults of the request. */
export function zoneStep(request: AssemblyRequest, config: Config): ZoneDoc {
  const z = computeZone(request.model, request.current_tokens, request.agent, config);
  const limits = config.retrieval_limits;
  return {
    doc_version: DOC_VERSION,
    step: 'zone',
    request,
    zone: z.zone,
    usage_pct: round4(z.usage_pct),
    summary_cap: summaryCapOf(config, z.zone),
    effective_limit: z.effective_limit,
    remaining_budget: z.remaining_budget,
    context_budget: z.context_budget,
    limit: request.limit ?? limits[request.agent] ?? limits.unknown,
    include_reasoning: request.include_reasoning ?? (request.agent !== 'developer' || request.iteration > 0),
    purpose: purposeOf(config, request.agent, request.purpose),
  };
}

/** Step 2: eligible packages ranked and cut to the limit; error patterns and strategies chosen. */
export function rankStep(doc: ZoneDoc, deps: Deps): RankDoc {
  const r = doc.request;
  if (!queries(doc.zone)) {
    // Nothing is read for the block; what the builder would have shown is still named (left out for the zone).
    const floor = r.more !== undefined ? undefined : guardedFloor(deps, r);
    return { ...doc, step: 'rank', total_available: 0, priority_used: null, candidates: [], error_patterns: [], strategies: [], excluded: [], ...(floor ? { floor } : {}) };
  }
  const db = deps.db();
  // A request for more than its block gave (--more) already had the floor in that block.
  const floor = r.more !== undefined ? NO_FLOOR : floorOf(db, r);
  const nowMs = Date.parse(r.now);
  const query = { sessionId: r.session, groupId: r.group, agentType: r.agent, iteration: r.iteration };
  // Patterns, strategies, their verdicts and project memory: the session's project's, or every
  // project's for a session that records none (bazinga-db ProjectScope).
  const scope = getProjectScope(db, r.session);
  const projectId = scope.projectId;
  // What followed the spawns items were shown to, per kind, for its candidates.
  const outcomes = (kind: ItemKind, ids: readonly (string | number)[] | null) =>
    outcomesOf(deps, db, { projectId, wholeDatabase: scope.wholeDatabase, sessionId: r.session, kind, ids }, nowMs);
  const packageOutcomes = outcomes('package', null);
  const weightsOf = deps.config.outcome_feedback.weights;
  const fts = deps.config.enable_fts5;
  const scopeByIndex = fts ? refreshSearchIndex(db, deps.projectRoot, deps.config, deps.warn) : false;
  // Consumption is a record of delivery and leaves nothing out: a spawn that asks for more than its
  // block gave it names what it was given (--more <ids>), and only those are left out.
  const consumed = r.more !== undefined ? listEligibleByIds(db, query, r.more) : [];
  // Counted up to AVAILABLE_CAP a half: the count then costs the cap, not the session's size.
  const designated = countRequestPackages(db, query, AVAILABLE_CAP);
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
      totalAvailable: Math.max(0, designated.count - consumed.length),
      consumed,
      ...withDefined('outcome', weightedTerms(packageOutcomes, 'package', 1, Number)),
    });
  // The index is derived data: when it cannot be read, rank without relevance rather than not at all.
  let plan: SearchPlan;
  let selection: ReturnType<typeof selectPackages>;
  try {
    plan = planSearch(db, r, deps.config, deps.redact, fts, scopeByIndex);
    selection = select(plan);
  } catch (err) {
    if (!fts) throw err;
    deps.warn(`context-assembler: relevance unavailable (${(err as Error).message}); ranked without it`);
    plan = planSearch(db, r, deps.config, deps.redact, false, false);
    selection = select(plan);
  }
  const consumedIds = new Set(consumed.map((p) => p.id));
  const ranked = withPinnedPackages(db, keptFailures(db, selection.ranked, doc, deps, consumedIds), floor, doc, deps, consumedIds);
  const missing = unknownTargetWarning(db, r, plan.groupIds);
  if (missing !== undefined) deps.warn(missing);
  // Each package's provenance and standing, ordered (or left out) by the agent's rules.
  const standing = packagesWithStanding(db, r.session, ranked.selected, nowMs, deps, r.agent);
  const matches = deps.explain ? guarded(deps, () => explainMatches(db, plan, standing.shown, deps.projectRoot, deps.config), new Map()) : new Map();
  const ep = deps.config.error_patterns;
  // Error patterns by the error text and the task, strategies by the task, both also by the group's
  // name and component path: their words matched in memory on the project's rows (at most
  // WORD_MATCHED_ROWS_MAX of each), so the order never depends on how far the index has come, and
  // holds with relevance off.
  const text = plan.taskText;
  // Without a text to rank them by or a group's stack to prefer, the few shown are the first valid
  // ones in confidence order: read only those, not the scope's whole table. With a task, the
  // first WORD_MATCHED_ROWS_MAX valid ones (expired patterns and other languages skipped, not
  // counted); with an error text, every pattern. Each fault once (faultPatterns).
  const showable = (row: ErrorPatternRow) => isShowablePattern(row, ep.min_confidence, nowMs, r.lang);
  const live = (row: ErrorPatternRow) => !isExpired(row.last_seen, row.ttl_days, nowMs);
  // The failure that sent the spawn back, signed: its own patterns are read wherever they rank and shown first.
  const ownFaults = failureFaults(db, r, deps.projectRoot, deps.redact);
  const readRows = faultPatterns(db, scope, {
    faults: ownFaults,
    all: r.error !== null,
    minConfidence: ep.min_confidence,
    max: text === null && plan.stack.size === 0 ? ep.max : WORD_MATCHED_ROWS_MAX,
    readsAtMost: 2 * WORD_MATCHED_ROWS_MAX,
    showable,
    live,
  });
  // The builder's faults (the floor) are shown whatever their project, confidence threshold or
  // language: every row of those the ranking did not read, merged as one each (not past its TTL).
  const floorFaults = floor.error_patterns.filter((f) => !readRows.some((row) => row.fault_hash === f));
  const floorRows =
    floorFaults.length === 0
      ? []
      : mergeFaults(withLearning(db, rowsOfFaults(db, { projectId: scope.projectId, wholeDatabase: true }, floorFaults)), { eligible: live, counted: live });
  const patternRows = [...readRows, ...floorRows];
  const maxTerms = deps.config.relevance.max_query_terms;
  const patternTexts = patternRows.map((row) => ({ key: row.fault_hash, ...patternText(row) }));
  const patternRelevance = wordScores(text, patternTexts.map((p) => ({ key: p.key, text: p.all })), maxTerms);
  const errorMatched = new Set(
    [...wordMatches(r.error, patternTexts.map((p) => ({ key: p.key, text: p.signature })), maxTerms)].filter(([, n]) => n >= ERROR_MATCH_WORDS).map(([key]) => key),
  );
  // A pattern's verdicts are its fault's (every row of it): its id in records and verdicts is its fault key.
  const patternOutcomes = outcomes('error_pattern', patternRows.map((row) => row.fault_hash));
  const patterns = selectErrorPatterns({
    rows: patternRows,
    nowMs,
    minConfidence: ep.min_confidence,
    max: ep.max,
    solutionChars: ep.solution_chars,
    lang: r.lang,
    error: r.error,
    ...(patternRelevance ? { relevance: patternRelevance } : {}),
    errorMatched,
    failureFaults: new Set(ownFaults),
    stack: plan.stack,
    ...withDefined('outcome', weightedTerms(patternOutcomes, 'error_pattern', weightsOf.error_pattern, String)),
    pinned: new Set(floor.error_patterns),
    pinnedOnly: new Set(floorFaults),
    redact: deps.redact,
  });
  const st = deps.config.strategies;
  const strategyRows = listStrategies(db, { scope, lang: r.lang, framework: r.framework, topic: null, limit: text === null && plan.stack.size === 0 ? st.max : WORD_MATCHED_ROWS_MAX });
  const strategyRelevance = wordScores(text, strategyRows.map((row) => ({ key: row.strategy_id, text: `${row.topic}\n${row.insight}` })), maxTerms);
  const strategyOutcomes = outcomes('strategy', strategyRows.map((row) => row.strategy_id));
  const strategies = prepareStrategies(
    strategyRows,
    {
      max: st.max,
      insightChars: st.insight_chars,
      redact: deps.redact,
      relevanceFirst: plan.info.source === 'explicit',
      stack: plan.stack,
      ...(strategyRelevance ? { relevance: strategyRelevance } : {}),
      ...withDefined('outcome', weightedTerms(strategyOutcomes, 'strategy', weightsOf.strategy, String)),
    },
  );
  const mem = deps.config.memory;
  const memories = mem.block_max > 0 && mem.block_share > 0 ? guarded(deps, () => relevantMemories(db, scope, r.session, plan.info.text, nowMs, deps, (ids) => outcomes('memory', ids)), []) : [];
  // With --explain, each item shown before says how the spawns it was shown to went.
  const explained = <T,>(kind: ItemKind, table: OutcomeTable | undefined, id: (item: T) => number | string) => (item: T): T => {
    const c = deps.explain ? countsOf(table, kind, id(item)) : undefined;
    return c ? { ...item, outcome: c } : item;
  };
  return {
    ...doc,
    step: 'rank',
    project_id: projectId,
    ...(memories.length > 0 ? { memories } : {}),
    query: { ...plan.info, ...(plan.info.source !== 'none' ? { fts_hits: selection.hits, rounds: selection.rounds } : {}) },
    total_available: ranked.total_available,
    total_capped: designated.capped,
    priority_used: ranked.priority_used,
    // Redacted here already: this document is printed too (rank.ts), not only the final block.
    candidates: standing.shown.map((p) => {
      const match = matches.get(p.id);
      const shown = { ...p, summary: deps.redact(p.summary), file_path: deps.redact(p.file_path), ...(deps.explain ? { match: match ?? { terms: [], fields: [] } } : {}) };
      return explained<RankedPackage>('package', packageOutcomes, (x) => x.id)(shown);
    }),
    error_patterns: patternsWithProvenance(db, scope, patterns, patternOutcomes, nowMs, deps.config).map(explained('error_pattern', patternOutcomes, (x) => x.fault_hash)),
    strategies: strategies
      .map((s) => {
        const row = strategyRows.find((x) => x.strategy_id === s.strategy_id);
        const age = row ? ageBefore(row.last_seen, nowMs) : null;
        const learnt = termOf(strategyOutcomes, 'strategy', s.strategy_id) !== 0;
        return withProvenance({ ...s, ...(age !== null ? { age } : {}), ...(learnt ? { learnt: true as const } : {}) }, deps.config, strategyProvenance);
      })
      .map(explained('strategy', strategyOutcomes, (x) => x.strategy_id)),
    // The builder's faults not shown are past their TTL (it shows them stale; the block says so).
    excluded: [...ranked.excluded, ...standingExclusions('package', standing.leftOut, (p) => p.id), ...floor.error_patterns.filter((f) => !patterns.some((p) => p.fault_hash === f)).map((id): Exclusion => ({ kind: 'error_pattern', id, reason: 'expired' }))],
    floor,
  };
}

/**
 * What the block must hold for this request (contract.ts FloorItems): the builder's section for it
 * (core/floor.ts over bazinga-db's builderSection reads) and the work under review.
 */
function floorOf(db: DB, r: AssemblyRequest): FloorItems {
  const producers = BUILDER_PRODUCERS[r.agent] ?? [];
  const patterns = withFaultKeys(db, listBuilderErrorPatterns(db, { above: BUILDER_PATTERN_CONFIDENCE, limit: BUILDER_LIMITS.error_patterns }));
  const floor = builderFloor(
    {
      packages: listBuilderPackages(db, { sessionId: r.session, groupId: r.group, limit: BUILDER_LIMITS.packages }),
      reasoning: producers.length === 0 ? [] : listBuilderReasoning(db, { sessionId: r.session, groupId: r.group, producers, limit: BUILDER_LIMITS.reasoning }),
      error_patterns: patterns,
    },
    builderModel(r.model),
    r.agent,
  );
  // A pattern the builder shows is its row; the block shows its fault (the rows of one fault once).
  const faultOf = (hash: string) => patterns.find((p) => p.pattern_hash === hash)?.fault_hash ?? hash;
  const faults = [...new Set(floor.error_patterns.map(faultOf))];
  const rowsNamed = Object.fromEntries(floor.error_patterns.map((hash) => [faultOf(hash), hash]));
  const review = { packages: [] as number[], reasoning: [] as number[] };
  if (r.group !== 'global') {
    // A review is of the group's newest completion by whoever implemented it.
    if (REVIEWERS.has(r.agent)) {
      const done = findNewestCompletion(db, { sessionId: r.session, groupId: r.group, producers: IMPLEMENTERS });
      if (done) review.reasoning.push(done.id);
    }
    // A retry is sent back by the group's newest failures report.
    if (r.iteration > 0 || r.error !== null) {
      const newest = newestGroupFailure(db, r);
      if (newest) review.packages.push(newest.id);
    }
  }
  const union = (a: readonly number[], b: readonly number[]) => [...a, ...b.filter((x) => !a.includes(x))];
  return { packages: union(floor.packages, review.packages), reasoning: union(floor.reasoning, review.reasoning), error_patterns: faults, under_review: review, pattern_rows: rowsNamed };
}

/**
 * The floor's line of `### Left out` for what a fit shows (render.ts renderFloorLeftOut over the
 * document as that fit would leave it), at its widest: the budget's figures in place of the tokens used.
 */
function floorLineOf(doc: Omit<RankDoc, 'candidates'>, truncation: Pick<TruncationReport, 'used' | 'budget'>): NonNullable<BlockInput['floorLine']> {
  const reasoningOn = doc.include_reasoning && queries(doc.zone);
  return (shown, excluded, navigation) =>
    renderFloorLeftOut({
      ...(doc as AssemblyDoc),
      packages: [...shown.package] as PackedPackage[],
      error_patterns: [...shown.error_pattern] as AssemblyDoc['error_patterns'],
      reasoning: { included: reasoningOn, level: doc.request.reasoning_level, budget: 0, used_tokens: 0, entries: [...shown.reasoning] as ReasoningFields['reasoning']['entries'] },
      excluded: [...excluded],
      truncation: { ...truncation, ...(navigation ? { navigation } : {}) } as TruncationReport,
    });
}

/** The block's figures at their widest for a line that quotes them: its budget used whole. */
const budgetWidest = (doc: Omit<RankDoc, 'candidates'>) => ({ used: doc.context_budget, budget: doc.context_budget });

/** The floor's items as the block's fit keys them (`${kind}:${id}`). */
function floorKeys(floor: FloorItems): Set<string> {
  return new Set([...floor.packages.map((id) => keyOf('package', id)), ...floor.reasoning.map((id) => keyOf('reasoning', id)), ...floor.error_patterns.map((h) => keyOf('error_pattern', h))]);
}

const NO_FLOOR: FloorItems = { packages: [], reasoning: [], error_patterns: [], under_review: { packages: [], reasoning: [] } };

/** The agents whose completion is the work a reviewer's block holds (the reviewers: core/standing.ts REVIEWERS). */
const IMPLEMENTERS: readonly string[] = ['developer', 'senior_software_engineer'];

/** The builder's model for a request's model: the same name where it has a budget for it (haiku, sonnet, opus), else sonnet, as its own lookup does (an exact match: `claude-haiku-4-5` is sonnet's to it). */
function builderModel(model: string): string {
  return Object.hasOwn(BUILDER_SOFT_BUDGET, model) ? model : 'sonnet';
}

/** floorOf where a zone reads nothing else: a failure to read it leaves the floor unknown (undefined), never the run. */
function guardedFloor(deps: Deps, r: AssemblyRequest): FloorItems | undefined {
  try {
    return floorOf(deps.db(), r);
  } catch (err) {
    deps.warn(`context-assembler: could not read what the prompt builder would show (${(err as Error).message})`);
    return undefined;
  }
}

/**
 * The selection with the floor's packages added where ranking left them out (beyond the configured
 * limit; an explicit --limit names them as left out instead): the builder would show them, or they
 * are the work under review. The zone's priority ladder still
 * holds (Conservative leaves low ones out, and the block names them as left out for the zone). A
 * package a request for more (--more) was given already stays out; one superseded is not a
 * candidate and is named as left out by the block (core/render.ts).
 */
function withPinnedPackages(db: DB, ranked: RankOutput, floor: FloorItems, doc: ZoneDoc, deps: Deps, consumed: ReadonlySet<number>): RankOutput {
  const chosen = new Set(ranked.selected.map((p) => p.id));
  const missing = floor.packages.filter((id) => !chosen.has(id) && !consumed.has(id));
  if (missing.length === 0) return ranked;
  const r = doc.request;
  // An explicit --limit is the caller's own cap on packages: the builder's packages the ranking
  // did not choose are named as left out for it (the block says so), not added beyond it.
  if (r.limit !== null) {
    const named = new Set(ranked.excluded.filter((e) => e.kind === 'package').map((e) => e.id));
    return { ...ranked, excluded: [...ranked.excluded, ...missing.filter((id) => !named.has(id)).map((id): Exclusion => ({ kind: 'package', id, reason: 'limit' }))] };
  }
  const found = listEligibleByIds(db, { sessionId: r.session, groupId: r.group, agentType: r.agent, iteration: r.iteration }, missing);
  // The zone's priority ladder (Conservative: never low) still holds: the block names those left out for the zone.
  const ladder = ZONE_RULES[doc.zone].ladder;
  const rows = ladder === null ? found : found.filter((row) => ladder.includes(row.priority));
  const offLadder = found.filter((row) => !rows.includes(row) && !ranked.excluded.some((e) => e.kind === 'package' && e.id === row.id && e.reason === 'zone'));
  const extra = rankPackages({
    candidates: rows.map((row) => ({ ...row, consumed: false })),
    group: r.group,
    agent: r.agent,
    zone: 'Normal',
    limit: rows.length,
    nowMs: Date.parse(r.now),
    config: deps.config,
    explain: deps.explain,
  }).selected;
  const added = new Set(extra.map((p) => p.id));
  const excluded = [
    ...ranked.excluded.filter((e) => !(e.kind === 'package' && added.has(e.id as number))),
    ...offLadder.map((row): Exclusion => ({ kind: 'package', id: row.id, reason: 'zone' })),
  ];
  return { ...ranked, selected: [...ranked.selected, ...extra], excluded };
}

/**
 * The project's live memories of earlier sessions that hold a term of the request's query (its
 * task, explicit or the group's implicit one), best first by memory.search_weights, at most
 * memory.block_max; none on a database whose memory tables no writer made yet. What this session
 * itself produced is in the block already (its packages and reasoning), so not again here.
 */
function relevantMemories(
  db: DB,
  scope: ProjectScope,
  sessionId: string,
  text: string | null,
  nowMs: number,
  deps: Deps,
  outcomesOfIds: (ids: number[]) => OutcomeTable | undefined,
): MemoryItem[] {
  if (text === null || !hasMemoryTables(db)) return [];
  const cfg = deps.config.memory;
  const found = selectMemories(db, { scope, text, type: null, tags: [], minImportance: 1, since: null, until: null, archived: false, includeSuperseded: false }).filter(
    (f) => f.relevance > 0 && f.row.source_session !== sessionId,
  );
  const outcomes = found.length === 0 ? undefined : outcomesOfIds(found.map((f) => f.row.id));
  const weight = deps.config.outcome_feedback.weights.memory;
  return (
    found
      // Plus what followed the spawns it was shown to: outcome_feedback.weights.memory × its term × its relevance.
      .map(({ row, relevance }) => ({ row, relevance, score: searchScore(row, relevance, nowMs, cfg.search_weights) + weight * termOf(outcomes, 'memory', row.id) * relevance }))
      .sort((a, b) => b.score - a.score || b.row.id - a.row.id)
      .slice(0, cfg.block_max)
      .map(({ row, relevance, score }): MemoryItem => {
        const m = parseMemory(row);
        const counts = deps.explain ? countsOf(outcomes, 'memory', m.id) : undefined;
        return { id: m.id, type: m.type, title: deps.redact(m.title), line: deps.redact(memoryLine(m)), relevance, score: round4(score), ...(counts ? { outcome: counts } : {}) };
      })
  );
}

/**
 * The memories within the block's memory share (memory.block_share of the budget), best first; the
 * others are left out for budget.
 */
function withinMemoryShare(memories: readonly MemoryItem[], budget: number, deps: Deps): { kept: MemoryItem[]; excluded: Exclusion[] } {
  const cap = Math.floor(budget * deps.config.memory.block_share);
  const kept: MemoryItem[] = [];
  const excluded: Exclusion[] = [];
  let used = 0;
  for (const m of memories) {
    // On its bound while that fits; counted when the share depends on it.
    let size = deps.counter.bound(m.line + '\n');
    if (used + size.tokens > cap && !size.exact) size = { tokens: deps.counter.count(m.line + '\n'), exact: true };
    if (used + size.tokens <= cap) {
      kept.push(m);
      used += size.tokens;
    } else excluded.push({ kind: 'memory', id: m.id, reason: 'budget', tier: 3 });
  }
  return { kept, excluded };
}

/**
 * The selection with the group's failures packages kept above the limit for packages of lower
 * priority (core/rank.ts keepFailuresAbove); not on the priority ladder (Conservative), which
 * fills by priority already, nor for a session-wide request.
 */
function keptFailures(db: DB, ranked: RankOutput, doc: ZoneDoc, deps: Deps, consumed: ReadonlySet<number>): RankOutput {
  const r = doc.request;
  if (r.group === 'global' || ZONE_RULES[doc.zone].ladder !== null || ranked.selected.length === 0) return ranked;
  const failures = listGroupFailures(db, { sessionId: r.session, groupId: r.group, agentType: r.agent }, doc.limit)
    .filter((p) => !consumed.has(p.id))
    .map((p) => ({ ...p, consumed: false }));
  if (failures.length === 0) return ranked;
  const kept = keepFailuresAbove(ranked, failures, { group: r.group, agent: r.agent, nowMs: Date.parse(r.now), config: deps.config, explain: deps.explain, limit: doc.limit });
  return { ...ranked, ...kept };
}

/**
 * Step 3: the block's items tiered and fitted into its budget (core/block.ts): the ranked packages
 * redacted and shortened, the error patterns and strategies; what is left out is excluded with its
 * reason, and the truncation report written.
 */
export function packStep(doc: RankDoc, deps: Deps): PackDoc {
  const { candidates, ...rest } = doc;
  // summary_cap is null exactly where the zone shows no packages (validateDoc checks a piped one).
  const summaryCap = doc.summary_cap;
  if (!queries(doc.zone) || summaryCap === null) {
    return { ...rest, step: 'pack', packages: [], packages_tokens: 0, overflow_count: 0 };
  }
  const purpose = doc.purpose;
  const r = doc.request;
  const conclusions = conclusionsOf(candidates, deps);
  const memories = withinMemoryShare(doc.memories ?? [], doc.context_budget, deps);
  // Every candidate, tiered: the block is fitted from these once more when reasoning adds its
  // entries, so what pack leaves out can still come back (one fit of everything, not two).
  // Each cap tried prepares the same summaries again: deps.redact remembers what it redacted.
  // The packages' provenance marks (who wrote each, how long ago; never their standing) are the
  // first thing budget pressure takes: with a package left out for the budget or its tier's share,
  // every package is shown without them (the shorter summaries come next).
  let marks = true;
  const unmarked = candidates.map(({ provenance: _provenance, ...p }) => p);
  const poolAt = (cap: number): BlockPool => {
    const prepared = preparePackages(marks ? candidates : unmarked, cap, deps.redact, conclusions);
    return {
      packages: tiered('package', prepared.packages, r, purpose),
      error_patterns: tiered('error_pattern', doc.error_patterns, r, purpose),
      strategies: tiered('strategy', doc.strategies, r, purpose),
      memories: tiered('memory', memories.kept, r, purpose),
      excluded: [...doc.excluded, ...prepared.excluded, ...memories.excluded],
    };
  };
  let cap = summaryCap;
  let wider = cap;
  let pool = poolAt(cap);
  // The packages are the same at every cap (only their summaries differ): their artifacts are read once.
  const artifacts = artifactsFor(purpose, pool, deps);
  const fitAt = (p: typeof pool) => fitBlock(blockInput(doc, purpose, p, [], p.excluded, deps, artifacts));
  let block = fitAt(pool);
  const budgetLeftOut = (b: typeof block) => b.excluded.some((e) => e.kind === 'package' && e.reason === 'budget');
  if (block.excluded.some((e) => e.kind === 'package' && (e.reason === 'budget' || e.reason === 'tier')) && candidates.some((p) => p.provenance !== undefined)) {
    marks = false;
    pool = poolAt(cap);
    block = fitAt(pool);
  }
  // Under budget pressure (packages left out for it), the next zone's shorter summaries, when they let more packages in.
  for (let tighter = tighterSummaryCap(deps.config, doc.zone, cap); tighter !== null; tighter = tighterSummaryCap(deps.config, doc.zone, cap)) {
    if (!budgetLeftOut(block)) break;
    const shorter = poolAt(tighter);
    const fit = fitAt(shorter);
    if (fit.items.package.length <= block.items.package.length) break;
    wider = cap;
    cap = tighter;
    pool = shorter;
    block = fit;
  }
  // Then the summaries as long as the budget leaves them for the same items: the longest cap below
  // the wider one that still shows exactly what the tighter cap shows (a search over the caps
  // between), so the room it freed and no further item could take goes to what is shown. Not when
  // reasoning entries are still to come: the room is theirs to compete for (the reasoning step).
  const sameItems = (a: ReturnType<typeof fitBlock>, b: ReturnType<typeof fitBlock>) =>
    ITEM_KINDS.every((kind) => {
      const row = KINDS[kind] as KindRow<unknown>;
      const ids = (o: ReturnType<typeof fitBlock>) => (o.items[kind] as unknown[]).map((item) => row.id(item)).join(',');
      return ids(a) === ids(b);
    });
  const reasoningToCome = doc.include_reasoning && queries(doc.zone);
  for (let lo = cap, hi = reasoningToCome ? cap : wider - 1; lo < hi; ) {
    const mid = Math.ceil((lo + hi) / 2);
    const longer = poolAt(mid);
    const fit = fitAt(longer);
    if (sameItems(fit, block) && fit.report.overrun <= block.report.overrun) {
      lo = mid;
      cap = mid;
      pool = longer;
      block = fit;
    } else hi = mid - 1;
  }
  // The launcher the block's commands name (the `+N more` line's and the `fetch` hint's), kept for rendering.
  const more = deps.launcher !== undefined ? { more_launcher: deps.launcher } : {};
  return { ...withBlock({ ...rest, step: 'pack', summary_cap: cap, ...more }, block, deps.counter), block_pool: pool };
}

/** Bytes of an artifact's end read for its conclusion. */
export const CONCLUSION_BYTES = 2048;

/**
 * The conclusion of each package whose summary the store cut blind (markStoredCut), read from the
 * end of its artifact (redacted whole before the conclusion is taken): what the cut took away.
 */
function conclusionsOf(candidates: readonly RankedPackage[], deps: Deps): Map<number, string> {
  const out = new Map<number, string>();
  if (deps.projectRoot === null) return out;
  for (const p of candidates) {
    const summary = oneLine(p.summary);
    if (markStoredCut(summary) === summary) continue;
    const tail = artifactTail(deps.projectRoot, p.file_path, CONCLUSION_BYTES);
    const conclusion = conclusionOf(deps.redact(tail.text), tail.cut);
    if (conclusion !== null) out.set(p.id, conclusion);
  }
  return out;
}

/** Items of one kind with their tiers for this request (the kind's row says what the tier rules look at). */
function tiered<K extends ItemKind, T extends ItemOf[K]>(kind: K, items: readonly T[], r: AssemblyRequest, purpose: Purpose): (T & { tier: Tier })[] {
  const subjects = (KINDS[kind] as KindRow<ItemOf[K]>).subjects(items, r);
  return items.map((item, i) => ({ ...item, tier: tierOf(subjects[i] as TierSubject, purpose) }));
}

/** The block's input for this document: the pool's candidates and these reasoning entries. */
function blockInput(
  doc: Omit<RankDoc, 'candidates'>,
  purpose: Purpose,
  pool: BlockPool,
  reasoning: BlockInput['items']['reasoning'],
  excluded: readonly Exclusion[],
  deps: Deps,
  artifacts = artifactsFor(purpose, pool, deps),
): BlockInput {
  // How an agent runs this skill's launcher: the commands the block names start with it.
  const launcher = deps.launcher ?? DEFAULT_LAUNCHER;
  const items: BlockInput['items'] = {
    package: pool.packages,
    reasoning,
    error_pattern: pool.error_patterns,
    strategy: pool.strategies,
    memory: pool.memories,
  };
  return {
    purpose,
    split: splitOf(deps.config, purpose),
    budget: doc.context_budget,
    tier1MaxItems: deps.config.purposes.tier1_max_items,
    zone: doc.zone,
    totalAvailable: doc.total_available,
    totalCapped: doc.total_capped ?? false,
    priorityUsed: doc.priority_used,
    // At its widest: every candidate package named as given.
    moreCommand: moreCommand(launcher, doc.request, pool.packages.map((p) => p.id)),
    launcher,
    moreCommandOf: (shown) => moreCommand(launcher, doc.request, shown),
    ...(doc.floor ? { floor: floorKeys(doc.floor), floorLine: floorLineOf(doc, budgetWidest(doc)) } : {}),
    items,
    essential: essentialRules(items, doc.request, purpose),
    excludedBefore: excluded,
    artifacts,
    counter: deps.counter,
  };
}

/** A purpose that reads artifacts (handoff): the pool's packages' indexed artifact texts; else none. */
const artifactsFor = (purpose: Purpose, pool: BlockPool, deps: Deps) => (purposeRules(purpose).readsArtifacts ? artifactTexts(pool.packages, deps) : undefined);

/** Each Tier 1 item's tier rule (what made it essential), by `${kind}:${id}`, for the order a bounded Tier 1 keeps. */
function essentialRules(items: BlockInput['items'], r: AssemblyRequest, purpose: Purpose): Map<string, number> {
  const out = new Map<string, number>();
  for (const kind of Object.keys(items) as ItemKind[]) {
    const row = KINDS[kind] as KindRow<ItemOf[ItemKind]>;
    const list = items[kind] as readonly (ItemOf[ItemKind] & { tier: Tier })[];
    const subjects = row.subjects(list, r);
    list.forEach((item, i) => {
      if (item.tier === 1) out.set(`${kind}:${row.id(item)}`, tierRuleOf(subjects[i] as TierSubject, purpose));
    });
  }
  return out;
}

/** The document with a block fit's result in it: items, exclusions, report and the package section's figure. */
function withBlock<D extends Omit<RankDoc, 'candidates'> & Partial<PackFields>>(doc: D, block: ReturnType<typeof fitBlock>, counter: TokenCounter): D & PackFields {
  const total = doc.total_available;
  const packages = block.items.package.map((p) => ({ ...p, tokens: block.tokensOf('package', p.id) }));
  const header = renderPackageHeader(doc.zone, packages.length, availableText(total, doc.total_capped), doc.priority_used);
  const section = packageSectionTokens(header, packages, counter, doc.context_budget);
  const memories = block.items.memory;
  return {
    ...doc,
    counting: countingAfter(doc, block.exact && section.exact),
    packages,
    packages_tokens: section.tokens,
    overflow_count: Math.max(0, total - packages.length),
    error_patterns: block.items.error_pattern.map((e) => ({ ...e, tokens: block.tokensOf('error_pattern', e.fault_hash) })),
    strategies: block.items.strategy.map((s) => ({ ...s, tokens: block.tokensOf('strategy', s.strategy_id) })),
    ...(memories.length > 0 || doc.memories !== undefined ? { memories: memories.map((m) => ({ ...m, tokens: block.tokensOf('memory', m.id) })) } : {}),
    excluded: block.excluded,
    truncation: block.report,
    ...(block.commands ? { verification_commands: block.commands } : {}),
  };
}

/**
 * The indexed part of each package's artifact (redacted, at most relevance.artifact_index_bytes,
 * read through the search index's checked read), for the handoff's verification commands.
 */
function artifactTexts(packages: readonly Pick<PackedPackage, 'id' | 'file_path'>[], deps: Deps): Map<number, string> {
  const out = new Map<number, string>();
  if (deps.projectRoot === null) return out;
  for (const p of packages) out.set(p.id, indexedArtifactText(deps.projectRoot, p.file_path, deps.config.relevance.artifact_index_bytes));
  return out;
}

/** A ranked document, packed or not (the relevance eval reasons over rank's candidates without packing them). */
type Ranked = Omit<RankDoc, 'candidates'> & Partial<PackFields> & { candidates?: RankedPackage[] };

/**
 * Packages with who wrote them, how long before the spawn (when provenance is shown) and their
 * standing (core/standing.ts), in the order the agent's rules show them; those left out apart.
 */
function packagesWithStanding(db: DB, sessionId: string, packages: RankedPackage[], nowMs: number, deps: Pick<Deps, 'config' | 'redact'>, agent: string): { shown: RankedPackage[]; leftOut: RankedPackage[] } {
  const config = deps.config;
  const rules = standingRulesOf(config, agent);
  if (packages.length === 0) return { shown: packages, leftOut: [] };
  const { reviews, failures } = reviewState(db, sessionId, nowMs);
  const producers = listPackageProducers(db, packages.map((p) => p.id));
  const answeredBy = new Map<number, number>();
  // The review's own word (a failures package, what a reviewer wrote): never ranked down or left out by standing.
  const reviewWords = new Set<number>();
  const marked = packages.map((p) => {
    // Who wrote it, as stored: one line, redacted (it is printed and kept on record).
    const stored = producers.get(p.id);
    const producer = stored === undefined ? undefined : deps.redact(oneLine(String(stored)));
    const age = ageBefore(p.created_at, nowMs);
    const s: StandingOf = stored === undefined ? { standing: 'unreviewed', by: null } : packageStanding({ producer_agent: String(stored), package_type: p.package_type, group_id: p.group_id, created_at: p.created_at }, p.group_id ? reviews.get(String(p.group_id)) : undefined, failures);
    if (s.by_package !== undefined) answeredBy.set(p.id, s.by_package);
    if (s.review) reviewWords.add(p.id);
    const item: RankedPackage = { ...p, ...(producer !== undefined ? { producer } : {}), ...(age !== null ? { age } : {}), ...standingFields(s) };
    const band = standingBand(item, rules, s.review === true);
    return withProvenance(band === 1 || band === 2 ? { ...item, ranked_down: true as const } : item, config, packageProvenance);
  });
  // A claim ranked down goes below the failures package that answered it, when that ranks below it.
  return applyStanding(marked, rules, {
    isVerdict: (p) => reviewWords.has(p.id),
    key: (p) => p.id,
    answers: (p) => {
      const by = answeredBy.get(p.id);
      return by === undefined ? [] : [by];
    },
  });
}

/** The item with its compact provenance (core/standing.ts) when config `provenance.show` is on. */
function withProvenance<T extends { provenance?: string }>(item: T, config: Config, text: (item: T) => string | null): T {
  const provenance = config.provenance.show ? text(item) : null;
  return provenance === null ? item : { ...item, provenance };
}

/**
 * Error patterns with how each came to be (the capture ledger: created from a retry that passed,
 * retries that passed and failed with its fix; verdicts that moved it) and when last seen.
 */
function patternsWithProvenance(db: DB, scope: ProjectScope, patterns: ErrorPatternItem[], outcomes: OutcomeTable | undefined, nowMs: number, config: Config): ErrorPatternItem[] {
  if (patterns.length === 0) return patterns;
  const tallies = fixTallies(db, scope, patterns.map((p) => p.fault_hash));
  return patterns.map((p) => {
    const tally = tallies.get(p.fault_hash);
    const age = ageBefore(p.last_seen, nowMs);
    const item: ErrorPatternItem = {
      ...p,
      origin: patternOrigin(tally, termOf(outcomes, 'error_pattern', p.fault_hash) !== 0),
      fix_passed: tally?.passed ?? 0,
      fix_failed: tally?.failed ?? 0,
      ...(age !== null ? { age } : {}),
    };
    return withProvenance(item, config, patternProvenance);
  });
}

/** The exclusions of items the agent's standing rules left out (`contradicted`, `unreviewed`). */
function standingExclusions<T extends { standing?: 'held' | 'contradicted' }>(kind: 'package' | 'reasoning', items: readonly T[], id: (item: T) => number): Exclusion[] {
  return items.map((item) => ({ kind, id: id(item), reason: standingReason(item) }));
}

/** The session's groups' review state and its failures packages, as core/standing.ts reads them. */
function reviewState(db: DB, sessionId: string, nowMs: number): { reviews: Map<string, GroupReview>; failures: Failure[] } {
  // What the spawn could know: a review or failure stamped after its `now` has not happened for it.
  const by = (at: string | null) => at === null || !(parseSqliteTime(at) > nowMs);
  const reviews = new Map(
    listGroupReviews(db, sessionId).map((g) => [
      String(g.id),
      {
        group_id: String(g.id),
        revision_count: Number(g.revision_count) || 0,
        passed: g.passed === 1 && by(g.updated_at),
        reviewed_at: g.updated_at,
      },
    ]),
  );
  const failures = listSessionFailures(db, sessionId).filter((f) => by(f.created_at)).map((f) => ({ id: f.id, group_id: String(f.group_id), created_at: f.created_at, iteration: failureIteration(f.file_path) }));
  return { reviews, failures };
}

/** Step 4: prior agents' reasoning for this recipient, within the reasoning level's budget. */
export function reasoningStep(doc: Ranked, deps: Deps): Ranked & ReasoningFields {
  const { block_pool: pooled, ...rest } = doc;
  return reasoningWithPool(rest, pooled, deps);
}

/** Step 4 on a document without its pool (the pool, pack's candidates, is used here and not passed on). */
function reasoningWithPool(doc: Omit<Ranked, 'block_pool'>, pooled: BlockPool | undefined, deps: Deps): Ranked & ReasoningFields {
  const r = doc.request;
  const budget = deps.config.reasoning.level_budgets[r.reasoning_level];
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
  // The floor's entries (the builder's, the work under review) are read whatever their producer or age.
  const pinned = doc.floor?.reasoning ?? [];
  for (const row of listReasoningByIds(db, pinned.filter((id) => !rows.has(id)))) rows.set(row.id, row);
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
  // What followed the spawns an entry was shown to moves it (outcome_feedback.weights.reasoning);
  // without a query's standing, on top of recency (entries never shown keep the newest-first order).
  const nowMs = Date.parse(r.now);
  const outcomes = outcomesOf(deps, db, { projectId: doc.project_id ?? getProjectId(db, r.session), sessionId: r.session, kind: 'reasoning', ids: [...rows.keys()] }, nowMs);
  const wOutcome = deps.config.outcome_feedback.weights.reasoning;
  if (outcomes !== undefined && wOutcome > 0 && [...rows.keys()].some((id) => termOf(outcomes, 'reasoning', id) !== 0)) {
    const recency = (row: ReasoningRow) => cfg.weights.recency * recencyOf(parseSqliteTime(row.timestamp), nowMs, deps.config.ranking.recency_half_life_hours);
    const base = score;
    score = new Map([...rows.values()].map((row) => [row.id, (base?.get(row.id) ?? recency(row)) + wOutcome * termOf(outcomes, 'reasoning', row.id)]));
  }
  // Each entry's standing from the session's reviews (as of the spawn's now): the agent's rules
  // leave some out, rank some down (the first a cap or the budget cuts), and every one shown is
  // sized with its marks.
  const rules = standingRulesOf(deps.config, r.agent);
  const { reviews, failures } = reviewState(db, r.session, nowMs);
  const standingOf = new Map(
    [...rows.values()].map((row) => [
      row.id,
      reasoningStanding({ agent_type: row.agent_type, phase: row.reasoning_phase ?? '', group_id: row.group_id, iteration: row.iteration, timestamp: row.timestamp }, row.group_id ? reviews.get(String(row.group_id)) : undefined, failures),
    ]),
  );
  const yields = new Set<number>();
  const after = new Set<number>();
  const below = new Map<number, number[]>();
  const standingLeftOut: Exclusion[] = [];
  for (const [id, s] of standingOf) {
    const band = standingBand(standingFields(s), rules, s.review === true);
    if (band === 'left_out') {
      rows.delete(id);
      standingLeftOut.push({ kind: 'reasoning', id, reason: standingReason(s) });
    } else if (band > 0) yields.add(id);
    if (band === 1) after.add(id);
  }
  // A claim ranked down is shown below the review's entries of its group written after it.
  for (const id of yields) {
    const claim = rows.get(id);
    if (claim === undefined || after.has(id)) continue;
    const at = parseSqliteTime(claim.timestamp);
    const answers = [...rows.values()].filter((r) => r.group_id === claim.group_id && REVIEWERS.has(r.agent_type) && parseSqliteTime(r.timestamp) > at).map((r) => r.id);
    if (answers.length > 0) below.set(id, answers);
  }
  const selected = selectReasoning({
    rows: [...rows.values()],
    producers,
    maxPerProducer: cfg.max_per_producer,
    maxTotal: cfg.max_total,
    contentChars: cfg.content_chars,
    budget,
    redact: deps.redact,
    counter: deps.counter,
    ...(score ? { score } : {}),
    pinned: new Set(pinned.filter((id) => rows.has(id))),
    yields,
    after,
    below,
    marked: (e) => {
      const s = standingOf.get(e.id);
      const age = ageBefore(e.timestamp, nowMs);
      const item = {
        ...e,
        ...(age !== null ? { age } : {}),
        ...(s ? standingFields(s) : {}),
        ...(yields.has(e.id) ? { ranked_down: true as const } : {}),
      };
      return withProvenance(item, deps.config, reasoningProvenance);
    },
  });
  selected.excluded.push(...standingLeftOut);
  if (deps.explain && outcomes !== undefined) {
    selected.entries = selected.entries.map((e) => {
      const c = countsOf(outcomes, 'reasoning', e.id);
      return c ? { ...e, outcome: c } : e;
    });
  }
  const section = { included: true, level: r.reasoning_level, budget, used_tokens: selected.used_tokens, entries: selected.entries };
  const excluded = [...doc.excluded, ...selected.excluded];
  // A document without a block fit to join (ranked and not packed, as the relevance eval reasons, or
  // packed by a version before the fit): its sections stand as they are.
  if (doc.truncation === undefined) return { ...doc, step: 'reasoning', counting: countingAfter(doc, selected.exact), reasoning: section, excluded };
  // The block fitted again with the entries in it: a Tier 1 or Tier 2 entry may displace a package
  // or a learning of a lower tier that pack admitted.
  // The pool pack kept (every candidate, tiered) and the exclusions made before its fit (upgradeDoc
  // rebuilds it for a document packed without one).
  const purpose = doc.purpose;
  if (pooled === undefined) throw new Error('a packed document without its block pool (block_pool)');
  const pool = pooled;
  const reasoning = tiered('reasoning', selected.entries, r, purpose);
  const block = fitBlock(blockInput(doc, purpose, pool, reasoning, [...pool.excluded, ...selected.excluded], deps));
  const packed = withBlock({ ...doc, step: 'reasoning', counting: countingAfter(doc, selected.exact) }, block, deps.counter);
  const entries = block.items.reasoning.map((e) => ({ ...e, tokens: block.tokensOf('reasoning', e.id) }));
  const used = entries.reduce((sum, e) => sum + e.tokens, 0);
  return { ...packed, reasoning: { ...section, used_tokens: used, entries } };
}

/** `{ [key]: value }` when value is defined, else nothing (optional fields are left out, never undefined). */
function withDefined<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
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
 * Step 5: in Normal and Soft_Warning, unless this is a dry run, claims the delivered packages for
 * (agent, iteration) in one write transaction (claimPackages: each still unconsumed is marked, the
 * consumer row and the iteration-aware scope row). A package another run recorded first, as when
 * this document waited in a pipe while a concurrent assembly ran, is withdrawn from the block and
 * listed as excluded: consumed. A package is only delivered by the run that recorded it, so when the claim
 * cannot be written (a busy or locked database) this throws and the shell falls back.
 */
export function consumeStep(doc: AssemblyDoc, deps: Deps, holding?: DB): AssemblyDoc {
  if (!ZONE_RULES[doc.zone].recordsConsumption) return recordedAlone(consumed(doc, 'skipped-zone'), deps, holding);
  const ids = packageIds(doc);
  if (ids.length === 0) return recordedAlone(consumed(doc, 'nothing-delivered'), deps, holding);
  if (deps.dryRun) return consumed(doc, 'dry-run');
  return recording(() => {
    const db = deps.db();
    return writeTransaction(db, () => claimed(doc, db, ids, deps));
  });
}

/**
 * A run that delivers nothing to record (no package, or a zone that records no consumption) still
 * leaves its assembly record, in a connection of its own that waits for a lock only briefly; a dry
 * run none. The record is never worth a fallback or a wait: when it cannot be written (a busy or
 * missing database), the block is printed all the same. A run `holding` the write lock on its own
 * connection (the last, locked choice) writes it there, in that transaction (a connection of its
 * own could not get the lock).
 */
function recordedAlone(doc: AssemblyDoc, deps: Deps, holding?: DB): AssemblyDoc {
  if (deps.dryRun) return doc;
  if (holding !== undefined) deps.record?.(holding, doc);
  else deps.recordAlone?.(doc);
  return doc;
}

/**
 * The whole assembly (rank through consume) of a run that records consumption. The steps run
 * without the write lock; then one short write transaction records what the block delivers
 * (consumption hides nothing from a later spawn, so what another run recorded meanwhile changes
 * nothing here). A package is delivered only by a run that could record it: when the record cannot
 * be written, the run falls back.
 */
function assembleOnce(start: AssemblyDoc, steps: readonly Step[], deps: Deps): AssemblyDoc {
  const doc = runSteps(start, steps.filter((s) => s !== 'consume'), deps);
  const ids = packageIds(doc);
  if (ids.length === 0) return consumeStep(doc, deps);
  return recording(() => {
    const db = deps.db();
    return writeTransaction(db, () => claimed(doc, db, ids, deps));
  });
}

const packageIds = (doc: AssemblyDoc) => (doc.packages ?? []).map((p) => p.id);

function consumed(doc: AssemblyDoc, consumption: NonNullable<AssemblyDoc['consumption']>, ids: number[] = []): AssemblyDoc {
  return { ...doc, step: 'consume', consumed: ids, consumption };
}

/**
 * Claims `ids` for the document's (agent, iteration) inside the caller's write transaction; the
 * document after it: what was claimed recorded, what another run took withdrawn.
 */
function claimed(doc: AssemblyDoc, db: DB, ids: readonly number[], deps: Deps): AssemblyDoc {
  // What an earlier run of the same request recorded and this block delivers too is this run's.
  const inherited = new Set(deps.settle?.(db, ids) ?? []);
  const claim = claimPackages(db, ids, doc.request.agent, doc.request.iteration);
  // A package recorded before at this iteration is delivered again (its record stands).
  // Delivered packages nothing could record (requirements_engineer after its first iteration).
  const status = claim.claimed.length === 0 && claim.taken.length === 0 && claim.unrecorded.length > 0 ? 'unrecorded' : 'recorded';
  const mine = inherited.size === 0 ? claim.claimed : ids.filter((id) => claim.claimed.includes(id) || (inherited.has(id) && claim.taken.includes(id)));
  const result = consumed(doc, status, mine);
  // In the transaction that records what it delivers.
  deps.record?.(db, result);
  return result;
}

/** Runs a recording write; a failure means nothing may be delivered, so it is rethrown for the shell's fallback. */
function recording<T>(write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw new Error(`could not record consumption (${(err as Error).message}); no package is delivered unrecorded`);
  }
}

/** The document's counting note after a step whose token figures are (or are not) all counts. */
function countingAfter(doc: AssemblyDoc, exact: boolean): Counting {
  return { tokenizer_loaded: doc.counting?.tokenizer_loaded ?? false, exact: (doc.counting?.exact ?? true) && exact };
}

// advance runs the steps in order, and a piped document was validated and upgraded (upgrade.ts):
// each step gets the fields its predecessor writes.
const RUNNERS: Record<Exclude<Step, 'zone'>, (doc: AssemblyDoc, deps: Deps) => AssemblyDoc> = {
  rank: rankStep,
  pack: (doc, deps) => packStep(doc as RankDoc, deps),
  reasoning: (doc, deps) => reasoningStep(doc as Ranked, deps),
  consume: consumeStep,
};

function runSteps(doc: AssemblyDoc, steps: readonly Step[], deps: Deps): AssemblyDoc {
  let current = doc;
  for (const step of steps) current = RUNNERS[step as Exclude<Step, 'zone'>](current, deps);
  return current;
}

/**
 * Runs every step after `doc.step` up to and including `target`. A run that ranks and records
 * consumption (Normal or Soft_Warning, not a dry run) chooses and marks in one write transaction
 * (assembleOnce); a consume step continuing a piped document claims what it was given.
 */
export function advance(doc: AssemblyDoc, target: Step, deps: Deps): AssemblyDoc {
  const steps = STEPS.slice(STEPS.indexOf(doc.step) + 1, STEPS.indexOf(target) + 1);
  const records = ZONE_RULES[doc.zone].recordsConsumption && !deps.dryRun;
  // Every recording run learns before it ranks or records (consume --ids learns after it marks; the
  // prompt hook's assembly, a dry run, learns through ScriptIo.learns).
  if (!deps.dryRun) deps.learn?.(doc.request);
  return records && steps.includes('rank') && steps.includes('consume') ? assembleOnce(doc, steps, deps) : runSteps(doc, steps, deps);
}
