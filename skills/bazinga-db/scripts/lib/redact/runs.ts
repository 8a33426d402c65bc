/**
 * Runs of characters from a set, found by a loop over character codes. A regex that finds such a
 * run (`[A-Za-z0-9+/=_-]{20,}` with a look-behind so it starts only where a run starts) is tried
 * at every position of the text; this reads each character once. Part of the redaction engine (../redact.ts).
 */

/** The characters of `chars` (ASCII only) as a table by character code. */
export function charTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const ch of chars) {
    const code = ch.charCodeAt(0);
    if (code >= 128) throw new Error(`charTable: ${JSON.stringify(ch)} is not ASCII`);
    table[code] = 1;
  }
  return table;
}

/** Every character from `from` to `to` (ASCII), for charTable: `range('a', 'z')`. */
export function range(from: string, to: string): string {
  let out = '';
  for (let code = from.charCodeAt(0); code <= to.charCodeAt(0); code++) out += String.fromCharCode(code);
  return out;
}

/** True when the character at `i` is in the table (false past the text's end). */
export const inTable = (text: string, i: number, table: Uint8Array): boolean => {
  const code = text.charCodeAt(i);
  return code < 128 && table[code] === 1;
};

/**
 * Calls `each(start, end)` for every maximal run of the table's characters at least `min` long,
 * in order. `each` may return where to go on from (at least `end`), to pass over what it read.
 */
export function forEachRun(text: string, table: Uint8Array, min: number, each: (start: number, end: number) => number | void): void {
  let i = 0;
  while (i < text.length) {
    if (!inTable(text, i, table)) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && inTable(text, i, table)) i++;
    if (i - start < min) continue;
    const resume = each(start, i);
    if (typeof resume === 'number' && resume > i) i = resume;
  }
}
