/**
 * Secret redaction, one module for both places it runs:
 * - at ingest, by bazinga-db, with the original tool's sixteen patterns (`redactAtIngest`), so
 *   rows written here look like rows the original would have written, minus the secrets;
 * - at emit, by the context-assembler (added with the assembler), over every string it prints.
 *
 * Pure functions: text in, text out.
 */

/** Python's Unicode-aware `\b`, before and after a word: letters, digits and `_` of any script. */
const WB_BEFORE = '(?<![\\p{L}\\p{N}_])';
const WB_AFTER = '(?![\\p{L}\\p{N}_])';
const SEP = '\\s*[=:]\\s*';
const Q = '["\']?';

interface IngestPattern {
  name: string;
  regex: RegExp;
  replace: string | ((match: string, ...groups: string[]) => string);
}

const keepKey = (_m: string, key: string) => `${key}=REDACTED`;

/** The original's SECRET_PATTERNS, in its order; each sees the previous one's output. */
const INGEST_PATTERNS: readonly IngestPattern[] = [
  { name: 'api_key', regex: new RegExp(`${WB_BEFORE}(api[_-]?key)${SEP}${Q}[A-Za-z0-9_\\-]{20,}${Q}`, 'giu'), replace: keepKey },
  { name: 'password', regex: new RegExp(`${WB_BEFORE}(secret|password|passwd|pwd)${SEP}${Q}[^\\s"']+${Q}`, 'giu'), replace: keepKey },
  { name: 'token', regex: new RegExp(`${WB_BEFORE}(token)${SEP}${Q}[A-Za-z0-9_.\\-]{20,}${Q}`, 'giu'), replace: keepKey },
  { name: 'anthropic', regex: new RegExp(`${WB_BEFORE}sk-ant-[A-Za-z0-9\\-]{20,}${WB_AFTER}`, 'gu'), replace: 'ANTHROPIC_KEY_REDACTED' },
  { name: 'openai', regex: new RegExp(`${WB_BEFORE}sk-[A-Za-z0-9\\-]{20,}${WB_AFTER}`, 'gu'), replace: 'OPENAI_KEY_REDACTED' },
  { name: 'github_token', regex: new RegExp(`${WB_BEFORE}ghp_[A-Za-z0-9]{36}${WB_AFTER}`, 'gu'), replace: 'GITHUB_TOKEN_REDACTED' },
  { name: 'github_oauth', regex: new RegExp(`${WB_BEFORE}gho_[A-Za-z0-9]{36}${WB_AFTER}`, 'gu'), replace: 'GITHUB_OAUTH_REDACTED' },
  { name: 'github_pat', regex: new RegExp(`${WB_BEFORE}github_pat_[A-Za-z0-9_]{22,}${WB_AFTER}`, 'gu'), replace: 'GITHUB_PAT_REDACTED' },
  { name: 'aws_access_key', regex: new RegExp(`${WB_BEFORE}AKIA[0-9A-Z]{16}${WB_AFTER}`, 'gu'), replace: 'AWS_ACCESS_KEY_REDACTED' },
  { name: 'aws_secret', regex: new RegExp(`${WB_BEFORE}(aws[_-]?secret[_-]?access[_-]?key)${SEP}${Q}[A-Za-z0-9/+=]{40}${Q}`, 'giu'), replace: keepKey },
  { name: 'private_key', regex: /-----BEGIN (?:RSA |EC |DSA )?PRIVATE KEY-----[\s\S]*?-----END (?:RSA |EC |DSA )?PRIVATE KEY-----/gu, replace: 'PRIVATE_KEY_REDACTED' },
  { name: 'ssh_key', regex: /-----BEGIN OPENSSH PRIVATE KEY-----[\s\S]*?-----END OPENSSH PRIVATE KEY-----/gu, replace: 'SSH_KEY_REDACTED' },
  { name: 'slack', regex: new RegExp(`${WB_BEFORE}xox[baprs]-[A-Za-z0-9\\-]{10,}${WB_AFTER}`, 'gu'), replace: 'SLACK_TOKEN_REDACTED' },
  { name: 'stripe_pk', regex: new RegExp(`${WB_BEFORE}pk_(?:test|live)_[A-Za-z0-9]{10,}${WB_AFTER}`, 'gu'), replace: 'STRIPE_PK_REDACTED' },
  { name: 'stripe_sk', regex: new RegExp(`${WB_BEFORE}sk_(?:test|live)_[A-Za-z0-9]{10,}${WB_AFTER}`, 'gu'), replace: 'STRIPE_SK_REDACTED' },
  { name: 'bearer', regex: new RegExp(`${WB_BEFORE}(authorization):\\s*bearer\\s+[A-Za-z0-9._\\-]{10,}`, 'giu'), replace: (_m: string, key: string) => `${key}: Bearer REDACTED` },
];

export interface RedactionResult {
  text: string;
  /** True when any pattern matched, even if the replacement equals what it replaced. */
  redacted: boolean;
}

/**
 * Applies the original tool's sixteen secret patterns in order. `redacted` is true when any of
 * them matched at least once (so already-redacted text such as `password=REDACTED` reports true,
 * as the original does).
 */
export function redactAtIngest(text: string): RedactionResult {
  let out = text;
  let redacted = false;
  for (const p of INGEST_PATTERNS) {
    p.regex.lastIndex = 0;
    if (!p.regex.test(out)) continue;
    redacted = true;
    p.regex.lastIndex = 0;
    out = typeof p.replace === 'string' ? out.replace(p.regex, p.replace) : out.replace(p.regex, p.replace as (m: string, ...g: string[]) => string);
  }
  return { text: out, redacted };
}

// ------------------------------------------------------------------------------------- emit

export type RedactionMode = 'pattern_only' | 'entropy' | 'both';
export const REDACTION_MODES: readonly RedactionMode[] = ['pattern_only', 'entropy', 'both'];

export interface EmitRedactionOptions {
  mode: RedactionMode;
  /** Regexes; text they match is never redacted. */
  allowlist: readonly RegExp[];
}

interface EmitPattern {
  kind: string;
  regex: RegExp;
  /** Builds the replacement from the match; `kind` says what was removed. */
  replace: (m: string, ...groups: string[]) => string;
}

const tag = (kind: string) => `[REDACTED:${kind}]`;

/** Key names whose value is a secret whatever it looks like (DB_PASS-style names included). */
const SECRET_KEYS =
  '(?:[\\w.-]*(?:password|passwd|pwd|passphrase|secret|private[_-]?key|credentials?)[\\w.-]*|(?:[\\w.-]*[_.-])?(?:db|database|smtp|mail|email|redis|mysql|mongo|pg|postgres|ftp|sftp|admin|root|user|key|ldap|proxy|amqp|rabbitmq|sql|ssh)[_.-]?pass(?![\\w]))';
/** Key names whose value is a secret when it looks like a token (long, with a digit); `auth` only as a whole name or suffix (DOCKER_AUTH). */
const TOKEN_KEYS =
  '(?:[\\w.-]*(?:api[_-]?key|apikey|access[_-]?key|auth[_-]?key|token|session[_-]?key|signing[_-]?key|(?:account|client|service|master|encryption)[_-]?key)[\\w.-]*' +
  '|(?<![\\w.-])(?:[\\w.-]*[_.-])?auth(?![\\w]))';
/**
 * A key name starts where a run of name characters starts. Without this anchor the leading
 * `[\w.-]*` of the key patterns rescans a long run from every offset (quadratic: 40 KB took 4 s).
 */
const KEY_START = '(?<![\\w.-])';
/** `=>` before `=`: otherwise `'password' => 'x'` matches `=` and takes `>` for the value. */
const ASSIGN = `(["']?)\\s*(=>|[=:])\\s*`;

/**
 * The emit patterns, most specific first. Each keeps what identifies the secret (the key name,
 * the user of a connection string) and replaces only the value.
 */
const EMIT_PATTERNS: readonly EmitPattern[] = [
  {
    kind: 'private_key',
    regex: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END \1?(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replace: () => tag('private_key'),
  },
  {
    kind: 'jwt',
    regex: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
    replace: () => tag('jwt'),
  },
  {
    kind: 'connection_string',
    // The user may be empty: `redis://:password@host`.
    // Anchored at the start of the scheme: an unanchored scheme rescans long words from every offset.
    regex: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)([^\s:/@]*):([^\s@/]+)@/gi,
    replace: (_m, scheme: string, user: string) => `${scheme}${user}:${tag('password')}@`,
  },
  {
    kind: 'bearer',
    regex: /\b(bearer|basic|token)(\s+)([A-Za-z0-9._~+/-]{16,}=*)/gi,
    replace: (_m, scheme: string, space: string, value: string) =>
      /\d/.test(value) || value.length >= 24 ? `${scheme}${space}${tag('credential')}` : _m,
  },
  {
    kind: 'vendor_key',
    regex: new RegExp(
      [
        'sk-ant-[A-Za-z0-9_-]{20,}',
        'sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}',
        'gh[pousr]_[A-Za-z0-9]{36,}',
        'github_pat_[A-Za-z0-9_]{22,}',
        '(?:AKIA|ASIA)[0-9A-Z]{16}',
        'xox[abeprs]-[A-Za-z0-9-]{10,}',
        'xapp-[A-Za-z0-9-]{10,}',
        '(?:sk|pk|rk)_(?:test|live)_[A-Za-z0-9]{10,}',
        'AIza[0-9A-Za-z_-]{35}',
        'glpat-[A-Za-z0-9_-]{20,}',
        'npm_[A-Za-z0-9]{36}',
        'SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}',
        'hf_[A-Za-z0-9]{30,}',
        'shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}',
        'dop_v1_[a-f0-9]{64}',
        'SK[0-9a-fA-F]{32}',
        'T[A-Z0-9]{8,}/B[A-Z0-9]{8,}/[A-Za-z0-9]{24}', // the secret path of a Slack incoming webhook
      ]
        .map((p) => `(?<![A-Za-z0-9_])${p}(?![A-Za-z0-9_])`)
        .join('|'),
      'g',
    ),
    replace: () => tag('api_key'),
  },
  {
    kind: 'secret_assignment',
    regex: new RegExp(`(["']?)${KEY_START}(${SECRET_KEYS})${ASSIGN}("[^"\\n]*"|'[^'\\n]*'|[^\\s"',;}]+)`, 'gi'),
    replace: (m, q1: string, key: string, q2: string, op: string, value: string) =>
      isAlreadyRedacted(value) ? m : `${q1}${key}${q2}${op === '=>' ? ' => ' : op === ':' ? ': ' : '='}${quoteLike(value, tag('secret'))}`,
  },
  {
    // Command lines: `--password hunter2`, `--api-key abc…` (the `=` form is an assignment above).
    kind: 'cli_flag',
    regex: /(?<![\w-])(--?(?:password|passwd|pwd|secret|client-secret|token|api-key|apikey|access-key))(\s+)(?!-)("[^"\n]*"|'[^'\n]*'|[^\s"']+)/gi,
    replace: (m, flag: string, space: string, value: string) => (isAlreadyRedacted(value) ? m : `${flag}${space}${quoteLike(value, tag('secret'))}`),
  },
  {
    kind: 'token_assignment',
    regex: new RegExp(`(["']?)${KEY_START}(${TOKEN_KEYS})${ASSIGN}("[^"\\n]*"|'[^'\\n]*'|[^\\s"',;}]+)`, 'gi'),
    replace: (m, q1: string, key: string, q2: string, op: string, value: string) => {
      const bare = value.replace(/^["']|["']$/g, '');
      // Long enough to be a token: 20+ characters, or 12+ with a digit (prose after "token:" is neither).
      if (isAlreadyRedacted(value) || /\s/.test(bare) || !(bare.length >= 20 || (bare.length >= 12 && /\d/.test(bare)))) return m;
      return `${q1}${key}${q2}${op === '=>' ? ' => ' : op === ':' ? ': ' : '='}${quoteLike(value, tag('token'))}`;
    },
  },
];

function isAlreadyRedacted(value: string): boolean {
  return /^["']?(?:\[?REDACTED[^\s"']*\]?|\*{3,})["']?$/.test(value);
}

function quoteLike(original: string, replacement: string): string {
  const q = original[0];
  return q === '"' || q === "'" ? `${q}${replacement}${q}` : replacement;
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Words that, just before a hex run, say it is a content hash or a commit, not a credential. */
const HASH_CONTEXT_RE = /(?:commit|commits|sha\d*|hash|checksum|integrity|digest|revision|rev|merge|head|blob|tree|etag|object|cherry-pick|revert)\W{0,4}$/i;

/** A relative path: slash-separated segments, ending in a file extension or all lower-case segments. */
function isPathLike(token: string): boolean {
  if (!/^[\w.-]+(?:\/[\w.-]+)+\/?$/.test(token)) return false;
  return /\.[A-Za-z0-9]{1,8}$/.test(token) || token.split('/').every((seg) => /^[a-z0-9_.-]*$/.test(seg));
}

/** True when base64 text decodes to ordinary readable text (so it is data, not a key). */
function decodesToText(candidate: string): boolean {
  const normalised = candidate.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]+=*$/.test(normalised)) return false;
  const bytes = Buffer.from(normalised, 'base64');
  if (bytes.length < 12) return false;
  let printable = 0;
  for (const b of bytes) if ((b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d || b === 0x09) printable++;
  return printable / bytes.length >= 0.95;
}

/** Candidate tokens for the entropy check: runs of base64/hex-like characters. */
const TOKEN_RE = /[A-Za-z0-9+/=_-]{20,}/g;

/**
 * True when a long token looks like a credential: high-entropy base64-like (≥ 20 chars, > 4.5
 * bits/char) or hex (≥ 32 chars, > 3.0 bits/char), and not an obvious non-secret (UUID, a hash
 * in a commit/checksum/lockfile context, a path, base64 of readable text).
 */
function isHighEntropySecret(token: string, before: string): boolean {
  if (UUID_RE.test(token)) return false;
  if (isPathLike(token)) return false;
  if (/[/.\\]$/.test(before) || /(?:^|[\s(])[.~]?\/\S*$/.test(before)) return false;
  if (/^sha\d+-/i.test(token) || /(?:sha\d*|md5)[:-]$/i.test(before)) return false;
  if (/^[0-9a-f]+$/i.test(token)) {
    if (token.length < 32) return false;
    if (HASH_CONTEXT_RE.test(before) || /[@#]$/.test(before)) return false;
    return shannonEntropy(token) > 3.0;
  }
  if (/^[A-Za-z_-]+$/.test(token) || /^[0-9_-]+$/.test(token)) return false;
  if (HASH_CONTEXT_RE.test(before)) return false;
  if (decodesToText(token)) return false;
  return shannonEntropy(token) > 4.5;
}

function redactHighEntropy(text: string): { text: string; count: number } {
  let count = 0;
  const out = text.replace(TOKEN_RE, (token: string, offset: number) => {
    if (token.startsWith('REDACTED')) return token;
    const before = text.slice(Math.max(0, offset - 24), offset);
    // KEY=value in one run: judge the value alone and keep the key name (ENCRYPTION_KEY=[REDACTED:high_entropy]).
    const kv = /^([A-Za-z_][\w.-]*=)([^=]+=*)$/.exec(token);
    if (kv) {
      const [, key, value] = kv as unknown as [string, string, string];
      if (value.length < 20 || !isHighEntropySecret(value, before + key)) return token;
      count++;
      return key + tag('high_entropy');
    }
    if (!isHighEntropySecret(token, before)) return token;
    count++;
    return tag('high_entropy');
  });
  return { text: out, count };
}

export interface EmitRedactionResult {
  text: string;
  /** How many values were replaced. */
  count: number;
}

const PLACEHOLDER = (i: number) => `\u0000${i}\u0000`;

/**
 * Redacts a string about to be emitted (summary, reasoning, error text, strategy): the emit
 * patterns (unless mode is `entropy`) and the high-entropy check (unless `pattern_only`).
 * Allowlisted matches are set aside first and put back unchanged.
 */
export function redactForOutput(text: string, opts: EmitRedactionOptions): EmitRedactionResult {
  const kept: string[] = [];
  let work = text;
  for (const allow of opts.allowlist) {
    const re = new RegExp(allow.source, allow.flags.includes('g') ? allow.flags : allow.flags + 'g');
    work = work.replace(re, (m) => {
      kept.push(m);
      return PLACEHOLDER(kept.length - 1);
    });
  }
  let count = 0;
  if (opts.mode !== 'entropy') {
    for (const p of EMIT_PATTERNS) {
      p.regex.lastIndex = 0;
      work = work.replace(p.regex, (...args: unknown[]) => {
        const m = args[0] as string;
        const groups = args.slice(1, -2).map((g) => (typeof g === 'string' ? g : ''));
        const replaced = p.replace(m, ...groups);
        if (replaced !== m) count++;
        return replaced;
      });
    }
  }
  if (opts.mode !== 'pattern_only') {
    const r = redactHighEntropy(work);
    work = r.text;
    count += r.count;
  }
  // eslint-disable-next-line no-control-regex
  work = work.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => kept[Number(i)] ?? '');
  return { text: work, count };
}
