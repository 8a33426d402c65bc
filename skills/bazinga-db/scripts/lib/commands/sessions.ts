/** Commands: sessions and task groups. */
import { writeTransaction } from '../statements.ts';
import { invalid, notFound, usage } from '../errors.ts';
import { INITIAL_TIERS, SESSION_STATUSES, TASK_GROUP_STATUSES, isOneOf, pyTuple } from '../enums.ts';
import { isStrictlyInside, resolveLikePython } from '../paths.ts';
import { pyJsonDumps } from '../pyjson.ts';
import { findSession, insertSession, listSessions, sessionExists, setSessionStatus } from '../repo/sessions.ts';
import { findTaskGroup, listTaskGroups, setContextReferences, upsertTaskGroup } from '../repo/taskGroups.ts';
import { parseInteger, parseJsonOrThrow, rejectSecret, validateTaskGroupId } from '../validate.ts';
import { pos, rejectProblem, requirePositionals, type Command } from './types.ts';

/** Local time as Python's `datetime.now().isoformat()` prints it (fraction omitted when zero). */
function pythonLocalIsoNow(now = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const base = `${now.getFullYear()}-${p(now.getMonth() + 1)}-${p(now.getDate())}T${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
  const ms = now.getMilliseconds();
  return ms === 0 ? base : `${base}.${p(ms, 3)}000`;
}

const createSession: Command = {
  name: 'create-session',
  synopsis: 'create-session <session_id> <mode> <requirements> [--initial_branch B] [--metadata JSON]',
  flags: { '--initial_branch': 'value', '--metadata': 'value' },
  maxPositionals: 3,
  run(args, ctx) {
    requirePositionals(args, 3, 'create-session requires at least 3 args: <session_id> <mode> <requirements>');
    rejectProblem(args, {
      unknownFlag: (t) => `Unknown flag or missing value: ${t}`,
      unexpected: (t) => `Unknown flag or missing value: ${t}`,
      missingValue: (f) => `Unknown flag or missing value: ${f}`,
    });
    const [sessionId, mode, requirements] = args.positionals as [string, string, string];
    if (sessionId.trim() === '') throw invalid('session_id cannot be empty');
    if (mode !== 'simple' && mode !== 'parallel') throw invalid(`Invalid mode: ${mode}. Must be 'simple' or 'parallel'`);
    if (requirements.trim() === '') throw invalid('requirements cannot be empty');
    let metadata = args.values.get('--metadata') ?? null;
    let parsedMetadata: unknown;
    if (metadata !== null) {
      try {
        parsedMetadata = JSON.parse(metadata);
      } catch {
        throw invalid('metadata must be a JSON object');
      }
      if (parsedMetadata === null || typeof parsedMetadata !== 'object' || Array.isArray(parsedMetadata)) throw invalid('metadata must be a JSON object');
    }
    rejectSecret('session_id', sessionId);
    const redactor = ctx.redactor();
    const storedRequirements = redactor.text(requirements);
    const initialBranch = redactor.text(args.values.get('--initial_branch') ?? 'main');
    if (metadata !== null) {
      // Stored as written unless a value had to go; then re-serialised from the redacted object.
      const redacted = redactor.json(parsedMetadata);
      if (JSON.stringify(redacted) !== JSON.stringify(parsedMetadata)) metadata = pyJsonDumps(redacted);
    }
    const db = ctx.db();
    return writeTransaction(db, () => {
      const existing = findSession(db, sessionId);
      if (existing) {
        const { mode: m, status, start_time, created_at } = existing;
        return { success: true, existing: true, session_id: sessionId, mode: m, status, start_time, created_at };
      }
      insertSession(db, { sessionId, mode, requirements: storedRequirements, initialBranch, metadata });
      const row = findSession(db, sessionId)!;
      return {
        success: true,
        session_id: sessionId,
        mode,
        status: 'active',
        start_time: row.start_time,
        created_at: row.created_at,
        initial_branch: row.initial_branch,
        metadata: row.metadata,
        existing: false,
      };
    });
  },
};

const getSession: Command = {
  name: 'get-session',
  synopsis: 'get-session <session_id>',
  flags: {},
  maxPositionals: 1,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-session requires <session_id>');
    rejectProblem(args);
    const row = findSession(ctx.db(), pos(args, 0));
    if (!row) throw notFound(`Session not found: ${pos(args, 0)}`);
    return row;
  },
};

const listSessionsCmd: Command = {
  name: 'list-sessions',
  synopsis: 'list-sessions [limit]',
  flags: {},
  maxPositionals: 1,
  run(args, ctx) {
    rejectProblem(args);
    const limit = args.positionals[0] === undefined ? 10 : parseInteger('limit', pos(args, 0));
    return listSessions(ctx.db(), limit);
  },
};

const updateSessionStatus: Command = {
  name: 'update-session-status',
  synopsis: 'update-session-status <session_id> <active|completed|failed>',
  flags: {},
  maxPositionals: 2,
  run(args, ctx) {
    const validStatuses = [...SESSION_STATUSES];
    if (args.positionals.length < 2) {
      throw usage('update-session-status requires <session_id> <status>', { valid_statuses: validStatuses });
    }
    rejectProblem(args);
    const [sessionId, status] = args.positionals as [string, string];
    if (!isOneOf(SESSION_STATUSES, status)) throw invalid(`Invalid status '${status}'`, { valid_statuses: validStatuses });
    const endTime = status === 'active' ? null : pythonLocalIsoNow();
    const db = ctx.db();
    writeTransaction(db, () => {
      if (setSessionStatus(db, sessionId, status, endTime) === 0) throw notFound(`Session not found: ${sessionId}`);
    });
    return { success: true, session_id: sessionId, status, end_time: endTime };
  },
};

const SPEC_BASE = 'bazinga/templates/specializations/';

/** Normalises one specialization path to `bazinga/templates/specializations/…`, or throws its reason. */
function normaliseSpecializationPath(p: string, projectRoot: string): string {
  const reject = (reason: string) => invalid(`Invalid specialization path: ${reason}`);
  if (!/^[A-Za-z0-9/_.-]*$/.test(p)) throw reject(`Path contains unsafe characters: ${p}`);
  if (p.includes('..')) throw reject(`Path traversal not allowed: ${p}`);
  let normalised: string;
  if (p.startsWith(SPEC_BASE)) normalised = p;
  else if (p.startsWith('templates/specializations/')) normalised = `bazinga/${p}`;
  else if (p.startsWith('specializations/')) normalised = SPEC_BASE + p.slice('specializations/'.length);
  else normalised = SPEC_BASE + p.replace(/^\/+/, '');
  const base = resolveLikePython(SPEC_BASE, projectRoot);
  const resolved = resolveLikePython(normalised, projectRoot);
  if (resolved !== base && !isStrictlyInside(resolved, base)) throw reject(`Path escapes allowed directory: ${p}`);
  return normalised;
}

const createTaskGroup: Command = {
  name: 'create-task-group',
  synopsis:
    'create-task-group <group_id> <session_id> <name> [status] [assigned_to] [--specializations JSON] [--item_count N] [--component_path P] [--initial_tier T] [--complexity N]',
  flags: {
    '--specializations': 'value',
    '--item_count': 'value',
    '--component_path': 'value',
    '--initial_tier': 'value',
    '--complexity': 'value',
  },
  maxPositionals: 5,
  run(args, ctx) {
    const specsText = args.values.get('--specializations');
    let specializations: string[] | undefined;
    if (specsText !== undefined) {
      const parsed = parseJsonOrThrow(specsText, 'Invalid JSON for --specializations: ');
      if (!Array.isArray(parsed)) throw invalid('--specializations must be a JSON array');
      if (!parsed.every((s) => typeof s === 'string')) throw invalid('--specializations array must contain only strings');
      specializations = parsed as string[];
    }
    const itemCountText = args.values.get('--item_count');
    let itemCount: number | undefined;
    if (itemCountText !== undefined) {
      if (!/^\s*[+-]?[0-9]+\s*$/.test(itemCountText)) throw invalid('--item_count must be a valid integer');
      itemCount = Number(itemCountText.trim());
      if (itemCount < 1) throw invalid('--item_count must be a positive integer');
    }
    const initialTier = args.values.get('--initial_tier');
    if (initialTier !== undefined && !isOneOf(INITIAL_TIERS, initialTier)) {
      throw invalid(`--initial_tier must be one of ${pyTuple(INITIAL_TIERS)}, got '${initialTier}'`);
    }
    const complexityText = args.values.get('--complexity');
    let complexity: number | undefined;
    if (complexityText !== undefined) {
      if (!/^\s*[+-]?[0-9]+\s*$/.test(complexityText)) throw invalid('--complexity must be a valid integer');
      complexity = Number(complexityText.trim());
      if (complexity < 1 || complexity > 10) throw invalid('--complexity must be between 1 and 10');
    }
    const synopsis = '<group_id> <session_id> <name>';
    requirePositionals(args, 3, `create-task-group requires at least 3 args: ${synopsis}`);
    rejectProblem(args, {
      unexpected: () => `create-task-group accepts at most 5 positional args: ${synopsis} [status] [assigned_to]`,
    });
    const [groupId, sessionId, name, status, assignedTo] = args.positionals as [string, string, string, string?, string?];
    validateTaskGroupId(groupId);
    if (status !== undefined && !isOneOf(TASK_GROUP_STATUSES, status)) {
      throw invalid(`Invalid status: ${status}. Must be one of: ${TASK_GROUP_STATUSES.join(', ')}`);
    }
    const redactor = ctx.redactor();
    let specializationsJson: string | undefined;
    if (specializations !== undefined) {
      const root = ctx.paths().projectRoot;
      specializationsJson = pyJsonDumps(specializations.map((p) => redactor.text(normaliseSpecializationPath(p, root))));
    }
    const componentPath = args.values.get('--component_path');
    const db = ctx.db();
    return writeTransaction(db, () => {
      if (!sessionExists(db, sessionId)) throw notFound(`Session not found: ${sessionId}`);
      upsertTaskGroup(db, {
        id: groupId,
        sessionId,
        name: redactor.text(name),
        status,
        assignedTo: assignedTo === undefined ? undefined : redactor.text(assignedTo),
        specializations: specializationsJson,
        itemCount,
        componentPath: componentPath === undefined ? undefined : redactor.text(componentPath),
        initialTier,
        complexity,
      });
      return { success: true, task_group: findTaskGroup(db, groupId, sessionId) };
    });
  },
};

const getTaskGroups: Command = {
  name: 'get-task-groups',
  synopsis: 'get-task-groups <session_id> [status]',
  flags: {},
  maxPositionals: 2,
  run(args, ctx) {
    requirePositionals(args, 1, 'get-task-groups requires <session_id>');
    rejectProblem(args);
    return listTaskGroups(ctx.db(), pos(args, 0), args.positionals[1] ?? null);
  },
};

const updateContextReferences: Command = {
  name: 'update-context-references',
  synopsis: 'update-context-references <group_id> <session_id> <package_ids_json>',
  flags: {},
  maxPositionals: 3,
  run(args, ctx) {
    const message = 'update-context-references requires 3 args: <group_id> <session_id> <package_ids_json>';
    requirePositionals(args, 3, message);
    rejectProblem(args);
    const [groupId, sessionId, idsText] = args.positionals as [string, string, string];
    const ids = parseJsonOrThrow(idsText, 'Invalid package_ids argument: ');
    if (!Array.isArray(ids) || !ids.every((v) => typeof v === 'number' && Number.isInteger(v))) {
      throw invalid('Invalid package_ids argument: package_ids must be a JSON array of integers');
    }
    validateTaskGroupId(groupId);
    const db = ctx.db();
    writeTransaction(db, () => {
      if (setContextReferences(db, groupId, sessionId, pyJsonDumps(ids)) === 0) {
        throw notFound(`No task group found with id='${groupId}' and session_id='${sessionId}'`);
      }
    });
    return { success: true, group_id: groupId, session_id: sessionId, context_references: ids };
  },
};

export const sessionCommands: Command[] = [
  createSession,
  getSession,
  listSessionsCmd,
  updateSessionStatus,
  createTaskGroup,
  getTaskGroups,
  updateContextReferences,
];

