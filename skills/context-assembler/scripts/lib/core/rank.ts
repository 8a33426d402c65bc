/**
 * Ranking of candidate packages. Pure: candidates, request, clock and config in; ranked and
 * excluded packages out. The score is a weighted sum of named signals (weights in config):
 * priority, same group, type affinity for the agent, recency (exponential half-life), and an
 * optional relevance signal in [0, 1] supplied by the caller (absent → exactly the heuristic).
 */
import type { Config, Zone } from '../config.ts';
import type { Exclusion, RankedPackage, ScoreComponents } from '../contract.ts';
import { ZONE_RULES } from './zone.ts';

export type Candidate = Omit<RankedPackage, 'score' | 'components'> & {
  /** Already consumed by this agent at this iteration (left out: a request for more). */
  consumed: boolean;
  /** Its consumer list names the agent (1 or true): it ranks up by ranking.weights.designated. */
  designated?: 0 | 1 | boolean;
};

export interface RankInput {
  candidates: readonly Candidate[];
  group: string;
  agent: string;
  zone: Zone;
  limit: number;
  nowMs: number;
  config: Config;
  /** Relevance per package id in [0, 1]; when undefined the relevance term is left out entirely. */
  relevance?: ReadonlyMap<number, number>;
  /** Scope signal per package id (0 or 1); absent ids have none. */
  scope?: ReadonlyMap<number, number>;
  /** Per package id in [0, 1]: the paths signal (the query's terms in its artifact file's path and the paths its artifact names; counted with relevance only); absent ids 0. */
  paths?: ReadonlyMap<number, number>;
  /** The outcome term per package id in (−1, 1) (core/outcomes.ts); absent ids were never shown (0). */
  outcome?: ReadonlyMap<number, number>;
  /**
   * The number of eligible packages when `candidates` holds only those that can reach the top
   * (the database's bucket heads); defaults to the number of unconsumed candidates.
   */
  totalAvailable?: number;
  explain: boolean;
}

export interface RankOutput {
  selected: RankedPackage[];
  total_available: number;
  /** Conservative zone: the lowest priority that contributed; null elsewhere or when nothing did. */
  priority_used: string | null;
  excluded: Exclusion[];
}

/** A priority's place on the zone's ladder (0 first); priorities off the ladder come after all of it. */
const rungOf = (ladder: readonly string[], priority: string) => {
  const i = ladder.indexOf(priority);
  return i === -1 ? ladder.length : i;
};

/** The decimal number in value[from, to), or NaN when a character is not a digit. */
function digits(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
}

/**
 * SQLite's `YYYY-MM-DD HH:MM:SS` (UTC) as epoch milliseconds, or NaN. A time column holds what its
 * writer put there: another tool's number (Unix seconds) or BLOB is read too, never thrown on.
 */
export function parseSqliteTime(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value * 1000 : NaN;
  if (value instanceof Uint8Array) return parseSqliteTime(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
  if (typeof value !== 'string' || value === '') return NaN;
  // The common form (what SQLite writes) is parsed by hand: this runs once per candidate.
  if (value.length === 19 && value[4] === '-' && value[7] === '-' && (value[10] === ' ' || value[10] === 'T')) {
    return Date.UTC(digits(value, 0, 4), digits(value, 5, 7) - 1, digits(value, 8, 10), digits(value, 11, 13), digits(value, 14, 16), digits(value, 17, 19));
  }
  const iso = value.replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T');
  // Without a zone designator a stored time is UTC, never the machine's zone.
  return Date.parse(/(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}Z`);
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** 0.5^(age / half-life), from a creation time in epoch ms (NaN: unknown, recency 0) to `nowMs`. */
export function recencyOf(createdMs: number, nowMs: number, halfLifeHours: number): number {
  if (Number.isNaN(createdMs)) return 0;
  return Math.pow(0.5, Math.max(0, (nowMs - createdMs) / 3_600_000) / halfLifeHours);
}

/** Fills `k` with the score components of `c` (reusing one object keeps the hot loop allocation-free). */
function componentsInto(k: ScoreComponents, c: Candidate, createdMs: number, input: RankInput): ScoreComponents {
  const r = input.config.ranking;
  k.priority = r.priority_weights[c.priority] ?? 0;
  k.same_group = c.group_id !== null && c.group_id === input.group ? 1 : 0;
  k.type_affinity = r.type_affinity[c.package_type]?.[input.agent] ?? 0;
  k.recency = recencyOf(createdMs, input.nowMs, r.recency_half_life_hours);
  k.relevance = input.relevance?.get(c.id) ?? 0;
  k.scope = input.scope?.get(c.id) ?? 0;
  k.paths = input.paths?.get(c.id) ?? 0;
  k.outcome = input.outcome?.get(c.id) ?? 0;
  k.designated = c.designated === 1 || c.designated === true ? 1 : 0;
  return k;
}

const zeroComponents = (): ScoreComponents => ({ priority: 0, same_group: 0, type_affinity: 0, recency: 0, relevance: 0, scope: 0, paths: 0, outcome: 0, designated: 0 });

function componentsAt(c: Candidate, createdMs: number, input: RankInput): ScoreComponents {
  return componentsInto(zeroComponents(), c, createdMs, input);
}

export function scoreComponents(c: Candidate, input: RankInput): ScoreComponents {
  return componentsAt(c, parseSqliteTime(c.created_at), input);
}

/** The weighted sum of the components, unrounded (bounds are built from it). */
export function rawScoreOf(k: ScoreComponents, config: Config, withRelevance: boolean): number {
  const w = config.ranking.weights;
  return (
    w.priority * k.priority +
    w.same_group * k.same_group +
    w.type_affinity * k.type_affinity +
    w.recency * k.recency +
    (withRelevance ? w.relevance * k.relevance + w.match * matchOf(k, config) + w.paths * (k.paths ?? 0) : 0) +
    w.scope * k.scope +
    w.designated * (k.designated ?? 0) +
    outcomeWeight(config) * (k.outcome ?? 0)
  );
}

/** A package's outcome term's weight: outcome_feedback.weights.package, 0 when the feedback is off. */
export function outcomeWeight(config: Config): number {
  const o = config.outcome_feedback;
  return o.enabled ? o.weights.package : 0;
}

/**
 * 1 when a package matches the request's query (relevance at least ranking.match_threshold) or
 * falls under its scope: with a query, the task text and scope decide before priority and type.
 */
export function matchOf(k: Pick<ScoreComponents, 'relevance' | 'scope'>, config: Config): 0 | 1 {
  return (k.relevance > 0 && k.relevance >= config.ranking.match_threshold) || k.scope > 0 ? 1 : 0;
}

function scoreOf(k: ScoreComponents, config: Config, withRelevance: boolean): number {
  return round6(rawScoreOf(k, config, withRelevance));
}

/** The last package read from one (group or session-wide, priority, type) bucket that was read to its bound. */
export interface BucketTail {
  priority: string;
  /**
   * Its score without relevance and scope, unrounded: nothing older in the bucket can score higher
   * on these. (The bound is rounded once, as a real score is, so rounding never lifts a package
   * above its bound.)
   */
  heuristic: number;
  createdMs: number;
  id: number;
  /** Whether a package of this bucket that was not read could carry the scope signal. */
  scopePossible: boolean;
}

/**
 * True when no package left unread can belong in the selection. A package not read lies in a
 * bucket that was read to its bound (its tail is given) and is older than that bucket's last
 * package read, so its score is at most tail.heuristic + w_relevance × relevanceBound (+ w_scope
 * when it could be in scope, + w_match when that bound or the scope could make it match; it has no
 * paths signal: every package with one is read), and it
 * loses every tie with the tail. It cannot displace the last
 * selected package when that bound ranks after it in the selection order.
 */
export function provesExact(
  selected: readonly RankedPackage[],
  limit: number,
  tails: readonly BucketTail[],
  relevanceBound: number,
  zone: Zone,
  config: Config,
  /** Whether the ranking had a relevance map (the match term counts only then). */
  withRelevance = true,
): boolean {
  const ladder = ZONE_RULES[zone].ladder;
  const live = tails.filter((t) => ladder === null || ladder.includes(t.priority));
  if (live.length === 0) return true;
  const last = selected.length >= limit ? selected[limit - 1] : undefined;
  if (!last) return false;
  const w = config.ranking.weights;
  const lastCreated = parseSqliteTime(last.created_at);
  const lastKey = [Number.isNaN(lastCreated) ? -Infinity : lastCreated, last.id] as const;
  for (const t of live) {
    if (ladder !== null) {
      const rank = rungOf(ladder, t.priority) - rungOf(ladder, last.priority);
      if (rank > 0) continue;
      if (rank < 0) return false;
    }
    // An unread package may match (a relevance up to the bound, or the scope): the match weight too.
    const matchPossible = withRelevance ? matchOf({ relevance: relevanceBound, scope: t.scopePossible ? 1 : 0 }, config) : 0;
    const bound = round6(t.heuristic + w.relevance * relevanceBound + (t.scopePossible ? w.scope : 0) + w.match * matchPossible);
    if (bound < last.score) continue;
    if (bound > last.score) return false;
    // Equal scores: the unread package is older than the tail; the tail must not rank before the last selected.
    if (t.createdMs > lastKey[0] || (t.createdMs === lastKey[0] && t.id > lastKey[1])) return false;
  }
  return true;
}

/**
 * Ranks the candidates for the zone: top `limit` by score, or the priority ladder in Conservative.
 * Order: score desc, then created_at desc, then id desc, so the same input always gives the same
 * bytes. Scores and times sit in typed arrays and only the chosen packages become objects, so
 * 100k candidates rank in a few tens of milliseconds.
 */
export function rankPackages(input: RankInput): RankOutput {
  const rules = ZONE_RULES[input.zone];
  if (!rules.queries) {
    return { selected: [], total_available: 0, priority_used: null, excluded: [] };
  }
  const excluded: Exclusion[] = [];
  const live: Candidate[] = [];
  for (const c of input.candidates) {
    if (c.consumed) excluded.push({ kind: 'package', id: c.id, reason: 'consumed' });
    else live.push(c);
  }
  excluded.sort((a, b) => (a.id as number) - (b.id as number));
  const n = live.length;
  const score = new Float64Array(n);
  const created = new Float64Array(n);
  const ids = new Float64Array(n);
  const withRelevance = input.relevance !== undefined;
  const scratch = zeroComponents();
  for (let i = 0; i < n; i++) {
    const c = live[i] as Candidate;
    const ms = parseSqliteTime(c.created_at);
    created[i] = Number.isNaN(ms) ? -Infinity : ms;
    ids[i] = c.id;
    score[i] = scoreOf(componentsInto(scratch, c, ms, input), input.config, withRelevance);
  }
  const byScore = (a: number, b: number) =>
    (score[b] as number) - (score[a] as number) || (created[b] as number) - (created[a] as number) || (ids[b] as number) - (ids[a] as number);
  const ladder = rules.ladder;
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort(
    ladder !== null
      ? (a, b) => rungOf(ladder, (live[a] as Candidate).priority) - rungOf(ladder, (live[b] as Candidate).priority) || byScore(a, b)
      : byScore,
  );
  const selected: RankedPackage[] = [];
  for (const i of order) {
    const c = live[i] as Candidate;
    const eligible = ladder === null || ladder.includes(c.priority);
    if (eligible && selected.length < input.limit) {
      selected.push(rankedOf(c, score[i] as number, input.explain ? roundComponents(componentsAt(c, parseSqliteTime(c.created_at), input), input) : undefined));
    } else if (ladder === null) excluded.push({ kind: 'package', id: c.id, reason: 'limit' });
  }
  if (ladder !== null) {
    // Reported in score order, as in the other zones.
    const chosen = new Set(selected.map((p) => p.id));
    const rest = order.filter((i) => !chosen.has((live[i] as Candidate).id)).sort(byScore);
    for (const i of rest) {
      const c = live[i] as Candidate;
      excluded.push({ kind: 'package', id: c.id, reason: ladder.includes(c.priority) ? 'limit' : 'zone' });
    }
  }
  return {
    selected,
    total_available: input.totalAvailable ?? n,
    priority_used: ladder !== null ? (selected.at(-1)?.priority ?? null) : null,
    excluded,
  };
}

function roundComponents(k: ScoreComponents, input: RankInput): ScoreComponents {
  return {
    priority: k.priority,
    same_group: k.same_group,
    type_affinity: k.type_affinity,
    recency: round6(k.recency),
    relevance: round6(k.relevance),
    scope: k.scope,
    paths: round6(k.paths ?? 0),
    // Counted only with a query (no query, no match term).
    match: input.relevance === undefined ? 0 : matchOf(k, input.config),
    outcome: k.outcome ?? 0,
    designated: k.designated ?? 0,
  };
}


/**
 * The limit never passes over a failures package of the request's own group for a package of
 * lower priority: each of `failures` (the group's failures packages) that is not selected while a
 * selected package has a lower priority is added after the selection, beyond the limit (the
 * highest priority, then the newest, first; at most `limit` of them). The failure report that sent a retry back is what its
 * agent needs most; relevance may rank a low note above it, and the limit must not then cut it; nor
 * does it cut what relevance chose. Returns the selection and the exclusions (the failures added
 * are no longer excluded). Pure.
 */
export function keepFailuresAbove(
  ranked: Pick<RankOutput, 'selected' | 'excluded'>,
  failures: readonly Candidate[],
  input: Pick<RankInput, 'group' | 'agent' | 'nowMs' | 'config' | 'explain' | 'relevance' | 'scope' | 'outcome' | 'limit'>,
): Pick<RankOutput, 'selected' | 'excluded'> {
  const weightOf = (priority: string) => input.config.ranking.priority_weights[priority] ?? 0;
  const lowest = Math.min(...ranked.selected.map((p) => weightOf(p.priority)));
  const chosen = new Set(ranked.selected.map((p) => p.id));
  const full: RankInput = { ...input, candidates: [], zone: 'Normal' };
  const added = [...failures]
    .filter((c) => !chosen.has(c.id) && c.package_type === 'failures' && c.group_id !== null && c.group_id === input.group && weightOf(c.priority) > lowest)
    .sort((a, b) => weightOf(b.priority) - weightOf(a.priority) || (b.created_at ?? '').localeCompare(a.created_at ?? '') || b.id - a.id)
    .filter((c, i, all) => all.findIndex((x) => x.id === c.id) === i)
    .slice(0, input.limit)
    .map((c): RankedPackage => {
      const k = componentsAt(c, parseSqliteTime(c.created_at), full);
      return rankedOf(c, scoreOf(k, input.config, input.relevance !== undefined), input.explain ? roundComponents(k, full) : undefined);
    });
  if (added.length === 0) return ranked;
  const ids = new Set(added.map((p) => p.id));
  return { selected: [...ranked.selected, ...added], excluded: ranked.excluded.filter((e) => !(e.kind === 'package' && ids.has(e.id as number))) };
}

/** A candidate as the selection holds it: its fields, its score, and (with --explain) its components. */
function rankedOf(c: Candidate, score: number, components: ScoreComponents | undefined): RankedPackage {
  return {
    id: c.id,
    priority: c.priority,
    package_type: c.package_type,
    file_path: c.file_path,
    summary: c.summary,
    group_id: c.group_id,
    created_at: c.created_at,
    score,
    ...(components ? { components } : {}),
  };
}
