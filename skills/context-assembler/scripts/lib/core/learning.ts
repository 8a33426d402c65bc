/**
 * Error patterns and strategies for the block. Pure: rows in, the few worth showing out.
 * Patterns (one per fault: the caller merges the rows of one fault, bazinga-db patternFaults.ts,
 * and they are keyed by its fault_hash): confident enough, not past their TTL (by UTC date,
 * against the injected clock), matching the request's language when one is given; those of the
 * failure's own faults first (the fault keys of the failure that sent a retry back), then those
 * whose normalised message matches the request's error text, then by relevance, confidence,
 * occurrences and last seen.
 */
import { normaliseErrorMessage, type ErrorPatternRow } from '../../../../bazinga-db/scripts/lib/pure.ts';
import type { ErrorPatternItem, StrategyItem } from '../contract.ts';
import { parseSqliteTime } from './rank.ts';
import { oneLine, shorten } from './text.ts';

export type ErrorPatternRowInput = Pick<
  ErrorPatternRow,
  'pattern_hash' | 'signature_json' | 'solution' | 'confidence' | 'occurrences' | 'lang' | 'last_seen' | 'ttl_days'
> & {
  /** Its fault's key (bazinga-db hashing.ts faultKeyOf): what the maps below and the block's ids key it by. */
  fault_hash: string;
};

export interface SelectPatternsInput {
  rows: readonly ErrorPatternRowInput[];
  nowMs: number;
  minConfidence: number;
  max: number;
  solutionChars: number;
  lang: string | null;
  error: string | null;
  /** Full-text relevance of each pattern (by fault_hash) to the error text and the task, when there is one. */
  relevance?: ReadonlyMap<string, number>;
  /**
   * The faults (by fault_hash) of the failure that sent the spawn back (its feedback or --error, the
   * group's newest failures report: failureFaults.ts): a pattern of one of them is that failure's
   * own, shown first, before any that only shares words with it or the task.
   */
  failureFaults?: ReadonlySet<string>;
  /** Patterns (by fault_hash) whose error type and message share at least two words with --error: they match it. */
  errorMatched?: ReadonlySet<string>;
  /** The request's group's languages and frameworks (its specializations, --lang, --framework), lower-cased. */
  stack?: ReadonlySet<string>;
  /** Each pattern's outcome term (by fault_hash), weighted (outcome_feedback.weights.error_pattern): its relevance × (1 + this) orders it. */
  outcome?: ReadonlyMap<string, number>;
  /** Faults (by fault_hash) the block must show whatever the confidence threshold, language and `max` (the builder's floor): after the ranking's own first `max` (in their place where they are among them); one past its TTL is not shown (the pipeline names it as expired). */
  pinned?: ReadonlySet<string>;
  /** Of the pinned, those the ranking itself would not have read (another project's): only ever after its own first `max`. */
  pinnedOnly?: ReadonlySet<string>;
  redact: (text: string) => string;
}

/**
 * How a pattern's or strategy's language and framework stand to the request's group: 2 its own
 * (one of them is in the group's stack), 1 project-wide (neither set, or the group's stack is
 * unknown), 0 another group's work.
 */
export function stackAffinity(item: { lang?: string | null; framework?: string | null }, stack: ReadonlySet<string> | undefined): 0 | 1 | 2 {
  const named = [item.lang, item.framework].filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim().toLowerCase());
  // A group whose stack is unknown tells no item apart.
  if (named.length === 0 || stack === undefined || stack.size === 0) return 1;
  return named.some((v) => stack.has(v)) ? 2 : 0;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const DAY_MS = 86_400_000;

/** Expired when the UTC date of last_seen plus ttl_days is before the UTC date of now. */
export function isExpired(lastSeen: string, ttlDays: number, nowMs: number): boolean {
  const seen = parseSqliteTime(lastSeen);
  if (Number.isNaN(seen)) return false;
  const seenDay = Math.floor(seen / DAY_MS);
  const today = Math.floor(nowMs / DAY_MS);
  return seenDay + ttlDays < today;
}

/** A pattern's words as it is matched: its error type and message (the signature's values, not its JSON keys) and its solution. */
export function patternText(row: Pick<ErrorPatternRowInput, 'signature_json' | 'solution'>): { signature: string; all: string } {
  const sig = parseSignature(row.signature_json);
  const signature = `${sig.error_type}\n${sig.message_pattern}`;
  return { signature, all: `${signature}\n${row.solution}` };
}

function parseSignature(json: string): { error_type: string; message_pattern: string } {
  try {
    const s = JSON.parse(json) as { error_type?: unknown; message_pattern?: unknown };
    return {
      error_type: typeof s.error_type === 'string' ? s.error_type : 'Unknown',
      message_pattern: typeof s.message_pattern === 'string' ? s.message_pattern : '',
    };
  } catch {
    return { error_type: 'Unknown', message_pattern: '' };
  }
}

/** Whether a pattern may be shown at all: confident enough, not past its TTL, of the request's language or none. */
export function isShowablePattern(r: Pick<ErrorPatternRowInput, 'confidence' | 'last_seen' | 'ttl_days' | 'lang'>, minConfidence: number, nowMs: number, lang: string | null): boolean {
  return round2(r.confidence) >= minConfidence && !isExpired(r.last_seen, r.ttl_days, nowMs) && (lang === null || r.lang === null || r.lang === lang);
}

export function selectErrorPatterns(input: SelectPatternsInput): ErrorPatternItem[] {
  const wanted = input.error ? normaliseErrorMessage(input.error).toLowerCase() : null;
  // Choose on the stored fields, then redact only the few that are shown.
  const pinned = input.pinned ?? new Set<string>();
  // A pinned fault (the builder's) is shown whatever the confidence threshold and language, not past its TTL.
  const scored = input.rows
    .filter((r) => (pinned.has(r.fault_hash) ? !isExpired(r.last_seen, r.ttl_days, input.nowMs) : isShowablePattern(r, input.minConfidence, input.nowMs, input.lang)))
    .map((r) => {
      const sig = parseSignature(r.signature_json);
      const pattern = sig.message_pattern.toLowerCase();
      const own = input.failureFaults?.has(r.fault_hash) ?? false;
      const exact = wanted !== null && pattern !== '' && (wanted === pattern || wanted.includes(pattern));
      const relevance = own || exact ? 1 : round2(input.relevance?.get(r.fault_hash) ?? 0);
      // Matched: the failure's own fault, the same message, or the error's words in its type and
      // message (the task's words only rank it).
      const matched = own || exact || (input.errorMatched?.has(r.fault_hash) ?? false);
      // What followed the spawns it was shown to moves it among those the text matches, in proportion
      // to how well it matches (a pattern the text does not match is never lifted; never past an exact match).
      const standing = round2(relevance * Math.max(0, 1 + (input.outcome?.get(r.fault_hash) ?? 0)));
      return { r, sig, own, exact, relevance, standing, matched, affinity: stackAffinity(r, input.stack) };
    })
    // The failure's own faults first, then the error text and the task, then the group's language,
    // then confidence: another group's pattern leads only where it matches the request better.
    .sort(
      (a, b) =>
        Number(b.own) - Number(a.own) ||
        Number(b.exact) - Number(a.exact) ||
        b.standing - a.standing ||
        b.affinity - a.affinity ||
        round2(b.r.confidence) - round2(a.r.confidence) ||
        b.r.occurrences - a.r.occurrences ||
        (a.r.last_seen === b.r.last_seen ? 0 : a.r.last_seen < b.r.last_seen ? 1 : -1) ||
        (a.r.fault_hash < b.r.fault_hash ? -1 : a.r.fault_hash > b.r.fault_hash ? 1 : 0),
    );
  // The ranking's own first `max` (a pinned one among them in its place), then the pinned ones it left out.
  const natural = (x: (typeof scored)[number]) =>
    !pinned.has(x.r.fault_hash) || (!(input.pinnedOnly?.has(x.r.fault_hash) ?? false) && isShowablePattern(x.r, input.minConfidence, input.nowMs, input.lang));
  const ranked = scored.filter(natural).slice(0, input.max);
  const chosen = [...ranked, ...scored.filter((x) => pinned.has(x.r.fault_hash) && !ranked.includes(x))];
  // A text to match and nothing of it matched (not the builder's, no error): the block says so.
  const otherTask = (x: { r: ErrorPatternRowInput; matched: boolean; relevance: number }) => input.relevance !== undefined && x.relevance === 0 && !x.matched && !pinned.has(x.r.fault_hash);
  return chosen.map(({ r, sig, own, matched, relevance }) => ({
    pattern_hash: r.pattern_hash,
    fault_hash: r.fault_hash,
    // Redacted before lines are folded: a secret told over two lines (a continued or folded value)
    // is recognised only in its own layout.
    error_type: oneLine(input.redact(sig.error_type)),
    message_pattern: oneLine(input.redact(sig.message_pattern)),
    solution: shorten(oneLine(input.redact(r.solution)), input.solutionChars),
    confidence: round2(r.confidence),
    occurrences: r.occurrences,
    last_seen: r.last_seen,
    matched_error: matched,
    relevance,
    ...(own ? { failure_fault: true } : {}),
    ...(otherTask({ r, matched, relevance }) ? { other_task: true } : {}),
  }));
}

export interface StrategyRowInput {
  strategy_id: string;
  topic: string;
  insight: string;
  helpfulness: number;
  lang?: string | null;
  framework?: string | null;
}

export interface PrepareStrategiesOptions {
  max: number;
  insightChars: number;
  redact: (t: string) => string;
  /** Full-text relevance of each strategy (by id) to the task. */
  relevance?: ReadonlyMap<string, number>;
  /**
   * Whether relevance orders first (an explicit task) or only breaks ties in helpfulness (the
   * implicit task, a weaker guess at what the agent does).
   */
  relevanceFirst?: boolean;
  /** The request's group's languages and frameworks, lower-cased (stackAffinity). */
  stack?: ReadonlySet<string>;
  /** Each strategy's outcome term (by id), weighted (outcome_feedback.weights.strategy): its relevance × (1 + this) orders it with an explicit task; without one it breaks ties in helpfulness. */
  outcome?: ReadonlyMap<string, number>;
}

/**
 * Strategies arrive ordered (helpfulness, last seen). With an explicit task the most relevant come
 * first (relevance to two decimals, then the group's stack, then that order); with the implicit
 * task, or none, the group's own and project-wide strategies come before another group's
 * (stackAffinity), then the more helpful, relevance breaking ties. The first `max` are redacted and cut.
 */
/** Without an explicit task, a strategy this relevant (of the best match, 1) to the implicit task or the group's words goes before the more helpful ones. */
const STRATEGY_MATCH = 0.3;

export function prepareStrategies(rows: readonly StrategyRowInput[], opts: PrepareStrategiesOptions): StrategyItem[] {
  const rel = (r: StrategyRowInput) => round2(opts.relevance?.get(r.strategy_id) ?? 0);
  const out = (r: StrategyRowInput) => opts.outcome?.get(r.strategy_id) ?? 0;
  // Among the strategies the task matches, what followed their showing moves them in proportion to the match.
  const standing = (r: StrategyRowInput) => round2(rel(r) * Math.max(0, 1 + out(r)));
  const first = (opts.relevanceFirst ?? true) && opts.relevance !== undefined;
  const aff = (r: StrategyRowInput) => stackAffinity(r, opts.stack);
  const order = (a: { r: StrategyRowInput; i: number }, b: { r: StrategyRowInput; i: number }) =>
    first
      ? standing(b.r) - standing(a.r) || aff(b.r) - aff(a.r) || a.i - b.i
      : // Without an explicit task the outcome only breaks ties in helpfulness: one verdict never outweighs it.
        Math.min(aff(b.r), 1) - Math.min(aff(a.r), 1) || Number(rel(b.r) >= STRATEGY_MATCH) - Number(rel(a.r) >= STRATEGY_MATCH) || b.r.helpfulness - a.r.helpfulness || out(b.r) - out(a.r) || rel(b.r) - rel(a.r) || aff(b.r) - aff(a.r) || a.i - b.i;
  const ordered = rows.map((r, i) => ({ r, i })).sort(order).map((x) => x.r);
  return ordered.slice(0, opts.max).map((r) => ({
    strategy_id: r.strategy_id,
    // Redacted before lines are folded (see selectErrorPatterns).
    topic: oneLine(opts.redact(r.topic)),
    insight: shorten(oneLine(opts.redact(r.insight)), opts.insightChars),
    helpfulness: r.helpfulness,
    relevance: rel(r),
    // A text to match and none of its words here: the block says so.
    ...(opts.relevance !== undefined && rel(r) === 0 ? { other_task: true as const } : {}),
  }));
}
