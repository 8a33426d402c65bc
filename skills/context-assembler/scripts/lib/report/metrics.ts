/**
 * The four success metrics of the strategy the product comes from (seed 001), over the sessions of
 * one report, each with how it is computed and, when it cannot be, which data is missing.
 *
 * - Iterations per group (< 3 on average): BAZINGA's task_groups.revision_count counts the times a
 *   group went back to the developer, so a group has been through revision_count + 1 iterations;
 *   averaged over the groups that started (status other than pending).
 * - Prompt sizes (< 80 % of the model's limit): the spawns the prompt hook served record the
 *   prompt's size with the block in it (the builder's own estimate: characters ÷ 3.85, plus 2 %);
 *   the value is the largest such prompt as a share of its model's context window
 *   (model_context_windows), met when every one stays under 80 %. The orchestrator's own calls see
 *   only the block, not the prompt around it, so they do not count.
 * - Context hits (> 50 % of packages consumed): the sessions' packages (not superseded) given to at
 *   least one agent (a consumption_scope row, a consumer row marked consumed, or shown by a recorded
 *   block that reached the agent's prompt: a zone that records no consumption still shows packages)
 *   over all of them.
 * - QA failure recurrence (< 10 %: the same error twice): the faults among the error patterns the
 *   sessions read (their projects', every project's for a session that records no project id)
 *   seen twice or more over all of them; a fault is the rows of one fault (bazinga-db
 *   patternFaults.ts), its occurrences summed, so one failure met in two files counts as seen
 *   twice. Project-wide: BAZINGA's error_patterns table keeps no session.
 */

/** What the metrics read of a session's report (data.ts SessionReport holds it). */
export interface MetricsSession {
  project_id: string;
  whole_database?: boolean;
  record_kept: boolean;
  groups: readonly { status: string | null; iterations: number; spawns: readonly number[] }[];
  spawns: readonly { prompt_tokens: number | null; model_window: number | null }[];
  packages_total: number;
  packages_delivered: number;
}

export interface Metric {
  key: 'iterations_per_group' | 'prompt_size' | 'context_hits' | 'qa_failure_recurrence';
  name: string;
  /** The target as text, and as a comparison. */
  target: string;
  limit: number;
  compare: 'below' | 'above';
  unit: '' | '%';
  /** null when it cannot be computed (missing says why). */
  value: number | null;
  met: boolean | null;
  numerator: number | null;
  denominator: number | null;
  /** The figures behind the value, in words ("3 iterations over 2 groups"). */
  figures: string | null;
  how: string;
  missing: string | null;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function metric(
  base: Omit<Metric, 'met' | 'value' | 'missing' | 'numerator' | 'denominator' | 'figures'>,
  value: number | null,
  parts: { numerator: number; denominator: number; figures: string; missing: string },
): Metric {
  const met = value === null ? null : base.compare === 'below' ? value < base.limit : value > base.limit;
  return { ...base, value: value === null ? null : round(value), met, numerator: parts.numerator, denominator: parts.denominator, figures: value === null ? null : parts.figures, missing: value === null ? parts.missing : null };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The metrics of `sessions`; `recurrence` counts the faults they read and those seen twice or more (data.ts faultsOfScopes). */
export function computeMetrics(sessions: readonly MetricsSession[], recurrence: { patterns: number; repeated: number }): Metric[] {
  // A group started once its status left pending, or a spawn of it is on record.
  const started = sessions.flatMap((s) => s.groups.filter((g) => g.status !== 'pending' || g.spawns.length > 0));
  const iterations = started.reduce((a, g) => a + g.iterations, 0);
  const prompts = sessions.flatMap((s) => s.spawns.filter((sp) => sp.prompt_tokens !== null && sp.model_window !== null));
  const shares = prompts.map((sp) => ((sp.prompt_tokens as number) * 100) / (sp.model_window as number));
  const total = sessions.reduce((a, s) => a + s.packages_total, 0);
  const delivered = sessions.reduce((a, s) => a + s.packages_delivered, 0);
  const { patterns, repeated } = recurrence;
  return [
    metric(
      { key: 'iterations_per_group', name: 'Iterations per group', target: '< 3 on average', limit: 3, compare: 'below', unit: '', how: 'task_groups.revision_count + 1 per group that started (status not pending, or a spawn on record), averaged' },
      started.length === 0 ? null : iterations / started.length,
      { numerator: iterations, denominator: started.length, figures: `${plural(iterations, 'iteration')} over ${plural(started.length, 'group')}`, missing: 'no task group of these sessions has started (task_groups)' },
    ),
    metric(
      {
        key: 'prompt_size',
        name: 'Prompt sizes',
        target: "< 80 % of the model's limit",
        limit: 80,
        compare: 'below',
        unit: '%',
        how: "the largest prompt the prompt hook served (the builder's estimate, with the block) as a share of its model's context window (model_context_windows); met when all stay under 80 %. The hook never places a block that takes a prompt past the builder's own file-read budget (23,000 tokens unless the builder says otherwise), so with a 200k window this holds by construction: the figure shows the room left",
      },
      shares.length === 0 ? null : Math.max(...shares),
      {
        numerator: shares.filter((x) => x < 80).length,
        denominator: shares.length,
        figures: `${shares.filter((x) => x < 80).length} of ${plural(shares.length, 'prompt')} under 80 %`,
        missing: sessions.some((s) => s.record_kept)
          ? "no spawn of these sessions went through the prompt hook (the orchestrator's own calls see only the block, not the prompt: ca_assemblies.prompt_tokens)"
          : 'the database holds no assembly record (ca_assemblies): no recording assembly of this version ran on it',
      },
    ),
    metric(
      { key: 'context_hits', name: 'Context hits', target: '> 50 % of packages consumed', limit: 50, compare: 'above', unit: '%', how: "packages (not superseded) given to at least one agent (recorded as consumed in consumption_scope or a consumer row, or shown by a recorded block that reached the agent's prompt) over all packages of the sessions" },
      total === 0 ? null : (delivered * 100) / total,
      { numerator: delivered, denominator: total, figures: `${delivered} of ${plural(total, 'package')} given to an agent`, missing: 'the sessions hold no context package (context_packages)' },
    ),
    metric(
      { key: 'qa_failure_recurrence', name: 'QA failure recurrence', target: '< 10 % (the same error twice)', limit: 10, compare: 'below', unit: '%', how: "error patterns of the sessions' projects (every project's for a session that records no project id), one per fault (the rows of one fault as one, their occurrences summed), seen twice or more over all of them; project-wide (the table keeps no session)" },
      patterns === 0 ? null : (repeated * 100) / patterns,
      { numerator: repeated, denominator: patterns, figures: `${repeated} of ${plural(patterns, 'pattern')} seen twice or more`, missing: sessions.some((s) => s.whole_database) ? 'no error pattern is recorded in the database (error_patterns)' : `no error pattern is recorded for ${[...new Set(sessions.map((s) => s.project_id))].join(', ') || 'the project'} (error_patterns)` },
    ),
  ];
}
