/**
 * Greedy packing into a token budget. Pure; the token counter is injected. Items are admitted in
 * the order given (score order) while they fit; an item that does not fit is skipped, not a stop,
 * and every skip is reported.
 *
 * Counting is lazy: an item is admitted on an upper bound of its tokens while the bounds fit, and
 * counted only when a decision depends on it. Then the admitted items' bounds are replaced by
 * their counts first, so every skip is decided on exact figures and the admitted set is the one
 * exact counting gives (a bound that fits implies the count fits).
 */

/** A token figure: a count, or an upper bound of it (exact false). */
export interface Sized {
  tokens: number;
  exact: boolean;
}

export interface TokenCounter {
  /** Model tokens of `text`; may load the rank table. */
  count(text: string): number;
  /** A figure ≥ count(text) that never loads the rank table (the count itself when it is known). */
  bound(text: string): Sized;
  /** The same in raw cl100k tokens, for callers that add parts before scaling (see scale). */
  rawBound(text: string): Sized;
  /** Model tokens of a raw cl100k figure. */
  scale(raw: number): number;
  /**
   * Texts joined where one ends in a line break and the next starts with a non-blank character
   * count as the sum of their raw counts (true of cl100k: no piece spans such a join).
   */
  additive: boolean;
}

export interface Packed<T> {
  item: T;
  tokens: number;
  /** False when tokens is an upper bound (the item was admitted without counting it). */
  exact: boolean;
}

export interface PackResult<T> {
  admitted: Packed<T>[];
  skipped: T[];
  /** Tokens of the admitted items (the reserve not included). */
  used: number;
  /** Every figure in admitted (and so used) is a count. */
  exact: boolean;
}

export interface PackOptions<T> {
  /** A text emitted with the items whatever is admitted (a header): its tokens are used first. */
  reserve?: string;
  /** The item's figure when it is not simply the bound of its text (default counter.bound). */
  bound?: (item: T, text: string) => Sized;
}

export function pack<T>(items: readonly T[], budget: number, render: (item: T) => string, counter: TokenCounter, options: PackOptions<T> = {}): PackResult<T> {
  const bound = options.bound ?? ((_item: T, text: string) => counter.bound(text));
  const reserve = options.reserve === undefined ? { text: '', tokens: 0, exact: true } : { text: options.reserve, ...counter.bound(options.reserve) };
  const admitted: (Packed<T> & { text: string })[] = [];
  const skipped: T[] = [];
  let used = reserve.tokens;
  const settle = () => {
    for (const a of [reserve, ...admitted]) {
      if (a.exact) continue;
      const tokens = counter.count(a.text);
      used += tokens - a.tokens;
      a.tokens = tokens;
      a.exact = true;
    }
  };
  for (const item of items) {
    const text = render(item);
    let size = bound(item, text);
    if (used + size.tokens > budget) {
      settle();
      if (!size.exact) size = { tokens: counter.count(text), exact: true };
    }
    if (used + size.tokens <= budget) {
      admitted.push({ item, text, ...size });
      used += size.tokens;
    } else {
      skipped.push(item);
    }
  }
  return {
    admitted: admitted.map(({ item, tokens, exact }) => ({ item, tokens, exact })),
    skipped,
    used: used - reserve.tokens,
    exact: admitted.every((a) => a.exact),
  };
}

/** A counter over a plain count function that knows every count (factor 1): for tools and tests. */
export function exactCounter(count: (text: string) => number): TokenCounter {
  const sized = (text: string): Sized => ({ tokens: count(text), exact: true });
  return { count, bound: sized, rawBound: sized, scale: (raw) => raw, additive: false };
}
