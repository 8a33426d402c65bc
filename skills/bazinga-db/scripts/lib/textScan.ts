/**
 * Scans of a text that cost what they keep, whatever its length: the run of characters it ends
 * with, its length in code points, its first or last code points. Each gives what a regular
 * expression or `Array.from` gives, without their cost on a long text:
 *
 * - an unanchored `[…]+$` (or `\S*$`) looks for the run from every character of the text, and from
 *   each character of a long run that does not reach the end (`a……b`, a long word before a space)
 *   scans the rest of that run again: quadratic. Here the run is found by stepping back from the end;
 * - `Array.from(text)` makes a string of every code point (a megabyte of text: a million strings)
 *   to count or cut a few.
 *
 * Pure; positions are UTF-16 indexes, as the regular expressions' are. Code points are counted as
 * `Array.from` counts them: a surrogate pair is one, and so is a lone surrogate.
 */

/** Whether a UTF-16 code unit is one `\s` matches: ECMAScript's WhiteSpace and LineTerminator. */
export function isBlank(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Whether a UTF-16 code unit is one `\S` matches. */
export const isNotBlank = (code: number): boolean => !isBlank(code);

/**
 * Where the run of code units passing `test` that ends just before `end` begins (`end` when the
 * unit before `end` does not pass).
 */
export function runStartBefore(text: string, end: number, test: (code: number) => boolean): number {
  let start = end;
  while (start > 0 && test(text.charCodeAt(start - 1))) start--;
  return start;
}

/** `text` without the run of code units passing `test` it ends with (`text.replace(/[…]+$/, '')`). */
export function withoutEndRun(text: string, test: (code: number) => boolean): string {
  return text.slice(0, runStartBefore(text, text.length, test));
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Whether the code units at `at` and `at + 1` are one code point (a surrogate pair). */
const pairAt = (text: string, at: number) => isHighSurrogate(text.charCodeAt(at)) && isLowSurrogate(text.charCodeAt(at + 1));

/** The number of code points of `text` (`Array.from(text).length`). */
export function codePointCount(text: string): number {
  let pairs = 0;
  for (let at = 0; at + 1 < text.length; at++) {
    if (pairAt(text, at)) {
      pairs++;
      at++;
    }
  }
  return text.length - pairs;
}

/** The first `max` code points of `text` (`Array.from(text).slice(0, max).join('')`). */
export function firstCodePoints(text: string, max: number): string {
  let at = 0;
  for (let n = 0; n < max && at < text.length; n++) at += pairAt(text, at) ? 2 : 1;
  return text.slice(0, at);
}

/** Where the code point that ends just before `end` begins (`end` > 0). */
export function codePointStartBefore(text: string, end: number): number {
  return end >= 2 && pairAt(text, end - 2) ? end - 2 : end - 1;
}

/** Where the last `count` code points of `text` begin (0 when it has no more). */
export function lastCodePointsStart(text: string, count: number): number {
  let at = text.length;
  for (let n = 0; n < count && at > 0; n++) at = codePointStartBefore(text, at);
  return at;
}
