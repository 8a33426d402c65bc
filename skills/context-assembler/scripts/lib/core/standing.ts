/**
 * Standing: whether what an item claims held, read from the session's own verdicts (no model call).
 *
 * - contradicted: a claim of the fixing agents (the developer's or senior engineer's completion or
 *   decisions reasoning, their handoff or decisions package) that a later failure of the same group
 *   on the same iteration answered: a failures package written after it for that iteration (or one
 *   that names none), or the review that sent that iteration back (the group's revision count past it);
 * - held: written before a review of its group that passed (approved, completed or being merged,
 *   and not sent back since), for the iteration it passed, and not contradicted;
 * - what the reviewers (QA, the tech lead) write is the review's own word: no standing;
 * - unreviewed: the rest.
 *
 * Pure: the caller reads the group's review state and failures (bazinga-db) and passes them in.
 */

import { parseSqliteTime } from './rank.ts';
import type { StandingChoice, StandingRules } from '../vocabulary.ts';

export { STANDING_CHOICES, type StandingChoice, type StandingRules } from '../vocabulary.ts';

export type Standing = 'held' | 'contradicted' | 'unreviewed';

/** A group's review state, as BAZINGA's task_groups row says it. */
export interface GroupReview {
  group_id: string;
  /** Iterations sent back to the developer. */
  revision_count: number;
  /** Its last review passed (APPROVED), or the group completed or is being merged. */
  passed: boolean;
  /** When the row last changed (BAZINGA stamps the review there); null: not known. */
  reviewed_at: string | null;
}

/** A failures package of a group: when, and the iteration its file names (failures_<G>_iter<N>.md), or null. */
export interface Failure {
  id: number;
  group_id: string;
  created_at: string;
  iteration: number | null;
}

export interface StandingOf {
  standing: Standing;
  /** What held or contradicted it, in words (null: unreviewed). */
  by: string | null;
  /** The failures package that contradicted it, when one did. */
  by_package?: number;
  /**
   * Present (true) when it is the review's own word (a reviewer wrote it, or it is a failures
   * package): what standing is read from, never ranked down or left out by it.
   */
  review?: true;
}

/** An item's standing fields for the document (none for an unreviewed one). */
export function standingFields(s: StandingOf): { standing?: 'held' | 'contradicted'; standing_by?: string } {
  return s.standing === 'unreviewed' ? {} : { standing: s.standing, ...(s.by !== null ? { standing_by: s.by } : {}) };
}

/** Why the agent's standing rules left an item out, as its exclusion says it. */
export function standingReason(standing: { standing?: 'held' | 'contradicted' | 'unreviewed' }): 'contradicted' | 'unreviewed' {
  return standing.standing === 'contradicted' ? 'contradicted' : 'unreviewed';
}

/** The agents whose completion and decisions are claims a review checks. */
const CLAIMANTS: ReadonlySet<string> = new Set(['developer', 'senior_software_engineer']);
const CLAIM_PHASES: ReadonlySet<string> = new Set(['completion', 'decisions']);
const CLAIM_PACKAGES: ReadonlySet<string> = new Set(['handoff', 'decisions']);

/** The iteration a failures package's file names (`failures_AUTH_iter2.md` → 2), or null. */
export function failureIteration(filePath: unknown): number | null {
  if (typeof filePath !== 'string') return null;
  const m = /_iter(\d+)\b/i.exec(filePath.split('/').at(-1) ?? '');
  return m ? Number(m[1]) : null;
}

/** SQLite's and ISO times compared as instants (`2025-12-01 10:00:00` is UTC; a number or a BLOB a foreign writer left is read as rank.ts reads it; NaN: unreadable). */
const ms = (t: unknown) => parseSqliteTime(t);

interface Claim {
  agent: string;
  claim: boolean;
  group_id: string | null;
  iteration: number | null;
  at: string | null;
}

/** The reviewers: what they write is a review's finding or direction, what standing is read from, never itself held or contradicted. */
export const REVIEWERS: ReadonlySet<string> = new Set(['qa_expert', 'tech_lead']);

function standingOfClaim(c: Claim, review: GroupReview | undefined, failures: readonly Failure[]): StandingOf {
  if (REVIEWERS.has(c.agent)) return { standing: 'unreviewed', by: null, review: true };
  if (c.group_id === null || c.group_id === 'global') return { standing: 'unreviewed', by: null };
  if (c.claim && CLAIMANTS.has(c.agent)) {
    const at = ms(c.at);
    const answered = failures
      .filter((f) => f.group_id === c.group_id && ms(f.created_at) > at && (f.iteration === null || c.iteration === null || f.iteration === c.iteration))
      .sort((a, b) => ms(a.created_at) - ms(b.created_at))[0];
    if (answered) return { standing: 'contradicted', by: `package ${answered.id}`, by_package: answered.id };
    if (review && c.iteration !== null && c.iteration < review.revision_count) return { standing: 'contradicted', by: `the review of it. ${c.iteration}` };
  }
  if (review?.passed) {
    // Written before the review that passed (an unknown time on either side counts as before: the
    // review is the newest word on the group), and of the iteration it passed: one the revision
    // count has reached; a claim with no iteration recorded, one written after the group's last failure.
    const before = !(ms(c.at) > ms(review.reviewed_at));
    const lastFailure = Math.max(...failures.filter((f) => f.group_id === c.group_id).map((f) => ms(f.created_at)).filter((t) => !Number.isNaN(t)));
    const ofPassed = c.iteration !== null ? c.iteration >= review.revision_count : !c.claim || !(ms(c.at) < lastFailure);
    if (before && ofPassed) return { standing: 'held', by: `${review.group_id}'s passing review` };
  }
  return { standing: 'unreviewed', by: null };
}

/** A reasoning entry's standing. */
export function reasoningStanding(
  e: { agent_type: string; phase: string; group_id?: string | null; iteration?: number | null; timestamp: string | null },
  review: GroupReview | undefined,
  failures: readonly Failure[],
): StandingOf {
  return standingOfClaim({ agent: e.agent_type, claim: CLAIM_PHASES.has(e.phase), group_id: e.group_id ?? null, iteration: e.iteration ?? null, at: e.timestamp }, review, failures);
}

/**
 * A package's standing. A failures package is a review's own finding, what standing is read from:
 * it has none (neither a claim to contradict nor one a later passing review held: that review
 * says the failure was fixed, not that it still holds).
 */
export function packageStanding(
  p: { producer_agent: string; package_type: string; group_id: string | null; created_at: string | null },
  review: GroupReview | undefined,
  failures: readonly Failure[],
): StandingOf {
  if (p.package_type === 'failures') return { standing: 'unreviewed', by: null, review: true };
  return standingOfClaim({ agent: p.producer_agent, claim: CLAIM_PACKAGES.has(p.package_type), group_id: p.group_id, iteration: null, at: p.created_at }, review, failures);
}

/**
 * How long before `nowMs` a time was, in the largest whole unit (`<1 h`, `3 h`, `2 d`); null when
 * not known. Within the hour it says `<1 h`: a mark's text then stays the same for an hour, and so
 * does the count ca_token_counts keeps of it (a spawn that meets new items still counts their marks).
 */
export function ageBefore(at: unknown, nowMs: number): string | null {
  if (at === null || at === undefined) return null;
  const t = ms(at);
  if (Number.isNaN(t) || t > nowMs) return null;
  const minutes = Math.floor((nowMs - t) / 60_000);
  if (minutes < 60) return '<1 h';
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d`;
}

/**
 * Where an item goes by the agent's rules: in place (0), after the rest of its section (1: an
 * unreviewed item ranked down), below what contradicted it (2: a contradicted one ranked down), or
 * `left_out`. A review's own finding (`verdict`: a failures package) is what standing is read from:
 * like a held item, always in place.
 */
export function standingBand(item: { standing?: 'held' | 'contradicted' }, rules: StandingRules, verdict = false): 0 | 1 | 2 | 'left_out' {
  const choice: StandingChoice = item.standing === 'held' || verdict ? 'shown' : item.standing === 'contradicted' ? rules.contradicted : rules.unreviewed;
  if (choice === 'left_out') return 'left_out';
  if (choice === 'shown') return 0;
  return item.standing === 'contradicted' ? 2 : 1;
}

/**
 * Items in the order a section shows them, and those the rules leave out (in their order): band 1
 * after the rest; a band 2 item right after the last of what answered it (`answers`: the keys of the
 * items that contradicted it, those of this section) when that ranks below it, else in its place
 * (what answered it is in another section, or already above it). Stable.
 */
export function applyStanding<T extends { standing?: 'held' | 'contradicted' }>(
  items: readonly T[],
  rules: StandingRules,
  options: { isVerdict?: (item: T) => boolean; key?: (item: T) => number | string; answers?: (item: T) => readonly (number | string)[] } = {},
): { shown: T[]; leftOut: T[] } {
  const inPlace: T[] = [];
  const down: T[] = [];
  const leftOut: T[] = [];
  const below = new Set<T>();
  for (const item of items) {
    const band = standingBand(item, rules, options.isVerdict?.(item) ?? false);
    if (band === 'left_out') leftOut.push(item);
    else if (band === 1) down.push(item);
    else {
      inPlace.push(item);
      if (band === 2) below.add(item);
    }
  }
  const order = placeBelow(inPlace, options.key ?? (() => Number.NaN), (item) => (below.has(item) ? (options.answers?.(item) ?? []) : []));
  return { shown: [...order, ...down], leftOut };
}

/**
 * Moves each item that names answers (`answers`, by `key`) to just after the last of them that
 * follows it in the list; the rest keep their order. An item whose answers are all above it, or not
 * in the list, stays where it is.
 */
export function placeBelow<T>(items: readonly T[], key: (item: T) => number | string, answers: (item: T) => readonly (number | string)[]): T[] {
  const out = [...items];
  for (const item of items) {
    const wanted = new Set(answers(item));
    if (wanted.size === 0) continue;
    const from = out.indexOf(item);
    let last = -1;
    out.forEach((x, i) => {
      if (i > from && wanted.has(key(x))) last = i;
    });
    if (last < 0) continue;
    out.splice(from, 1);
    out.splice(last, 0, item);
  }
  return out;
}

/** What the project's capture ledger says of one fault's fix: retries that passed with it, and that failed with it. */
export interface FixTally {
  /** The product created the pattern from a retry that passed (ledger operation `created`). */
  created: boolean;
  passed: number;
  failed: number;
}

/**
 * How an error pattern came to be: `captured` when the product created it from a retry that
 * passed; `learnt` when an agent saved it and the session's verdicts or captures since moved its
 * confidence; `saved` when it stands as an agent saved it.
 */
export type PatternOrigin = 'captured' | 'saved' | 'learnt';

export function patternOrigin(tally: FixTally | undefined, learnt: boolean): PatternOrigin {
  if (tally?.created) return 'captured';
  return learnt || (tally !== undefined && tally.passed + tally.failed > 0) ? 'learnt' : 'saved';
}

// Compact provenance, as the block says it (a few tokens each; the JSON holds each field whole).

/** A package's: who wrote it, how long before the spawn (`qa_expert, 20 h ago`). */
export function packageProvenance(p: { producer?: string; age?: string }): string | null {
  return joined([p.producer ?? null, p.age ? `${p.age} ago` : null]);
}

/** A reasoning entry's: the iteration it was written in, how long before the spawn (`it. 1, 21 h ago`). */
export function reasoningProvenance(e: { iteration?: number | null; age?: string }): string | null {
  return joined([e.iteration !== null && e.iteration !== undefined ? `it. ${e.iteration}` : null, e.age ? `${e.age} ago` : null]);
}

/**
 * An error pattern's: when last seen, how it came to be, and whether its fix was seen to pass
 * (`last 2 d ago; captured from a passing retry`, `saved by an agent, fix unverified`).
 */
export function patternProvenance(p: { age?: string; origin?: PatternOrigin; fix_passed?: number; fix_failed?: number }): string | null {
  if (p.origin === undefined) return joined([p.age ? `last ${p.age} ago` : null]);
  const passed = p.fix_passed ?? 0;
  const failed = p.fix_failed ?? 0;
  const fix =
    passed > 0 ? `fix passed ${passed}×${failed > 0 ? `, failed ${failed}×` : ''}` : failed > 0 ? `fix failed ${failed}×` : 'fix unverified';
  const how = p.origin === 'captured' ? `captured from a passing retry${passed > 1 || failed > 0 ? `; ${fix}` : ''}` : p.origin === 'learnt' && passed + failed === 0 ? 'saved by an agent, learnt from verdicts' : `saved by an agent, ${fix}`;
  return [p.age ? `last ${p.age} ago` : null, how].filter((x) => x !== null).join('; ');
}

/** A strategy's: when last seen helpful, and whether verdicts moved it (`last 3 d ago, learnt from verdicts`). */
export function strategyProvenance(s: { age?: string; learnt?: true }): string | null {
  return joined([s.age ? `last ${s.age} ago` : null, s.learnt ? 'learnt from verdicts' : null]);
}

/** A standing's words in the block: a contradicted claim is never worded as fact. */
export function standingText(item: { standing?: 'held' | 'contradicted'; standing_by?: string }): string | null {
  if (item.standing === 'contradicted') return `a claim that failed review: ${item.standing_by ?? 'a later failure'}`;
  if (item.standing === 'held') return `held: ${item.standing_by ?? 'a passing review'}`;
  return null;
}

const joined = (parts: readonly (string | null)[]): string | null => {
  const text = parts.filter((x) => x !== null).join(', ');
  return text === '' ? null : text;
};
