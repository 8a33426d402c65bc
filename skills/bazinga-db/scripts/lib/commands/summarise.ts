/**
 * summarise-session: the memories a finished session leaves (decisions, issues, its state,
 * learnings), drafted from its rows and saved through the one save rule (repo/memories.ts).
 */
import { writeTransaction, type DB } from '../statements.ts';
import { notFound } from '../errors.ts';
import { SEVERITIES, TITLE_MAX_CHARS, type MemoryContent } from '../memory.ts';
import { resolveIssue, listProjectMemories, rememberMemory, type MemoryDraft } from '../repo/memories.ts';
import { helpfulStrategies, patternsSeen, sourceGroups, sourcePackages, sourceReasoning, sourceSession } from '../repo/memorySources.ts';
import { getProjectScope } from '../repo/sessions.ts';
import { memorySettings } from '../settings.ts';
import { shorten } from '../shown.ts';
import { pos, rejectProblem, requirePositionals, type Command } from './types.ts';
import { nowOf } from './memoryArgs.ts';

// ----------------------------------------------------------------------- summarise-session

/** Importance of a memory made from a package, by its priority. */
const PRIORITY_IMPORTANCE: Record<string, number> = { critical: 9, high: 8, medium: 7, low: 5 };
const SEVERITY_IMPORTANCE: Record<string, number> = { critical: 9, high: 8, medium: 6, low: 4 };
/** A task group's completion, by its status. */
const STATUS_COMPLETION: Record<string, number> = { pending: 0, in_progress: 50, failed: 50, approved_pending_merge: 90, merging: 95, completed: 100 };

/** The first sentence of a text, shortened to a title. */
function titleOf(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  const first = /^(.+?[.!?])(?:\s|$)/.exec(one)?.[1] ?? one;
  return shorten(first, TITLE_MAX_CHARS) || 'untitled';
}

export const summariseSession: Command = {
  name: 'summarise-session',
  synopsis: 'summarise-session <session_id> [--now ISO]',
  flags: { '--now': 'value' },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'summarise-session requires: <session_id>');
    rejectProblem(args);
    const sessionId = pos(args, 0);
    const now = nowOf(args);
    const redactor = ctx.redactor();
    const redact = (t: string) => redactor.text(t);
    const settings = memorySettings(ctx.paths().projectRoot);
    const db = ctx.db();
    const results = writeTransaction(db, () => {
      const session = sourceSession(db, sessionId);
      if (!session) throw notFound(`Session not found: ${sessionId}`);
      const projectId = session.project_id;
      const drafts = sessionDrafts(db, session, now.time, redact);
      const saved = drafts.map((d) => ({ draft: d, result: rememberMemory(db, d, now.time, settings.dedupSimilarity) }));
      // Issues of groups that completed since an earlier summary are resolved now.
      const resolved = resolveCompletedIssues(db, sessionId, projectId, now.time);
      return { projectId, saved, resolved };
    });
    const count = (op: string) => results.saved.filter((s) => s.result.operation === op).length;
    return {
      success: true,
      session_id: sessionId,
      project_id: results.projectId,
      created: count('created'),
      superseded: count('superseded'),
      merged: count('merged'),
      unchanged: count('bumped') + count('unchanged'),
      resolved_issues: results.resolved,
      memories: results.saved.map((s) => ({ memory_id: s.result.memory_id, type: s.draft.type, title: s.draft.title, operation: s.result.operation, source: s.draft.sourceRef })),
      redacted: redactor.redacted,
    };
  },
};

/**
 * The memories a session's records make, in a fixed order (deterministic, no model call):
 * decisions (its decisions reasoning, its decisions packages), unresolved issues (the latest
 * failures package of each group that did not complete), learnings (the project's strategies that
 * helped, known by the session's end; the error patterns seen during it) and the final state of
 * each group.
 */
function sessionDrafts(db: DB, session: NonNullable<ReturnType<typeof sourceSession>>, now: string, redact: (t: string) => string): MemoryDraft[] {
  const base = { projectId: session.project_id, sourceSession: session.session_id, expiresAt: null, parentId: null };
  const out: MemoryDraft[] = [];
  for (const r of sourceReasoning(db, session.session_id, 'decisions')) {
    const text = redact(r.content);
    out.push({
      ...base,
      type: 'decision',
      title: titleOf(text),
      content: { decision: text, alternatives: [] },
      tags: [r.group_id ?? 'global', r.agent_type],
      importance: r.agent_type === 'tech_lead' ? 8 : 7,
      sourceGroup: r.group_id,
      sourceAgent: r.agent_type,
      sourceRef: `reasoning:${r.id}`,
    });
  }
  for (const p of sourcePackages(db, session.session_id, 'decisions')) {
    const text = redact(p.summary);
    out.push({
      ...base,
      type: 'decision',
      title: titleOf(text),
      content: { decision: text, alternatives: [] },
      tags: [p.group_id ?? 'global'],
      importance: PRIORITY_IMPORTANCE[p.priority] ?? 6,
      sourceGroup: p.group_id,
      sourceAgent: p.producer_agent,
      sourceRef: `package:${p.id}`,
    });
  }
  const groups = sourceGroups(db, session.session_id);
  const failures = sourcePackages(db, session.session_id, 'failures');
  const latestFailure = (groupId: string) => failures.filter((p) => p.group_id === groupId).at(-1);
  for (const g of groups.filter((g) => g.status !== 'completed')) {
    const p = latestFailure(g.id);
    if (!p) continue;
    const severity = (SEVERITIES as readonly string[]).includes(p.priority) ? p.priority : 'medium';
    const text = redact(p.summary);
    out.push({
      ...base,
      type: 'issue',
      title: titleOf(text),
      content: { description: text, severity, status: 'open', attempted_fixes: [], next_actions: [] },
      tags: [g.id, 'failures'],
      importance: SEVERITY_IMPORTANCE[severity] ?? 6,
      sourceGroup: g.id,
      sourceAgent: p.producer_agent,
      sourceRef: `package:${p.id}`,
    });
  }
  const end = session.end_time ?? now;
  // What the session reads of the project's learnings: its project's, or every project's when it records none (ProjectScope).
  const scope = getProjectScope(db, session.session_id);
  for (const s of helpfulStrategies(db, scope, end)) {
    const text = redact(s.insight);
    out.push({
      ...base,
      type: 'learning',
      title: titleOf(text),
      content: { lesson: text, context: s.topic, ...(s.lang || s.framework ? { applicability: [s.lang, s.framework].filter(Boolean).join(', ') } : {}), evidence: `helpful ${s.helpfulness}×` },
      tags: ['strategy', s.topic],
      importance: Math.min(10, 5 + s.helpfulness),
      sourceGroup: null,
      sourceAgent: null,
      sourceRef: `strategy:${s.strategy_id}`,
    });
  }
  for (const p of patternsSeen(db, scope, session.start_time ?? '0000', end)) {
    const sig = signatureOf(p.signature_json);
    const lesson = redact(`${sig.error_type}: ${sig.message_pattern} → ${p.solution}`);
    out.push({
      ...base,
      type: 'learning',
      title: titleOf(redact(`${sig.error_type}: ${sig.message_pattern}`)),
      content: { lesson, ...(p.lang ? { applicability: p.lang } : {}), evidence: `seen ${p.occurrences} times, confidence ${Math.round(p.confidence * 100) / 100}` },
      tags: ['error-pattern'],
      importance: Math.max(1, Math.min(10, Math.round(p.confidence * 10))),
      sourceGroup: null,
      sourceAgent: null,
      sourceRef: `pattern:${p.pattern_hash}`,
    });
  }
  const completions = sourceReasoning(db, session.session_id, 'completion');
  for (const g of groups) {
    const done = completions.filter((r) => r.group_id === g.id).map((r) => redact(shorten(r.content.replace(/\s+/g, ' ').trim(), 300)));
    const failure = g.status === 'completed' ? undefined : latestFailure(g.id);
    const name = redact(g.name);
    out.push({
      ...base,
      type: 'state',
      title: shorten(`State of ${name} (${g.id})`, TITLE_MAX_CHARS),
      content: {
        task: name,
        completion: STATUS_COMPLETION[g.status ?? 'pending'] ?? 0,
        done: done.slice(-3),
        remaining: [],
        blockers: failure ? [redact(failure.summary)] : [],
        next_actions: [],
      },
      tags: [g.id, g.status ?? 'pending'],
      importance: 6,
      sourceGroup: g.id,
      sourceAgent: null,
      sourceRef: `group:${session.session_id}:${g.id}`,
    });
  }
  return out;
}

function signatureOf(json: string): { error_type: string; message_pattern: string } {
  try {
    const s = JSON.parse(json) as { error_type?: unknown; message_pattern?: unknown };
    return { error_type: typeof s.error_type === 'string' ? s.error_type : 'Error', message_pattern: typeof s.message_pattern === 'string' ? s.message_pattern : '' };
  } catch {
    return { error_type: 'Error', message_pattern: '' };
  }
}

/** Open issue memories of this session's groups that have completed since: marked resolved. */
function resolveCompletedIssues(db: DB, sessionId: string, projectId: string, now: string): number[] {
  const completed = new Set(sourceGroups(db, sessionId).filter((g) => g.status === 'completed').map((g) => g.id));
  const ids: number[] = [];
  for (const row of listProjectMemories(db, projectId)) {
    if (row.type !== 'issue' || row.source_session !== sessionId || row.source_group === null || !completed.has(row.source_group)) continue;
    const content = JSON.parse(row.content) as MemoryContent;
    if (content.status === 'resolved') continue;
    resolveIssue(db, row, { ...content, status: 'resolved' }, now);
    ids.push(row.id);
  }
  return ids;
}
