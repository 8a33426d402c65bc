/**
 * Project memory commands: save-memory, get-memory, search-memories, supersede-memory,
 * archive-memory, forget-memory and memory-maintenance; summarise-session (summarise.ts) and
 * rehydrate (rehydrate.ts) are rooms of their own, the shared argument rules in memoryArgs.ts. The
 * rules (types, dedup, scores, lifecycle) are in ../memory.ts; the database side in ../repo/memories.ts.
 * Every text stored goes through the project's redactor, as everywhere in bazinga-db.
 */
import { writeTransaction } from '../statements.ts';
import { invalid, notFound, usage } from '../errors.ts';
import { checkContent, CONTENT_FIELDS, lifecycleRuleFor, searchScore, TITLE_MAX_CHARS, type MemoryContent, type MemoryType } from '../memory.ts';
import { deleteMemory, getMemoryRow, hasMemoryTables, linkSupersession, listProjectMemories, parseMemory, rememberMemory, selectMemories, setArchived, type MemoryDraft, type MemoryRow, type SaveResult } from '../repo/memories.ts';
import { readContentFile } from '../contentFile.ts';
import { memorySettings } from '../settings.ts';
import { parseInteger, rejectSecret } from '../validate.ts';
import { pos, rejectProblem, requirePositionals, type Command, type CommandContext } from './types.ts';
import type { ParsedArgs } from '../args.ts';
import { memoryType, memoryId, nowOf, timeFlag, importanceOf, tagsOf, requireMemoryTables } from './memoryArgs.ts';
import { rehydrate } from './rehydrate.ts';
import { summariseSession } from './summarise.ts';
import { projectScope } from '../repo/sessions.ts';

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
      scope: projectScope(projectId),
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
