/**
 * Text queries of the search index, planned here and handed back to the searches: a caller gives
 * text and gets a plan whose match expressions it cannot read or build (TextMatch), only pass on.
 * The FTS5 syntax, the query's terms and their pruning by how common they are stay in bazinga-db.
 */
import type { DB } from '../statements.ts';
import { TASK_STOPWORDS, buildMatch, inflectionsOf, pruneTerms, queryTerms, searchToken, type QueryTerm } from '../searchText.ts';
import type { TextMatch } from '../textMatch.ts';
import { tokenDocCounts } from './searchIndex.ts';

export type { TextMatch } from '../textMatch.ts';

const made = (match: string | null): TextMatch | null => match as TextMatch | null;

/** What a text asks the index for. */
export interface TextQuery {
  /** The terms asked for, as the text wrote them (lower-cased). */
  terms: string[];
  /** Terms too common in the packages to ask for within the postings cap, as written. */
  dropped: string[];
  /** Any of the terms (null: the text asks for nothing). */
  any: TextMatch | null;
  /** Any of the terms kept for packages, and for reasoning (each pruned by its own table's counts). */
  packages: TextMatch | null;
  reasoning: TextMatch | null;
  /** Postings (documents per term, summed) the packages' match reads. */
  packagePostings: number;
  /** One match per term kept for packages: the learning tables are searched term by term. */
  perTerm: TextMatch[];
  /**
   * One match per term kept for packages, in the path column only (the paths a package names);
   * none when the kept terms cost more than the postings budget (a single common term kept because
   * it is the rarest): every package holding one is read, so that read stays within the budget.
   */
  perTermPaths: TextMatch[];
}

/** Limits of a query (config relevance.max_query_terms and relevance.max_postings). */
export interface QueryLimits {
  maxTerms: number;
  maxPostings: number;
}

/** The plan of `text` (null: no text, a plan that asks for nothing). */
export function planTextQuery(db: DB, text: string | null, limits: QueryLimits): TextQuery {
  const written = text === null ? [] : queryTerms(text, limits.maxTerms, TASK_STOPWORDS);
  // Each index's document counts, looked up once for every token the query might ask for: the
  // terms' own and each word's candidate inflections (which ones it asks for depends on the counts).
  const words = written.filter((t) => t.tokens.length === 1).map((t) => t.tokens[0] as string);
  const forms = new Map(words.map((w) => [w, inflectionsOf(w).filter((f) => !TASK_STOPWORDS.has(f))]));
  const candidates = [...new Set([...written.flatMap((t) => t.tokens), ...[...forms.values()].flat()])];
  const df = { packages: tokenDocCounts(db, 'packages', candidates), reasoning: tokenDocCounts(db, 'reasoning', candidates) };
  const terms = withInflections(written, forms, (t) => (df.packages.get(t) ?? 0) + (df.reasoning.get(t) ?? 0));
  const forPackages = pruneTerms(terms, df.packages, limits.maxPostings);
  const forReasoning = pruneTerms(terms, df.reasoning, limits.maxPostings);
  return {
    terms: terms.map((t) => t.text),
    dropped: forPackages.dropped.map((t) => t.text),
    any: made(buildMatch(terms)),
    packages: made(buildMatch(forPackages.kept)),
    reasoning: made(buildMatch(forReasoning.kept)),
    packagePostings: forPackages.postings,
    perTerm: forPackages.kept.map((t) => buildMatch([t]) as TextMatch),
    perTermPaths: forPackages.postings <= limits.maxPostings ? forPackages.kept.map((t) => buildMatch([t], ['path']) as TextMatch) : [],
  };
}

/** At most this many inflections are asked for with a query word (its most common ones). */
const MAX_INFLECTIONS = 4;

/**
 * The terms, each one-word term with those of its candidate inflections (`forms`, by word) the
 * index holds (asked for as the same term: `adapter` with `adapters`): only those at least as
 * common (`docs`: packages and reasoning together) as the word itself (BM25 weighs each asked-for token by its own rarity, and a match on
 * a rarer form would count for more than one on the word as written), never a stopword, never one
 * another term asks for (as itself or as its inflection).
 */
function withInflections(terms: readonly QueryTerm[], forms: ReadonlyMap<string, readonly string[]>, docs: (token: string) => number): QueryTerm[] {
  const taken = new Set(forms.keys());
  return terms.map((t) => {
    if (t.tokens.length !== 1) return t;
    const word = t.tokens[0] as string;
    const own = docs(word);
    const variants = (forms.get(word) ?? [])
      .filter((f) => !taken.has(f) && docs(f) > 0 && docs(f) >= own)
      .sort((a, b) => docs(b) - docs(a) || (a < b ? -1 : 1))
      .slice(0, MAX_INFLECTIONS);
    for (const v of variants) taken.add(v);
    return variants.length > 0 ? { ...t, variants } : t;
  });
}

/** One match per term of `text` (an error text against the learning tables); none for no text. */
export function planTermMatches(text: string | null, maxTerms: number): TextMatch[] {
  return (text === null ? [] : queryTerms(text, maxTerms)).map((t) => buildMatch([t]) as TextMatch);
}

/** Any of the scope paths (each a list of path segments) in a package's summary, artifact or path; null for none. */
export function planScopeMatch(scopes: readonly (readonly string[])[]): TextMatch | null {
  const terms: QueryTerm[] = scopes.map((segs) => ({ text: segs.join('/'), tokens: segs.flatMap((s) => [...s.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => searchToken(m[0]))) }));
  return made(buildMatch(terms, ['summary', 'artifact', 'path']));
}
