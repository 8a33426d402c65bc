/**
 * The flags every context-assembler script accepts (same names everywhere), parsed and checked at
 * the edge. A bad value is a USAGE or VALIDATION BazingaError naming the flag, the value and what
 * is allowed; scripts exit 2 on it.
 */
import path from 'node:path';
import { describeRefusal, invalid, jsonErrorAt, parseInteger, parseLimit, readRegularFile, SPAWNED_AGENTS as AGENTS, usage, type SpawnedAgent as Agent } from '../../../bazinga-db/scripts/lib/index.ts';
import { REASONING_LEVELS, type AssemblyRequest, type ReasoningLevel } from './contract.ts';
import { PURPOSES, type Purpose } from './core/tiers.ts';

type Kind = 'string' | 'bool';

/** Flag name → kind. Booleans take no value. */
export const COMMON_FLAGS: Record<string, Kind> = {
  '--session': 'string',
  '--group': 'string',
  '--agent': 'string',
  '--model': 'string',
  '--current-tokens': 'string',
  '--iteration': 'string',
  '--limit': 'string',
  '--include-reasoning': 'string',
  '--reasoning-level': 'string',
  '--format': 'string',
  '--explain': 'bool',
  '--dry-run': 'bool',
  '--more': 'string',
  '--now': 'string',
  '--db': 'string',
  '--project-root': 'string',
  '--config': 'string',
  '--task': 'string',
  '--error': 'string',
  '--scope': 'string',
  '--lang': 'string',
  '--framework': 'string',
  '--purpose': 'string',
  '--params-file': 'string',
  '--help': 'bool',
};

/** The request flags: with a document piped in, these come from the document. */
export const REQUEST_FLAGS = [
  '--session', '--group', '--agent', '--model', '--current-tokens', '--iteration', '--limit',
  '--include-reasoning', '--reasoning-level', '--now', '--task', '--error', '--scope', '--lang', '--framework',
  '--purpose', '--params-file',
] as const;

export interface ParsedFlags {
  values: Map<string, string>;
  bools: Set<string>;
  positionals: string[];
}

/** Parses `--flag value`, `--flag=value` and boolean flags; anything unknown is a USAGE error. */
export function parseFlags(argv: readonly string[], flags: Record<string, Kind>, maxPositionals = 0): ParsedFlags {
  const out: ParsedFlags = { values: new Map(), bools: new Set(), positionals: [] };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '-h') {
      out.bools.add('--help');
      continue;
    }
    if (!token.startsWith('--')) {
      if (out.positionals.length >= maxPositionals) throw usage(`Unexpected argument '${token}'`);
      out.positionals.push(token);
      continue;
    }
    const eq = token.indexOf('=');
    const name = eq === -1 ? token : token.slice(0, eq);
    const kind = flags[name];
    if (kind === undefined) {
      throw usage(`Unknown flag '${name}'. Valid flags: ${Object.keys(flags).sort().join(', ')}`);
    }
    if (kind === 'bool') {
      if (eq !== -1) throw usage(`Flag '${name}' takes no value`);
      out.bools.add(name);
      continue;
    }
    const value = eq !== -1 ? token.slice(eq + 1) : argv[++i];
    if (value === undefined) throw usage(`Flag '${name}' requires a value`);
    out.values.set(name, value);
  }
  return out;
}

function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw invalid(`${flag} must be one of ${allowed.join(', ')}, got '${value}'`);
  }
  return value as T;
}

const GROUP_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** The model assumed when a call names none (`--model`, and the scripts that take no model: fetch, consume --ids). */
export const DEFAULT_MODEL = 'sonnet';

/** Builds the request from flags; `now` is the clock's reading when --now is absent. */
export function requestFromFlags(f: ParsedFlags, now: () => Date): AssemblyRequest {
  const v = (k: string) => f.values.get(k);
  const session = v('--session');
  if (session === undefined || session.trim() === '') throw usage('--session is required (the BAZINGA session id)');
  const agentText = v('--agent');
  if (agentText === undefined) throw usage(`--agent is required: one of ${AGENTS.join(', ')}`);
  const agent = oneOf<Agent>('--agent', agentText.trim().toLowerCase(), AGENTS);
  const rawGroup = (v('--group') ?? '').trim();
  const group = rawGroup === '' ? 'global' : rawGroup;
  if (!GROUP_RE.test(group)) throw invalid(`--group must be 1-64 of [A-Za-z0-9_-] (or empty/global for session-wide), got '${rawGroup}'`);
  const limitText = v('--limit');
  const limit = limitText === undefined ? null : parseLimit('--limit', limitText);
  const includeText = v('--include-reasoning');
  const include = includeText === undefined ? null : oneOf('--include-reasoning', includeText, ['true', 'false'] as const) === 'true';
  const nowText = v('--now');
  let nowIso: string;
  if (nowText === undefined) nowIso = now().toISOString();
  else {
    // A date-time without a zone designator is UTC (as SQLite's times are), never the machine's zone.
    const zoned = /(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(nowText) || !/\d{2}:\d{2}/.test(nowText) ? nowText : `${nowText}Z`;
    const ms = /^\d{4}-\d{2}-\d{2}/.test(nowText) ? Date.parse(zoned.replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T')) : NaN;
    if (Number.isNaN(ms)) throw invalid(`--now must be an ISO-8601 date-time such as 2025-12-02T12:00:00Z, got '${nowText}'`);
    nowIso = new Date(ms).toISOString();
  }
  const model = (v('--model') ?? DEFAULT_MODEL).trim();
  if (model === '') throw invalid("--model must be haiku, sonnet, opus or a model id, got ''");
  return {
    session: session.trim(),
    group,
    agent,
    model,
    current_tokens: parseInteger('--current-tokens', v('--current-tokens') ?? '0', 0),
    iteration: parseInteger('--iteration', v('--iteration') ?? '0', 0),
    limit,
    include_reasoning: include,
    reasoning_level: oneOf<ReasoningLevel>('--reasoning-level', v('--reasoning-level') ?? 'medium', REASONING_LEVELS),
    now: nowIso,
    task: optionalText(v('--task')),
    error: optionalText(v('--error')),
    scope: optionalText(v('--scope')),
    lang: v('--lang') ?? null,
    framework: v('--framework') ?? null,
    purpose: v('--purpose') === undefined ? null : oneOf<Purpose>('--purpose', (v('--purpose') as string).trim().toLowerCase(), PURPOSES),
    // Only an explicit expansion (the block's `+N more` line) leaves out what this spawn was given.
    ...(v('--more') !== undefined ? { more: parseIdList('--more', v('--more') as string) } : {}),
  };
}

/** Package ids as `3,5,12`: positive integers, at least one, each once. */
function parseIdList(flag: string, text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^[1-9][0-9]{0,15}$/.test(p))) throw invalid(`${flag} must be a comma-separated list of package ids such as 3,5,12, got '${text}'`);
  return [...new Set(parts.map(Number))];
}

/** Free text from the caller: blank means not given. */
function optionalText(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value;
}

export type OutputFormat = 'markdown' | 'json';

export function formatFromFlags(f: ParsedFlags, fallback: OutputFormat): OutputFormat {
  const value = f.values.get('--format');
  return value === undefined ? fallback : oneOf<OutputFormat>('--format', value, ['markdown', 'json']);
}

/** The params file of a spawn is a few kilobytes; anything past this is not one. */
export const PARAMS_FILE_MAX_BYTES = 1_000_000;

/**
 * The keys of today's BAZINGA params file (written before each spawn to
 * `bazinga/prompts/{session_id}/params_{agent_type}_{group_id}.json`) that a request uses, and
 * the flag each one stands for. A flag given on the command line wins over the file.
 */
export const PARAMS_FILE_KEYS = {
  required: { session_id: '--session', agent_type: '--agent' },
  optional: { group_id: '--group', model: '--model' },
  /** Joined (title, a blank line, requirements) into --task: the query of relevance. */
  task: ['task_title', 'task_requirements'],
  /** Joined into --error: what the last review found, for relevance and error patterns. */
  feedback: ['qa_feedback', 'tl_feedback'],
} as const;

/**
 * `flags` with the values of `--params-file` filled in where no flag gives them. Unknown keys are
 * ignored; a missing required key, a value of the wrong type, a file that is not a regular file or
 * not a JSON object is a VALIDATION error naming the file and the key. `iterationFromGroup` is
 * true when the iteration is to be the task group's revision count (no --iteration given): the
 * file has no iteration, and a retry must see its packages again; `retry` (review feedback in the
 * file) makes it at least 1 whatever the count says.
 */
export function withParamsFile(flags: ParsedFlags, cwd: string): { flags: ParsedFlags; iterationFromGroup: boolean; retry: boolean } {
  const given = flags.values.get('--params-file');
  if (given === undefined) return { flags, iterationFromGroup: false, retry: false };
  const file = path.resolve(cwd, given);
  // Regular files only, checked without blocking, never read past the cap (a FIFO, /dev/zero).
  const read = readRegularFile(file, PARAMS_FILE_MAX_BYTES);
  if (!read.ok) throw invalid(`--params-file ${file}: ${describeRefusal(read.refusal)}`);
  const json = read.bytes.toString('utf8');
  let params: unknown;
  try {
    params = JSON.parse(json);
  } catch {
    // Where, never what: a file that is not a params file is not quoted.
    throw invalid(`--params-file ${file}: not valid JSON${jsonErrorAt(json)}`);
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) throw invalid(`--params-file ${file}: must hold a JSON object`);
  const p = params as Record<string, unknown>;
  const text = (key: string): string | undefined => {
    const value = p[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw invalid(`--params-file ${file}: '${key}' must be a string, got ${JSON.stringify(value).slice(0, 40)}`);
    return value.trim() === '' ? undefined : value;
  };
  const values = new Map(flags.values);
  values.delete('--params-file');
  const fill = (flag: string, value: string | undefined) => {
    if (value !== undefined && !values.has(flag)) values.set(flag, value);
  };
  for (const [key, flag] of Object.entries(PARAMS_FILE_KEYS.required)) {
    const value = text(key);
    if (value === undefined && !values.has(flag)) throw invalid(`--params-file ${file}: '${key}' is required (or pass ${flag})`);
    fill(flag, value);
  }
  for (const [key, flag] of Object.entries(PARAMS_FILE_KEYS.optional)) fill(flag, text(key));
  const joined = (keys: readonly string[]) => {
    const parts = keys.map(text).filter((t): t is string => t !== undefined);
    return parts.length === 0 ? undefined : parts.join('\n\n');
  };
  fill('--task', joined(PARAMS_FILE_KEYS.task));
  const feedback = joined(PARAMS_FILE_KEYS.feedback);
  fill('--error', feedback);
  return { flags: { ...flags, values }, iterationFromGroup: !values.has('--iteration'), retry: feedback !== undefined };
}
