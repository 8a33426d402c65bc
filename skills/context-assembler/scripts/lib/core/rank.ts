/**
 * Ranking of candidate packages. Pure: candidates, request, clock and config in; ranked and
 * excluded packages out. The score is a weighted sum of named signals (weights in config):
 * priority, same group, type affinity for the agent, recency (exponential half-life), and an
 * optional relevance signal in [0, 1] supplied by the caller (absent → exactly the heuristic).
 */
import type { Config, Zone } from '../config.ts';
import type { Exclusion, RankedPackage, ScoreComponents } from '../contract.ts';

export type Candidate = Omit<RankedPackage, 'score' | 'components'> & {
  /** Already consumed by this agent at this iteration. */
  consumed: boolean;
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
  explain: boolean;
}

export interface RankOutput {
  selected: RankedPackage[];
  total_available: number;
  /** Conservative zone: the lowest priority that contributed; null elsewhere or when nothing did. */
  priority_used: string | null;
  excluded: Exclusion[];
}

const PRIORITY_RANK: Record<string, number> = { critical: 1, high: 2, medium: 3, low: 4 };
const LADDER = new Set(['critical', 'high', 'medium']);

/** SQLite's `YYYY-MM-DD HH:MM:SS` (UTC) as epoch milliseconds, or NaN. */
export function parseSqliteTime(value: string | null): number {
  if (!value) return NaN;
  return Date.parse(value.includes('T') ? value : value.replace(' ', 'T') + 'Z');
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export function scoreComponents(c: Candidate, input: RankInput): ScoreComponents {
  const r = input.config.ranking;
  const created = parseSqliteTime(c.created_at);
  const ageHours = Number.isNaN(created) ? Infinity : Math.max(0, (input.nowMs - created) / 3_600_000);
  return {
    priority: r.priority_weights[c.priority] ?? 0,
    same_group: c.group_id !== null && c.group_id === input.group ? 1 : 0,
    type_affinity: r.type_affinity[c.package_type]?.[input.agent] ?? 0,
    recency: ageHours === Infinity ? 0 : Math.pow(0.5, ageHours / r.recency_half_life_hours),
    relevance: input.relevance?.get(c.id) ?? 0,
  };
}

export function scoreOf(k: ScoreComponents, config: Config, withRelevance: boolean): number {
  const w = config.ranking.weights;
  return round6(
    w.priority * k.priority +
      w.same_group * k.same_group +
      w.type_affinity * k.type_affinity +
      w.recency * k.recency +
      (withRelevance ? w.relevance * k.relevance : 0),
  );
}

/** Score desc, then created_at desc, then id desc: the same input always gives the same order. */
function byScore(a: RankedPackage, b: RankedPackage): number {
  if (a.score !== b.score) return b.score - a.score;
  const ca = a.created_at ?? '';
  const cb = b.created_at ?? '';
  if (ca !== cb) return ca < cb ? 1 : -1;
  return b.id - a.id;
}

/** Ranks the candidates for the zone: top `limit` by score, or the priority ladder in Conservative. */
export function rankPackages(input: RankInput): RankOutput {
  if (input.zone === 'Wrap-up' || input.zone === 'Emergency') {
    return { selected: [], total_available: 0, priority_used: null, excluded: [] };
  }
  const excluded: Exclusion[] = [];
  const ranked: RankedPackage[] = [];
  const withRelevance = input.relevance !== undefined;
  for (const c of input.candidates) {
    if (c.consumed) {
      excluded.push({ kind: 'package', id: c.id, reason: 'consumed' });
      continue;
    }
    const components = scoreComponents(c, input);
    ranked.push({
      id: c.id,
      priority: c.priority,
      package_type: c.package_type,
      file_path: c.file_path,
      summary: c.summary,
      group_id: c.group_id,
      created_at: c.created_at,
      score: scoreOf(components, input.config, withRelevance),
      ...(input.explain ? { components: roundComponents(components) } : {}),
    });
  }
  excluded.sort((a, b) => a.id - b.id);
  ranked.sort(byScore);
  const total = ranked.length;
  if (input.zone !== 'Conservative') {
    const selected = ranked.slice(0, input.limit);
    for (const p of ranked.slice(input.limit)) excluded.push({ kind: 'package', id: p.id, reason: 'limit' });
    return { selected, total_available: total, priority_used: null, excluded };
  }
  const ladder = ranked
    .filter((p) => LADDER.has(p.priority))
    .sort((a, b) => (PRIORITY_RANK[a.priority] ?? 9) - (PRIORITY_RANK[b.priority] ?? 9) || byScore(a, b));
  const selected = ladder.slice(0, input.limit);
  const chosen = new Set(selected.map((p) => p.id));
  for (const p of ranked) {
    if (!chosen.has(p.id)) excluded.push({ kind: 'package', id: p.id, reason: LADDER.has(p.priority) ? 'limit' : 'zone' });
  }
  const lowest = selected.at(-1)?.priority ?? null;
  return { selected, total_available: total, priority_used: lowest, excluded };
}

function roundComponents(k: ScoreComponents): ScoreComponents {
  return {
    priority: k.priority,
    same_group: k.same_group,
    type_affinity: k.type_affinity,
    recency: round6(k.recency),
    relevance: round6(k.relevance),
  };
}
