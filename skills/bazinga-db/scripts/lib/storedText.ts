/**
 * The text of a value read from a text column. BAZINGA's tables declare their free-text columns
 * TEXT, which SQLite does not enforce: a row written by another tool may hold a BLOB there (or
 * NULL where the column allows it). Read as text it is what every text pass expects: a BLOB as
 * UTF-8 (bytes that are not UTF-8 become U+FFFD), NULL as the empty text, a number as its digits.
 * The row itself is never changed.
 */
export function storedText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8');
  return String(value);
}
