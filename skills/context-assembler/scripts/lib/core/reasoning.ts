/**
 * Prior agents' reasoning for a handoff: the recipient's relevant producers only, at most N most
 * recent entries per producer and M in total, ordered by phase (completion, decisions,
 * understanding, then the rest) and newest first within a phase, each cut to a few hundred
 * characters, packed within the reasoning level's token budget. Pure.
 */
import type { Exclusion, ReasoningItem } from '../contract.ts';
import { pack, type Sized, type TokenCounter } from './pack.ts';
import { reasoningLine, shownTail } from '../../../../bazinga-db/scripts/lib/pure.ts';
import { markedPhase, renderReasoningEntry } from './render.ts';
import { placeBelow } from './standing.ts';
import { oneLine, shorten } from './text.ts';

/** Most actionable first; phases not listed come after, in this order. */
const PHASE_ORDER = ['completion', 'decisions', 'understanding', 'approach', 'blockers', 'risks', 'pivot'] as const;

export interface ReasoningRowInput {
  id: number;
  agent_type: string;
  reasoning_phase: string | null;
  content: string;
  confidence_level: string | null;
  timestamp: string | null;
  group_id?: string | null;
  iteration?: number | null;
}

export interface SelectReasoningInput {
  rows: readonly ReasoningRowInput[];
  producers: readonly string[];
  maxPerProducer: number;
  maxTotal: number;
  contentChars: number;
  budget: number;
  redact: (text: string) => string;
  counter: TokenCounter;
  /**
   * A standing per entry id (recency, relevance and scope combined). When given, each producer's
   * best entries by it are kept and the best of those fill the total; otherwise the newest.
   */
  score?: ReadonlyMap<number, number>;
  /**
   * Entries (by id) the block must show whatever the producers and caps (the builder's floor, the
   * work under review): packed first, beyond maxPerProducer and maxTotal.
   */
  pinned?: ReadonlySet<number>;
  /**
   * Entries (by id) ranked down by their standing (config provenance): they yield their place to
   * the others in each producer's choice and in the total, so a cap or the budget leaves them out
   * first; `after` (an unreviewed item ranked down) also shows them after the rest.
   */
  yields?: ReadonlySet<number>;
  after?: ReadonlySet<number>;
  /** Per entry, the ids of the entries that answered it (a review's, after a claim it failed): it is shown below the last of them. */
  below?: ReadonlyMap<number, readonly number[]>;
  /** Each entry as shown, before it is sized: its provenance and standing marks (they cost tokens too). */
  marked?: (entry: Omit<ReasoningItem, 'tokens'>) => Omit<ReasoningItem, 'tokens'>;
}

export interface SelectReasoningOutput {
  entries: ReasoningItem[];
  used_tokens: number;
  /** False when some entry's tokens is an upper bound. */
  exact: boolean;
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
  const band = (row: ReasoningRowInput) => (input.yields?.has(row.id) ? 1 : 0);
  const last = (row: ReasoningRowInput) => (input.after?.has(row.id) ? 1 : 0);
  const standing = score
    ? (a: ReasoningRowInput, b: ReasoningRowInput) => band(a) - band(b) || (score.get(b.id) ?? 0) - (score.get(a.id) ?? 0) || newestFirst(a, b)
    : (a: ReasoningRowInput, b: ReasoningRowInput) => band(a) - band(b) || newestFirst(a, b);
  const pinned = input.pinned ?? new Set<number>();
  const perProducer = new Map<string, ReasoningRowInput[]>();
  for (const row of [...input.rows].sort(standing)) {
    if (!relevant.has(row.agent_type)) continue;
    const list = perProducer.get(row.agent_type) ?? [];
    if (list.length < input.maxPerProducer) list.push(row);
    perProducer.set(row.agent_type, list);
  }
  const byPhase = (a: ReasoningRowInput, b: ReasoningRowInput) => last(a) - last(b) || phaseRank(a.reasoning_phase) - phaseRank(b.reasoning_phase) || newestFirst(a, b);
  const kept = [...perProducer.values()].flat();
  // Without a standing the phase order decides what is cut; with one, the best entries stay.
  const chosen = score ? kept.sort(standing).slice(0, input.maxTotal).sort(byPhase) : kept.sort(byPhase).slice(0, input.maxTotal);
  // The pinned entries the choice left out follow it; all of them are packed first.
  const extra = input.rows.filter((row) => pinned.has(row.id) && !chosen.includes(row)).sort(byPhase);
  const ordered = placeBelow([...chosen, ...extra], (row) => row.id, (row) => input.below?.get(row.id) ?? []);
  const shown = new Map<number, string>();
  const items: Omit<ReasoningItem, 'tokens'>[] = ordered.map((row) => {
    const content = input.redact(oneLine(row.content));
    shown.set(row.id, content);
    const item = {
      id: row.id,
      agent_type: oneLine(row.agent_type),
      phase: row.reasoning_phase ?? 'unknown',
      content: shorten(content, input.contentChars),
      confidence: row.confidence_level,
      timestamp: row.timestamp,
      group_id: row.group_id ?? null,
      iteration: row.iteration ?? null,
    };
    return input.marked ? input.marked(item) : item;
  });
  // Entries are emitted one per line; the newline is counted with each.
  const pinnedFirst = pinned.size === 0 ? items : [...items.filter((e) => pinned.has(e.id)), ...items.filter((e) => !pinned.has(e.id))];
  const packed = pack(pinnedFirst, input.budget, (e) => renderReasoningEntry(e) + '\n', input.counter, {
    bound: (e) => entryBound(e, shown.get(e.id) as string, input.counter),
  });
  // Shown in the order chosen (the choice by phase, then the pinned extras by phase), whatever the packing order.
  const place = new Map(ordered.map((row, i) => [row.id, i]));
  const admitted = pinned.size === 0 ? packed.admitted : [...packed.admitted].sort((a, b) => (place.get(a.item.id) ?? 0) - (place.get(b.item.id) ?? 0));
  return {
    entries: admitted.map(({ item, tokens }) => ({ ...item, tokens })),
    used_tokens: packed.used,
    exact: packed.exact,
    excluded: packed.skipped.map((item) => ({ kind: 'reasoning', id: item.id, reason: 'budget' })),
  };
}

/**
 * A figure for an entry line without the rank table: its count when it is stored (save-reasoning
 * stores the line as shown with the configured content_chars), else its label and its content
 * sized apart.
 * The label ends in "**" and the content follows after a space, so the line's cl100k pieces are
 * the label's and the content tail's, and its count is the sum of theirs. The tail ` content\n` is
 * counted by bazinga-db when it stores the entry (its shownTail). When the content was cut, the
 * kept words are the first pieces of the whole tail and "...\n" adds one piece of at most 4 bytes,
 * so the whole tail's count plus 4 bounds it, provided the cut fell between a letter or digit and
 * a character that is neither (tested against counting).
 */
export function entryBound(e: Pick<ReasoningItem, 'agent_type' | 'phase' | 'content' | 'provenance' | 'standing' | 'standing_by'>, whole: string, counter: TokenCounter): Sized {
  const line = counter.bound(renderReasoningEntry(e) + '\n');
  if (line.exact || !counter.additive) return line;
  const label = counter.rawBound(reasoningLine(e.agent_type, markedPhase(e), '').trimEnd());
  const tail = tailBound(e.content, whole, counter);
  return { tokens: counter.scale(label.tokens + tail.tokens), exact: label.exact && tail.exact };
}

const CUT_ENDS = /[\p{L}\p{N}]$/u;
const WORD_CHAR = /^[\p{L}\p{N}]/u;

function tailBound(content: string, whole: string, counter: TokenCounter): Sized {
  const shown = counter.rawBound(shownTail(content));
  if (content === whole || shown.exact) return shown;
  const kept = content.endsWith('...') ? content.slice(0, -3) : null;
  const cleanCut = kept !== null && whole.startsWith(kept) && CUT_ENDS.test(kept) && !WORD_CHAR.test(whole.slice(kept.length));
  if (!cleanCut) return shown;
  const all = counter.rawBound(shownTail(whole));
  return all.exact && all.tokens + 4 < shown.tokens ? { tokens: all.tokens + 4, exact: false } : shown;
}
