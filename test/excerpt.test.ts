/** Structure-aware excerpts for fetch --max-tokens (spec assembler.md §7). Deterministic counter: ceil(chars / 4). */
import { describe, expect, it } from 'vitest';
import { HEAD_SHARE, TAIL_SHARE, excerpt } from '../skills/context-assembler/scripts/lib/core/excerpt.ts';
import { exactCounter } from '../skills/context-assembler/scripts/lib/core/pack.ts';

const count = (t: string) => Math.ceil(t.length / 4);
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1} of the artifact`).join('\n');

describe('excerpt', () => {
  it('returns the text unchanged when it fits', () => {
    const text = lines(3);
    expect(excerpt(text, 1000, exactCounter(count))).toEqual({ text, truncated: false, omitted_lines: 0 });
  });

  it('keeps whole lines from the beginning (≤ 30 %) and the end (≤ 20 %) and says how many were left out', () => {
    const text = lines(100);
    const out = excerpt(text, 100, exactCounter(count));
    expect(out.truncated).toBe(true);
    const kept = out.text.split('\n');
    const marker = kept.findIndex((l) => l.startsWith('[… '));
    const head = kept.slice(0, marker);
    const tail = kept.slice(marker + 1);
    expect(head[0]).toBe('line 1 of the artifact');
    expect(tail.at(-1)).toBe('line 100 of the artifact');
    expect(count(head.map((l) => `${l}\n`).join(''))).toBeLessThanOrEqual(Math.floor(100 * HEAD_SHARE) + head.length);
    expect(count(tail.map((l) => `${l}\n`).join(''))).toBeLessThanOrEqual(Math.floor(100 * TAIL_SHARE) + tail.length);
    expect(out.omitted_lines).toBe(100 - head.length - tail.length);
    expect(kept[marker]).toContain(`${out.omitted_lines} lines`);
  });

  it('keeps part of a first or last line longer than its whole share instead of nothing', () => {
    const text = ['x'.repeat(400), 'middle', 'y'.repeat(400)].join('\n');
    const out = excerpt(text, 40, exactCounter(count));
    const kept = out.text.split('\n');
    expect(kept).toHaveLength(3);
    expect(kept[0]).toMatch(/^x+ …$/);
    expect(kept[1]).toMatch(/^\[… 3 lines/);
    expect(kept[2]).toMatch(/^… y+$/);
    expect(count(`${kept[0]}\n`)).toBeLessThanOrEqual(Math.floor(40 * HEAD_SHARE));
  });
});
