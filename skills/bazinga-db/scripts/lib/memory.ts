/**
 * Project memory, the pure part: the four memory types and their structured content (checked at
 * the edge, naming the field and what it allows), the normalised text a memory is compared by, the
 * near-duplicate measure, how a near duplicate merges, the search score, and the lifecycle rules.
 * The database side is repo/memories.ts; the commands are commands/memory.ts, summarise.ts and rehydrate.ts.
 */
import { createHash } from 'node:crypto';
import { invalid } from './errors.ts';
import { shorten } from './shown.ts';

export const MEMORY_TYPES = ['decision', 'issue', 'state', 'learning'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export const ISSUE_STATUSES = ['open', 'investigating', 'resolved'] as const;

type FieldKind = 'text' | 'list' | 'percent' | { oneOf: readonly string[] };

/** The content fields of each type; the first one is required. */
export const CONTENT_FIELDS: Readonly<Record<MemoryType, Readonly<Record<string, FieldKind>>>> = {
  decision: { decision: 'text', rationale: 'text', alternatives: 'list', expected_impact: 'text', validation_criteria: 'text' },
  issue: {
    description: 'text',
    severity: { oneOf: SEVERITIES },
    reproduction: 'text',
    status: { oneOf: ISSUE_STATUSES },
    attempted_fixes: 'list',
    next_actions: 'list',
  },
  state: { task: 'text', completion: 'percent', done: 'list', remaining: 'list', blockers: 'list', next_actions: 'list' },
  learning: { lesson: 'text', context: 'text', applicability: 'text', evidence: 'text' },
};

/** Defaults filled in when a field is absent. */
const DEFAULTS: Readonly<Record<MemoryType, Record<string, unknown>>> = {
  decision: { alternatives: [] },
  issue: { severity: 'medium', status: 'open', attempted_fixes: [], next_actions: [] },
  state: { done: [], remaining: [], blockers: [], next_actions: [] },
  learning: {},
};

export type MemoryContent = Record<string, string | number | string[]>;

export const TITLE_MAX_CHARS = 100;

/**
 * The content checked against its type: an object of the type's fields only, the first one a
 * non-empty text, lists of texts, a completion of 0–100, enumerations from their values.
 * `redact` is applied to every text. A problem is VALIDATION naming the field. Only the fields
 * given are returned (withDefaults adds the rest): a merge must tell what was said from a default.
 */
export function checkContent(type: MemoryType, value: unknown, redact: (text: string) => string): MemoryContent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(`content must be a JSON object with the ${type} fields: ${Object.keys(CONTENT_FIELDS[type]).join(', ')}`);
  const fields = CONTENT_FIELDS[type];
  const out: MemoryContent = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    // Own fields only: a key such as __proto__ or constructor names no field (it would find Object's).
    const kind = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (kind === undefined) throw invalid(`content.${key} is not a ${type} field; the ${type} fields are: ${Object.keys(fields).join(', ')}`);
    if (raw === null || raw === undefined) continue;
    if (kind === 'text') {
      if (typeof raw !== 'string') throw invalid(`content.${key} must be a string, got ${JSON.stringify(raw).slice(0, 40)}`);
      if (raw.trim() !== '') out[key] = redact(raw.trim());
    } else if (kind === 'list') {
      const list = typeof raw === 'string' ? [raw] : raw;
      if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw invalid(`content.${key} must be a list of strings`);
      out[key] = list.map((x) => redact(x.trim())).filter((x) => x !== '');
    } else if (kind === 'percent') {
      if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw > 100) throw invalid(`content.${key} must be an integer from 0 to 100, got ${JSON.stringify(raw)}`);
      out[key] = raw;
    } else {
      if (typeof raw !== 'string' || !kind.oneOf.includes(raw)) throw invalid(`content.${key} must be one of ${kind.oneOf.join(', ')}, got ${JSON.stringify(raw)}`);
      out[key] = raw;
    }
  }
  const first = Object.keys(fields)[0] as string;
  if (typeof out[first] !== 'string') throw invalid(`content.${first} is required for a ${type} memory`);
  return out;
}

/** The content with the type's defaults for what it does not give (what is stored for a new memory). */
export function withDefaults(type: MemoryType, content: MemoryContent): MemoryContent {
  return { ...DEFAULTS[type], ...content } as MemoryContent;
}

/** The memory as one text: title, then each content field's value (lists joined), in field order. */
export function memoryText(type: MemoryType, title: string, content: MemoryContent): string {
  const parts = [title];
  for (const key of Object.keys(CONTENT_FIELDS[type])) {
    const v = content[key];
    if (v === undefined) continue;
    parts.push(Array.isArray(v) ? v.join('; ') : String(v));
  }
  return parts.filter((p) => p !== '').join('\n');
}

/**
 * The text two memories are compared by: lower case, ISO dates and times removed (the seed's
 * normalisation: a re-saved memory differs only in when), every run of non-letters and
 * non-digits one space.
 */
export function normaliseMemoryText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\d{4}-\d{2}-\d{2}(?:[t ][\d:.]+z?)?/g, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export function memoryHash(normalised: string): string {
  return createHash('sha256').update(normalised).digest('hex');
}

/** The character trigrams of a normalised text, counted. */
function trigrams(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const chars = Array.from(` ${text} `);
  for (let i = 0; i + 3 <= chars.length; i++) {
    const g = chars.slice(i, i + 3).join('');
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

/**
 * How alike two normalised texts are, 0–1: the Dice coefficient of their character trigrams
 * (2 × shared / total, counts included). Linear in the texts, deterministic, and close to a
 * sequence ratio for texts that differ by a few words.
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const ta = trigrams(a);
  const tb = trigrams(b);
  let shared = 0;
  let total = 0;
  for (const n of ta.values()) total += n;
  for (const n of tb.values()) total += n;
  for (const [g, n] of ta) shared += Math.min(n, tb.get(g) ?? 0);
  return total === 0 ? 0 : (2 * shared) / total;
}

/**
 * A near duplicate merged into the memory it resembles, `incoming` holding only the fields the
 * newer save gave: a text or an enumeration it gives is the newer statement and replaces the kept
 * one (an issue saved again with "status": "resolved" is resolved; a lesson restated is the
 * restatement), lists gain the new entries, the higher completion is kept; what it does not give
 * stays as it was.
 */
export function mergeContent(type: MemoryType, kept: MemoryContent, incoming: MemoryContent): MemoryContent {
  const out: MemoryContent = { ...kept };
  for (const [key, kind] of Object.entries(CONTENT_FIELDS[type])) {
    const a = kept[key];
    const b = incoming[key];
    if (b === undefined) continue;
    if (kind === 'list') out[key] = [...new Set([...((a as string[] | undefined) ?? []), ...(b as string[])])];
    else if (kind === 'percent') out[key] = Math.max(Number(a ?? 0), Number(b));
    else out[key] = b;
  }
  return out;
}

/** The search score's weights (context_engineering.memory.search_weights) and its scales. */
export interface SearchWeights {
  text: number;
  importance: number;
  recency: number;
  access: number;
}

export const DEFAULT_SEARCH_WEIGHTS: SearchWeights = { text: 0.4, importance: 0.25, recency: 0.2, access: 0.15 };
/** Recency decays as 1 / (1 + days / RECENCY_DAYS); access counts up to ACCESS_CAP. */
export const RECENCY_DAYS = 30;
export const ACCESS_CAP = 10;

const DAY_MS = 86_400_000;

/**
 * A memory's standing for a search (the seed's weighting): text relevance (0–1), importance / 10,
 * recency 1 / (1 + days / 30), and access frequency min(count / 10, 1), each times its weight.
 */
export function searchScore(m: { importance: number; created_at: string; access_count: number }, textRelevance: number, nowMs: number, w: SearchWeights): number {
  const days = Math.max(0, (nowMs - sqliteMs(m.created_at)) / DAY_MS);
  return (
    w.text * textRelevance +
    w.importance * (m.importance / 10) +
    w.recency * (1 / (1 + days / RECENCY_DAYS)) +
    w.access * Math.min(m.access_count / ACCESS_CAP, 1)
  );
}

/** A stored time ('YYYY-MM-DD HH:MM:SS', UTC) in milliseconds. */
export function sqliteMs(time: string): number {
  return Date.parse(`${time.replace(' ', 'T')}${/[zZ]|[+-]\d\d:?\d\d$/.test(time) ? '' : 'Z'}`);
}

/** A time as stored: 'YYYY-MM-DD HH:MM:SS' in UTC. */
export function sqliteTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** A memory as the lifecycle rules see it. */
export interface LifecycleSubject {
  type: MemoryType;
  importance: number;
  status: string | null;
  created_at: string;
  archived_at: string | null;
  expires_at: string | null;
  access_count: number;
  superseded_by: number | null;
}

export interface LifecycleRule {
  action: 'archive' | 'delete';
  type: MemoryType | 'any';
  /** What the rule says, as maintenance prints it. */
  rule: string;
  applies: (m: LifecycleSubject, nowMs: number) => boolean;
}

const days = (time: string | null, nowMs: number) => (time === null ? 0 : (nowMs - sqliteMs(time)) / DAY_MS);

/**
 * The archival and deletion rules (the packing-and-memory seed's tables), in the order they are
 * tried: archiving applies to memories not archived, deletion to archived ones.
 */
export const LIFECYCLE_RULES: readonly LifecycleRule[] = [
  { action: 'archive', type: 'any', rule: 'past its expiry time', applies: (m, now) => m.expires_at !== null && sqliteMs(m.expires_at) <= now },
  { action: 'archive', type: 'any', rule: 'superseded by a newer memory', applies: (m) => m.superseded_by !== null },
  { action: 'archive', type: 'decision', rule: 'importance ≤ 5 and older than 90 days', applies: (m, now) => m.importance <= 5 && days(m.created_at, now) > 90 },
  { action: 'archive', type: 'issue', rule: 'resolved and older than 30 days', applies: (m, now) => m.status === 'resolved' && days(m.created_at, now) > 30 },
  { action: 'archive', type: 'learning', rule: 'never accessed and older than 180 days', applies: (m, now) => m.access_count === 0 && days(m.created_at, now) > 180 },
  { action: 'delete', type: 'decision', rule: 'importance ≤ 3 and archived more than 365 days', applies: (m, now) => m.importance <= 3 && days(m.archived_at, now) > 365 },
  { action: 'delete', type: 'issue', rule: 'resolved and archived more than 180 days', applies: (m, now) => m.status === 'resolved' && days(m.archived_at, now) > 180 },
  { action: 'delete', type: 'state', rule: 'superseded and older than 90 days', applies: (m, now) => m.superseded_by !== null && days(m.created_at, now) > 90 },
  { action: 'delete', type: 'learning', rule: 'never accessed and older than 365 days', applies: (m, now) => m.access_count === 0 && days(m.created_at, now) > 365 },
];

/** The first rule that applies to this memory now (archive rules for an active one, delete rules for an archived one). */
export function lifecycleRuleFor(m: LifecycleSubject, nowMs: number): LifecycleRule | undefined {
  const action = m.archived_at === null ? 'archive' : 'delete';
  return LIFECYCLE_RULES.find((r) => r.action === action && (r.type === 'any' || r.type === m.type) && r.applies(m, nowMs));
}

/** One memory as a line of the rehydration block (and of the assembler's Project Memory section). */
export function memoryLine(m: { id: number; type: MemoryType; title: string; importance: number; created_at: string; access_count: number; content: MemoryContent }): string {
  const c = m.content;
  const short = (v: unknown) => shorten(String(v ?? '').replace(/\s+/g, ' ').trim(), 300);
  const list = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v.map(short).join('; ') : '');
  const date = m.created_at.slice(0, 10);
  // A title that is the whole text (summarise-session makes such titles) is not said twice.
  const body = (v: unknown) => {
    const text = short(v);
    if (text === '' || text === m.title) return '';
    // A text that goes on from its title ("Error: x → fix") says only the rest.
    if (text.startsWith(m.title)) {
      const rest = text.slice(m.title.length).trim();
      return rest.startsWith('→') ? ` ${rest}` : `: ${rest.replace(/^[:;,.-]\s*/, '')}`;
    }
    return `: ${text}`;
  };
  const parts: string[] = [];
  switch (m.type) {
    case 'state':
      parts.push(`**${m.title}** (${c.completion ?? 0}%)${m.title.includes(short(c.task)) ? '' : body(c.task)}`);
      if (list(c.done)) parts.push(`done: ${list(c.done)}`);
      if (list(c.remaining)) parts.push(`remaining: ${list(c.remaining)}`);
      if (list(c.blockers)) parts.push(`blockers: ${list(c.blockers)}`);
      if (list(c.next_actions)) parts.push(`next: ${list(c.next_actions)}`);
      break;
    case 'decision':
      parts.push(`**${m.title}** (importance ${m.importance}, ${date})${body(c.decision)}`);
      if (c.rationale) parts.push(`why: ${short(c.rationale)}`);
      if (list(c.alternatives)) parts.push(`instead of: ${list(c.alternatives)}`);
      break;
    case 'issue':
      parts.push(`**[${String(c.severity ?? 'medium').toUpperCase()}] ${m.title}** (${c.status ?? 'open'} since ${date})${body(c.description)}`);
      if (list(c.attempted_fixes)) parts.push(`tried: ${list(c.attempted_fixes)}`);
      if (list(c.next_actions)) parts.push(`next: ${list(c.next_actions)}`);
      break;
    case 'learning':
      parts.push(`**${m.title}**${body(c.lesson)}`);
      if (c.applicability) parts.push(`applies to: ${short(c.applicability)}`);
      if (c.evidence) parts.push(`evidence: ${short(c.evidence)}`);
      break;
  }
  return `- ${parts.join('; ')} (memory ${m.id})`;
}

