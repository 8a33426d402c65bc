/** The argument rules the project memory commands share: types, ids, times, importance, tags. */
import { type DB } from '../statements.ts';
import { invalid, notFound } from '../errors.ts';
import { MEMORY_TYPES, sqliteTime, type MemoryType } from '../memory.ts';
import { hasMemoryTables } from '../repo/memories.ts';
import { parseInteger } from '../validate.ts';
import type { ParsedArgs } from '../args.ts';

export const isType = (t: string): t is MemoryType => (MEMORY_TYPES as readonly string[]).includes(t);

export function memoryType(value: string, field = 'type'): MemoryType {
  const t = value.trim().toLowerCase();
  if (!isType(t)) throw invalid(`${field} must be one of ${MEMORY_TYPES.join(', ')}, got '${value}'`);
  return t;
}

export function memoryId(value: string, field = 'memory_id'): number {
  return parseInteger(field, value, 1);
}

/** An ISO-8601 date (`2025-12-02`) or date-time (`2025-12-02T12:00:00Z`; no zone: UTC), years 1000–9999. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[zZ]|[+-]\d{2}:?\d{2})?)?$/;

/** An ISO-8601 text in milliseconds, or NaN (also for a day or time that does not exist: 2025-02-30, 24:00). A date alone is its midnight, or its last second with `endOfDay`. */
export function isoMs(text: string, endOfDay = false): number {
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
export function nowOf(args: ParsedArgs): { ms: number; time: string } {
  const text = args.values.get('--now');
  const ms = text === undefined ? Date.now() : isoMs(text);
  if (Number.isNaN(ms)) throw invalid(`--now must be an ISO-8601 date-time such as 2025-12-02T12:00:00Z, got '${text}'`);
  return { ms, time: sqliteTime(ms) };
}

/** An ISO-8601 date or date-time flag as a stored time (a date alone: its midnight, or its last second for --until). */
export function timeFlag(args: ParsedArgs, flag: string): string | null {
  const text = args.values.get(flag);
  if (text === undefined) return null;
  const ms = isoMs(text, flag === '--until');
  if (Number.isNaN(ms)) throw invalid(`${flag} must be an ISO-8601 date or date-time such as 2025-12-02 or 2025-12-02T12:00:00Z, got '${text}'`);
  return sqliteTime(ms);
}

export function importanceOf(args: ParsedArgs, fallback: number): number {
  const text = args.values.get('--importance');
  if (text === undefined) return fallback;
  const n = parseInteger('--importance', text, 1);
  if (n > 10) throw invalid(`--importance must be from 1 to 10, got ${n}`);
  return n;
}

export function tagsOf(args: ParsedArgs, redact: (t: string) => string): string[] {
  const text = args.values.get('--tags');
  if (text === undefined) return [];
  // Redacted as written, then lower-cased: a key's case is part of what the redactor recognises.
  return [...new Set(text.split(',').map((t) => redact(t.trim()).toLowerCase()).filter((t) => t !== ''))];
}

/** The read side of a memory command on a database with no memory tables yet: nothing to find. */
export function requireMemoryTables(db: DB, id?: number): void {
  if (!hasMemoryTables(db)) throw notFound(id === undefined ? 'No memories: this database has none yet (save-memory or summarise-session makes them)' : `Memory not found: ${id}`);
}
