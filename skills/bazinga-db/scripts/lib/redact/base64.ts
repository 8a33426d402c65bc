/** Stage 3c: credentials wrapped in base64, on one line or wrapped over several. Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { charTable, forEachRun, inTable, range } from './runs.ts';

/** The characters of a base64 run, standard (`+/`) or URL-safe (`-_`), without its padding. */
export const BASE64_CHARACTERS = charTable(range('A', 'Z') + range('a', 'z') + range('0', '9') + '+/_-');
/** How long a run must be to be read as base64. */
export const MIN_BASE64_RUN = 16;

/**
 * Where a base64 run of at least MIN_BASE64_RUN characters that starts at `start` and ends at
 * `end` ends with its padding (at most two `=`), or -1 when more base64 or padding follows it (it
 * is no run of its own).
 */
export function paddedEnd(text: string, end: number): number {
  let padded = end;
  while (padded < end + 2 && text[padded] === '=') padded++;
  return text[padded] === '=' || inTable(text, padded, BASE64_CHARACTERS) ? -1 : padded;
}

/** A run alone on its line this long or longer may be base64 of a credential (a 16-character key is 24 characters of base64). */
export const MIN_SINGLE_RUN = 24;
/** Lines of one width this wide or wider, one under another, may be one base64 text wrapped (`base64 -w N`, PEM, a YAML block). */
export const MIN_WRAP_WIDTH = 16;
/** Base64 longer than this is not decoded (about 768 KB of text). */
export const MAX_BASE64 = 1 << 20;

/** A base64 text as it stands: where it starts and ends, and its characters without the line breaks. */
interface Base64Span {
  start: number;
  end: number;
  b64: string;
}

/**
 * From a run that ends its line, the lines below it of the same width (each after indentation),
 * and a last one no wider: one base64 text wrapped. Returns null when no line below continues it.
 */
export function wrappedFrom(text: string, start: number, end: number): Base64Span | null {
  const width = end - start;
  if (width < MIN_WRAP_WIDTH || text[end - 1] === '=') return null;
  const parts = [text.slice(start, end)];
  let last = end;
  let length = width;
  // A line that is nothing but a run (after indentation), maybe closing a string or a bracket.
  const line = /\r?\n[ \t]{0,64}([A-Za-z0-9+/_\-]+={0,2})(?=[ \t]*(?:["'`),;\]}]|\r?\n|$))/y;
  for (;;) {
    line.lastIndex = last;
    const m = line.exec(text);
    if (m === null) break;
    const run = m[1] as string;
    if (run.length > width || length + run.length > MAX_BASE64) break;
    parts.push(run);
    last = m.index + m[0].length;
    length += run.length;
    // A full line goes on only if it ends its line; a shorter one (or one with padding) is the last.
    if (run.length < width || run.endsWith('=') || !/^(?:\r?\n|$)/.test(text.slice(last, last + 2))) break;
  }
  return parts.length > 1 ? { start, end: last, b64: parts.join('') } : null;
}

/**
 * The text base64 holds, when it holds text: standard or URL-safe alphabet (not both), padding
 * optional, decoding to UTF-8 with no control characters but line breaks and tabs. Null for
 * binary (an image, a hash, a key) and for what is not base64.
 */
export function decodeBase64Text(b64: string): string | null {
  const body = b64.replace(/=+$/, '');
  if (body.length % 4 === 1 || /=/.test(body) || !/[a-z]/.test(body) || !/[A-Z]/.test(body)) return null;
  const urlSafe = /[-_]/.test(body);
  if (urlSafe && /[+/]/.test(body)) return null;
  return bytesAsText(Buffer.from(urlSafe ? body.replace(/-/g, '+').replace(/_/g, '/') : body, 'base64'));
}

/**
 * The text hex holds (as `xxd -p` or `od` write it: one case, even length), when it holds text as
 * decodeBase64Text means it; null otherwise.
 */
export function decodeHexText(hex: string): string | null {
  if (hex.length % 2 !== 0 || !/^(?:[0-9a-f]+|[0-9A-F]+)$/.test(hex) || !/[a-fA-F]/.test(hex)) return null;
  return bytesAsText(Buffer.from(hex, 'hex'));
}

/** Bytes that are UTF-8 text with no control characters but line breaks and tabs, as a string; null otherwise. */
export function bytesAsText(bytes: Buffer): string | null {
  if (bytes.length === 0) return null;
  const decoded = bytes.toString('utf8');
  if (!Buffer.from(decoded, 'utf8').equals(bytes) || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(decoded)) return null;
  return decoded;
}

/** The rule that names a run of base64 characters holding a secret (base64 or hex), or null when it holds none. */
const heldSecret = (run: string, holdsSecret: (decoded: string) => boolean): 'base64_credential' | 'encoded_credential' | null => {
  const b64 = decodeBase64Text(run);
  if (b64 !== null) return holdsSecret(b64) ? 'base64_credential' : null;
  const hex = decodeHexText(run);
  return hex !== null && holdsSecret(hex) ? 'encoded_credential' : null;
};

/** The first of the spans that holds a secret, and the rule that names it. */
function secretSpan(spans: (Base64Span | null)[], holdsSecret: (decoded: string) => boolean): { span: Base64Span; rule: string } | null {
  for (const span of spans) {
    const rule = span === null ? null : heldSecret(span.b64, holdsSecret);
    if (span !== null && rule !== null) return { span, rule };
  }
  return null;
}

/**
 * A credential wrapped in base64 (a Kubernetes secret's data, an encoded `.env`, EC2 user data, a
 * Basic header pasted alone, a Docker config whose `auth` is base64 again) or in hex (`xxd -p`): a
 * base64 or hex text, on one line or wrapped over lines of one width, whose decoded text `holdsSecret` says holds a secret
 * (the pattern rules find one in it) is replaced whole. Runs that decode to binary or to text
 * without a secret stay. Linear: each run is decoded once; a wrapped text that holds none is
 * passed over whole.
 */
export function redactBase64(text: string, run: Run, holdsSecret: (decoded: string) => boolean): string {
  const out: string[] = [];
  let from = 0;
  // The end of the last wrapped text read whole: a line inside it is not read as the start of another
  // (lines that each hold a secret under a block that does not decode whole are read once each).
  let readWhole = -1;
  forEachRun(text, BASE64_CHARACTERS, MIN_BASE64_RUN, (start, runEnd) => {
    const end = paddedEnd(text, runEnd);
    if (end === -1) return;
    const length = end - start;
    const wrapped = start >= readWhole && (text[end] === '\n' || (text[end] === '\r' && text[end + 1] === '\n')) ? wrappedFrom(text, start, end) : null;
    if (wrapped !== null) readWhole = wrapped.end;
    const single = length >= MIN_SINGLE_RUN && length <= MAX_BASE64 ? { start, end, b64: text.slice(start, end) } : null;
    // The lines together, else the first line alone (a base64 value above an unrelated line).
    const found = secretSpan([wrapped, single], holdsSecret);
    if (found === null) return wrapped?.end; // a wrapped text is passed over whole: its lines are not read again one by one
    const { span, rule } = found;
    run.hit(rule);
    out.push(text.slice(from, span.start), marker(rule));
    from = span.end;
    return span.end;
  });
  if (from === 0) return text;
  out.push(text.slice(from));
  return out.join('');
}
