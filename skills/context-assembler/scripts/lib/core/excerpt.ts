/**
 * Structure-aware shortening of an artifact for on-demand fetches: whole lines from the beginning
 * (about 30% of the budget) and from the end (about 20%), with one line in between saying how much
 * was left out. Pure; the token counter is injected.
 */
import type { CountTokens } from './pack.ts';

export const HEAD_SHARE = 0.3;
export const TAIL_SHARE = 0.2;

export interface Excerpt {
  text: string;
  truncated: boolean;
  omitted_lines: number;
}

export function excerpt(text: string, maxTokens: number, countTokens: CountTokens): Excerpt {
  if (countTokens(text) <= maxTokens) return { text, truncated: false, omitted_lines: 0 };
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
  const head = take([...lines.keys()], Math.floor(maxTokens * HEAD_SHARE));
  const tailStart = head.length;
  const tail = take([...lines.keys()].reverse().filter((i) => i >= tailStart), Math.floor(maxTokens * TAIL_SHARE)).reverse();
  const omitted = lines.length - head.length - tail.length;
  const omittedTokens = countTokens(lines.slice(head.length, lines.length - tail.length).join('\n'));
  const marker = `[… ${omitted} line${omitted === 1 ? '' : 's'} (about ${omittedTokens} tokens) omitted …]`;
  return {
    text: [...head.map((i) => lines[i]), marker, ...tail.map((i) => lines[i])].join('\n'),
    truncated: true,
    omitted_lines: omitted,
  };
}
