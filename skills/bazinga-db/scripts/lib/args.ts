/**
 * Tokenising a command's arguments. A token is a flag only when it names one of the command's
 * flags (`_` and `-` interchangeable); the token after a value flag is always its value. Every
 * other token is positional, up to the command's number of positional slots; the first token
 * past them, or a value flag at the very end, is recorded as a problem for the command to report
 * in its own words and at its own point in its check order.
 */

export type FlagKind = 'value' | 'bool' | 'multi';

export interface ParsedArgs {
  positionals: string[];
  /** Last value of each value flag, by canonical name (e.g. `--agent_id`). */
  values: Map<string, string>;
  /** Every value of each repeatable flag, in order. */
  multi: Map<string, string[]>;
  bools: Set<string>;
  problem?: { kind: 'unknown-flag' | 'unexpected' | 'missing-value'; token: string };
}

const normaliseFlag = (token: string) => token.replace(/-/g, '_');

export function tokenize(tokens: readonly string[], flags: Record<string, FlagKind>, maxPositionals: number): ParsedArgs {
  const byKey = new Map(Object.keys(flags).map((name) => [normaliseFlag(name), name]));
  const out: ParsedArgs = { positionals: [], values: new Map(), multi: new Map(), bools: new Set() };
  const note = (kind: NonNullable<ParsedArgs['problem']>['kind'], token: string) => {
    out.problem ??= { kind, token };
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    const name = token.startsWith('--') ? byKey.get(normaliseFlag(token)) : undefined;
    if (name !== undefined) {
      const kind = flags[name] as FlagKind;
      if (kind === 'bool') {
        out.bools.add(name);
        continue;
      }
      const value = tokens[i + 1];
      if (value === undefined) {
        note('missing-value', name);
        continue;
      }
      i++;
      if (kind === 'multi') out.multi.set(name, [...(out.multi.get(name) ?? []), value]);
      else out.values.set(name, value);
      continue;
    }
    if (out.positionals.length < maxPositionals) out.positionals.push(token);
    else note(token.startsWith('--') ? 'unknown-flag' : 'unexpected', token);
  }
  return out;
}
