/**
 * The kinds of item a block shows, one row a kind: how an item is named, how it is shown (entry,
 * separator, section heading), what the tier rules are told about it, and where a document keeps
 * it. The block's fit (block.ts), the pools (pipeline.ts) and the renderer (render.ts) iterate this
 * table instead of naming the kinds. Pure.
 *
 * A new kind of item is its word in vocabulary.ts, its item type in contract.ts, a row here, and
 * its reader in the rank step; its tier is Tier 3 and it goes last within a tier until a tier rule
 * or a purpose's kind order names it.
 */
import type { AssemblyDoc, AssemblyRequest, ErrorPatternItem, MemoryItem, RankedPackage, ReasoningItem, StrategyItem } from '../contract.ts';
import { ITEM_KINDS, type ItemKind, type Tier, type TierSubject } from './tiers.ts';
import { OMISSION_MARKER, reasoningLine, shorten } from '../../../../bazinga-db/scripts/lib/pure.ts';
import { standingText } from './standing.ts';

/** The item each kind is, as the block's fit takes it (a reasoning entry is sized by the fit: no tokens yet). */
export interface ItemOf {
  package: RankedPackage;
  reasoning: Omit<ReasoningItem, 'tokens'>;
  error_pattern: ErrorPatternItem;
  strategy: StrategyItem;
  memory: MemoryItem;
}

export type Tiered<T> = T & { tier: Tier };

/** Items of every kind: a list a kind. */
export type ItemsByKind<Extra = unknown> = { [K in ItemKind]: readonly (ItemOf[K] & Extra)[] };

/** The fields of the document's block pool (pack's candidates kept for the reasoning step's fit). */
export type PoolField = 'packages' | 'error_patterns' | 'strategies' | 'memories';

export interface KindRow<T> {
  /** How the truncation report names one (`error pattern 3f2a…`). */
  label: string;
  /** Its id in exclusions and the report; unique within the kind. */
  id: (item: T) => number | string;
  /** The id as the `### Left out` line prints it (an error pattern's 64-digit hash: its first 12). */
  shortId: (id: number | string) => string;
  /** One entry as the block shows it (the same text the fit sizes). */
  entry: (item: T) => string;
  /** What follows an entry within its section. */
  separator: '\n' | '\n\n';
  /** Its section's heading for a count; null for packages (their header carries the zone and what is available). */
  header: ((count: number) => string) | null;
  /** What the tier rules are told about each of a request's items of this kind (given all of them: the newest of a phase is decided among them). */
  subjects: (items: readonly T[], request: Pick<AssemblyRequest, 'group' | 'error' | 'iteration'>) => TierSubject[];
  /** The items of this kind a document shows. */
  shown: (doc: AssemblyDoc) => readonly T[];
  /** Its field in the document's block pool; null for reasoning (the reasoning step brings its entries to the fit). */
  pool: PoolField | null;
  /**
   * The item with its text shortened to at most `maxChars` characters, for a block with no room
   * for it whole (absent: the kind is shown whole or not at all).
   */
  shorten?: (item: T, maxChars: number) => T;
  /** The shortest text `shorten` is asked for: below it an entry says too little to be worth its room. */
  minChars?: number;
}

// Each kind's entry and section heading: the same strings are what the fit sizes and what is emitted.

/** What follows an item's id or phase: its provenance and its standing (`by qa_expert, 20 h before; held: …`). */
function marks(item: { provenance?: string; standing?: 'held' | 'contradicted'; standing_by?: string }): string | null {
  const parts = [item.provenance ?? null, standingText(item)].filter((x) => x !== null);
  return parts.length === 0 ? null : parts.join('; ');
}

export function renderPackageEntry(p: Pick<RankedPackage, 'id' | 'priority' | 'file_path' | 'summary' | 'provenance' | 'standing' | 'standing_by'>): string {
  const mark = marks(p);
  return `**[${p.priority.toUpperCase()}]** ${p.file_path} (id ${p.id}${mark ? `; ${mark}` : ''})\n> ${p.summary}`;
}

/**
 * A reasoning entry's line; its provenance and standing after its phase: a claim a review answered
 * is worded as such (never as fact), one a passing review held says by what.
 */
export function renderReasoningEntry(e: Pick<ReasoningItem, 'agent_type' | 'phase' | 'content' | 'provenance' | 'standing' | 'standing_by'>): string {
  return reasoningLine(e.agent_type, markedPhase(e), e.content);
}

/** A reasoning entry's phase as its label says it: with its marks, when it has any (`completion (it. 1, 21 h ago)`). */
export function markedPhase(e: Pick<ReasoningItem, 'phase' | 'provenance' | 'standing' | 'standing_by'>): string {
  const mark = marks(e);
  return mark ? `${e.phase} (${mark})` : e.phase;
}

export function renderErrorPattern(p: ErrorPatternItem): string {
  return [
    `⚠️ **Known Issue**: "${p.error_type}: ${p.message_pattern}"`,
    `> **Solution**: ${p.solution}`,
    `> **Confidence**: ${p.confidence} (seen ${p.occurrences} times${p.provenance ? `, ${p.provenance}` : ''}${p.other_task ? `; ${OTHER_TASK}` : ''})`,
  ].join('\n');
}

export function renderStrategy(s: StrategyItem): string {
  return `- **${s.topic}** (helpful ${s.helpfulness}×${s.provenance ? `, ${s.provenance}` : ''}${s.other_task ? `; ${OTHER_TASK}` : ''}): ${s.insight}`;
}

/** What a pattern or strategy that shares no word with the request's text says of itself: shown for the project, not for this task. */
export const OTHER_TASK = 'not matched to this task';

export const reasoningHeader = (n: number) => `### Prior Agent Reasoning (${n} entries)`;
export const errorPatternsHeader = (n: number) => `### Error Patterns (${n} matches)`;
export const strategiesHeader = (n: number) => `### Strategies That Worked (${n})`;
export const memoriesHeader = (n: number) => `### Project Memory (${n})`;

const ownGroup = (group: string | null | undefined, request: Pick<AssemblyRequest, 'group'>) => (group ?? 'global') === request.group;

/** The newest entry of each phase among a request's entries of its own group (ties: the higher id). */
function newestOfPhase(entries: readonly ItemOf['reasoning'][], request: Pick<AssemblyRequest, 'group'>): Set<number> {
  const newest = new Map<string, ItemOf['reasoning']>();
  for (const e of entries) {
    if (!ownGroup(e.group_id, request)) continue;
    const seen = newest.get(e.phase);
    if (!seen || (e.timestamp ?? '') > (seen.timestamp ?? '') || ((e.timestamp ?? '') === (seen.timestamp ?? '') && e.id > seen.id)) newest.set(e.phase, e);
  }
  return new Set([...newest.values()].map((e) => e.id));
}

/** The newest package of each type among a request's packages of its own group (ties: the higher id). */
function newestOfType(packages: readonly ItemOf['package'][], request: Pick<AssemblyRequest, 'group'>): Set<number> {
  const newest = new Map<string, ItemOf['package']>();
  for (const p of packages) {
    if (!ownGroup(p.group_id, request)) continue;
    const seen = newest.get(p.package_type);
    if (!seen || (p.created_at ?? '') > (seen.created_at ?? '') || ((p.created_at ?? '') === (seen.created_at ?? '') && p.id > seen.id)) newest.set(p.package_type, p);
  }
  return new Set([...newest.values()].map((p) => p.id));
}

const asIs = (id: number | string) => String(id);

export const KINDS: { readonly [K in ItemKind]: KindRow<ItemOf[K]> } = {
  package: {
    label: 'package',
    id: (p) => p.id,
    shortId: asIs,
    entry: renderPackageEntry,
    separator: '\n\n',
    header: null,
    subjects: (items, r) => {
      const newest = newestOfType(items, r);
      return items.map((p) => ({
        kind: 'package',
        sameGroup: ownGroup(p.group_id, r),
        groupSpawn: r.group !== 'global',
        packageType: p.package_type,
        priority: p.priority,
        latestOfType: newest.has(p.id),
        ...(p.ranked_down ? { rankedDown: true } : {}),
      }));
    },
    shown: (doc) => doc.packages ?? doc.candidates ?? [],
    pool: 'packages',
    // Its beginning and its conclusion, as a summary cap keeps them; `fetch <id>` prints it whole.
    // A summary a cap already cut (its beginning, " […] ", its end) is cut again in its beginning
    // alone: one gap marked once, never a marker read as part of a sentence.
    shorten: (p, maxChars) => {
      const gap = p.summary.indexOf(OMISSION_MARKER);
      return { ...p, summary: gap === -1 ? shorten(p.summary, maxChars) : shorten(p.summary.slice(0, gap), maxChars) + OMISSION_MARKER.trimEnd() };
    },
    minChars: 80,
  },
  reasoning: {
    label: 'reasoning',
    id: (e) => e.id,
    shortId: asIs,
    entry: renderReasoningEntry,
    separator: '\n',
    header: reasoningHeader,
    subjects: (items, r) => {
      const newest = newestOfPhase(items, r);
      return items.map((e) => ({
        kind: 'reasoning',
        sameGroup: ownGroup(e.group_id, r),
        phase: e.phase,
        latestOfPhase: newest.has(e.id),
        iterationsBack: e.iteration === null || e.iteration === undefined ? null : r.iteration - e.iteration,
        ...(e.ranked_down ? { rankedDown: true } : {}),
      }));
    },
    shown: (doc) => doc.reasoning?.entries ?? [],
    pool: null,
  },
  error_pattern: {
    label: 'error pattern',
    // Its fault key: a pattern is one fault, whichever row of it stands for it.
    id: (p) => p.fault_hash,
    shortId: (id) => String(id).slice(0, 12),
    entry: renderErrorPattern,
    separator: '\n\n',
    header: errorPatternsHeader,
    subjects: (items, r) => items.map((p) => ({ kind: 'error_pattern', sameGroup: false, matchedError: (p.matched_error && r.error !== null) || p.failure_fault === true })),
    shown: (doc) => doc.error_patterns ?? [],
    pool: 'error_patterns',
  },
  strategy: {
    label: 'strategy',
    id: (s) => s.strategy_id,
    shortId: asIs,
    entry: renderStrategy,
    separator: '\n',
    header: strategiesHeader,
    subjects: (items) => items.map(() => ({ kind: 'strategy', sameGroup: false })),
    shown: (doc) => doc.strategies ?? [],
    pool: 'strategies',
  },
  memory: {
    label: 'memory',
    id: (m) => m.id,
    shortId: asIs,
    entry: (m) => m.line,
    separator: '\n',
    header: memoriesHeader,
    subjects: (items) => items.map(() => ({ kind: 'memory', sameGroup: false })),
    // At rank they are the candidates, not yet fitted into the block.
    shown: (doc) => (doc.step === 'rank' ? [] : (doc.memories ?? [])),
    pool: 'memories',
  },
};

/** A kind's row, typed for a loop over every kind (the row and the items it is given are of one kind). */
export const kindRow = (kind: ItemKind): KindRow<unknown> => KINDS[kind] as unknown as KindRow<unknown>;

/** Every kind, in the order the block's sections show them (packages first). */
export const KINDS_IN_ORDER: readonly ItemKind[] = ITEM_KINDS;
