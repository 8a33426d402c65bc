/** Text helpers for emitted strings. Pure; lengths are in code points. */

/** Collapses every run of whitespace (newlines included) to one space and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Cuts `text` to at most `max` characters at a word boundary, ending in "..." when cut. A cut
 * that would lose more than half of the allowance to reach a word boundary cuts mid-word instead.
 */
export function truncateAtWord(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 3) return '.'.repeat(Math.max(0, max));
  const head = chars.slice(0, max - 3).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= (max - 3) / 2 ? head.slice(0, space) : head;
  return cut.replace(/[\s,;:.-]+$/, '') + '...';
}

/** True when nothing but redaction markers, punctuation and blanks is left. */
export function isRedactionEmptied(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text.replace(/\[REDACTED[^\]]*\]/g, ''));
}
