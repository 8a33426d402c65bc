/** Stage 3c (continued): credentials written percent-encoded (a URL-encoded query or form value). Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { charTable, forEachRun, range } from './runs.ts';

/** The characters of a percent-encoded value: the URL's unreserved characters, `%` and `+` (a form's blank). */
export const PERCENT_CHARACTERS = charTable(range('A', 'Z') + range('a', 'z') + range('0', '9') + '%._~+-*!');
/** Shorter runs hold no key and a value worth finding. */
export const MIN_PERCENT_RUN = 16;
/** An encoded `=` or `:`: what a `key=value` or `key: value` becomes. */
const ENCODED_OPERATOR = /%3[DdAa]/;

/** A decoded text, and where each of its characters starts in the encoded one (one more entry: the end). */
export interface Decoded {
  text: string;
  at: number[];
}

/**
 * Percent-decodes an ASCII run (`+` read as a blank), keeping where each character came from.
 * Null when an escape is malformed or encodes a byte above ASCII (decodePercent reads those).
 */
export function decodeAsciiPercent(encoded: string): Decoded | null {
  let text = '';
  const at: number[] = [];
  for (let i = 0; i < encoded.length; ) {
    at.push(i);
    const ch = encoded[i] as string;
    if (ch !== '%') {
      text += ch === '+' ? ' ' : ch;
      i++;
      continue;
    }
    const hex = encoded.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex) || parseInt(hex, 16) >= 0x80) return null;
    text += String.fromCharCode(parseInt(hex, 16));
    i += 3;
  }
  at.push(encoded.length);
  return { text, at };
}

/** The text a percent-encoded run holds (`+` read as a blank), or null when it is not well formed. */
export function decodePercent(encoded: string): string | null {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** How many characters two texts share at their start and (after that) at their end. */
function sharedEnds(a: string, b: string): { head: number; tail: number } {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { head, tail };
}

/**
 * A run of URL characters holding an encoded `=` or `:` whose decoded text holds a secret
 * (`redactDecoded`, the pattern rules, changes it): `AWS_SECRET_ACCESS_KEY%3DwJal…`,
 * `…%3Faccess_token%3DL6pG…%26state%3D8f2c1a`. Where the run decodes to ASCII, the encoded
 * characters from the first change to the last are replaced by what the rules made of them (the
 * key and what follows the secret stay encoded); otherwise the run goes whole. Linear: each run
 * is decoded once.
 */
export function redactPercentEncoded(text: string, run: Run, redactDecoded: (decoded: string, run: Run) => string): string {
  if (!text.includes('%')) return text;
  const out: string[] = [];
  let from = 0;
  forEachRun(text, PERCENT_CHARACTERS, MIN_PERCENT_RUN, (start, end) => {
    const encoded = text.slice(start, end);
    if (!ENCODED_OPERATOR.test(encoded)) return;
    const ascii = decodeAsciiPercent(encoded);
    if (ascii !== null) {
      const inner = new Run();
      const redacted = redactDecoded(ascii.text, inner);
      if (redacted === ascii.text) return;
      const { head, tail } = sharedEnds(ascii.text, redacted);
      run.count(inner.hits);
      out.push(text.slice(from, start + (ascii.at[head] as number)), redacted.slice(head, redacted.length - tail));
      from = start + (ascii.at[ascii.text.length - tail] as number);
      return;
    }
    const decoded = decodePercent(encoded);
    if (decoded === null || redactDecoded(decoded, new Run()) === decoded) return;
    run.hit('encoded_credential');
    out.push(text.slice(from, start), marker('encoded_credential'));
    from = end;
  });
  if (from === 0) return text;
  out.push(text.slice(from));
  return out.join('');
}
