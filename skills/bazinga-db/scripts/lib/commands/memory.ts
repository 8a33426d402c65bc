/**
 * Project memory commands: save-memory, get-memory, search-memories, supersede-memory,
 * archive-memory, forget-memory, memory-maintenance, summarise-session and rehydrate. The rules
 * (types, dedup, scores, lifecycle) are in ../memory.ts; the database side in ../repo/memories.ts.
 * Every text stored goes through the project's redactor, as everywhere in bazinga-db.
 */
import { writeTransaction, type DB } from '../statements.ts';
import { invalid, notFound, usage } from '../errors.ts';
import {
  checkContent,
  CONTENT_FIELDS,
  lifecycleRuleFor,
  MEMORY_TYPES,
  searchScore,
  SEVERITIES,
  sqliteMs,
  sqliteTime,
  TITLE_MAX_CHARS,
  memoryLine,
  type MemoryContent,
  type MemoryType,
} from '../memory.ts';
import {
  deleteMemory,
  getMemoryRow,
  resolveIssue,
  hasMemoryTables,
  linkSupersession,
  listProjectMemories,
  parseMemory,
  rememberMemory,
  selectMemories,
  setArchived,
  touchMemories,
  type MemoryDraft,
  type MemoryRow,
  type SaveResult,
} from '../repo/memories.ts';
import { continuity, helpfulStrategies, latestProject, patternsSeen, sourceGroups, sourcePackages, sourceReasoning, sourceSession } from '../repo/memorySources.ts';
import { readContentFile } from '../contentFile.ts';
import { memorySettings } from '../settings.ts';
import { shorten } from '../shown.ts';
import { countCl100k } from '../tokens.ts';
import { parseInteger, rejectSecret } from '../validate.ts';
import { pos, rejectProblem, requirePositionals, type Command, type CommandContext } from './types.ts';
import type { ParsedArgs } from '../args.ts';

const isType = (t: string): t is MemoryType => (MEMORY_TYPES as readonly string[]).includes(t);

function memoryType(value: string, field = 'type'): MemoryType {
  const t = value.trim().toLowerCase();
  if (!isType(t)) throw invalid(`${field} must be one of ${MEMORY_TYPES.join(', ')}, got '${value}'`);
  return t;
}

function memoryId(value: string, field = 'memory_id'): number {
  return parseInteger(field, value, 1);
}

/** An ISO-8601 date (`2025-12-02`) or date-time (`2025-12-02T12:00:00Z`; no zone: UTC), years 1000–9999. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[zZ]|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO-8601 text in milliseconds, or NaN (also for a day or time that does not exist: 2025-02-30, 24:00). A date alone is its midnight, or its last second with `endOfDay`. */
function isoMs(text: string, endOfDay = false): number {
  const m = ISO_TIME.exec(text.trim());
  if (!m || Number(m[1]) < 1000) return NaN;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return NaN;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return NaN;
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return Date.parse(`${t}T${endOfDay ? '23:59:59' : '00:00:00'}Z`);
  return Date.parse(/(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(t) ? t.replace(' ', 'T') : `${t.replace(' ', 'T')}Z`);
}

/** --now (ISO-8601) or the clock, as a stored time. */
function nowOf(args: ParsedArgs): { ms: number; time: string } {
  const text = args.values.get('--now');
  const ms = text === undefined ? Date.now() : isoMs(text);
  if (Number.isNaN(ms)) throw invalid(`--now must be an ISO-8601 date-time such as 2025-12-02T12:00:00Z, got '${text}'`);
  return { ms, time: sqliteTime(ms) };
}

/** An ISO-8601 date or date-time flag as a stored time (a date alone: its midnight, or its last second for --until). */
function timeFlag(args: ParsedArgs, flag: string): string | null {
  const text = args.values.get(flag);
  if (text === undefined) return null;
  const ms = isoMs(text, flag === '--until');
  if (Number.isNaN(ms)) throw invalid(`${flag} must be an ISO-8601 date or date-time such as 2025-12-02 or 2025-12-02T12:00:00Z, got '${text}'`);
  return sqliteTime(ms);
}

function importanceOf(args: ParsedArgs, fallback: number): number {
  const text = args.values.get('--importance');
  if (text === undefined) return fallback;
  const n = parseInteger('--importance', text, 1);
  if (n > 10) throw invalid(`--importance must be from 1 to 10, got ${n}`);
  return n;
}

function tagsOf(args: ParsedArgs, redact: (t: string) => string): string[] {
  const text = args.values.get('--tags');
  if (text === undefined) return [];
  // Redacted as written, then lower-cased: a key's case is part of what the redactor recognises.
  return [...new Set(text.split(',').map((t) => redact(t.trim()).toLowerCase()).filter((t) => t !== ''))];
}

/** The read side of a memory command on a database with no memory tables yet: nothing to find. */
function requireMemoryTables(db: DB, id?: number): void {
  if (!hasMemoryTables(db)) throw notFound(id === undefined ? 'No memories: this database has none yet (save-memory or summarise-session makes them)' : `Memory not found: ${id}`);
}

// ------------------------------------------------------------------------------ save-memory

const CONTENT_HELP = Object.entries(CONTENT_FIELDS)
  .map(([type, fields]) => `${type}: ${Object.keys(fields).join(', ')}`)
  .join('; ');

const saveMemory: Command = {
  name: 'save-memory',
  synopsis: `save-memory <project_id> <decision|issue|state|learning> <title> (--content JSON | --content-file PATH) [--tags a,b] [--importance 1-10] [--session S] [--group G] [--agent A] [--source REF] [--expires ISO] [--parent ID] [--now ISO]`,
  flags: {
    '--content': 'value',
    '--content-file': 'value',
    '--tags': 'value',
    '--importance': 'value',
    '--session': 'value',
    '--group': 'value',
    '--agent': 'value',
    '--source': 'value',
    '--expires': 'value',
    '--parent': 'value',
    '--now': 'value',
  },
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 3, `save-memory requires: <project_id> <type> <title> and --content JSON (fields per type — ${CONTENT_HELP})`);
    rejectProblem(args);
    const [projectId, rawType, rawTitle] = args.positionals as [string, string, string];
    rejectSecret('project_id', projectId);
    const type = memoryType(rawType);
    const redactor = ctx.redactor();
    const redact = (t: string) => redactor.text(t);
    const title = redact(rawTitle.replace(/\s+/g, ' ').trim());
    if (title === '') throw invalid('title must not be empty');
    if (Array.from(title).length > TITLE_MAX_CHARS) throw invalid(`title must be at most ${TITLE_MAX_CHARS} characters, got ${Array.from(title).length}`);
    const content = checkContent(type, parseContent(args, ctx), redact);
    const now = nowOf(args);
    const parent = args.values.get('--parent');
    const draft: MemoryDraft = {
      projectId,
      type,
      title,
      content,
      tags: tagsOf(args, redact),
      importance: importanceOf(args, 5),
      sourceSession: redactor.optional(args.values.get('--session')),
      sourceGroup: redactor.optional(args.values.get('--group')),
      sourceAgent: redactor.optional(args.values.get('--agent')),
      sourceRef: redactor.optional(args.values.get('--source')),
      expiresAt: timeFlag(args, '--expires'),
      parentId: parent === undefined ? null : memoryId(parent, '--parent'),
    };
    const settings = memorySettings(ctx.paths().projectRoot);
    const db = ctx.db();
    const result = writeTransaction(db, () => {
      if (draft.parentId !== null && !getMemoryRow(db, draft.parentId)) throw notFound(`--parent memory not found: ${draft.parentId}`);
      return rememberMemory(db, draft, now.time, settings.dedupSimilarity);
    });
    return { success: true, ...result, project_id: projectId, type, message: SAVE_MESSAGES[result.operation](result), redacted: redactor.redacted };
  },
};

const SAVE_MESSAGES: Record<SaveResult['operation'], (r: SaveResult) => string> = {
  created: (r) => `saved as memory ${r.memory_id}`,
  bumped: (r) => `the same as memory ${r.memory_id}: its access count and importance were bumped instead of adding one`,
  merged: (r) => `${Math.round((r.similarity ?? 0) * 100)}% alike memory ${r.memory_id}: merged into it (what it lacked filled in, lists and tags joined)`,
  superseded: (r) => `memory ${r.memory_id} supersedes memory ${r.supersedes} (which stays readable)`,
  unchanged: (r) => `memory ${r.memory_id} already says this`,
};

/** --content JSON or --content-file PATH (the one content-file rule: a regular file in the project or the temp folder, capped). */
function parseContent(args: ParsedArgs, ctx: CommandContext): unknown {
  const inline = args.values.get('--content');
  const file = args.values.get('--content-file');
  if ((inline === undefined) === (file === undefined)) throw usage('save-memory needs exactly one of --content JSON or --content-file PATH');
  let text = inline as string;
  if (file !== undefined) text = readContentFile(file, ctx.cwd, ctx.paths().projectRoot);
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(`content must be a JSON object (fields per type — ${CONTENT_HELP})`);
  }
}

// ------------------------------------------------------------------------------- reads

const getMemory: Command = {
  name: 'get-memory',
  synopsis: 'get-memory <memory_id>',
  flags: {},
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-memory requires: <memory_id>');
    rejectProblem(args);
    const id = memoryId(pos(args, 0));
    const db = ctx.db();
    requireMemoryTables(db, id);
    const row = getMemoryRow(db, id);
    if (!row) throw notFound(`Memory not found: ${id}`);
    return parseMemory(row);
  },
};

const searchMemories: Command = {
  name: 'search-memories',
  synopsis:
    'search-memories <project_id> [--query TEXT] [--type T] [--tags a,b] [--min-importance N] [--since ISO] [--until ISO] [--archived] [--include-superseded] [--limit N] [--now ISO]',
  flags: {
    '--query': 'value',
    '--type': 'value',
    '--tags': 'value',
    '--min-importance': 'value',
    '--since': 'value',
    '--until': 'value',
    '--archived': 'bool',
    '--include-superseded': 'bool',
    '--limit': 'value',
    '--now': 'value',
  },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'search-memories requires: <project_id>');
    rejectProblem(args);
    const projectId = pos(args, 0);
    const type = args.values.get('--type');
    const limitText = args.values.get('--limit');
    const limit = limitText === undefined ? 10 : Math.min(100, parseInteger('--limit', limitText, 1));
    const minText = args.values.get('--min-importance');
    const minImportance = minText === undefined ? 1 : parseInteger('--min-importance', minText, 1);
    const now = nowOf(args);
    const query = args.values.get('--query') ?? null;
    const db = ctx.db();
    if (!hasMemoryTables(db)) return { success: true, project_id: projectId, count: 0, memories: [] };
    const weights = memorySettings(ctx.paths().projectRoot).searchWeights;
    const found = selectMemories(db, {
      projectId,
      text: query === null || query.trim() === '' ? null : query,
      type: type === undefined ? null : memoryType(type, '--type'),
      tags: tagsOf(args, (t) => t),
      minImportance,
      since: timeFlag(args, '--since'),
      until: timeFlag(args, '--until'),
      archived: args.bools.has('--archived'),
      includeSuperseded: args.bools.has('--include-superseded'),
    });
    const ranked = found
      .map(({ row, relevance }) => ({ row, relevance, score: searchScore(row, relevance, now.ms, weights) }))
      .sort((a, b) => b.score - a.score || b.row.id - a.row.id)
      .slice(0, limit);
    return {
      success: true,
      project_id: projectId,
      count: ranked.length,
      memories: ranked.map(({ row, relevance, score }) => ({ ...parseMemory(row), relevance, score: Math.round(score * 1e4) / 1e4 })),
    };
  },
};

// ------------------------------------------------------------------------------ lifecycle

const supersedeMemory: Command = {
  name: 'supersede-memory',
  synopsis: 'supersede-memory <old_memory_id> <new_memory_id> [--now ISO]',
  flags: { '--now': 'value' },
  maxPositionals: 2,
  run(args, ctx) {
    requirePositionals(args, 2, 'supersede-memory requires: <old_memory_id> <new_memory_id>');
    rejectProblem(args);
    const oldId = memoryId(pos(args, 0), 'old_memory_id');
    const newId = memoryId(pos(args, 1), 'new_memory_id');
    if (oldId === newId) throw invalid('a memory cannot supersede itself');
    const now = nowOf(args);
    const db = ctx.db();
    writeTransaction(db, () => {
      const [older, newer] = [getMemoryRow(db, oldId), getMemoryRow(db, newId)];
      if (!older) throw notFound(`Memory not found: ${oldId}`);
      if (!newer) throw notFound(`Memory not found: ${newId}`);
      if (older.project_id !== newer.project_id || older.type !== newer.type) {
        throw invalid(`a memory supersedes one of its own project and type: ${oldId} is a ${older.type} of ${older.project_id}, ${newId} a ${newer.type} of ${newer.project_id}`);
      }
      // The newer must be live: linking to a superseded one would hide both (or make a loop).
      if (newer.superseded_by !== null) throw invalid(`memory ${newId} is itself superseded (by ${newer.superseded_by}); supersede ${oldId} with a live memory`);
      linkSupersession(db, oldId, newId, now.time);
    });
    return { success: true, memory_id: oldId, superseded_by: newId };
  },
};

const archiveMemory: Command = {
  name: 'archive-memory',
  synopsis: 'archive-memory <memory_id> [--restore] [--now ISO]',
  flags: { '--restore': 'bool', '--now': 'value' },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'archive-memory requires: <memory_id>');
    rejectProblem(args);
    const id = memoryId(pos(args, 0));
    const restore = args.bools.has('--restore');
    const now = nowOf(args);
    const db = ctx.db();
    if (!writeTransaction(db, () => setArchived(db, id, !restore, now.time))) throw notFound(`Memory not found: ${id}`);
    return { success: true, memory_id: id, archived: !restore };
  },
};

const forgetMemory: Command = {
  name: 'forget-memory',
  synopsis: 'forget-memory <memory_id>',
  flags: {},
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'forget-memory requires: <memory_id>');
    rejectProblem(args);
    const id = memoryId(pos(args, 0));
    const db = ctx.db();
    // Forgetting removes the bytes: freed content is zeroed, the index merged (deleteMemory), and
    // the write-ahead log, which may still hold the text as it was written, checkpointed away.
    db.pragma('secure_delete = ON');
    if (!writeTransaction(db, () => deleteMemory(db, id))) throw notFound(`Memory not found: ${id}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { success: true, memory_id: id, deleted: true };
  },
};

const memoryMaintenance: Command = {
  name: 'memory-maintenance',
  synopsis: 'memory-maintenance <project_id> [--dry-run] [--now ISO]',
  flags: { '--dry-run': 'bool', '--now': 'value' },
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'memory-maintenance requires: <project_id>');
    rejectProblem(args);
    const projectId = pos(args, 0);
    const dryRun = args.bools.has('--dry-run');
    const now = nowOf(args);
    const db = ctx.db();
    const empty = { success: true, project_id: projectId, dry_run: dryRun, archived: [], deleted: [], kept: 0 };
    if (!hasMemoryTables(db)) return empty;
    const plan = () => {
      const archived: Action[] = [];
      const deleted: Action[] = [];
      let kept = 0;
      for (const row of listProjectMemories(db, projectId)) {
        const rule = lifecycleRuleFor(lifecycleOf(row), now.ms);
        if (!rule) {
          kept++;
          continue;
        }
        const action = { memory_id: row.id, type: row.type, title: row.title, rule: rule.rule };
        if (rule.action === 'archive') archived.push(action);
        else deleted.push(action);
        if (dryRun) continue;
        if (rule.action === 'archive') setArchived(db, row.id, true, now.time);
        else deleteMemory(db, row.id);
      }
      return { archived, deleted, kept };
    };
    const done = dryRun ? plan() : writeTransaction(db, plan);
    return { ...empty, ...done };
  },
};

interface Action {
  memory_id: number;
  type: MemoryType;
  title: string;
  rule: string;
}

function lifecycleOf(row: MemoryRow) {
  const content = JSON.parse(row.content) as MemoryContent;
  return {
    type: row.type,
    importance: row.importance,
    status: typeof content.status === 'string' ? content.status : null,
    created_at: row.created_at,
    archived_at: row.archived_at,
    expires_at: row.expires_at,
    access_count: row.access_count,
    superseded_by: row.superseded_by,
  };
}

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

const summariseSession: Command = {
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
  for (const s of helpfulStrategies(db, session.project_id, end)) {
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
  for (const p of patternsSeen(db, session.project_id, session.start_time ?? '0000', end)) {
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
  const live = selectMemories(db, { projectId, text: null, type: null, tags: [], minImportance: 1, since: null, until: null, archived: false, includeSuperseded: false }).map(
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
  const count = (text: string) => Math.ceil(countCl100k(text) * tokenFactor);
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

const rehydrate: Command = {
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

export const memoryCommands: readonly Command[] = [
  saveMemory,
  getMemory,
  searchMemories,
  supersedeMemory,
  archiveMemory,
  forgetMemory,
  memoryMaintenance,
  summariseSession,
  rehydrate,
];
