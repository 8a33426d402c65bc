/** Input checks shared by the commands; each throws a VALIDATION BazingaError naming the problem. */
import { invalid } from './errors.ts';
import { RESERVED_TASK_GROUP_IDS } from './enums.ts';
import { redact } from './redact.ts';

const INTEGER_RE = /^\s*[+-]?[0-9]+\s*$/;

/**
 * The one integer parser of both skills: an optional sign plus ASCII digits (blanks around
 * allowed), or `<name> must be an integer, got '<v>'`; below `min`, `<name> must be >= <min>, got <n>`.
 */
export function parseInteger(name: string, value: string, min?: number): number {
  if (!INTEGER_RE.test(value)) throw invalid(`${name} must be an integer, got '${value}'`);
  const n = Number(value.trim());
  if (!Number.isSafeInteger(n)) throw invalid(`${name} must be an integer, got '${value}'`);
  if (min !== undefined && n < min) throw invalid(`${name} must be >= ${min}, got ${n}`);
  return n;
}

/** How many packages one request may ask for. */
export const MAX_LIMIT = 50;

/** The one limit rule of both skills: an integer from 1 to MAX_LIMIT, or `<name> must be between 1 and 50 (got <n>)`. */
export function parseLimit(name: string, value: string): number {
  const n = parseInteger(name, value);
  if (n < 1 || n > MAX_LIMIT) throw invalid(`${name} must be between 1 and ${MAX_LIMIT} (got ${n})`);
  return n;
}

/** F1: an empty group id means session-wide. */
export function groupOrGlobal(groupId: string): string {
  return groupId === '' ? 'global' : groupId;
}

const GROUP_ID_RE = /^[A-Za-z0-9_-]+$/;

/** The base group-id check: not blank, at most 64 characters, `[A-Za-z0-9_-]` only. */
export function validateGroupId(groupId: string): void {
  if (groupId.trim() === '') throw invalid('group_id cannot be empty');
  const length = Array.from(groupId).length;
  if (length > 64) throw invalid(`group_id too long (max 64 chars, got ${length})`);
  if (!GROUP_ID_RE.test(groupId)) throw invalid('group_id must be alphanumeric with underscores/hyphens only');
}

/** The base check plus: `global` (any case) is refused. */
export function validateGroupOnly(groupId: string): void {
  validateGroupId(groupId);
  if (groupId.toLowerCase() === 'global') {
    throw invalid("group_id cannot be 'global' for this operation (must be group-specific)");
  }
}

/** The base check plus: reserved ids (global, session, all, default, any case) are refused. */
export function validateTaskGroupId(groupId: string): void {
  validateGroupId(groupId);
  if ((RESERVED_TASK_GROUP_IDS as readonly string[]).includes(groupId.toLowerCase())) {
    throw invalid(`'${groupId}' is a reserved identifier and cannot be used as a task group ID`);
  }
}

/** Agent names are compared trimmed and lower-cased. */
export function normaliseAgent(agent: string): string {
  return agent.trim().toLowerCase();
}

/** A JSON type name as Python would call it, for messages. */
export function pyTypeName(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    default:
      return 'dict';
  }
}

/** Parses JSON, returning the value or throwing VALIDATION `<prefix><parser detail>`. */
export function parseJsonOrThrow(text: string, prefix: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalid(`${prefix}${(err as Error).message}`);
  }
}

const PATTERNS_ONLY = { mode: 'pattern_only', allowlist: [] } as const;

/**
 * Identifiers (session, group, project and strategy ids) are stored as given, since later calls
 * look rows up by them; one that holds a known secret format is refused instead of stored.
 */
export function rejectSecret(field: string, value: string): void {
  const rules = Object.keys(redact(value, PATTERNS_ONLY).hits);
  if (rules.length > 0) throw invalid(`${field} holds a secret (rule ${rules.join(', ')}); use an identifier without it`);
}
