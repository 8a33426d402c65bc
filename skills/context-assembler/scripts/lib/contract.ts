/**
 * The JSON document that passes between the steps (zone → rank → pack → reasoning → consume) and
 * that `assemble.ts --format json` prints. Each step adds its fields to the document it received;
 * the final document is the same whether the steps ran in one process or as a pipe. Documented in
 * references/assembly-document.md.
 */
import { invalid, SPAWNED_AGENTS, type SpawnedAgent as Agent } from '../../../bazinga-db/scripts/lib/pure.ts';
import { ZONES, type Zone } from './vocabulary.ts';
import { ZONE_RULES } from './core/zone.ts';
import { PURPOSES, type ItemKind, type Purpose, type Tier, type TierUsage } from './core/tiers.ts';

export const STEPS = ['zone', 'rank', 'pack', 'reasoning', 'consume'] as const;
export type Step = (typeof STEPS)[number];

export { REASONING_LEVELS, type ReasoningLevel } from './vocabulary.ts';
import { REASONING_LEVELS, type ReasoningLevel } from './vocabulary.ts';

const EXCLUSION_REASONS = ['budget', 'tier', 'limit', 'zone', 'consumed', 'redaction-emptied', 'expired', 'contradicted', 'unreviewed'] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];

/** What the caller asked for, after validation and defaults that do not need the config. */
export interface AssemblyRequest {
  session: string;
  /** The group, or `global` for a session-wide request. */
  group: string;
  agent: Agent;
  model: string;
  current_tokens: number;
  iteration: number;
  /** Explicit --limit, or null for the configured retrieval limit. */
  limit: number | null;
  /** Explicit --include-reasoning, or null for the per-agent default. */
  include_reasoning: boolean | null;
  reasoning_level: ReasoningLevel;
  /** ISO-8601 instant used for recency and TTLs. */
  now: string;
  task: string | null;
  error: string | null;
  /** Comma-separated paths (--scope); null = the task group's component path. */
  scope: string | null;
  lang: string | null;
  framework: string | null;
  /** Explicit --purpose; null or absent for the agent's default (config purposes.by_agent). */
  purpose?: Purpose | null;
  /**
   * --more <ids>: this spawn asks for more than its block gave it (the command the block's `+N
   * more` line names), so the packages it was given (these ids) are left out, and nothing else.
   * Absent: nothing is (consumption hides nothing: every spawn is a fresh agent).
   */
  more?: number[];
}

export interface ScoreComponents {
  priority: number;
  same_group: number;
  type_affinity: number;
  recency: number;
  relevance: number;
  /** 1 when the package's path, a path in its artifact text, or its group's component path falls under the scope. */
  scope: number;
  /** With a query, in [0, 1]: the query terms found in the package's path column (its artifact file's path and the paths its artifact names), each by its IDF among the request's packages' paths, over the best package's sum; weighted by ranking.weights.paths. */
  paths?: number;
  /** 1 when, with a query, the package matches it (relevance ≥ ranking.match_threshold) or the scope: weighted by ranking.weights.match. */
  match?: number;
  /** The outcome term in (−1, 1) (core/outcomes.ts), weighted by outcome_feedback.weights.package; 0 for a package never shown. */
  outcome?: number;
  /** 1 when the package's consumer list names the agent, weighted by ranking.weights.designated. */
  designated?: number;
}

/** How the spawns an item was shown to went (core/outcomes.ts), as --explain shows it. */
export interface OutcomeInfo {
  helped: number;
  hurt: number;
  shown: number;
  term: number;
}

/** Where the query matched a package (with --explain). */
export interface MatchInfo {
  /** The words of the package that matched, lower-cased, in order of appearance. */
  terms: string[];
  /** The indexed fields they were found in. */
  fields: ('summary' | 'artifact' | 'path')[];
}

/** The query relevance was computed from, as used (redacted). */
export interface QueryInfo {
  /** explicit: --task and/or --error (an --error alone followed by the implicit task); implicit: built from the task group and its passages of the session's requirements (session-wide: all of them); none: no relevance. */
  source: 'explicit' | 'implicit' | 'none';
  text: string | null;
  /** The terms of the text (phrases for identifiers and paths). */
  terms: string[];
  /** Terms too common in the package index to ask for within `relevance.max_postings` (absent when none). */
  dropped_terms?: string[];
  scope: string[];
  scope_source: 'explicit' | 'group' | 'none';
  /** Full-text hits read, and whether more were read to prove the selection exact. */
  fts_hits?: number;
  rounds?: number;
}

export interface RankedPackage {
  id: number;
  priority: string;
  package_type: string;
  file_path: string;
  summary: string;
  group_id: string | null;
  created_at: string | null;
  score: number;
  components?: ScoreComponents;
  match?: MatchInfo;
  /** With --explain, for a package shown before: how those spawns went. */
  outcome?: OutcomeInfo;
  /** Set by pack: the item's tier for this request (core/tiers.ts). */
  tier?: Tier;
  /** Who wrote it (its producer agent) and how long before the spawn (`3 h`), when known. */
  producer?: string;
  age?: string;
  /** Its provenance as the block says it (core/standing.ts), when config `provenance.show` is on. */
  provenance?: string;
  /** Its standing from the session's reviews (core/standing.ts): absent when unreviewed. */
  standing?: 'held' | 'contradicted';
  standing_by?: string;
  /** Present (true) when the agent's standing rules rank it down (config provenance): never Tier 1. */
  ranked_down?: true;
}

export interface PackedPackage extends RankedPackage {
  /** Tokens of this package's rendered lines (after the model factor). */
  tokens: number;
}

export interface Exclusion {
  kind: ItemKind;
  /** A package or reasoning id; an error pattern's hash; a strategy's id. */
  id: number | string;
  reason: ExclusionReason;
  /** The item's tier, for what the block's fit left out (budget, tier). */
  tier?: Tier;
}

/** What the block left out and why, and how its budget went (the markdown's `### Left out` says the short of it). */
export interface TruncationReport {
  purpose: Purpose;
  /** The block's budget (context_budget). */
  budget: number;
  /** Tokens of the block's sections as sized: fixed lines, admitted items, and the report when shown. */
  used: number;
  /** Tokens Tier 1 alone needs beyond the budget (it is never cut): the one permitted overrun. */
  overrun: number;
  tiers: TierUsage[];
  /** Items left out per reason (reasons with none are absent). */
  left_out: Partial<Record<ExclusionReason, number>>;
  /** The most relevant items left out, best first (at most 5): what to fetch. */
  most_relevant: { kind: ItemKind; id: number | string }[];
  /** The markdown carries the `### Left out` section (it fit the budget, or Tier 1 overran). */
  shown: boolean;
  /**
   * How much the block's navigation lines say (core/block.ts NAVIGATION_SHARE): absent, all of it;
   * `compact` without the most relevant ids and with the short line for the builder's items;
   * `minimal` also without the `+N more` line's command. A tight budget takes the first that keeps
   * those lines within an eighth of it.
   */
  navigation?: Navigation;
}

/** A navigation layout shorter than the whole one (TruncationReport.navigation). */
export type Navigation = 'compact' | 'minimal';

export interface ErrorPatternItem {
  /** The row that stands for the fault (its most confident): the hash both tools' update-error-confidence take. */
  pattern_hash: string;
  /**
   * Its fault's key (ca_pattern_faults): the item's id in exclusions, the assembly record and outcome
   * verdicts, the same whichever row of the fault stands for it.
   */
  fault_hash: string;
  error_type: string;
  message_pattern: string;
  solution: string;
  confidence: number;
  occurrences: number;
  last_seen: string;
  /** True when it matched the request's --error text, or it is the failure's own (failure_fault). */
  matched_error: boolean;
  /** Full-text relevance to the request's text (the task, the error) in [0, 1] (0 without a text; 1 for the failure's own or the same message). */
  relevance: number;
  /**
   * Present (true) when the request has a text and the pattern shares none of its words, matches
   * no error and is not the builder's: shown for the project, and the block says it is not matched
   * to this task.
   */
  other_task?: true;
  /**
   * How it came to be (core/standing.ts patternOrigin): `captured` from a retry that passed,
   * `saved` by an agent, or `learnt` (saved, then moved by verdicts or captures); absent in a
   * document of a version before it.
   */
  origin?: 'captured' | 'saved' | 'learnt';
  /** Retries the capture ledger saw pass, and fail, with its fault's fix. */
  fix_passed?: number;
  fix_failed?: number;
  /** How long before the spawn it was last seen (`3 d`), when known. */
  age?: string;
  /** Its provenance as the block says it (core/standing.ts), when config `provenance.show` is on. */
  provenance?: string;
  /**
   * Present (true) when its fault is the one the failure that sent the spawn back signs (the
   * retry's feedback or --error, the group's newest failures report): shown first, and essential
   * (Tier 1) like a pattern matching --error.
   */
  failure_fault?: true;
  /** Set by pack. */
  tier?: Tier;
  /** Set by pack: tokens of its entry in the block (with its separator). */
  tokens?: number;
  /** With --explain, for an item shown before: how those spawns went (core/outcomes.ts). */
  outcome?: OutcomeInfo;
}

export interface StrategyItem {
  strategy_id: string;
  topic: string;
  insight: string;
  helpfulness: number;
  /** Full-text relevance to the task in [0, 1] (0 when there is no query). */
  relevance: number;
  /** Present (true) when the request has a text and the strategy shares none of its words: the block says it is not matched to this task. */
  other_task?: true;
  /** How long before the spawn it was last seen helpful (`3 d`), when known. */
  age?: string;
  /** Its provenance as the block says it (core/standing.ts), when config `provenance.show` is on. */
  provenance?: string;
  /** Present (true) when the verdicts of spawns it was shown to move it (outcome feedback). */
  learnt?: true;
  /** Set by pack. */
  tier?: Tier;
  /** Set by pack: tokens of its entry in the block (with its separator). */
  tokens?: number;
  /** With --explain, for an item shown before: how those spawns went (core/outcomes.ts). */
  outcome?: OutcomeInfo;
}

/** A project memory for the block (from earlier sessions; bazinga-db's ca_memories). */
export interface MemoryItem {
  id: number;
  type: 'decision' | 'issue' | 'state' | 'learning';
  title: string;
  /** The line the block shows (redacted). */
  line: string;
  /** Full-text relevance to the task in [0, 1]. */
  relevance: number;
  /** Its standing by memory.search_weights (relevance, importance, recency, access). */
  score: number;
  tier?: Tier;
  /** Set by pack: tokens of its entry in the block (with its separator). */
  tokens?: number;
  /** With --explain, for an item shown before: how those spawns went (core/outcomes.ts). */
  outcome?: OutcomeInfo;
}

export interface ReasoningItem {
  id: number;
  agent_type: string;
  phase: string;
  content: string;
  confidence: string | null;
  timestamp: string | null;
  tokens: number;
  /** The entry's group (`global` for session-wide) and iteration (null: none recorded). */
  group_id?: string | null;
  iteration?: number | null;
  /** How long before the spawn it was written (`3 h`), when known. */
  age?: string;
  /** Its provenance as the block says it (core/standing.ts), when config `provenance.show` is on. */
  provenance?: string;
  /** Its standing from the session's reviews (core/standing.ts): absent when unreviewed. */
  standing?: 'held' | 'contradicted';
  /** What held or contradicted it, in words. */
  standing_by?: string;
  /** Present (true) when the agent's standing rules rank it down (config provenance): never Tier 1. */
  ranked_down?: true;
  tier?: Tier;
  /** With --explain, for an item shown before: how those spawns went (core/outcomes.ts). */
  outcome?: OutcomeInfo;
}

export interface ReasoningSection {
  included: boolean;
  level: ReasoningLevel;
  budget: number;
  used_tokens: number;
  entries: ReasoningItem[];
}

/** How the document's token figures were obtained. */
export interface Counting {
  /** The cl100k rank table was loaded by some step of this assembly. */
  tokenizer_loaded: boolean;
  /** Every token figure is a count; false when some are upper bounds (admitted without counting). */
  exact: boolean;
}

/**
 * The shape of the document this code writes. A document without `doc_version` is version 1 (before
 * it was stamped); upgradeDoc (upgrade.ts) reads every older shape into this one, at the edge, so
 * the steps see only the current shape.
 */
export const DOC_VERSION = 2;

/** Step 1 (zone): the zone, the budgets and the request's config-dependent defaults. */
export interface ZoneDoc {
  doc_version: number;
  /** The last step that ran. */
  step: Step;
  request: AssemblyRequest;
  zone: Zone;
  usage_pct: number;
  /** Characters a package summary is cut to in this zone; null where no summaries are shown. */
  summary_cap: number | null;
  effective_limit: number;
  remaining_budget: number;
  context_budget: number;
  limit: number;
  include_reasoning: boolean;
  /** The purpose resolved (explicit, else the agent's default). */
  purpose: Purpose;
}

/** What step 2 (rank) adds. */
export interface RankFields {
  project_id?: string;
  query?: QueryInfo;
  total_available: number;
  /** True when total_available is a lower bound: the count stopped at its cap (shown as "N+"). */
  total_capped?: boolean;
  priority_used: string | null;
  candidates: RankedPackage[];
  error_patterns: ErrorPatternItem[];
  strategies: StrategyItem[];
  /** Project memories relevant to the task (rank), those the block kept (pack). */
  memories?: MemoryItem[];
  excluded: Exclusion[];
  /** What the block must hold or say why not (set by rank; absent in a document of an older version). */
  floor?: FloorItems;
}

/**
 * The items a block must hold, or say in its `### Left out` why not: what today's BAZINGA prompt
 * builder would show in the section the block replaces (core/floor.ts), and the work under review
 * (for QA and the tech lead the group's newest completion by the developer or senior engineer; for
 * a retry the group's newest failures report), by id a kind (an error pattern by its fault key,
 * `fault_hash`: the builder's rows of one fault are one item of the block).
 */
export interface FloorItems {
  packages: number[];
  reasoning: number[];
  error_patterns: string[];
  /** Of those, the work under review (not the builder's choice). */
  under_review: { packages: number[]; reasoning: number[] };
  /** Per error pattern's fault key, the hash of the builder's row of it (BAZINGA's own key): what the block names it by. */
  pattern_rows?: Record<string, string>;
}

/**
 * Set by pack, removed by reasoning: every candidate of the block, tiered (packages prepared,
 * patterns, strategies, memories within their share) and the exclusions made before the fit,
 * so that reasoning fits the whole block once more with its entries in it.
 */
export interface BlockPool {
  packages: (RankedPackage & { tier: Tier })[];
  error_patterns: (ErrorPatternItem & { tier: Tier })[];
  strategies: (StrategyItem & { tier: Tier })[];
  memories: (MemoryItem & { tier: Tier })[];
  excluded: Exclusion[];
}

/** What step 3 (pack) adds (it drops the candidates: the packages are what is shown). */
export interface PackFields {
  packages: PackedPackage[];
  packages_tokens: number;
  overflow_count: number;
  /** Set by pack and reasoning (and the output) once token figures exist. */
  counting?: Counting;
  block_pool?: BlockPool;
  /** Set by pack, completed by reasoning: what the block left out, and the budget per tier (absent where the zone shows no packages). */
  truncation?: TruncationReport;
  /** Purpose handoff: the test and build commands the delivered items quote (their artifacts included), with where each was found. */
  verification_commands?: { command: string; source: string }[];
  /** How an agent runs this skill's launcher, for the commands the block names (the `+N more` line's, the `fetch` hint's; set by pack when the run knows its launcher). */
  more_launcher?: string;
}

/** What step 4 (reasoning) adds. */
export interface ReasoningFields {
  reasoning: ReasoningSection;
}

/** What step 5 (consume) adds. */
export interface ConsumeFields {
  consumed: number[];
  consumption: 'recorded' | 'unrecorded' | 'dry-run' | 'skipped-zone' | 'nothing-delivered';
}

/** The document after each step: what each step takes and gives. */
export type RankDoc = ZoneDoc & RankFields;
export type PackDoc = ZoneDoc & Omit<RankFields, 'candidates'> & PackFields;
export type ReasoningDoc = ZoneDoc & Omit<RankFields, 'candidates'> & Omit<PackFields, 'block_pool'> & ReasoningFields;
export type ConsumeDoc = ReasoningDoc & ConsumeFields;

/** A document after any step: what is printed, piped and rendered. */
export type AssemblyDoc = ZoneDoc & Partial<RankFields & PackFields & ReasoningFields & ConsumeFields>;

/** A piped document as validated: the shape of any version (upgradeDoc reads it into this version's). */
export type PipedDoc = Omit<AssemblyDoc, 'doc_version' | 'purpose' | 'summary_cap' | 'request'> & {
  doc_version?: number;
  purpose?: Purpose;
  summary_cap?: number | null;
  request: Omit<AssemblyRequest, OptionalRequestField> & Partial<Pick<AssemblyRequest, OptionalRequestField>>;
};
type OptionalRequestField = 'purpose' | 'task' | 'error' | 'scope' | 'lang' | 'framework';

/** A document that arrived on stdin, checked enough that upgradeDoc and the next step can trust its shape. */
export function validateDoc(value: unknown, source: string): PipedDoc {
  const fail = (problem: string): never => {
    throw invalid(`${source}: ${problem}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('expected a JSON object from a previous step');
  const doc = value as Record<string, unknown>;
  if (doc.doc_version !== undefined && !(Number.isInteger(doc.doc_version) && (doc.doc_version as number) >= 1 && (doc.doc_version as number) <= DOC_VERSION)) {
    const newer = typeof doc.doc_version === 'number' && doc.doc_version > DOC_VERSION;
    return fail(`field "doc_version" must be an integer from 1 to ${DOC_VERSION}, got ${JSON.stringify(doc.doc_version)}${newer ? ' (written by a newer version of context-assembler: run the steps of one version)' : ''}`);
  }
  if (!STEPS.includes(doc.step as Step)) return fail(`field "step" must be one of ${STEPS.join(', ')}, got ${JSON.stringify(doc.step)}`);
  const req = doc.request as Record<string, unknown> | undefined;
  if (!req || typeof req !== 'object') return fail('field "request" is missing');
  for (const k of ['session', 'group', 'agent', 'model', 'now', 'reasoning_level'] as const) {
    if (typeof req[k] !== 'string') fail(`field "request.${k}" must be a string`);
  }
  for (const k of ['current_tokens', 'iteration'] as const) {
    if (!Number.isSafeInteger(req[k]) || (req[k] as number) < 0) fail(`field "request.${k}" must be an integer >= 0, got ${JSON.stringify(req[k])}`);
  }
  // What the steps look values up by must be one of the known ones (a typo would silently change the block).
  const oneOf = (field: string, value: unknown, allowed: readonly string[]) => {
    if (!allowed.includes(value as string)) fail(`field "${field}" must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  };
  oneOf('request.agent', req.agent, SPAWNED_AGENTS);
  oneOf('request.reasoning_level', req.reasoning_level, REASONING_LEVELS);
  oneOf('zone', doc.zone, ZONES);
  // Optional texts: absent (a document from an older version) means not given (upgradeDoc).
  if (req.purpose !== undefined && req.purpose !== null) oneOf('request.purpose', req.purpose, PURPOSES);
  if (doc.purpose !== undefined) oneOf('purpose', doc.purpose, PURPOSES);
  if (req.more !== undefined && !(Array.isArray(req.more) && req.more.every((id) => Number.isSafeInteger(id) && (id as number) > 0))) {
    fail(`field "request.more" must be a list of package ids, got ${JSON.stringify(req.more)}`);
  }
  for (const k of ['task', 'error', 'scope', 'lang', 'framework'] as const) {
    if (req[k] !== undefined && req[k] !== null && typeof req[k] !== 'string') fail(`field "request.${k}" must be a string or null, got ${JSON.stringify(req[k])}`);
  }
  for (const k of ['zone', 'usage_pct', 'remaining_budget', 'context_budget', 'limit', 'include_reasoning'] as const) {
    if (doc[k] === undefined) fail(`field "${k}" is missing`);
  }
  // summary_cap: absent in a document from an older version (upgradeDoc fills it from the config).
  if (doc.summary_cap !== undefined) {
    if (doc.summary_cap !== null && !(typeof doc.summary_cap === 'number' && doc.summary_cap >= 0)) fail('field "summary_cap" must be a non-negative number or null');
    if (doc.summary_cap === null && ZONE_RULES[doc.zone as Zone].queries) fail(`field "summary_cap" must be a number in zone ${doc.zone}`);
  }
  if (doc.counting !== undefined) {
    const c = doc.counting as Record<string, unknown> | null;
    if (c === null || typeof c !== 'object' || typeof c.tokenizer_loaded !== 'boolean' || typeof c.exact !== 'boolean') {
      fail(`field "counting" must be {"tokenizer_loaded": boolean, "exact": boolean}, got ${JSON.stringify(doc.counting)}`);
    }
  }
  // What the block's fit reads back: tiers 1–3, and the report and pool in their shape.
  const tiered = (field: string, list: unknown, required = false) => {
    if (list === undefined) return;
    if (!Array.isArray(list)) return fail(`field "${field}" must be an array`);
    list.forEach((item, i) => {
      const tier = (item as { tier?: unknown } | null)?.tier;
      if ((required || tier !== undefined) && tier !== 1 && tier !== 2 && tier !== 3) fail(`field "${field}[${i}].tier" must be 1, 2 or 3, got ${JSON.stringify(tier)}`);
    });
  };
  for (const k of ['packages', 'error_patterns', 'strategies', 'memories'] as const) tiered(k, doc[k]);
  if (doc.truncation !== undefined) {
    const t = doc.truncation as Record<string, unknown> | null;
    const ok =
      t !== null && typeof t === 'object' && (PURPOSES as readonly unknown[]).includes(t.purpose) &&
      ['budget', 'used', 'overrun'].every((k) => typeof t[k] === 'number' && (t[k] as number) >= 0) &&
      Array.isArray(t.tiers) && Array.isArray(t.most_relevant) && typeof t.shown === 'boolean' &&
      t.left_out !== null && typeof t.left_out === 'object' && !Array.isArray(t.left_out);
    if (!ok) fail('field "truncation" must be the report pack writes: {purpose, budget, used, overrun, tiers, left_out, most_relevant, shown}');
    else if (t.navigation !== undefined && t.navigation !== 'compact' && t.navigation !== 'minimal') fail(`field "truncation.navigation" must be "compact" or "minimal" (or absent), got ${JSON.stringify(t.navigation)}`);
  }
  if (doc.block_pool !== undefined) {
    const pool = doc.block_pool as Record<string, unknown> | null;
    if (pool === null || typeof pool !== 'object') return fail('field "block_pool" must be an object');
    for (const k of ['packages', 'error_patterns', 'strategies', 'memories', 'excluded'] as const) {
      if (!Array.isArray(pool[k])) fail(`field "block_pool.${k}" must be an array`);
    }
    for (const k of ['packages', 'error_patterns', 'strategies', 'memories'] as const) tiered(`block_pool.${k}`, pool[k], true);
  }
  const at = STEPS.indexOf(doc.step as Step);
  if (at >= STEPS.indexOf('rank') && !Array.isArray(doc.candidates) && !Array.isArray(doc.packages)) fail('field "candidates" is missing');
  if (at >= STEPS.indexOf('pack') && !Array.isArray(doc.packages)) fail('field "packages" is missing');
  if (at >= STEPS.indexOf('reasoning') && (doc.reasoning === null || typeof doc.reasoning !== 'object')) fail('field "reasoning" is missing');
  return value as PipedDoc;
}
