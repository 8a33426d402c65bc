/**
 * Structure-aware shortening of an artifact for on-demand fetches: whole lines from the beginning
 * (about 30% of the budget) and from the end (about 20%), with one line in between saying how much
 * was left out. Pure; the token counter is injected.
 */
import type { TokenCounter } from './pack.ts';

type CountTokens = (text: string) => number;

export const HEAD_SHARE = 0.3;
export const TAIL_SHARE = 0.2;

export interface Excerpt {
  text: string;
  truncated: boolean;
  omitted_lines: number;
}

export function excerpt(text: string, maxTokens: number, counter: TokenCounter): Excerpt {
  // A text whose bound fits is whole; only a longer one is counted, line by line.
  if (counter.bound(text).tokens <= maxTokens || counter.count(text) <= maxTokens) return { text, truncated: false, omitted_lines: 0 };
  const countTokens: CountTokens = (t) => counter.count(t);
  const lines = text.split('\n');
  const take = (order: number[], budget: number) => {
    const picked: number[] = [];
    let used = 0;
    for (const i of order) {
      const t = countTokens((lines[i] as string) + '\n');
      if (used + t > budget) break;
      picked.push(i);
      used += t;
    }
    return picked;
  };
  const headBudget = Math.floor(maxTokens * HEAD_SHARE);
  const tailBudget = Math.floor(maxTokens * TAIL_SHARE);
  const head = take([...lines.keys()], headBudget);
  const tailStart = head.length;
  const tail = take([...lines.keys()].reverse().filter((i) => i >= tailStart), tailBudget).reverse();
  // A first (or last) line longer than its whole share: keep the part of it that fits, so the
  // excerpt never shrinks to the marker alone.
  const headText = head.map((i) => lines[i] as string);
  if (head.length === 0 && lines.length > 1) {
    const part = longestFitting(lines[0] as string, headBudget, countTokens, 'start');
    if (part !== '') headText.push(`${part} …`);
  }
  const tailText = tail.map((i) => lines[i] as string);
  if (tail.length === 0 && lines.length - head.length > 1) {
    const part = longestFitting(lines[lines.length - 1] as string, tailBudget, countTokens, 'end');
    if (part !== '') tailText.push(`… ${part}`);
  }
  const omitted = lines.length - head.length - tail.length;
  const omittedTokens = countTokens(lines.slice(head.length, lines.length - tail.length).join('\n'));
  const marker = `[… ${omitted} line${omitted === 1 ? '' : 's'} (about ${omittedTokens} tokens) omitted …]`;
  return {
    text: [...headText, marker, ...tailText].join('\n'),
    truncated: true,
    omitted_lines: omitted,
  };
}

/** The longest start (or end) of `line` whose tokens, with a newline, fit `budget`; binary search. */
function longestFitting(line: string, budget: number, countTokens: CountTokens, from: 'start' | 'end'): string {
  const chars = Array.from(line);
  const piece = (n: number) => (from === 'start' ? chars.slice(0, n) : chars.slice(chars.length - n)).join('');
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(`${piece(mid)} …\n`) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return piece(lo);
}
