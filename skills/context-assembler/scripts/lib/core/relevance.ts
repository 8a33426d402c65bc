/**
 * Relevance and scope: what the agent is working on, turned into signals in [0, 1]. Pure.
 *
 * - The query is the request's `--task` text, or, without it, the implicit task the database
 *   already holds: the task group's name, component path and specializations, the passages of
 *   the session's requirements that name the group (core/groupTask.ts; all of them for a
 *   session-wide spawn) and, on a retry, the summary of the group's latest failures report.
 * - BM25 (unbounded; SQLite returns it negated) becomes relevance by dividing each hit's score by
 *   the best score in the same request (`normaliseBm25`): the best match is 1, a non-match 0.
 * - A path falls under a scope when the scope's segments occur in it as consecutive whole segments
 *   (`src/auth` covers `src/auth/jwt.ts`, `./src/auth/` and `packages/api/src/auth/x.ts`, never
 *   `src/authz/x.ts`).
 */
import { pathsInText } from '../../../../bazinga-db/scripts/lib/pure.ts';

export interface ImplicitTaskInput {
  groupName: string | null;
  componentPath: string | null;
  /** Specialization paths or names (`bazinga/templates/specializations/typescript.md`). */
  specializations: readonly string[];
  /** The spawn's share of the session's requirements: the group's passages, or all for a session-wide spawn. */
  requirements: string | null;
  /** Summary of the group's latest failures package; only used on a retry. */
  latestFailures: string | null;
  iteration: number;
}

/** The implicit task: what the database says this agent works on, as one text. */
export function implicitTask(input: ImplicitTaskInput): string {
  const specs = input.specializations.map((s) => s.split('/').pop()?.replace(/\.[A-Za-z0-9]+$/, '') ?? '');
  // Most specific first: the query keeps only its first terms when the text is long.
  const parts = [input.groupName, input.componentPath, input.iteration > 0 ? input.latestFailures : null, specs.join(' '), input.requirements];
  return parts
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .map((p) => p.trim())
    .join('\n');
}

/**
 * The strings of a stored JSON list (a task group's specializations, a reasoning entry's
 * references); anything else, read leniently, is no list.
 */
export function parseStringList(json: unknown): string[] {
  if (typeof json !== 'string' || json.trim() === '') return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];
  } catch {
    return [];
  }
}

/** BM25 hits (lower is better) to relevance in [0, 1] relative to the best hit of the request. */
export function normaliseBm25<K>(hits: readonly { key: K; bm25: number }[]): Map<K, number> {
  let best = 0;
  for (const h of hits) best = Math.max(best, -h.bm25);
  const out = new Map<K, number>();
  for (const h of hits) out.set(h.key, best > 0 ? Math.max(0, -h.bm25) / best : 0);
  return out;
}

/**
 * Relevance from per-term matches over a small collection: each matching term adds its IDF,
 * ln(1 + (N − df + 0.5) / (df + 0.5)), which stays positive however common the term is; the sum is
 * divided by the best item's sum. Items matching no term are absent.
 */
export function termScores<K>(perTerm: readonly (readonly K[])[], total: number): Map<K, number> {
  const sums = new Map<K, number>();
  for (const ids of perTerm) {
    const unique = new Set(ids);
    if (unique.size === 0) continue;
    const idf = Math.log(1 + (Math.max(total, unique.size) - unique.size + 0.5) / (unique.size + 0.5));
    for (const id of unique) sums.set(id, (sums.get(id) ?? 0) + idf);
  }
  let best = 0;
  for (const v of sums.values()) best = Math.max(best, v);
  const out = new Map<K, number>();
  for (const [k, v] of sums) out.set(k, best > 0 ? v / best : 0);
  return out;
}

/** Words too common in a task to tell items apart. */
const STOP_WORDS = new Set(
  ('the and for with that this from into when then than not but are was were has have had its our your their his her will would should could can may might must all any each per via use used using add adds added fix fixes fixed make makes made get gets set sets new old one two also only just more most less some such what which who how why where there here them they you out off yet ' +
    // The words of any error: they tell no error from another.
    'error errors failed failure fails exception uncaught unexpected unknown cannot found line').split(' '),
);

/** The words of a text that can match: lower-cased runs of letters and digits of 3 or more, stop words left out. */
export function wordsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]{3,}/gu)) if (!STOP_WORDS.has(m[0])) out.add(m[0]);
  return out;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Whether `lowered` (a lower-cased text) holds `word` (one of wordsOf's words) as a whole word:
 * exactly what `wordsOf(text).has(word)` says, found by searching for the word instead of
 * splitting the whole text into words (a project's few hundred patterns on every call).
 */
export function holdsWord(lowered: string, word: string): boolean {
  for (let at = lowered.indexOf(word); at !== -1; at = lowered.indexOf(word, at + 1)) {
    // The characters around it (whole code points) are not letters or digits.
    let before = at - 1;
    if (before > 0 && isLowSurrogate(lowered.charCodeAt(before)) && isHighSurrogate(lowered.charCodeAt(before - 1))) before--;
    if (before >= 0 && WORD_CHAR.test(String.fromCodePoint(lowered.codePointAt(before) as number))) continue;
    const after = at + word.length;
    if (after < lowered.length && WORD_CHAR.test(String.fromCodePoint(lowered.codePointAt(after) as number))) continue;
    return true;
  }
  return false;
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * Relevance of a few hundred rows read whole (a project's error patterns and strategies), without
 * the full-text index: the query's first `maxTerms` words each count once per item that holds
 * them, scored as termScores does; items sharing no word are absent.
 */
export function wordScores<K>(query: string | null, items: readonly { key: K; text: string }[], maxTerms = Infinity): Map<K, number> | undefined {
  if (query === null) return undefined;
  // The query's first words, as the index's query keeps them (the most specific text comes first).
  const terms = [...wordsOf(query)].slice(0, maxTerms);
  if (terms.length === 0) return undefined;
  const lowered = items.map((i) => ({ key: i.key, text: i.text.toLowerCase() }));
  return termScores(terms.map((t) => lowered.filter((i) => holdsWord(i.text, t)).map((i) => i.key)), items.length);
}

/** How many distinct words of the query (its first `maxTerms`) each item holds; items holding none are absent. */
export function wordMatches<K>(query: string | null, items: readonly { key: K; text: string }[], maxTerms = Infinity): Map<K, number> {
  const out = new Map<K, number>();
  if (query === null) return out;
  const terms = [...wordsOf(query)].slice(0, maxTerms);
  for (const item of items) {
    const text = item.text.toLowerCase();
    const n = terms.filter((t) => holdsWord(text, t)).length;
    if (n > 0) out.set(item.key, n);
  }
  return out;
}

/** The segments of a path: `./src\\auth/` → [src, auth]. */
function pathSegments(p: string): string[] {
  return p.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
}

/** A comma-separated scope list (`--scope src/auth,src/api`) as segment lists; empty entries dropped. */
export function parseScope(text: string): string[][] {
  return text
    .split(',')
    .map((s) => pathSegments(s.trim()))
    .filter((segs) => segs.length > 0);
}

/** True when `segments` occur in `path`'s segments consecutively, as whole segments. */
export function underScope(path: string, scope: readonly string[]): boolean {
  const segs = pathSegments(path);
  outer: for (let i = 0; i + scope.length <= segs.length; i++) {
    for (let j = 0; j < scope.length; j++) if (segs[i + j] !== scope[j]) continue outer;
    return true;
  }
  return false;
}

/** True when the text names a path under any of the scopes. */
function textTouchesScope(text: string, scopes: readonly string[][]): boolean {
  // A path under a scope holds the scope's last segment: a text without any of them names none.
  const named = scopes.filter((s) => s.length === 0 || text.includes(s[s.length - 1] as string));
  if (named.length === 0) return false;
  return pathsInText(text).some((p) => named.some((s) => underScope(p, s)));
}

/** Scope signal of an item: 1 when its own path, a path in its text, or its group's component path falls under a scope. */
export function scopeSignal(item: { paths: readonly string[]; texts: readonly string[] }, scopes: readonly string[][]): 0 | 1 {
  if (scopes.length === 0) return 0;
  if (item.paths.some((p) => p !== '' && scopes.some((s) => underScope(p, s)))) return 1;
  return item.texts.some((t) => textTouchesScope(t, scopes)) ? 1 : 0;
}

const MARKED = /\u0001([^\u0002]*)\u0002/g;

/**
 * The distinct matched words in text that FTS5's highlight() marked with \u0001…\u0002, lower-cased,
 * in order. Looked for up to the last \u0002 only (no mark ends after it): a \u0001 the text itself
 * holds would otherwise scan to its end, each one.
 */
export function markedTerms(highlighted: string): string[] {
  const out = new Set<string>();
  for (const m of highlighted.slice(0, highlighted.lastIndexOf('\u0002') + 1).matchAll(MARKED)) {
    const t = (m[1] ?? '').toLowerCase();
    if (t !== '') out.add(t);
  }
  return [...out];
}
