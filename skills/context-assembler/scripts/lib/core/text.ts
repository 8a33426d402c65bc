/**
 * Text helpers for emitted strings. Pure; lengths are in code points. One line and the cut at a
 * word are bazinga-db's (it counts reasoning entries as they will be shown when it stores them).
 */
export { oneLine, shorten, shortenStored, truncateAtWord } from '../../../../bazinga-db/scripts/lib/pure.ts';
import { codePointCount, markStoredCut, MIN_SHORTEN_CHARS, OMISSION_MARKER, shortenStored, truncateAtWord } from '../../../../bazinga-db/scripts/lib/pure.ts';

/**
 * True when nothing but redaction markers, punctuation and blanks is left. Markers are looked for
 * only up to the last `]` (none can end after it): each `[REDACTED` would otherwise scan to the end
 * of the text for one.
 */
export function isRedactionEmptied(text: string): boolean {
  const end = text.lastIndexOf(']') + 1;
  return !/[\p{L}\p{N}]/u.test(text.slice(0, end).replace(/\[REDACTED[^\]]*\]/g, '') + text.slice(end));
}

/** The conclusion's share of the room when a stored head and an artifact's conclusion do not both fit whole. */
const CONCLUSION_SHARE = 0.4;

/**
 * The conclusion of an artifact from its last bytes: its last paragraph of prose (blank lines
 * separate paragraphs; code blocks, headings and table rows are skipped), on one line; null when
 * it has none. `cut` says the bytes start inside the file: their first line is partial and is left
 * out (a value whose key lay before the window is never shown without it). Never prose: text with
 * control characters or invalid UTF-8 (a binary file), a paragraph holding a key block's marker
 * (`-----BEGIN …` / `-----END …`, a block the window may have cut) or a run of 32 or more
 * characters without a space (an encoded blob, a hash, a token).
 */
export function conclusionOf(tail: string, cut = false): string | null {
  if (/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFD]/.test(tail)) return null;
  const lines = tail.split('\n');
  if (cut) lines.shift();
  // The paragraph being read, and the last one read before it that has lines.
  let paragraph: string[] = [];
  let previous: string[] = [];
  let fenced = false;
  for (const raw of lines) {
    const line = raw.trim();
    if (line.startsWith('```')) {
      fenced = !fenced;
      continue;
    }
    if (fenced || line.startsWith('|') || /^#{1,6}\s/.test(line)) continue;
    if (line !== '') paragraph.push(line.replace(/^[-*>]\s+/, ''));
    else if (paragraph.length > 0) {
      previous = paragraph;
      paragraph = [];
    }
  }
  const last = paragraph.length > 0 ? paragraph : previous;
  return last.length === 0 || !isProse(last.join(' ')) ? null : oneLineText(last.join(' '));
}

/** Prose: no key block's marker, no run of 32 characters without a space, at least three words of two letters or more. */
function isProse(text: string): boolean {
  if (/-----(?:BEGIN|END)\b/.test(text) || /\S{32,}/.test(text)) return false;
  let words = 0;
  for (const _ of text.matchAll(/\p{L}{2,}/gu)) if (++words === 3) return true;
  return false;
}

const oneLineText = (t: string) => t.replace(/\s{2,}|[^\S ]/g, ' ').trim();

/**
 * A summary the store cut blind at 200 characters (markStoredCut), shown in at most `max`
 * characters as its kept head, the omission mark and `conclusion` (the artifact's last paragraph,
 * conclusionOf): a long report keeps its conclusion. Both whole when they fit; else the head keeps
 * at least 3/5 of the room and the conclusion its last sentences or words (shorten). Without a
 * conclusion, or for a summary the store did not cut, shortenStored.
 */
export function withConclusion(stored: string, conclusion: string | null, max: number): string {
  const marked = markStoredCut(stored);
  const len = codePointCount;
  if (marked === stored || conclusion === null || conclusion === '' || max < MIN_SHORTEN_CHARS) return shortenStored(stored, max);
  const head = marked.slice(0, -OMISSION_MARKER.trimEnd().length);
  if (head.includes(conclusion)) return shortenStored(stored, max);
  const room = max - len(OMISSION_MARKER);
  if (len(head) + len(conclusion) <= room) return `${head}${OMISSION_MARKER}${conclusion}`;
  const tailRoom = Math.min(len(conclusion), Math.floor(room * CONCLUSION_SHARE));
  const headRoom = room - tailRoom;
  // Each part shortened on its own: its beginning (the head) or its end (the conclusion) kept.
  const shortHead = len(head) <= headRoom ? head : truncateAtWord(head, headRoom).replace(/\.\.\.$/, '');
  const shortTail = len(conclusion) <= tailRoom ? conclusion : lastWords(conclusion, tailRoom);
  return `${shortHead}${OMISSION_MARKER}${shortTail}`;
}

/** The last whole sentences of `text` within `room` characters, else its last whole words. */
function lastWords(text: string, room: number): string {
  const sentences = text.split(/(?<=[.!?])\s+/u).filter((s) => s !== '');
  const fromSentences = lastParts(sentences, room);
  return fromSentences !== '' ? fromSentences : lastParts(text.split(' '), room);
}

/**
 * The last of `parts` joined by spaces within `room` characters. Lengths add up part by part (each
 * counted once): measuring the joined text at each step would be quadratic in the room.
 */
function lastParts(parts: readonly string[], room: number): string {
  let out = '';
  let length = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i] as string;
    const next = out === '' ? codePointCount(part) : length + 1 + codePointCount(part);
    if (next > room) break;
    out = out === '' ? part : `${part} ${out}`;
    length = next;
  }
  return out;
}
