/**
 * The floor: what today's BAZINGA prompt builder would show in its own `## Context from Prior
 * Work` section for this spawn (../shared/bazinga-today.md, checked against its source), which the
 * block replaces. Every item of it belongs in the block, or the block says why not. Pure: the rows
 * are read by bazinga-db (repo/builderSection.ts); this applies the builder's own cut: its section
 * budget (a soft budget per model times a share per agent, sized by its characters-per-token
 * estimate), its line formats and which agents are shown reasoning.
 *
 * The figures are the builder's, not this product's weights: changing them would measure against
 * another builder.
 */
import type { AssemblyDoc, ExclusionReason } from '../contract.ts';
import { ZONE_RULES } from './zone.ts';

/** The builder's soft budget per model (its `model` param; any other name is sonnet's). */
export const BUILDER_SOFT_BUDGET: Readonly<Record<string, number>> = { haiku: 900, sonnet: 1800, opus: 2400 };

/** The builder's share of the soft budget per agent (any other agent 0.20). */
export const BUILDER_SHARE: Readonly<Record<string, number>> = {
  developer: 0.35,
  senior_software_engineer: 0.3,
  qa_expert: 0.3,
  tech_lead: 0.4,
  investigator: 0.35,
  project_manager: 0.1,
  requirements_engineer: 0.3,
};

/** Packages, reasoning entries and error patterns the builder reads at most. */
export const BUILDER_LIMITS = { packages: 5, reasoning: 5, error_patterns: 3 } as const;

/** The builder shows error patterns whose confidence is above this (strictly). */
export const BUILDER_PATTERN_CONFIDENCE = 0.7;

/** Whose reasoning the builder reads for each recipient; it shows reasoning only to these four. */
export const BUILDER_PRODUCERS: Readonly<Record<string, readonly string[]>> = {
  qa_expert: ['developer', 'senior_software_engineer'],
  tech_lead: ['developer', 'senior_software_engineer', 'qa_expert'],
  senior_software_engineer: ['developer'],
  investigator: ['developer', 'senior_software_engineer', 'qa_expert'],
};

/** The builder's cut lengths (characters) of a summary, a reasoning entry, a signature and a solution. */
const CUT = { summary: 200, reasoning: 300, signature: 100, solution: 200 } as const;

/** The builder's token estimate: characters ÷ 3.85 plus 2 %, rounded down; a text under 10 characters a quarter of them (at least 1). */
export function builderEstimate(text: string): number {
  const n = Array.from(text).length;
  if (n === 0) return 0;
  if (n < 10) return Math.max(1, Math.floor(n / 4));
  return Math.floor((n / 3.85) * 1.02);
}

/** Python's text[:n] on code points. */
const head = (text: string, n: number) => Array.from(text).slice(0, n).join('');

export interface FloorRows {
  packages: readonly { id: number; priority: string; file_path: string; summary: string | null }[];
  reasoning: readonly { id: number; agent_type: string; reasoning_phase: string | null; content: string | null }[];
  error_patterns: readonly { pattern_hash: string; project_id: string; signature_json: string | null; solution: string | null }[];
}

/** What the builder's section shows: ids a kind (an error pattern by its hash), in its order. */
export interface Floor {
  packages: number[];
  reasoning: number[];
  error_patterns: string[];
}

export const EMPTY_FLOOR: Floor = { packages: [], reasoning: [], error_patterns: [] };

/** Whether the builder shows reasoning to `agent`. */
export const builderShowsReasoning = (agent: string) => BUILDER_PRODUCERS[agent] !== undefined;

/**
 * The items the builder's section would show of `rows` (read by its rules, in its order), within
 * its section budget for `model` and `agent`: packages first, then reasoning, then error patterns,
 * each line admitted while the running total fits (one that does not is skipped, the next tried).
 */
export function builderFloor(rows: FloorRows, model: string, agent: string): Floor {
  const budget = Math.floor((BUILDER_SOFT_BUDGET[model] ?? (BUILDER_SOFT_BUDGET.sonnet as number)) * (BUILDER_SHARE[agent] ?? 0.2));
  let used = 0;
  const fits = (line: string) => {
    const t = builderEstimate(line);
    if (used + t > budget) return false;
    used += t;
    return true;
  };
  const floor: Floor = { packages: [], reasoning: [], error_patterns: [] };
  for (const p of rows.packages) {
    if (!p.summary) continue;
    const summary = Array.from(p.summary).length > CUT.summary ? `${head(p.summary, CUT.summary)}...` : p.summary;
    if (fits(`**[${p.priority.toUpperCase()}]** ${p.file_path}\n> ${summary}\n\n`)) floor.packages.push(p.id);
  }
  if (builderShowsReasoning(agent)) {
    for (const r of rows.reasoning) {
      if (fits(`**[${r.agent_type}] ${r.reasoning_phase ?? 'None'}:** ${head(r.content ?? '', CUT.reasoning)}\n\n`)) floor.reasoning.push(r.id);
    }
  }
  for (const e of rows.error_patterns) {
    if (fits(`**Known Issue**: ${head(e.signature_json ?? '', CUT.signature)}\n> **Solution**: ${head(e.solution ?? '', CUT.solution)}\n\n`)) floor.error_patterns.push(e.pattern_hash);
  }
  return floor;
}

/** Why a floor item is not in the block: an exclusion's reason, the zone, reasoning turned off, or not a candidate (superseded, or gone). */
export type FloorReason = ExclusionReason | 'reasoning-off' | 'not-a-candidate';

export interface FloorLeftOut {
  kind: 'package' | 'reasoning' | 'error_pattern';
  id: number | string;
  reason: FloorReason;
}

/**
 * The floor's items the document does not show, each with why (in the floor's order: packages,
 * reasoning, error patterns). Empty for a document without a floor.
 */
export function floorLeftOut(doc: AssemblyDoc): FloorLeftOut[] {
  const floor = doc.floor;
  if (floor === undefined) return [];
  const excluded = new Map((doc.excluded ?? []).map((e) => [`${e.kind}:${e.id}`, e.reason]));
  const queries = ZONE_RULES[doc.zone].queries;
  const shown = {
    package: new Set<number | string>((doc.packages ?? doc.candidates ?? []).map((p) => p.id)),
    reasoning: new Set<number | string>((doc.reasoning?.entries ?? []).map((e) => e.id)),
    error_pattern: new Set<number | string>((doc.error_patterns ?? []).map((e) => e.fault_hash)),
  };
  const why = (kind: FloorLeftOut['kind'], id: number | string): FloorReason => {
    if (!queries) return 'zone';
    const reason = excluded.get(`${kind}:${id}`);
    if (reason !== undefined) return reason;
    if (kind === 'reasoning' && doc.reasoning !== undefined && !doc.reasoning.included) return 'reasoning-off';
    return 'not-a-candidate';
  };
  const out: FloorLeftOut[] = [];
  const each = (kind: FloorLeftOut['kind'], ids: readonly (number | string)[]) => {
    for (const id of ids) if (!shown[kind].has(id)) out.push({ kind, id, reason: why(kind, id) });
  };
  each('package', floor.packages);
  each('reasoning', floor.reasoning);
  each('error_pattern', floor.error_patterns);
  return out;
}
