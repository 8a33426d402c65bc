/** Stage 3b: provider tokens, by their shapes (redactRules.ts). Part of the redaction engine (../redact.ts). */
import { TOKEN_RULES, type TokenRule } from '../redactRules.ts';
import { Run, marker } from './rules.ts';

export interface CompiledTokenRule {
  rule: TokenRule;
  regex: RegExp;
  /** The same, matching once (no `g`): for one string at a time. */
  once: RegExp;
}

export const COMPILED_TOKEN_RULES: readonly CompiledTokenRule[] = TOKEN_RULES.map((rule) => {
  const b = rule.boundary ?? 'A-Za-z0-9_';
  const source = b === '' ? `(?:${rule.pattern})` : `(?<![${b}])(?:${rule.pattern})(?![${b}])`;
  return { rule, regex: new RegExp(source, rule.caseInsensitive ? 'gi' : 'g'), once: new RegExp(source, rule.caseInsensitive ? 'i' : '') };
});

export const ALL_NEEDLES = [...new Set(TOKEN_RULES.flatMap((r) => r.needles))].sort((a, b) => b.length - a.length);

/**
 * Every rule's needles in one look-ahead, longest first: tried at every position, it names the
 * longest needle starting there; the shorter ones it hides are those it contains (CONTAINED).
 */
export const NEEDLES = new RegExp(`(?=(${ALL_NEEDLES.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')}))`, 'g');

/** For each needle, the needles inside it (itself included). */
export const CONTAINED = new Map(ALL_NEEDLES.map((n) => [n, ALL_NEEDLES.filter((m) => n.includes(m))]));

/**
 * Runs the token rules whose needles occur in the text (one scan instead of an `includes` per
 * needle, which cost more than the rules themselves on a megabyte). The needles are found once, on
 * the input: a replacement only removes text and inserts a bracketed marker, which no token pattern
 * matches, so it never makes a rule match that could not match before.
 */
export function redactTokens(text: string, run: Run): string {
  const present = new Set<string>();
  for (const m of text.toLowerCase().matchAll(NEEDLES)) for (const n of CONTAINED.get(m[1] as string) ?? []) present.add(n);
  if (present.size === 0) return text;
  let out = text;
  for (const { rule, regex } of COMPILED_TOKEN_RULES) {
    if (!rule.needles.some((n) => present.has(n))) continue;
    regex.lastIndex = 0;
    out = out.replace(regex, (_m: string, kept: unknown) => {
      run.hit(rule.id);
      return (rule.keepsPrefix && typeof kept === 'string' ? kept : '') + marker(rule.id);
    });
  }
  return out;
}

/**
 * A provider token wrapped at a line's end (a width-limited log, a key pasted into a fence): a run
 * of token characters ending one line and a next line holding nothing but another run, whose
 * joined text a token rule matches across the break where the first part alone does not. The token's part on
 * the first line becomes its marker, the rest a continuation marker; the break stays.
 */
const WRAPPED = /(?<![A-Za-z0-9_\-])([A-Za-z0-9_\-]{6,512})(\r?\n[ \t]{0,64})([A-Za-z0-9_\-]{4,512})(?=[ \t]{0,64}["'`]?[ \t]{0,64}(?:\r?\n|$))/g;

export function redactWrappedTokens(text: string, run: Run): string {
  if (!text.includes('\n')) return text;
  return text.replace(WRAPPED, (m, head: string, gap: string, tail: string) => {
    const joined = head + tail;
    const lower = joined.toLowerCase();
    if (!ALL_NEEDLES.some((n) => lower.includes(n))) return m;
    for (const { rule, once } of COMPILED_TOKEN_RULES) {
      const hit = once.exec(joined);
      // Only a token that the break cut: it starts on the first line and ends on the second, and
      // the first line's part alone is no such token (else the next line is a line of its own).
      if (!hit || hit.index >= head.length || hit.index + hit[0].length <= head.length) continue;
      if (once.test(head)) continue;
      run.hit(rule.id);
      run.hit('continuation');
      const end = hit.index + hit[0].length - head.length;
      return head.slice(0, hit.index) + marker(rule.id) + gap + marker('continuation') + tail.slice(end);
    }
    return m;
  });
}

/**
 * A base64 run long enough to wrap a credential (a 16-character key is 24 characters of base64),
 * on one line or wrapped as the `base64` tool and PEM-like files wrap it (lines of 64 or 76).
 */
const BASE64_RUN =
  /(?<![A-Za-z0-9+/=_\-])((?:(?:[A-Za-z0-9+/]{76}|[A-Za-z0-9+/]{64})\r?\n[ \t]{0,64}){1,256}[A-Za-z0-9+/]{1,76}={0,2}|[A-Za-z0-9+/]{24,16384}={0,2})(?![A-Za-z0-9+/=_\-])/g;

/**
 * A known credential wrapped in base64 (a Kubernetes secret's data, a Basic header pasted alone,
 * an encoded config, a Docker config whose `auth` is base64 again): a base64 run whose decoded
 * bytes are UTF-8 text and hold a provider token (also inside one more level of base64) is
 * replaced whole. Runs that decode to binary (images, hashes) or to text without a token stay.
 */
export function redactBase64Wrapped(text: string, run: Run, depth = 0): string {
  return text.replace(BASE64_RUN, (m, wrapped: string) => {
    const b64 = wrapped.replace(/\s+/g, '');
    if (b64.length % 4 !== 0 || !/[a-z]/.test(b64) || !/[A-Z]/.test(b64)) return m;
    const bytes = Buffer.from(b64, 'base64');
    // Text only (UTF-8, no control characters but line breaks and tabs): binary stays as it is.
    const decoded = bytes.toString('utf8');
    if (bytes.length === 0 || !Buffer.from(decoded, 'utf8').equals(bytes) || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffd]/.test(decoded)) return m;
    const inner = new Run();
    let redacted = redactTokens(redactWrappedTokens(decoded, inner), inner);
    // Base64 inside base64 (a Docker config's `auth`): one level further.
    if (redacted === decoded && depth < 1) redacted = redactBase64Wrapped(decoded, inner, depth + 1);
    if (redacted === decoded) return m;
    run.hit('base64_credential');
    return marker('base64_credential');
  });
}
