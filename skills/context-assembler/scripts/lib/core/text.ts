/**
 * Text helpers for emitted strings. Pure; lengths are in code points. One line and the cut at a
 * word are bazinga-db's (it counts reasoning entries as they will be shown when it stores them).
 */
export { oneLine, shorten, shortenStored, truncateAtWord } from '../../../../bazinga-db/scripts/lib/index.ts';

/** True when nothing but redaction markers, punctuation and blanks is left. */
export function isRedactionEmptied(text: string): boolean {
  return !/[\p{L}\p{N}]/u.test(text.replace(/\[REDACTED[^\]]*\]/g, ''));
}
