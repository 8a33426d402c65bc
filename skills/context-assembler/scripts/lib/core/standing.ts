/**
 * Standing: whether what an item claims held, read from the session's own verdicts (no model call).
 *
 * - contradicted: a claim of the fixing agents (the developer's or senior engineer's completion or
 *   decisions reasoning, their handoff or decisions package) that a later failure of the same group
 *   on the same iteration answered: a failures package written after it for that iteration (or one
 *   that names none), or the review that sent that iteration back (the group's revision count past it);
 * - held: written before a review of its group that passed (approved, completed or being merged),
 *   and not contradicted;
 * - unreviewed: the rest.
 *
 * Pure: the caller reads the group's review state and failures (bazinga-db) and passes them in.
 */

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
}

/** The agents whose completion and decisions are claims a review checks. */
const CLAIMANTS: ReadonlySet<string> = new Set(['developer', 'senior_software_engineer']);
const CLAIM_PHASES: ReadonlySet<string> = new Set(['completion', 'decisions']);
const CLAIM_PACKAGES: ReadonlySet<string> = new Set(['handoff', 'decisions']);

/** The iteration a failures package's file names (`failures_AUTH_iter2.md` → 2), or null. */
export function failureIteration(filePath: string): number | null {
  const m = /_iter(\d+)\b/i.exec(filePath.split('/').at(-1) ?? '');
  return m ? Number(m[1]) : null;
}

/** SQLite's and ISO times compared as instants (`2025-12-01 10:00:00` is UTC). */
const ms = (t: string) => Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t.replace(' ', 'T') : `${t.replace(' ', 'T')}Z`);

interface Claim {
  agent: string;
  claim: boolean;
  group_id: string | null;
  iteration: number | null;
  at: string | null;
}

function standingOfClaim(c: Claim, review: GroupReview | undefined, failures: readonly Failure[]): StandingOf {
  if (c.group_id === null || c.group_id === 'global') return { standing: 'unreviewed', by: null };
  if (c.claim && CLAIMANTS.has(c.agent)) {
    const at = c.at === null ? Number.NaN : ms(c.at);
    const answered = failures
      .filter((f) => f.group_id === c.group_id && !Number.isNaN(at) && ms(f.created_at) > at && (f.iteration === null || c.iteration === null || f.iteration === c.iteration))
      .sort((a, b) => ms(a.created_at) - ms(b.created_at))[0];
    if (answered) return { standing: 'contradicted', by: `failures package ${answered.id}` };
    if (review && c.iteration !== null && c.iteration < review.revision_count) return { standing: 'contradicted', by: `the review that sent iteration ${c.iteration} back` };
  }
  if (review?.passed) {
    const before = c.at === null || review.reviewed_at === null || ms(c.at) <= ms(review.reviewed_at);
    if (before) return { standing: 'held', by: `the passing review of ${review.group_id}` };
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

/** A package's standing (a failures package is a review's own finding: never a claim). */
export function packageStanding(
  p: { producer_agent: string; package_type: string; group_id: string | null; created_at: string | null },
  review: GroupReview | undefined,
  failures: readonly Failure[],
): StandingOf {
  return standingOfClaim({ agent: p.producer_agent, claim: CLAIM_PACKAGES.has(p.package_type), group_id: p.group_id, iteration: null, at: p.created_at }, review, failures);
}

/** How long before `nowMs` a time was, in the largest whole unit (`40 min`, `3 h`, `2 d`); null when not known. */
export function ageBefore(at: string | null, nowMs: number): string | null {
  if (at === null) return null;
  const t = ms(at);
  if (Number.isNaN(t) || t > nowMs) return null;
  const minutes = Math.floor((nowMs - t) / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d`;
}
