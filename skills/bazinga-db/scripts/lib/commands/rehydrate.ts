/**
 * rehydrate: the project memory a new session starts with, as a block within a token budget
 * (the session-start hook prints it).
 */
import { writeTransaction, type DB } from '../statements.ts';
import { usage } from '../errors.ts';
import { SEVERITIES, sqliteMs, sqliteTime, memoryLine } from '../memory.ts';
import { hasMemoryTables, parseMemory, selectMemories, touchMemories } from '../repo/memories.ts';
import { continuity, latestProject } from '../repo/memorySources.ts';
import { projectScope } from '../repo/sessions.ts';
import { memorySettings } from '../settings.ts';
import { countCl100k, scaleTokens } from '../tokens.ts';
import { parseInteger } from '../validate.ts';
import { rejectProblem, type Command } from './types.ts';
import { nowOf } from './memoryArgs.ts';

// ------------------------------------------------------------------------------- rehydrate

/** What rehydrate loads (the packing-and-memory seed's rehydration): limits and windows. */
export const REHYDRATE = {
  states: 5,
  decisions: { limit: 10, minImportance: 7, days: 30 },
  issues: { limit: 15, severities: ['critical', 'high'] as readonly string[] },
  learnings: { limit: 5, days: 60 },
} as const;

const DAY_MS = 86_400_000;

export interface Rehydration {
  markdown: string;
  memory_ids: number[];
  tokens: number;
  left_out: number;
}

function ago(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  if (days >= 1) return `${days} day${days === 1 ? '' : 's'} ago`;
  const hours = Math.floor(ms / 3_600_000);
  return hours >= 1 ? `${hours} hour${hours === 1 ? '' : 's'} ago` : 'less than an hour ago';
}

/**
 * The block a new session starts with: the latest state, important recent decisions (importance
 * ≥ 7, 30 days), open critical and high issues (oldest first), the most used learnings (60 days)
 * and the project's continuity, within `maxTokens` (cl100k × `tokenFactor`, as the assembler
 * counts; sections in that order, a memory that does not fit is skipped and counted). Empty
 * markdown when the project has no live memory.
 */
export function rehydration(db: DB, projectId: string, nowMs: number, maxTokens: number, tokenFactor: number, maxChars = Infinity): Rehydration {
  const none: Rehydration = { markdown: '', memory_ids: [], tokens: 0, left_out: 0 };
  if (!hasMemoryTables(db)) return none;
  const live = selectMemories(db, { scope: projectScope(projectId), text: null, type: null, tags: [], minImportance: 1, since: null, until: null, archived: false, includeSuperseded: false }).map(
    ({ row }) => parseMemory(row),
  );
  if (live.length === 0) return none;
  const since = (days: number) => sqliteTime(nowMs - days * DAY_MS);
  const states = live.filter((m) => m.type === 'state').slice(0, REHYDRATE.states);
  const decisions = live
    .filter((m) => m.type === 'decision' && m.importance >= REHYDRATE.decisions.minImportance && m.created_at >= since(REHYDRATE.decisions.days))
    .sort((a, b) => b.importance - a.importance || (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id))
    .slice(0, REHYDRATE.decisions.limit);
  const issues = live
    .filter((m) => m.type === 'issue' && REHYDRATE.issues.severities.includes(String(m.content.severity)) && m.content.status !== 'resolved')
    .sort((a, b) => SEVERITIES.indexOf(a.content.severity as never) - SEVERITIES.indexOf(b.content.severity as never) || (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id))
    .slice(0, REHYDRATE.issues.limit);
  const learnings = live
    .filter((m) => m.type === 'learning' && m.created_at >= since(REHYDRATE.learnings.days))
    .sort((a, b) => b.access_count - a.access_count || b.importance - a.importance || b.id - a.id)
    .slice(0, REHYDRATE.learnings.limit);
  const c = continuity(db, projectId);
  const head = [`## Project Memory: ${projectId}`, ''];
  head.push(
    c.last_session_end
      ? `_Last session ended ${c.last_session_end.slice(0, 16)} UTC (${ago(Math.max(0, nowMs - sqliteMs(c.last_session_end)))}); ${c.sessions} session${c.sessions === 1 ? '' : 's'} so far._`
      : `_${c.sessions} session${c.sessions === 1 ? '' : 's'} so far._`,
  );
  const count = (text: string) => scaleTokens(countCl100k(text), tokenFactor);
  const limit = maxChars === Infinity ? `${maxTokens} tokens` : `${maxTokens} tokens and ${maxChars} characters`;
  const tailOf = (n: number) => `\n_${n} more left out for the budget of ${limit}: search-memories ${projectId} finds them._\n`;
  // Room for the closing line saying what was left out, at its widest.
  let used = count(head.join('\n') + '\n') + count(tailOf(999));
  let chars = (head.join('\n') + '\n' + tailOf(999)).length;
  const lines: string[] = [...head];
  const ids: number[] = [];
  let leftOut = 0;
  const section = (heading: string, list: typeof live) => {
    if (list.length === 0) return;
    const headingText = `\n${heading}\n\n`;
    let opened = false;
    for (const m of list) {
      const line = memoryLine(m) + '\n';
      const cost = count(line) + (opened ? 0 : count(headingText));
      const length = line.length + (opened ? 0 : headingText.length);
      if (used + cost > maxTokens || chars + length > maxChars) {
        leftOut++;
        continue;
      }
      if (!opened) lines.push('', heading, '');
      opened = true;
      lines.push(line.trimEnd());
      used += cost;
      chars += length;
      ids.push(m.id);
    }
  };
  section('### Current state', states);
  section('### Open issues (critical and high, oldest first)', issues);
  section('### Key decisions (importance ≥ 7, last 30 days)', decisions);
  section('### Learnings (most used, last 60 days)', learnings);
  if (ids.length === 0) return { ...none, left_out: leftOut };
  const markdown = lines.join('\n') + '\n' + (leftOut > 0 ? tailOf(leftOut) : '');
  return { markdown, memory_ids: ids, tokens: count(markdown), left_out: leftOut };
}

export const rehydrate: Command = {
  name: 'rehydrate',
  synopsis: 'rehydrate <project_id> | --project P | --latest-project [--max-tokens N] [--max-chars N] [--markdown] [--dry-run] [--now ISO]',
  flags: { '--max-tokens': 'value', '--max-chars': 'value', '--markdown': 'bool', '--dry-run': 'bool', '--now': 'value', '--project': 'value', '--latest-project': 'bool' },
  maxPositionals: 1,
  print: (result) => ((result as { markdownOnly?: boolean }).markdownOnly ? (result as { markdown: string }).markdown : undefined),
  run(args, ctx) {
    rejectProblem(args);
    const latest = args.bools.has('--latest-project');
    const given = args.positionals[0] ?? args.values.get('--project');
    if ((given === undefined || given.trim() === '') === !latest) throw usage('rehydrate requires one of: <project_id>, --project P, --latest-project');
    const now = nowOf(args);
    const settings = memorySettings(ctx.paths().projectRoot);
    const maxText = args.values.get('--max-tokens');
    const maxTokens = maxText === undefined ? settings.rehydrateMaxTokens : parseInteger('--max-tokens', maxText, 1);
    const db = ctx.db();
    // The project of the most recently started session (the session-start hook has no other name for it).
    const projectId = latest ? latestProject(db) : (given as string);
    if (projectId === undefined) return { success: true, project_id: null, markdown: '', memory_ids: [], tokens: 0, left_out: 0, dry_run: args.bools.has('--dry-run'), ...(args.bools.has('--markdown') ? { markdownOnly: true } : {}) };
    const charsText = args.values.get('--max-chars');
    const maxChars = charsText === undefined ? Infinity : parseInteger('--max-chars', charsText, 1);
    const r = rehydration(db, projectId, now.ms, maxTokens, settings.tokenFactor, maxChars);
    if (!args.bools.has('--dry-run') && r.memory_ids.length > 0) writeTransaction(db, () => touchMemories(db, r.memory_ids, now.time));
    return { success: true, project_id: projectId, ...r, dry_run: args.bools.has('--dry-run'), ...(args.bools.has('--markdown') ? { markdownOnly: true } : {}) };
  },
};
