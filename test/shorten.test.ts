/**
 * shorten (bazinga-db's shown.ts): a text longer than its cap keeps its first and last sentences
 * (or words) around " […] ", never more than the cap, and never cuts a redaction marker or a
 * user-perceived character (an emoji family, a flag, a letter with its marks) in two.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { shorten, shortenStored } from '../skills/bazinga-db/scripts/lib/shown.ts';
import { copyFixture, REPO_ROOT, runScript, S1, writeArtifact } from './helpers.ts';
import { runBazingaDbInProcess } from './inProcess.ts';

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

  // A character that extends the one before it: a cut right before it would split a character.
  const EXTENDS = /^[\p{M}\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}\u1160-\u11FF\u200D]/u;
  const subdivision = '🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}';
  it.each([
    { name: 'a mark with nothing before it', text: '\u0301' + 'a'.repeat(100), max: 40 },
    { name: 'flags with accents', text: '🇫🇷\u0301'.repeat(40), max: 40 },
    { name: 'words, then flags with accents', text: 'a '.repeat(30) + '🇫🇷\u0301'.repeat(40), max: 60 },
    { name: 'a mark before a marker', text: '\u0301' + 'x'.repeat(10) + '[REDACTED:password]' + 'y'.repeat(80), max: 40 },
    { name: 'subdivision flags', text: subdivision.repeat(20), max: 42 },
    { name: 'Hangul from jamo', text: '\u1100\u1161\u11A8'.repeat(40), max: 40 },
  ])('$name: the kept ends are the text\'s own ends, cut between characters', ({ text, max }) => {
    const s = shorten(text, max);
    expect(Array.from(s).length).toBeLessThanOrEqual(max);
    const [head, tail, ...rest] = s.split(' […] ') as [string, string];
    expect(rest).toEqual([]);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(EXTENDS.test(text.slice(head.length))).toBe(false);
    expect(EXTENDS.test(tail)).toBe(false);
    // A flag's two letters stay together: the kept tail starts on a pair boundary of the text.
    const letters = (t: string) => (t.match(/[\u{1F1E6}-\u{1F1FF}]/gu) ?? []).length;
    if (/[\u{1F1E6}-\u{1F1FF}]/u.test(text)) expect(letters(text.slice(0, text.length - tail.length)) % 2).toBe(0);
    expect((head.match(/\[REDACTED/g) ?? []).length).toBe((head.match(/\]/g) ?? []).length);
  });

  it('a run of joined characters longer than the room is cut inside it, with no joiner left dangling at the cut', () => {
    const text = 'a\u200D'.repeat(80) + 'a';
    const [head, tail] = shorten(text, 40).split(' […] ') as [string, string];
    expect(text.startsWith(head) && text.endsWith(tail)).toBe(true);
    expect(head.endsWith('\u200D')).toBe(false);
    expect(tail.startsWith('\u200D')).toBe(false);
    expect(head.length + tail.length).toBeGreaterThan(0);
  });

  it('a text within the cap is returned as it is; below 40 characters of cap it is cut at a word with "..."', () => {
    expect(shorten('short enough', 40)).toBe('short enough');
    expect(shorten('abc def. abc def. abc def. abc def. abc def.', 39)).toBe('abc def. abc def. abc def. abc def...');
  });
});

describe("a stored summary's blind cut (197 characters and '...', the storing rule)", () => {
  const LONG =
    'Kestrel opens this report with the dedup design: every event carries a key made of the tenant, the stream and the sequence number. ' +
    'The consumer keeps a window of keys seen in the last hour. In the end the window is persisted so duplicates can be told apart after a restart.';
  const stored = `${Array.from(LONG).slice(0, 197).join('')}...`;

  it('is shown as an omission after the last whole sentence, never as a word cut mid-way', () => {
    expect(stored.endsWith('last hour. In the ...')).toBe(true);
    expect(shortenStored(stored, 400)).toBe(
      'Kestrel opens this report with the dedup design: every event carries a key made of the tenant, the stream and the sequence number. The consumer keeps a window of keys seen in the last hour. […]',
    );
  });

  it('under a smaller cap, shortened with its beginning kept and the omission still at its end', () => {
    const shown = shortenStored(stored, 100);
    expect(Array.from(shown).length).toBeLessThanOrEqual(100);
    expect(shown.startsWith('Kestrel opens this report')).toBe(true);
    expect(shown.endsWith(' […]')).toBe(true);
    expect(shown).not.toMatch(/\w\.\.\.$/);
  });

  it.each([
    ['a text of another length ending in ...', `${'a '.repeat(50)}...`],
    ['a text of 200 characters not ending in ...', 'x'.repeat(200)],
    ['a short summary', 'Cart totals use integer cents.'],
  ])('%s: as shorten would show it', (_name, text) => {
    expect(shortenStored(text, 400)).toBe(shorten(text, 400));
  });
});

describe('on the fixture: a long summary stored by save-context-package reaches the block with its cut marked', () => {
  it('Normal zone: the whole sentences it kept, then " […]"; never "… In the ..."', () => {
    const p = copyFixture('ca-stored-cut-');
    try {
      const summary =
        'Kestrel opens this report with the dedup design: every event carries a key made of the tenant, the stream and the sequence number. ' +
        'The consumer keeps a window of keys seen in the last hour. In the end the window is persisted so duplicates can be told apart after a restart.';
      const saved = runBazingaDbInProcess(['--quiet', '--db', p.dbPath, '--project-root', p.root, 'save-context-package', S1, 'AUTH', 'research', writeArtifact(p, S1, 'dedup.md'), 'requirements_engineer', '["developer"]', 'critical', summary]);
      expect(saved.code, saved.stderr).toBe(0);
      const block = runScript(path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts'), ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--dry-run', '--now', '2025-12-02T12:00:00Z', '--format', 'json']);
      expect(block.code, block.stderr).toBe(0);
      const shown = (block.json.packages as { summary: string }[]).find((pk) => pk.summary.startsWith('Kestrel opens this report'));
      expect(shown?.summary).toBe('Kestrel opens this report with the dedup design: every event carries a key made of the tenant, the stream and the sequence number. The consumer keeps a window of keys seen in the last hour. […]');
    } finally {
      p.cleanup();
    }
  });
});
