/**
 * Prior agents' reasoning for a handoff: the recipient's relevant producers only, at most N most
 * recent entries per producer and M in total, ordered by phase (completion, decisions,
 * understanding, then the rest) and newest first within a phase, each cut to a few hundred
 * characters, packed within the reasoning level's token budget. Pure.
 */
import type { Exclusion, ReasoningItem } from '../contract.ts';
import { pack, type CountTokens } from './pack.ts';
import { renderReasoningEntry } from './render.ts';
import { oneLine, truncateAtWord } from './text.ts';

/** Most actionable first; phases not listed come after, in this order. */
const PHASE_ORDER = ['completion', 'decisions', 'understanding', 'approach', 'blockers', 'risks', 'pivot'] as const;

export interface ReasoningRowInput {
  id: number;
  agent_type: string;
  reasoning_phase: string | null;
  content: string;
  confidence_level: string | null;
  timestamp: string | null;
}

export interface SelectReasoningInput {
  rows: readonly ReasoningRowInput[];
  producers: readonly string[];
  maxPerProducer: number;
  maxTotal: number;
  contentChars: number;
  budget: number;
  redact: (text: string) => string;
  countTokens: CountTokens;
  /**
   * A standing per entry id (recency, relevance and scope combined). When given, each producer's
   * best entries by it are kept and the best of those fill the total; otherwise the newest.
   */
  score?: ReadonlyMap<number, number>;
}

export interface SelectReasoningOutput {
  entries: ReasoningItem[];
  used_tokens: number;
  excluded: Exclusion[];
}

const phaseRank = (phase: string | null) => {
  const i = PHASE_ORDER.indexOf((phase ?? '') as (typeof PHASE_ORDER)[number]);
  return i === -1 ? PHASE_ORDER.length : i;
};

/** Newest first: timestamp desc, then id desc. */
function newestFirst(a: ReasoningRowInput, b: ReasoningRowInput): number {
  const ta = a.timestamp ?? '';
  const tb = b.timestamp ?? '';
  if (ta !== tb) return ta < tb ? 1 : -1;
  return b.id - a.id;
}

export function selectReasoning(input: SelectReasoningInput): SelectReasoningOutput {
  const relevant = new Set(input.producers);
  const score = input.score;
  const standing = score ? (a: ReasoningRowInput, b: ReasoningRowInput) => (score.get(b.id) ?? 0) - (score.get(a.id) ?? 0) || newestFirst(a, b) : newestFirst;
  const perProducer = new Map<string, ReasoningRowInput[]>();
  for (const row of [...input.rows].sort(standing)) {
    if (!relevant.has(row.agent_type)) continue;
    const list = perProducer.get(row.agent_type) ?? [];
    if (list.length < input.maxPerProducer) list.push(row);
    perProducer.set(row.agent_type, list);
  }
  const byPhase = (a: ReasoningRowInput, b: ReasoningRowInput) => phaseRank(a.reasoning_phase) - phaseRank(b.reasoning_phase) || newestFirst(a, b);
  const kept = [...perProducer.values()].flat();
  // Without a standing the phase order decides what is cut; with one, the best entries stay.
  const ordered = score ? kept.sort(standing).slice(0, input.maxTotal).sort(byPhase) : kept.sort(byPhase).slice(0, input.maxTotal);
  const items: Omit<ReasoningItem, 'tokens'>[] = ordered.map((row) => ({
    id: row.id,
    agent_type: oneLine(row.agent_type),
    phase: row.reasoning_phase ?? 'unknown',
    content: truncateAtWord(input.redact(oneLine(row.content)), input.contentChars),
    confidence: row.confidence_level,
    timestamp: row.timestamp,
  }));
  // Entries are emitted one per line; the newline is counted with each.
  const packed = pack(items, input.budget, (e) => renderReasoningEntry(e) + '\n', input.countTokens);
  return {
    entries: packed.admitted.map(({ item, tokens }) => ({ ...item, tokens })),
    used_tokens: packed.used,
    excluded: packed.skipped.map(({ item }) => ({ kind: 'reasoning', id: item.id, reason: 'budget' })),
  };
}
