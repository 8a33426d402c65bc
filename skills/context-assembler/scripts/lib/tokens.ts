/**
 * The token counter of one model: cl100k counts (bazinga-db's counter) times a per-model
 * correction factor (cl100k undercounts Claude), through the database's cache of counts.
 *
 * Counting needs the cl100k rank table (tens of milliseconds and megabytes to load), so a counter
 * also gives a cheap upper bound that never loads it: the cached count when the text was counted
 * before (by an earlier call, or by bazinga-db when it stored the text), else the text's UTF-8
 * bytes, since every token covers at least one byte. Packing admits items on bounds while they fit
 * and counts only where a decision depends on it (core/pack.ts).
 */
import { countCl100k, scaleTokens, textHash } from '../../../bazinga-db/scripts/lib/index.ts';
import type { Sized, TokenCounter } from './core/pack.ts';

export { MAX_RUN, countCl100k, tokenizerLoaded, tokenizerSource } from '../../../bazinga-db/scripts/lib/index.ts';

/** Where raw counts of texts already seen are kept (the database's ca_token_counts, in practice). */
export interface TokenCountCache {
  get(textHash: string): number | undefined;
  put(textHash: string, tokens: number): void;
}

/** A cache that lives as long as the process (when there is no database to keep counts in). */
function memoryCache(): TokenCountCache {
  const counts = new Map<string, number>();
  return { get: (hash) => counts.get(hash), put: (hash, tokens) => void counts.set(hash, tokens) };
}

/**
 * A counter for one model: ceil(cl100k count × factor). A text counted before (in this process,
 * or earlier through the cache) is not counted again, so the rank table is loaded only when some
 * text is new and its count matters.
 */
export function makeTokenCounter(factor: number, cache: TokenCountCache = memoryCache()): TokenCounter {
  const scale = (raw: number) => scaleTokens(raw, factor);
  const rawCount = (text: string): number => {
    if (text === '') return 0;
    const key = textHash(text);
    let raw = cache.get(key);
    if (raw === undefined) {
      raw = countCl100k(text);
      cache.put(key, raw);
    }
    return raw;
  };
  const rawBound = (text: string): Sized => {
    const raw = text === '' ? 0 : cache.get(textHash(text));
    return raw === undefined ? { tokens: Buffer.byteLength(text, 'utf8'), exact: false } : { tokens: raw, exact: true };
  };
  return {
    count: (text) => scale(rawCount(text)),
    bound: (text) => {
      const raw = rawBound(text);
      return { tokens: scale(raw.tokens), exact: raw.exact };
    },
    rawBound,
    scale,
    additive: true,
  };
}
