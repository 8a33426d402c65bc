/**
 * Text for the full-text index and queries against it. Pure.
 *
 * The index's tokenizer (`SEARCH_TOKENIZER`) splits on everything that is not a letter or a
 * digit, so `better-sqlite3`, `src/auth/jwt.ts`, `@/utils` and `get_queryset` are already found by
 * their parts, and quoting the whole as a phrase finds the exact sequence. What it cannot see is
 * the inside of a camelCase word: `refreshToken` is one token. `indexableText` appends the parts of
 * every such word, so `refresh token` finds `refreshToken`, and the query side asks for both the
 * whole and its parts.
 *
 * Agent text is never handed to MATCH as it is: FTS5 has a query syntax (`NOT`, `:`, `-`, `*`,
 * quotes, parentheses) that raw text trips over. `buildMatch` keeps only letters, digits and the
 * separators inside identifiers, quotes every term and joins them with OR.
 */
import { codePointCount, withoutEndRun } from './textScan.ts';

/**
 * The FTS5 tokenizer of every `ca_fts_*` table, chosen by measurement on the labelled relevance set
 * (skills/context-assembler/references/relevance.md): unicode61 with diacritics folded, no stemming. Its tokens are the
 * lower-cased, folded letter/digit runs of the text, which `searchToken` reproduces, so a query
 * term's document frequency can be looked up before it is asked for.
 */
export const SEARCH_TOKENIZER = 'unicode61 remove_diacritics 2';

/**
 * A piece as the index's tokenizer stores it: lower case, the diacritics of Latin letters removed
 * (only the combining diacritical marks, so Hangul syllables and kana voicing marks survive the
 * round trip through NFD and NFC, as they do in unicode61).
 */
export function searchToken(piece: string): string {
  return /^[\x00-\x7f]*$/.test(piece) ? piece.toLowerCase() : piece.normalize('NFD').replace(/[\u0300-\u036f]/g, '').normalize('NFC').toLowerCase();
}

/** The runs unicode61 makes tokens of: letters, digits and private-use characters. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

/** The tokens of a text as unicode61 makes them (ASCII text, the common case, takes a shortcut). */
function tokensOf(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return (text.match(TOKEN) ?? []).map(searchToken);
}

/** Adds each distinct token of `text` once to `counts` (document frequencies, kept by the indexer). */
export function countTokens(text: string, counts: Map<string, number>, seen = new Set<string>()): void {
  for (const t of tokensOf(text)) {
    if (seen.has(t)) continue;
    seen.add(t);
    counts.set(t, (counts.get(t) ?? 0) + 1);
  }
}

/** Words too common in agent prose to say anything about a task; never asked for. */
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'just let may me might must my no nor not of off on once only or our out over own same should so some such ' +
    'than that the their them then there these they this those through to too under until up very was we were ' +
    'what when where which while who whom why will with would you your all any both each few more most other ' +
    'also again against about above after before below between during further here per via use using used make ' +
    'sure need needs get got still now new one two fix fixes fixed issue issues work works task please'
  ).split(' '),
);

/**
 * A task's query leaves out more (planTextQuery): a task's verbs of change and the words of any
 * error tell no task, and no error, from another (the learning matcher's list, core/relevance.ts,
 * leaves them out too). A memory search keeps them: asked for `error`, it finds the memories that say it.
 */
export const TASK_STOPWORDS = new Set([
  ...STOPWORDS,
  ...'add adds added made makes gets set sets old less yet his her error errors failed fails failure exception uncaught unexpected unknown cannot found line'.split(' '),
]);

/** What redaction leaves where a secret was (`[REDACTED:jwt]`, `password=REDACTED`, `GITHUB_TOKEN_REDACTED`). */
const REDACTION_MARKER = /\[REDACTED(?::[^\]]*)?\]|\b[A-Z_]*REDACTED\b/g;
/** The markers without a bracket: all there can be after the text's last `]`. */
const REDACTED_WORD = /\b[A-Z_]*REDACTED\b/g;

/**
 * The text without redaction markers: they are no words of the task, and every redacted item
 * shares them. After the last `]` no bracketed marker can end, so only the bare ones are looked
 * for there: each `[REDACTED:` would otherwise scan to the end of the text for a `]` (quadratic).
 */
function withoutRedactionMarkers(text: string): string {
  if (!text.includes('REDACTED')) return text;
  const end = text.lastIndexOf(']') + 1;
  return text.slice(0, end).replace(REDACTION_MARKER, ' ') + text.slice(end).replace(REDACTED_WORD, ' ');
}

/** A run of identifier characters: letters, digits and the joiners code uses inside names and paths. */
const RAW_TERM = /[\p{L}\p{N}]+(?:[._\-/@:+#]*[\p{L}\p{N}]+)*/gu;
/** The letter/digit pieces of a term, as the tokenizer will see them. */
const PIECE = /[\p{L}\p{N}]+/gu;
/** A quick test for any camelCase boundary at all (most prose has none); ASCII text takes the plain forms. */
const HAS_CAMEL = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u;
const HAS_CAMEL_ASCII = /[a-z][A-Z]|[A-Z][A-Z][a-z]/;
const PIECE_ASCII = /[A-Za-z0-9]+/g;
const ASCII = /^[\x00-\x7f]*$/;
/** Boundaries inside camelCase and PascalCase: `refreshToken`, `HTTPServer`, `useCartStore2`. */
const CAMEL = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

const isLower = (c: number) => c >= 97 && c <= 122;
const isUpper = (c: number) => c >= 65 && c <= 90;

/** The camelCase parts of one letter/digit piece, or [] when it has none. */
export function camelParts(piece: string): string[] {
  if (!/^[A-Za-z0-9]*$/.test(piece)) {
    const parts = piece.split(CAMEL);
    return parts.length > 1 ? parts : [];
  }
  // ASCII, the common case, without a regular expression: a boundary before an upper-case letter
  // that follows a lower-case one, or that starts a capitalised word after upper-case letters.
  const parts: string[] = [];
  let start = 0;
  for (let i = 1; i < piece.length; i++) {
    const c = piece.charCodeAt(i);
    const prev = piece.charCodeAt(i - 1);
    if ((isLower(prev) && isUpper(c)) || (isUpper(prev) && isUpper(c) && i + 1 < piece.length && isLower(piece.charCodeAt(i + 1)))) {
      parts.push(piece.slice(start, i));
      start = i;
    }
  }
  if (parts.length === 0) return [];
  parts.push(piece.slice(start));
  return parts;
}

/**
 * The text as it goes into the index: the text itself, then the parts of each camelCase word it
 * contains (once each), so either spelling finds it.
 */
export function indexableText(raw: string): string {
  const text = withoutRedactionMarkers(raw);
  const ascii = ASCII.test(text);
  if (!(ascii ? HAS_CAMEL_ASCII : HAS_CAMEL).test(text)) return text;
  const extra = new Set<string>();
  for (const piece of text.match(ascii ? PIECE_ASCII : PIECE) ?? []) {
    const parts = camelParts(piece);
    if (parts.length > 0) extra.add(parts.join(' ').toLowerCase());
  }
  return extra.size === 0 ? text : `${text}\n${[...extra].join(' ')}`;
}

export interface QueryTerm {
  /** What the term matches, as the agent wrote it (lower-cased). */
  text: string;
  /** The tokens of the phrase that is asked for: one for a plain word, several for `better-sqlite3`. */
  tokens: string[];
  /** Other inflections of a one-token term that the index holds (`adapters` for `adapter`): asked for with it, as one term. */
  variants?: string[];
}

/**
 * The other inflections an English word may have: the word's possible bases (itself; less a
 * plural `-s`, `-es` or `-ies` → `-y`; less `-ing` or `-ed`, with or without an `e`) and each
 * base's forms (plural, `-ing`, `-ed`). `cases` → case, casing, cased; `classes` → class;
 * `queries` → query; `testing` → test, tests, tested. Many are no words: the caller keeps those
 * the index holds. Bases of three letters or fewer, and words that are not plain ASCII letters or
 * are shorter than four, have none (`token` and `tokenizer` stay apart).
 */
export function inflectionsOf(word: string): string[] {
  if (word.length < 4 || !/^[a-z]+$/.test(word)) return [];
  const bases = new Set([word]);
  const strip = (suffix: string, add = '') => {
    if (word.endsWith(suffix)) bases.add(word.slice(0, word.length - suffix.length) + add);
  };
  if (!word.endsWith('ss') && !word.endsWith('us')) strip('s');
  strip('es');
  strip('ies', 'y');
  strip('ing');
  strip('ing', 'e');
  strip('ed');
  strip('ed', 'e');
  const out = new Set<string>();
  for (const base of bases) {
    if (base.length < 4) continue;
    const e = base.endsWith('e') ? base.slice(0, -1) : base;
    const y = base.endsWith('y') ? `${base.slice(0, -1)}ies` : null;
    for (const form of [base, `${base}s`, `${base}es`, y, `${e}ing`, `${e}ed`]) if (form !== null && form !== word) out.add(form);
  }
  return [...out];
}

/**
 * The distinct terms of agent text, in order of appearance, at most `max`: whole identifiers and
 * paths as phrases, their pieces and camelCase parts as words; stopwords and one-letter pieces left
 * out.
 */
export function queryTerms(raw: string, max: number, stopwords: ReadonlySet<string> = STOPWORDS): QueryTerm[] {
  const text = withoutRedactionMarkers(raw);
  const seen = new Set<string>();
  const out: QueryTerm[] = [];
  const add = (tokens: string[], shown: string) => {
    if (out.length >= max || tokens.length === 0) return;
    const key = tokens.join(' ');
    if (seen.has(key)) return;
    if (tokens.length === 1 && (stopwords.has(key) || codePointCount(key) < 2)) return;
    seen.add(key);
    out.push({ text: shown, tokens });
  };
  // A term met before adds nothing (each of its terms was added or refused then): a text that
  // repeats a few words costs one look per word, not their pieces and tokens again.
  const met = new Set<string>();
  for (const raw of text.match(RAW_TERM) ?? []) {
    if (met.has(raw)) continue;
    met.add(raw);
    const pieces = raw.match(PIECE) ?? [];
    const tokens = pieces.map(searchToken);
    if (pieces.length > 1) add(tokens, raw.toLowerCase());
    // Once `max` terms are found nothing more is added: the rest of a long term is not looked at.
    for (let i = 0; i < pieces.length && out.length < max; i++) {
      const piece = pieces[i] as string;
      add([tokens[i] as string], piece.toLowerCase());
      const parts = camelParts(piece);
      if (parts.length > 0) {
        add(parts.map(searchToken), parts.join(' ').toLowerCase());
        for (const part of parts) add([searchToken(part)], part.toLowerCase());
      }
    }
    if (out.length >= max) break;
  }
  return out;
}

/** One term as an FTS5 string: double-quoted, its tokens separated by spaces (a phrase); its variants OR-ed to it. */
function quoted(term: QueryTerm): string {
  const phrase = `"${term.tokens.join(' ').replace(/"/g, '""')}"`;
  return term.variants && term.variants.length > 0 ? [phrase, ...term.variants.map((v) => `"${v.replace(/"/g, '""')}"`)].join(' OR ') : phrase;
}

/**
 * The terms worth asking for within a postings budget: while the terms' costs add up to more than
 * `maxPostings`, the costliest term is dropped. A term costs the document lists FTS5 reads for it:
 * its document frequency (with its variants'), or for a phrase the sum of its tokens' (every list is read to find the
 * sequence). A common term says little about relevance (BM25 gives a term in half the documents no
 * weight at all) and costs the most. The rarest term is kept whatever it costs, so relevance never
 * switches itself off. Returns the kept and the dropped terms, each in their order, and the cost.
 */
export function pruneTerms(
  terms: readonly QueryTerm[],
  df: ReadonlyMap<string, number>,
  maxPostings: number,
): { kept: QueryTerm[]; dropped: QueryTerm[]; postings: number } {
  const freq = terms.map((t) => [...t.tokens, ...(t.variants ?? [])].reduce((sum, tok) => sum + (df.get(tok) ?? 0), 0));
  let total = freq.reduce((a, b) => a + b, 0);
  const drop = new Set<number>();
  const byCommonness = terms.map((_, i) => i).sort((a, b) => (freq[b] as number) - (freq[a] as number) || b - a);
  for (const i of byCommonness) {
    // The rarest term is always asked for: a query of common words still ranks by them.
    if (total <= maxPostings || drop.size === terms.length - 1) break;
    drop.add(i);
    total -= freq[i] as number;
  }
  return { kept: terms.filter((_, i) => !drop.has(i)), dropped: terms.filter((_, i) => drop.has(i)), postings: total };
}

/**
 * A MATCH expression asking for any of the terms, optionally within one column (`{col}: (...)`).
 * Returns null when there is nothing to ask for. The result is bound as a parameter, never
 * spliced into SQL.
 */
export function buildMatch(terms: readonly QueryTerm[], columns?: readonly string[]): string | null {
  if (terms.length === 0) return null;
  const any = terms.map(quoted).join(' OR ');
  return columns && columns.length > 0 ? `{${columns.join(' ')}} : (${any})` : any;
}

/**
 * Path-like words of a text: anything with a `/` between name characters. Never from inside a run
 * of name characters (`(?<!…)|(?!…)`): a path found there is found from the run's start, and tried
 * at each character of a long run without a `/` the expression would scan the rest of it each time.
 */
const PATH_IN_TEXT = /(?:(?<![\p{L}\p{N}_@.\-])|(?![\p{L}\p{N}_@.\-]))(?:\.{0,2}\/)?[\p{L}\p{N}_@.\-]+(?:\/[\p{L}\p{N}_@.\-]+)+\/?/gu;

const isDot = (c: number) => c === 0x2e;

/** The distinct path-like words of a text, in order of appearance. */
export function pathsInText(text: string): string[] {
  if (!text.includes('/')) return [];
  const out = new Set<string>();
  // A sentence's full stop is not part of the path it ends with.
  for (const m of text.matchAll(PATH_IN_TEXT)) out.add(withoutEndRun(m[0], isDot));
  return [...out];
}
