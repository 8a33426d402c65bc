/** Stage 3b: provider tokens, by their shapes (redactRules.ts). Part of the redaction engine (../redact.ts). */
import { TOKEN_RULES, type TokenRule } from '../redactRules.ts';
import { Run, marker } from './rules.ts';

export interface CompiledTokenRule {
  rule: TokenRule;
  regex: RegExp;
}

export const COMPILED_TOKEN_RULES: readonly CompiledTokenRule[] = TOKEN_RULES.map((rule) => {
  const b = rule.boundary ?? 'A-Za-z0-9_';
  const source = b === '' ? `(?:${rule.pattern})` : `(?<![${b}])(?:${rule.pattern})(?![${b}])`;
  return { rule, regex: new RegExp(source, rule.caseInsensitive ? 'gi' : 'g') };
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
