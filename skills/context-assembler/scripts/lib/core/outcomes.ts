/**
 * Outcome feedback: how the spawns an item was shown to went (bazinga-db repo/outcomes.ts), as
 * decayed counts per item and a bounded score term. Pure.
 *
 * Each verdict weighs 0.5^(age / half_life_days), its age counted from the noon (UTC) of its
 * spawn's day (verdicts are kept per day), so what happened long ago fades. An item's term
 * is (helped − hurt) / (helped + hurt + prior): in (−1, 1), 0 for an item never shown (neither
 * helped nor hurt), and one bad verdict alone gives −1/(1 + prior) (with the default prior of 2,
 * −1/3): it lowers an item, it cannot bury it. Each kind's ranking adds weight × term
 * (outcome_feedback.weights).
 */
import type { ItemKind } from './tiers.ts';

export interface OutcomeCounts {
  /** Decayed count of the verdicts that followed a spawn it was shown to: approved. */
  helped: number;
  /** … sent back for changes. */
  hurt: number;
  /** How many such spawns (not decayed). */
  shown: number;
  /** The score term, (helped − hurt) / (helped + hurt + prior). */
  term: number;
}

/** The verdicts of one item's showings on one UTC day (bazinga-db's ca_outcomes rows). */
export interface VerdictRow {
  kind: string;
  id: string;
  /** YYYY-MM-DD: the verdicts of that day count as of its noon (UTC). */
  day: string;
  helped: number;
  hurt: number;
}

/** Counts per item, keyed `kind:id` (outcomeKey). */
export type OutcomeTable = ReadonlyMap<string, OutcomeCounts>;

export const outcomeKey = (kind: ItemKind, id: number | string) => `${kind}:${id}`;

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export function outcomeTable(rows: readonly VerdictRow[], nowMs: number, halfLifeDays: number, prior: number): OutcomeTable {
  const acc = new Map<string, { helped: number; hurt: number; shown: number }>();
  for (const r of rows) {
    const at = Date.parse(`${r.day}T12:00:00Z`);
    const age = Number.isNaN(at) ? 0 : Math.max(0, nowMs - at) / 86_400_000;
    const w = Math.pow(0.5, age / halfLifeDays);
    const key = `${r.kind}:${r.id}`;
    const c = acc.get(key) ?? { helped: 0, hurt: 0, shown: 0 };
    c.helped += w * r.helped;
    c.hurt += w * r.hurt;
    c.shown += r.helped + r.hurt;
    acc.set(key, c);
  }
  const out = new Map<string, OutcomeCounts>();
  for (const [key, c] of acc) {
    out.set(key, { helped: round4(c.helped), hurt: round4(c.hurt), shown: c.shown, term: round4((c.helped - c.hurt) / (c.helped + c.hurt + prior)) });
  }
  return out;
}

/** An item's term (0 when it was never shown to a spawn with a verdict). */
export function termOf(table: OutcomeTable | undefined, kind: ItemKind, id: number | string): number {
  return table?.get(outcomeKey(kind, id))?.term ?? 0;
}

/** What --explain shows of an item's outcomes (absent when it has none). */
export function countsOf(table: OutcomeTable | undefined, kind: ItemKind, id: number | string): OutcomeCounts | undefined {
  return table?.get(outcomeKey(kind, id));
}
