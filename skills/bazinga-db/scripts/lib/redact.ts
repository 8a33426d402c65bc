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
