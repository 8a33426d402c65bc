/**
 * shorten (bazinga-db's shown.ts): a text longer than its cap keeps its first and last sentences
 * (or words) around " […] ", never more than the cap, and never cuts a redaction marker or a
 * user-perceived character (an emoji family, a flag, a letter with its marks) in two.
 */
import { describe, expect, it } from 'vitest';
import { shorten } from '../skills/bazinga-db/scripts/lib/shown.ts';

const family = '👨‍👩‍👧‍👦';
const flag = '🇫🇷';
const accented = 'e\u0301';

describe('shorten', () => {
  it.each([
    { name: 'sentences', text: 'First sentence is short. Middle stuff goes here and on and on. More middle. Conclusion is final.', max: 80 },
    { name: 'one long sentence', text: Array.from({ length: 40 }, () => 'word').join(' '), max: 60 },
    { name: 'no space at all', text: 'x'.repeat(200), max: 60 },
    { name: 'markers without spaces', text: 'aa=[REDACTED:password];bb=[REDACTED:password];cc=[REDACTED:password];dd=[REDACTED:password];ee=[REDACTED:password]', max: 60 },
    { name: 'an emoji family', text: Array.from({ length: 30 }, () => family).join(''), max: 50 },
    { name: 'flags', text: Array.from({ length: 40 }, () => flag).join(''), max: 41 },
    { name: 'combining accents', text: accented.repeat(60), max: 45 },
  ])('$name: within the cap, one marker, nothing split', ({ text, max }) => {
    const s = shorten(text, max);
    expect(Array.from(s).length).toBeLessThanOrEqual(max);
    const [head, tail, ...rest] = s.split(' […] ');
    expect(rest).toEqual([]);
    expect(text.startsWith(head as string)).toBe(true);
    expect(text.endsWith(tail as string)).toBe(true);
    // No marker cut: every "[REDACTED" kept is closed, and no kept "…]" lost its opening.
    for (const part of [head, tail] as string[]) {
      expect((part.match(/\[REDACTED/g) ?? []).length).toBe((part.match(/\]/g) ?? []).length);
    }
    // No character split: the kept ends are whole clusters of the original.
    for (const unit of [family, flag, accented]) {
      if (!text.includes(unit)) continue;
      expect((head as string).split(unit).join('')).toBe('');
      expect((tail as string).split(unit).join('')).toBe('');
    }
  });

  it('a text within the cap is returned as it is; below 40 characters of cap it is cut at a word with "..."', () => {
    expect(shorten('short enough', 40)).toBe('short enough');
    expect(shorten('abc def. abc def. abc def. abc def. abc def.', 39)).toBe('abc def. abc def. abc def. abc def...');
  });
});
