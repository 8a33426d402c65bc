/**
 * Purpose-driven tiers. Every item a block may carry (package, reasoning entry, error pattern,
 * strategy) gets a tier from one table (TIER_RULES); the block's budget is split between the
 * tiers by the purpose of the spawn, and items are admitted tier by tier:
 *
 * - Tier 1 is small: at most `purposes.tier1_max_items` items and the purpose's Tier 1 share of
 *   the budget; an item the rules call essential past either competes as Tier 2. What stays in
 *   Tier 1 is admitted whole, always; only its first item can be larger than the share, so the
 *   block passes its budget only when that one item alone does, and the overrun is reported (the
 *   one permitted overrun).
 * - Tier 2 may use its share plus what Tier 1 left of its own; Tier 3 gets whatever is left. So
 *   what Tier 1 takes beyond its share comes out of Tier 3 first, then Tier 2 (under pressure
 *   Tier 3 goes first), and unused budget only ever flows down.
 * - Within a tier, items go in the purpose's kind order, each kind in the order its step ranked
 *   it; one that does not fit is skipped (not a stop): `tier` when the block still had room but
 *   its tier's allowance did not, `budget` when the block itself was full.
 *
 * Sizing is lazy as in pack(): items are admitted on upper bounds while the bounds fit, and
 * everything admitted is counted before any skip is decided, so every skip is decided on counts.
 * Pure; the token counter is injected.
 */
import type { Sized, TokenCounter } from './pack.ts';

export { ITEM_KINDS, PURPOSES, TIERS, type ItemKind, type Purpose, type Tier } from '../vocabulary.ts';
import { TIERS, type ItemKind, type Purpose, type Tier } from '../vocabulary.ts';

/**
 * What a purpose changes beyond its tiers' split and the order of kinds, as a table (beside the
 * zone rules and the tier rules): the handoff purpose lays the block out as a handoff (Position,
 * Pending work, Active decisions, Key learnings, Verification commands) and reads the packages'
 * artifacts for the verification commands; the others show the kind sections.
 */
export interface PurposeRules {
  handoffLayout: boolean;
  readsArtifacts: boolean;
}
export const PURPOSE_RULES: Readonly<Record<Purpose, PurposeRules>> = {
  design: { handoffLayout: false, readsArtifacts: false },
  implementation: { handoffLayout: false, readsArtifacts: false },
  review: { handoffLayout: false, readsArtifacts: false },
  handoff: { handoffLayout: true, readsArtifacts: true },
  subagent: { handoffLayout: false, readsArtifacts: false },
};

/** The rules of `purpose` (a document from before purposes has none: the default layout). */
export function purposeRules(purpose: Purpose | null | undefined): PurposeRules {
  return purpose ? PURPOSE_RULES[purpose] : PURPOSE_RULES.implementation;
}



/** Within a tier, whose items go first, per purpose: what that kind of work reads first. */
export const KIND_ORDER: Readonly<Record<Purpose, readonly ItemKind[]>> = {
  design: ['package', 'reasoning', 'strategy', 'error_pattern', 'memory'],
  implementation: ['package', 'error_pattern', 'reasoning', 'strategy', 'memory'],
  review: ['reasoning', 'package', 'error_pattern', 'strategy', 'memory'],
  handoff: ['reasoning', 'package', 'strategy', 'error_pattern', 'memory'],
  subagent: ['package', 'reasoning', 'error_pattern', 'strategy', 'memory'],
};

/** What the tier rules look at, for one item of one request. */
export interface TierSubject {
  kind: ItemKind;
  /** Of the request's own group (a package or reasoning entry); false for session-wide and other groups. */
  sameGroup: boolean;
  packageType?: string;
  priority?: string;
  /**
   * A package: the request names a task group (false for a session-wide spawn, which has no
   * group's work to pin: its packages compete on their rank, from Tier 2).
   */
  groupSpawn?: boolean;
  /** A package: the newest of its type among this request's candidates of its group. */
  latestOfType?: boolean;
  /** A reasoning entry's phase. */
  phase?: string;
  /** A reasoning entry: the newest of its phase among this request's candidates of its group. */
  latestOfPhase?: boolean;
  /** A reasoning entry: the request's iteration minus the entry's (null: the entry has none). */
  iterationsBack?: number | null;
  /** An error pattern that matched the request's --error, or the failure's own (the failure that sent the retry back signs its fault). */
  matchedError?: boolean;
  /** A package or reasoning entry the agent's standing rules rank down (config provenance: a claim a review failed, say). */
  rankedDown?: boolean;
}

export interface TierRule {
  tier: Tier;
  /** What the rule picks, as the references say it. */
  what: string;
  /** Only for these purposes (absent: every purpose). */
  purposes?: readonly Purpose[];
  test: (s: TierSubject) => boolean;
}

/** Iterations back that still count as recent feedback (Tier 2); older entries are history (Tier 3). */
export const RECENT_ITERATIONS = 2;

const ownPackage = (s: TierSubject, type?: string) => s.kind === 'package' && s.sameGroup && (type === undefined || s.packageType === type);
/** A package of the group the spawn works on: what Tier 1 pins (a session-wide spawn pins none). */
const groupPackage = (s: TierSubject, type?: string) => ownPackage(s, type) && s.groupSpawn !== false;

/** The one table: the first rule that matches gives the tier. The references print it. */
export const TIER_RULES: readonly TierRule[] = [
  { tier: 2, what: 'never essential: what the standing rules rank down (a claim a later review failed, by default)', test: (s) => s.rankedDown === true },
  { tier: 1, what: "blocking failures of this group (its newest failures package)", test: (s) => groupPackage(s, 'failures') && s.latestOfType === true },
  { tier: 1, what: 'active decisions of this group (its decisions packages)', test: (s) => groupPackage(s, 'decisions') },
  { tier: 1, what: 'critical packages of this group', test: (s) => groupPackage(s) && s.priority === 'critical' },
  { tier: 1, what: "the error pattern matching --error or the failure's own fault", test: (s) => s.kind === 'error_pattern' && s.matchedError === true },
  {
    tier: 1,
    what: 'the current state and active decisions: the newest completion and decisions reasoning of this group',
    test: (s) => s.kind === 'reasoning' && s.sameGroup && s.latestOfPhase === true && (s.phase === 'completion' || s.phase === 'decisions'),
  },
  { tier: 1, what: 'design: the research of this group', purposes: ['design'], test: (s) => groupPackage(s, 'research') },
  { tier: 1, what: 'review and handoff: the handoff packages of this group', purposes: ['review', 'handoff'], test: (s) => groupPackage(s, 'handoff') },
  { tier: 2, what: 'strategies that worked (recent learnings)', test: (s) => s.kind === 'strategy' },
  { tier: 2, what: 'the other error patterns', test: (s) => s.kind === 'error_pattern' },
  {
    tier: 2,
    what: `prior feedback: reasoning of the last ${RECENT_ITERATIONS + 1} iterations (this one included), of this group or session-wide`,
    test: (s) => s.kind === 'reasoning' && s.iterationsBack !== undefined && s.iterationsBack !== null && s.iterationsBack <= RECENT_ITERATIONS,
  },
  { tier: 2, what: 'the other packages of this group, unless low', test: (s) => ownPackage(s) && s.priority !== 'low' },
  { tier: 2, what: 'high and critical packages of other groups and session-wide ones', test: (s) => s.kind === 'package' && !s.sameGroup && (s.priority === 'high' || s.priority === 'critical') },
  { tier: 3, what: 'project memory (decisions, issues, state and learnings of earlier sessions)', test: (s) => s.kind === 'memory' },
  { tier: 3, what: 'the rest: older iterations, historical reasoning, low and other medium packages', test: () => true },
];

export function tierOf(subject: TierSubject, purpose: Purpose): Tier {
  const at = tierRuleOf(subject, purpose);
  return TIER_RULES[at]?.tier ?? 3;
}

/** The index in TIER_RULES of the rule that gives the subject its tier (how essential it is: lower first). */
export function tierRuleOf(subject: TierSubject, purpose: Purpose): number {
  for (const [i, rule] of TIER_RULES.entries()) {
    if (rule.purposes && !rule.purposes.includes(purpose)) continue;
    if (rule.test(subject)) return i;
  }
  return TIER_RULES.length;
}

/** The purpose's budget split as fractions of the block's budget, Tier 1 first (config: percentages). */
export type Split = readonly [number, number, number];

export interface FitItem {
  /** Unique within one fit: `${kind}:${id}`. */
  key: string;
  kind: ItemKind;
  tier: Tier;
  /** The text the item adds to the block (with its separator): what is sized. */
  text: string;
  /** Of the floor (what the builder's own section would show, the work under review): admitted on the block's room alone, whatever its tier's share. */
  floor?: boolean;
  /**
   * A shorter text of the same item within `maxTokens` (its summary cut), or undefined when none
   * fits: an item with no room for its whole text takes the room the block has left this way.
   */
  shorter?: (maxTokens: number) => string | undefined;
}

export type FitReason = 'budget' | 'tier';

export interface TierUsage {
  tier: Tier;
  /** The tier's share of the budget (a fraction). */
  share: number;
  /** Tokens the tier could use when it was filled (null for Tier 1: unbounded). */
  allowance: number | null;
  used: number;
  items: number;
  left_out: number;
}

export interface FitResult {
  /** Admitted keys with their token figures, in admission order. */
  admitted: Map<string, Sized>;
  /** Left-out keys with the reason, in the order they were considered. */
  leftOut: Map<string, FitReason>;
  tiers: TierUsage[];
  /** Tokens of everything admitted. */
  used: number;
  /** Tokens Tier 1 needs beyond the budget (0 when it fits). */
  overrun: number;
  /** Every admitted figure is a count. */
  exact: boolean;
  /** Items the rules put in Tier 1 that the fit took as Tier 2 (past Tier 1's count or share). */
  demoted: Set<string>;
  /** Items admitted with a shorter text (FitItem.shorter), by key: the text admitted. */
  shortened: Map<string, string>;
}

const ix = (tier: Tier) => (tier - 1) as 0 | 1 | 2;

/**
 * Tier 1's own order, whatever the purpose: by the tier table's rule that made each item essential
 * (the group's newest failures, then its decisions, its critical packages, the error pattern
 * matching --error, the current state's reasoning, …), so that a bounded Tier 1 keeps what the
 * table puts first; among items of one rule, the kinds in this order, each as ranked.
 */
export const TIER1_KIND_ORDER: readonly ItemKind[] = ['package', 'error_pattern', 'reasoning'];

/**
 * Items in the order they are considered: by tier, then (Tier 1) by `essential` (each item's
 * tier rule, by key; absent: after those given) and Tier 1's kind order, else by the purpose's
 * kind order, then as given.
 */
export function fitOrder<T extends Pick<FitItem, 'kind' | 'tier'> & { key?: string }>(items: readonly T[], purpose: Purpose, essential?: ReadonlyMap<string, number>): T[] {
  // A kind the order does not name goes after those it names.
  const place = (kind: ItemKind, tier: Tier) => {
    const kinds = tier === 1 ? TIER1_KIND_ORDER : KIND_ORDER[purpose];
    return kinds.includes(kind) ? kinds.indexOf(kind) : kinds.length;
  };
  const rule = (item: T) => (item.tier === 1 && essential !== undefined && item.key !== undefined ? (essential.get(item.key) ?? TIER_RULES.length) : 0);
  return items
    .map((item, at) => ({ item, at }))
    .sort((a, b) => a.item.tier - b.item.tier || rule(a.item) - rule(b.item) || place(a.item.kind, a.item.tier) - place(b.item.kind, b.item.tier) || a.at - b.at)
    .map((x) => x.item);
}

/**
 * Admits `items` (already in fitOrder) into `budget` tokens by tier (see the module comment).
 * `budget` is what the items may use: the block's budget less its fixed parts (headings).
 */
export function fitTiers(items: readonly FitItem[], budget: number, split: Split, counter: TokenCounter, tier1MaxItems = Infinity): FitResult {
  const used: [number, number, number] = [0, 0, 0];
  const demoted = new Set<string>();
  const placed: { key: string; tier: Tier; text: string; size: Sized }[] = [];
  const leftOut = new Map<string, FitReason>();
  const counts: [number, number, number] = [0, 0, 0];
  const dropped: [number, number, number] = [0, 0, 0];
  const total = () => used[0] + used[1] + used[2];
  const settle = () => {
    for (const p of placed) {
      if (p.size.exact) continue;
      const tokens = counter.count(p.text);
      used[ix(p.tier)] += tokens - p.size.tokens;
      p.size = { tokens, exact: true };
    }
  };
  // What the item's tier may still take, and what the block has left.
  const room = (tier: Tier): { tier: number; block: number } => {
    const block = budget - total();
    // Tier 1 is bounded by its count and share; once anything is in the block, by the block's room
    // too: only the block's first item can pass it.
    if (tier === 1) return placed.length === 0 ? { tier: Infinity, block: Infinity } : { tier: block, block };
    if (tier === 3) return { tier: block, block };
    const own = split[1] * budget + Math.max(0, split[0] * budget - used[0]);
    return { tier: Math.min(block, own - used[1]), block };
  };
  const shortened = new Map<string, string>();
  // An item with no room for its whole text takes the room left with a shorter one, when it has one that fits.
  const admitShorter = (item: FitItem, tier: Tier, roomTokens: number): boolean => {
    if (item.shorter === undefined || !(roomTokens > 0) || !Number.isFinite(roomTokens)) return false;
    const text = item.shorter(roomTokens);
    if (text === undefined) return false;
    const tokens = counter.count(text);
    if (tokens > roomTokens) return false;
    placed.push({ key: item.key, tier, text, size: { tokens, exact: true } });
    used[ix(tier)] += tokens;
    counts[ix(tier)]++;
    shortened.set(item.key, text);
    return true;
  };
  for (const item of items) {
    let size = counter.bound(item.text);
    let tier = item.tier;
    // The floor is admitted while the block has room, whatever its tier's share or count; it is
    // counted in its tier's use (a floor item of Tier 1 still opens Tier 1's count). A floor item of
    // Tier 1 that is the block's first is admitted whatever its size: Tier 1's first (the one
    // permitted overrun, stated).
    if (item.floor === true) {
      if (size.tokens > budget - total()) {
        settle();
        if (!size.exact) size = { tokens: counter.count(item.text), exact: true };
      }
      if (size.tokens <= budget - total() || (placed.length === 0 && tier === 1)) {
        placed.push({ key: item.key, tier, text: item.text, size });
        used[ix(tier)] += size.tokens;
        counts[ix(tier)]++;
      } else if (!admitShorter(item, tier, budget - total())) {
        leftOut.set(item.key, 'budget');
        dropped[ix(tier)]++;
      }
      continue;
    }
    // Tier 1 is bounded: past its count, or past its share of the budget, an item the rules call
    // essential competes as Tier 2 (the first one always stays: the one permitted overrun).
    if (tier === 1 && counts[0] > 0) {
      // Closed at the first item it has no room for: the rest compete as Tier 2 too, so nothing is
      // added to Tier 1 after Tier 2 was given room by what Tier 1 left.
      if (counts[0] >= tier1MaxItems || demoted.size > 0) tier = 2;
      else {
        const share = split[0] * budget;
        // Decided on counts: bounds that pass the share are counted first.
        if (used[0] + size.tokens > share) {
          settle();
          if (!size.exact) size = { tokens: counter.count(item.text), exact: true };
        }
        if (used[0] + size.tokens > share) tier = 2;
      }
      if (tier === 2) demoted.add(item.key);
    }
    let r = room(tier);
    if (size.tokens > r.tier) {
      settle();
      if (!size.exact) size = { tokens: counter.count(item.text), exact: true };
      r = room(tier);
    }
    if (size.tokens <= r.tier) {
      placed.push({ key: item.key, tier, text: item.text, size });
      used[ix(tier)] += size.tokens;
      counts[ix(tier)]++;
    } else if (!admitShorter(item, tier, r.tier)) {
      leftOut.set(item.key, size.tokens <= r.block ? 'tier' : 'budget');
      dropped[ix(tier)]++;
    }
  }
  // The overrun is stated on counts, never on bounds.
  const overruns = placed.length > 0 && total() > budget;
  if (overruns) settle();
  const allowance = [
    null,
    Math.max(0, Math.floor(Math.min(budget - used[0], split[1] * budget + Math.max(0, split[0] * budget - used[0])))),
    Math.max(0, Math.floor(budget - used[0] - used[1])),
  ];
  return {
    admitted: new Map(placed.map((p) => [p.key, p.size])),
    leftOut,
    tiers: TIERS.map((tier, i) => ({ tier, share: split[i] as number, allowance: allowance[i] ?? null, used: used[i] as number, items: counts[i] as number, left_out: dropped[i] as number })),
    used: total(),
    // Only the block's first item when it is Tier 1's (of the floor or not) and the rest of Tier 1 can pass the budget: with
    // nothing admitted nothing overran (a budget below 0 just leaves everything out).
    overrun: placed.length > 0 ? Math.max(0, total() - budget) : 0,
    exact: placed.every((p) => p.size.exact),
    demoted,
    shortened,
  };
}
