/** The enumerations of the BAZINGA schema and commands, in the original's spelling. */

export const AGENT_TYPES = [
  'project_manager',
  'developer',
  'senior_software_engineer',
  'qa_expert',
  'tech_lead',
  'investigator',
  'requirements_engineer',
  'orchestrator',
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** Agents the orchestrator spawns with assembled context (the agent types minus PM and orchestrator). */
export const SPAWNED_AGENTS = [
  'developer',
  'senior_software_engineer',
  'qa_expert',
  'tech_lead',
  'investigator',
  'requirements_engineer',
] as const satisfies readonly AgentType[];
export type SpawnedAgent = (typeof SPAWNED_AGENTS)[number];

/** Agents allowed by the `consumption_scope.agent_type` CHECK. */
export const CONSUMPTION_AGENTS = ['developer', 'qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator'] as const;

export const PACKAGE_TYPES = ['research', 'failures', 'decisions', 'handoff', 'investigation'] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

export const PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Sort rank of a priority: critical first. */
export const PRIORITY_RANK: Record<Priority, number> = { critical: 1, high: 2, medium: 3, low: 4 };
/** The priorities from most to least important: the one order both skills sort by. */
export const PRIORITY_ORDER: readonly Priority[] = [...PRIORITIES].sort((a, b) => PRIORITY_RANK[a] - PRIORITY_RANK[b]);

export const REASONING_PHASES = ['understanding', 'approach', 'decisions', 'risks', 'blockers', 'pivot', 'completion'] as const;

export const CONFIDENCE_LEVELS = ['high', 'medium', 'low'] as const;
export const SESSION_STATUSES = ['active', 'completed', 'failed'] as const;
export const TASK_GROUP_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'approved_pending_merge', 'merging'] as const;
export const INITIAL_TIERS = ['Developer', 'Senior Software Engineer'] as const;
export const STRATEGY_TOPICS = ['implementation', 'architecture', 'methodology', 'general'] as const;
export const RESERVED_TASK_GROUP_IDS = ['global', 'session', 'all', 'default'] as const;

/** Python's repr of a list of strings, as the original prints allowed values: ['a', 'b']. */
export function pyList(values: readonly string[]): string {
  return '[' + values.map((v) => `'${v}'`).join(', ') + ']';
}

/** Python's repr of a tuple of strings: ('a', 'b'). */
export function pyTuple(values: readonly string[]): string {
  return '(' + values.map((v) => `'${v}'`).join(', ') + ')';
}

export function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
