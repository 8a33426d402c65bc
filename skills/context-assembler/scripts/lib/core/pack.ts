/**
 * Greedy packing into a token budget. Pure; the token counter is injected. Items are admitted in
 * the order given (score order) while they fit; an item that does not fit is skipped, not a stop,
 * and every skip is reported.
 */

export type CountTokens = (text: string) => number;

export interface PackResult<T> {
  admitted: { item: T; tokens: number }[];
  skipped: { item: T; tokens: number }[];
  used: number;
}

export function pack<T>(items: readonly T[], budget: number, render: (item: T) => string, countTokens: CountTokens): PackResult<T> {
  const out: PackResult<T> = { admitted: [], skipped: [], used: 0 };
  for (const item of items) {
    const tokens = countTokens(render(item));
    if (out.used + tokens <= budget) {
      out.admitted.push({ item, tokens });
      out.used += tokens;
    } else {
      out.skipped.push({ item, tokens });
    }
  }
  return out;
}
