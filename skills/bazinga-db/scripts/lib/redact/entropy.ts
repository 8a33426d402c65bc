/** Stage 4: the entropy check (long random-looking tokens that are no obvious non-secret). Part of the redaction engine (../redact.ts). */
import { HOLD_CLOSE, HOLD_OPEN, Run, marker } from './rules.ts';
import { NOT_A_VALUE, keyWords } from './keys.ts';
import { charTable, forEachRun, range } from './runs.ts';

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  // Tokens are ASCII: those characters are counted in an array (and the codes seen listed), any other (by code point) in a map.
  const seen: number[] = [];
  let others: Map<string, number> | null = null;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    if (code < 128) {
      const n = ASCII_COUNTS[code] ?? 0;
      if (n === 0) seen.push(code);
      ASCII_COUNTS[code] = n + 1;
    } else {
      const ch = String.fromCodePoint(s.codePointAt(i) as number);
      if (ch.length === 2) i++;
      others ??= new Map();
      others.set(ch, (others.get(ch) ?? 0) + 1);
    }
  }
  let h = 0;
  for (const code of seen) {
    const p = (ASCII_COUNTS[code] as number) / s.length;
    ASCII_COUNTS[code] = 0;
    h -= p * Math.log2(p);
  }
  for (const n of others?.values() ?? []) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}
/** shannonEntropy's counts of ASCII characters, all zero between calls. */
const ASCII_COUNTS = new Uint32Array(128);

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Words that, just before a hex run, say it is a content hash or a commit, not a credential. */
export const HASH_CONTEXT_RE =
  /(?:commit|commits|sha\d*|hash|checksum|integrity|digest|revision|rev|merge|head|blob|tree|etag|object|cherry-pick|revert|fingerprint|(?:rsa|dsa|ecdsa|gpg|pgp|public|signing) key|\bh1|\bid(?:-\d)?|request-id|trace-id|span-id|ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+)\W{0,4}$/i;
/** Words that, shortly before a hex run, say it is a credential. */
export const SECRET_CONTEXT_RE = /(?:key|secret|token|passw|auth|credential|signature|signing)[^\n]{0,12}$/i;

/** A path: absolute, or relative with segments ending in a file extension or all lower-case. */
export function isPathLike(token: string): boolean {
  // Absolute paths (`/var/lib/…`, `~/Library/…`): any segments.
  if (/^\/[\w.-]+(?:\/[\w.-]*)+$/.test(token)) return true;
  if (!/^[\w.-]+(?:\/[\w.-]+)+\/?$/.test(token)) return false;
  return /\.[A-Za-z0-9]{1,8}$/.test(token) || token.split('/').every((seg) => /^[a-z0-9_.-]*$/.test(seg));
}

/** True when base64 text decodes to ordinary readable text (so it is data, not a key). */
export function decodesToText(candidate: string): boolean {
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(candidate)) return false;
  // Node's base64 decoder reads the URL-safe alphabet (`-`, `_`) as well.
  const bytes = Buffer.from(candidate, 'base64');
  if (bytes.length < 12) return false;
  let printable = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if ((b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d || b === 0x09) printable++;
  }
  return printable / bytes.length >= 0.95;
}

/** The characters of a candidate token for the entropy check: base64/hex-like. */
export const TOKEN_CHARACTERS = charTable(range('A', 'Z') + range('a', 'z') + range('0', '9') + '+/=_-');
/** How long a run of TOKEN_CHARACTERS must be to be checked. */
export const MIN_ENTROPY_TOKEN = 20;

/**
 * True when a long token looks like a credential: high-entropy base64-like (≥ 20 chars, > 4.5
 * bits/char), or hex (≥ 32 chars, > 3.0 bits/char) that a key word shortly before calls a secret;
 * and not an obvious non-secret (UUID, a hash in a commit/checksum/lockfile context, a path,
 * base64 of readable text).
 */
export function isHighEntropySecret(token: string, before: string, after = ''): boolean {
  if (UUID_RE.test(token)) return false;
  if (isPathLike(token)) return false;
  // A path whose file name has an extension: the run stops at its dot (`bazinga/prompts/<hashed
  // session>/developer_CART_2` then `.md`), so the path is judged with its extension.
  if (token.includes('/') && isPathLike(token + fileExtensionAt(after))) return false;
  if (/[/.\\@]$/.test(before) || /(?:^|[\s(])[.~]?\/\S*$/.test(before)) return false;
  if (/^sha\d+-/i.test(token) || /(?:sha\d*|md5)[:-]$/i.test(before)) return false;
  if (/^[0-9a-f]+$/i.test(token)) {
    if (token.length < 32) return false;
    if (HASH_CONTEXT_RE.test(before) || /[@#]$/.test(before)) return false;
    return SECRET_CONTEXT_RE.test(before) && shannonEntropy(token) > 3.0;
  }
  if (/^[A-Za-z_-]+$/.test(token) || /^[0-9_-]+$/.test(token) || isPlainWords(token)) return false;
  // camelCase identifiers; each segment is maximal (the look-ahead), so a run of digits splits one way only
  if (/^[A-Za-z][a-z]+(?:[A-Z0-9][a-z0-9]+(?![a-z0-9]))+$/.test(token)) return false;
  // The cheapest test first: most tokens are not random enough.
  return shannonEntropy(token) > 4.5 && !HASH_CONTEXT_RE.test(before) && !decodesToText(token);
}

/** A file extension that starts `text` (`.md`, `.json`, `.ts`: lower case, then a boundary), or ''. */
function fileExtensionAt(text: string): string {
  return /^\.[a-z][a-z0-9]{0,7}(?![A-Za-z0-9])/.exec(text)?.[0] ?? '';
}

/**
 * A run made of plain words and numbers joined by `=`, `-`, `_`, `.` or `/`, each word lower-case,
 * upper-case or Capitalised (`NODE_OPTIONS=--max-old-space-size=4096`, `--remote-debugging-port=9222`):
 * a setting, not a random token, however many different characters it holds. A random token mixes
 * cases and digits inside its pieces (`wJalrXUtnFEMI/K7MDENG`).
 */
export function isPlainWords(token: string): boolean {
  return PLAIN_WORDS.test(token);
}
const PLAIN_WORD = '(?:[a-z]+|[A-Z]+|[A-Z][a-z]+|[0-9]+)';
const PLAIN_WORDS = new RegExp(`^[-=_./]*${PLAIN_WORD}(?:[-=_./]+${PLAIN_WORD})*[-=_./]*$`);

export const PUBLIC_BLOCK_BEGIN = /-----BEGIN ((?:[A-Z0-9]{1,12} ){0,3}(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|PUBLIC KEY BLOCK|SIGNATURE|SIGNED MESSAGE))-----/g;

/** Public keys, certificates and signatures are random by design and not secret: set aside from the entropy check. */
export function holdPublicBlocks(text: string, held: string[]): string {
  if (!text.includes('-----BEGIN ')) return text;
  let out = '';
  let from = 0;
  PUBLIC_BLOCK_BEGIN.lastIndex = 0;
  for (let m = PUBLIC_BLOCK_BEGIN.exec(text); m; m = PUBLIC_BLOCK_BEGIN.exec(text)) {
    const endTag = `-----END ${m[1]}-----`;
    const end = text.indexOf(endTag, m.index + m[0].length);
    if (end === -1) break;
    held.push(text.slice(m.index, end + endTag.length));
    out += text.slice(from, m.index) + `${HOLD_OPEN}${held.length - 1}${HOLD_CLOSE}`;
    from = end + endTag.length;
    PUBLIC_BLOCK_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}

export function redactHighEntropy(text: string, run: Run): string {
  const out: string[] = [];
  let from = 0;
  forEachRun(text, TOKEN_CHARACTERS, MIN_ENTROPY_TOKEN, (start, end) => {
    const token = text.slice(start, end);
    const replaced = entropyReplacement(token, text.slice(Math.max(0, start - 32), start), text.slice(end, end + 10), run);
    if (replaced === token) return;
    out.push(text.slice(from, start), replaced);
    from = end;
  });
  if (from === 0) return text;
  out.push(text.slice(from));
  return out.join('');
}

/** What a candidate token becomes: itself, a marker, or (`KEY=value` in one run) the key and a marker. */
function entropyReplacement(token: string, before: string, after: string, run: Run): string {
  if (token.includes('REDACTED')) return token;
  // KEY=value in one run: judge the value alone and keep the key name.
  const kv = /^([A-Za-z_][\w.-]{0,63}=)([^=]+=*)$/.exec(token);
  if (kv) {
    const [, key, value] = kv as unknown as [string, string, string];
    if (value.length < 20 || NOT_A_VALUE.has(keyWords(key).pop() ?? '') || !isHighEntropySecret(value, before + key)) return token;
    run.hit('high_entropy');
    return key + marker('high_entropy');
  }
  if (!isHighEntropySecret(token, before, after)) return token;
  run.hit('high_entropy');
  return marker('high_entropy');
}
