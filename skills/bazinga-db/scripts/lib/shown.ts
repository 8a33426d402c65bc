/**
 * How stored text is shown in a context block: on one line, shortened with its structure kept
 * (shorten), and a reasoning entry's line. Both skills use these: the assembler renders with them, and bazinga-db counts the
 * tokens of a reasoning entry as it will be shown when it stores the entry (save-reasoning), so
 * that an assembly sizes it without loading the rank table. Pure; lengths are in code points.
 */
import { codePointCount, codePointStartBefore, firstCodePoints, isBlank, lastCodePointsStart, withoutEndRun } from './textScan.ts';
import { storedText } from './storedText.ts';

/** Characters of a reasoning entry's content shown in a block (context_engineering.reasoning.content_chars). */
export const DEFAULT_REASONING_CONTENT_CHARS = 300;

/** Collapses every run of whitespace (newlines included) to one space and trims. */
export function oneLine(text: string): string {
  // A lone space is left as it is (the same text, far fewer replacements in prose). A value another
  // tool wrote into a text column as a BLOB or a number is read as its text (storedText).
  return storedText(text).replace(/\s{2,}|[^\S ]/g, ' ').trim();
}

/**
 * Cuts `text` to at most `max` characters at a word boundary, ending in "..." when cut. A cut
 * that would lose more than half of the allowance to reach a word boundary cuts mid-word instead.
 */
export function truncateAtWord(text: string, max: number): string {
  if (codePointCount(text) <= max) return text;
  if (max <= 3) return '.'.repeat(Math.max(0, max));
  const head = firstCodePoints(text, max - 3);
  const space = head.lastIndexOf(' ');
  const cut = space >= (max - 3) / 2 ? head.slice(0, space) : head;
  return withoutEndRun(cut, isBlankOrStop) + '...';
}

/** A blank or a punctuation mark a cut text does not end with (`[\s,;:.-]`). */
const isBlankOrStop = (c: number) => isBlank(c) || c === 0x2c || c === 0x3b || c === 0x3a || c === 0x2e || c === 0x2d;

/**
 * How long a package summary is stored (code points): a longer one is cut to its first 197 and
 * "..." (the storing rule of the original tool, kept by save-context-package).
 */
export const STORED_SUMMARY_CHARS = 200;

/**
 * A summary as stored, with the storing tool's blind cut shown as an omission: a text of exactly
 * STORED_SUMMARY_CHARS ending in "..." lost its end there, so its broken last word (or its last
 * unfinished sentence, when a full one ends in its second half) gives way to " […]", the mark every
 * other cut leaves. Any other text comes back as it is.
 */
export function markStoredCut(text: string): string {
  if (!text.endsWith('...') || codePointCount(text) !== STORED_SUMMARY_CHARS) return text;
  const kept = text.slice(0, -3);
  const sentence = Math.max(kept.lastIndexOf('. '), kept.lastIndexOf('! '), kept.lastIndexOf('? '), kept.lastIndexOf('; '));
  const cut = sentence >= kept.length / 2 ? sentence + 1 : kept.lastIndexOf(' ');
  return `${(cut > 0 ? kept.slice(0, cut) : kept).replace(/[\s,;:-]+$/, '')}${OMISSION_MARKER.trimEnd()}`;
}

/**
 * A stored summary in at most `max` characters: shorten, with a blind cut made when it was stored
 * shown as an omission at its end (markStoredCut), which shortening keeps at the end.
 */
export function shortenStored(text: string, max: number): string {
  const marked = markStoredCut(text);
  if (marked === text) return shorten(text, max);
  if (codePointCount(marked) <= max) return marked;
  const mark = OMISSION_MARKER.trimEnd();
  return `${shorten(marked.slice(0, -mark.length), max - codePointCount(mark))}${mark}`;
}

/** The omission marker between the kept beginning and end of a shortened text. */
export const OMISSION_MARKER = ' […] ';

/** Below this many characters there is no room for a beginning, a marker and an end: cut at a word. */
export const MIN_SHORTEN_CHARS = 40;

/** The kept beginning's share of the room (the end gets the rest): the seed's 30 % : 20 %. */
const HEAD_SHARE = 0.6;

/**
 * `text` in at most `max` characters with its structure kept: the whole text when it fits, else
 * its first sentence(s) and its last sentence(s) (its conclusion) joined by " […] ", in the
 * proportion 3 : 2 of the room, never a blind prefix. A first (or last) sentence longer than its
 * share keeps its first (or last) words instead. Below MIN_SHORTEN_CHARS, truncateAtWord.
 * Deterministic; lengths in code points.
 */
export function shorten(text: string, max: number): string {
  if (codePointCount(text) <= max) return text;
  if (max < MIN_SHORTEN_CHARS) return truncateAtWord(text, max);
  const room = max - codePointCount(OMISSION_MARKER);
  const headRoom = Math.floor(room * HEAD_SHARE);
  const tailRoom = room - headRoom;
  const sentences = text.split(/(?<=[.!?])\s+/u).filter((s) => s !== '');
  // Lengths add up sentence by sentence (each sentence counted once, never the text joined so far).
  const len = codePointCount;
  let head = '';
  let headLength = 0;
  let used = 0;
  for (; used < sentences.length; used++) {
    const sentence = sentences[used] as string;
    const length = head === '' ? len(sentence) : headLength + 1 + len(sentence);
    if (length > headRoom) break;
    head = head === '' ? sentence : `${head} ${sentence}`;
    headLength = length;
  }
  let tail = '';
  let tailLength = 0;
  for (let i = sentences.length - 1; i >= used && i > 0; i--) {
    const sentence = sentences[i] as string;
    const length = tail === '' ? len(sentence) : tailLength + 1 + len(sentence);
    if (length > tailRoom) break;
    tail = tail === '' ? sentence : `${sentence} ${tail}`;
    tailLength = length;
  }
  if (head === '') head = wordsFrom(text, headRoom, 'start');
  if (tail === '') tail = wordsFrom(text, tailRoom, 'end');
  return `${head}${OMISSION_MARKER}${tail}`;
}

/**
 * Where the cluster that holds the code point at `at` begins, near enough: before a run of flag
 * letters (they pair from the run's start) and before any mark or joiner that continues the
 * character before it.
 */
function clusterStartBefore(text: string, at: number): number {
  let first = at;
  while (first > 0 && (CONTINUES.test(String.fromCodePoint(text.codePointAt(first) as number)) || text.charCodeAt(first - 1) === 0x200d)) {
    first = codePointStartBefore(text, first);
  }
  return first;
}

/**
 * User-perceived characters, near enough for a cut never to split one: a flag (two regional
 * indicators) or any one character, with what extends it — combining marks, variation selectors,
 * skin tones, the tag characters of a subdivision flag, Hangul vowel and final jamo — and joined by
 * zero-width joiners to the next (an emoji family). Every character of a text is in exactly one
 * match, so the matches put together are the text. A regular expression, not Intl.Segmenter:
 * building a segmenter loads ICU's break rules, about 10 ms of every process that shortens a text.
 */
const EXTEND = String.raw`[\p{M}\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}\u1160-\u11FF\uD7B0-\uD7FF]`;
const CLUSTER = new RegExp(String.raw`(?:[\u{1F1E6}-\u{1F1FF}]{2}|[\s\S])${EXTEND}*(?:\u200D[\s\S]${EXTEND}*)*`, 'gu');
/** A character that continues the one before it (it never starts a cluster of its own when one precedes it). */
const CONTINUES = new RegExp(String.raw`^(?:[\u{1F1E6}-\u{1F1FF}]|${EXTEND}|\u200D)$`, 'u');

/**
 * The first (or last) words of `text` within `room` characters (code points), cut at a space
 * unless that loses over half, never inside a grapheme cluster or a redaction marker
 * (`[REDACTED…]`): a marker the cut would split is left out whole.
 */
function wordsFrom(text: string, room: number, from: 'start' | 'end'): string {
  // Only the end that is kept is split (a margin for the cluster the cut lands in): a long text costs no more than a short one.
  const margin = 16;
  const window = from === 'start' ? firstCodePoints(text, room + margin) : text.slice(clusterStartBefore(text, lastCodePointsStart(text, room + margin)));
  const clusters = window.match(CLUSTER) ?? [];
  const take = (list: readonly string[]) => {
    const out: string[] = [];
    let used = 0;
    for (const c of list) {
      const n = Array.from(c).length;
      if (used + n > room) {
        // One character longer than the whole room (a run of joined or marked characters): cut
        // inside it at a code point, never next to a joiner or before a mark.
        if (out.length === 0) {
          const points = Array.from(c);
          const part = (from === 'start' ? points.slice(0, room) : points.slice(points.length - room)).join('');
          const trimmed = from === 'start' ? part.replace(new RegExp(String.raw`(?:\u200D|${EXTEND})+$`, 'u'), '') : part.replace(new RegExp(String.raw`^(?:\u200D|${EXTEND})+`, 'u'), '');
          if (trimmed !== '') out.push(trimmed);
        }
        break;
      }
      out.push(c);
      used += n;
    }
    return out;
  };
  if (from === 'start') {
    let piece = take(clusters).join('');
    // The piece ends inside a marker: end before the marker.
    const open = piece.lastIndexOf('[');
    if (open > piece.lastIndexOf(']') && text.startsWith('[REDACTED', open)) piece = piece.slice(0, open);
    const space = piece.lastIndexOf(' ');
    return withoutEndRun(space >= room / 2 ? piece.slice(0, space) : piece, isBlankOrStop);
  }
  let piece = take([...clusters].reverse()).reverse().join('');
  const close = piece.indexOf(']');
  const start = text.length - piece.length;
  const opened = text.lastIndexOf('[', start - 1);
  // The piece starts inside a marker that began before it: start after the marker.
  if (close !== -1 && !piece.slice(0, close).includes('[') && opened > text.lastIndexOf(']', start - 1) && text.startsWith('[REDACTED', opened)) piece = piece.slice(close + 1);
  const space = piece.indexOf(' ');
  return (space !== -1 && space <= room / 2 ? piece.slice(space + 1) : piece).replace(/^[\s,;:.-]+/u, '');
}

/** A reasoning entry as a block shows it (one line, without its line break). */
export function reasoningLine(agentType: string, phase: string, content: string): string {
  return `**[${agentType}] ${phase}:** ${content}`;
}

/**
 * The line of a stored reasoning row as shown with `contentChars` characters of content, with its
 * line break: the text whose count save-reasoning stores.
 */
export function shownReasoningLine(agentType: string, phase: string, storedContent: string, contentChars: number): string {
  return reasoningLine(oneLine(agentType), phase, shorten(oneLine(storedContent), contentChars)) + '\n';
}

/**
 * How a stored text is shown as the tail of a one-line entry: after a space, on one line, ending
 * the line. save-reasoning stores its count too, which bounds the entry when it is shown cut to
 * another length than the one counted.
 */
export function shownTail(text: string): string {
  return ` ${oneLine(text)}\n`;
}
