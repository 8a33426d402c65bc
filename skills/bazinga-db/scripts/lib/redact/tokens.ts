/** Stage 3b: provider tokens, by their shapes (redactRules.ts). Part of the redaction engine (../redact.ts). */
import { TOKEN_RULES, type TokenRule } from '../redactRules.ts';
import { Run, marker } from './rules.ts';

export interface CompiledTokenRule {
  rule: TokenRule;
  regex: RegExp;
  /** The same, matching once (no `g`): for one string at a time. */
  once: RegExp;
  /** The same, matching a whole string only. */
  whole: RegExp;
}

export const COMPILED_TOKEN_RULES: readonly CompiledTokenRule[] = TOKEN_RULES.map((rule) => {
  const b = rule.boundary ?? 'A-Za-z0-9_';
  const source = b === '' ? `(?:${rule.pattern})` : `(?<![${b}])(?:${rule.pattern})(?![${b}])`;
  const flags = rule.caseInsensitive ? 'i' : '';
  return { rule, regex: new RegExp(source, flags + 'g'), once: new RegExp(source, flags), whole: new RegExp(`^(?:${source})$`, flags) };
});

export const ALL_NEEDLES = [...new Set(TOKEN_RULES.flatMap((r) => r.needles))].sort((a, b) => b.length - a.length);

/** The needles of one character: found with `includes` (in ordinary text they start at every few positions). */
const ONE_CHARACTER_NEEDLES = ALL_NEEDLES.filter((n) => n.length === 1);
/** The others, each written as a regex source. */
const LONGER_NEEDLE_SOURCES = ALL_NEEDLES.filter((n) => n.length > 1).map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));

/**
 * Every rule's needles of two characters or more in one look-ahead, longest first: tried at every
 * position, it names the longest needle starting there; the shorter ones it hides are those it
 * contains (CONTAINED).
 */
export const NEEDLES = new RegExp(`(?=(${LONGER_NEEDLE_SOURCES.join('|')}))`, 'g');

/** The needles of two characters or more, in one case-insensitive regex. */
const LONG_NEEDLES = new RegExp(LONGER_NEEDLE_SOURCES.join('|'), 'i');
/** The rules whose needle is one character, by shape: a Discord token's first dotted part, Mailgun's hex-hex-hex form. */
const ONE_CHARACTER_NEEDLE_SHAPES = /[MNO][A-Za-z0-9_-]{23,27}\.|[0-9a-f]{32}-/;

/** False when no token rule can match in a text (none of their needles, nor the shapes of those whose needle is one character). */
export function mayHoldToken(text: string): boolean {
  return LONG_NEEDLES.test(text) || ONE_CHARACTER_NEEDLE_SHAPES.test(text);
}

/** For each needle, the needles inside it (itself included). */
export const CONTAINED = new Map(ALL_NEEDLES.map((n) => [n, ALL_NEEDLES.filter((m) => n.includes(m))]));

/** The needles that occur in a text (one scan for the longer needles, one `includes` for each one-character needle). */
export function needlesIn(text: string): Set<string> {
  const lower = text.toLowerCase();
  const present = new Set<string>();
  for (const m of lower.matchAll(NEEDLES)) for (const n of CONTAINED.get(m[1] as string) ?? []) present.add(n);
  for (const n of ONE_CHARACTER_NEEDLES) if (lower.includes(n)) present.add(n);
  return present;
}

/**
 * Runs the token rules whose needles occur in the text (one scan instead of an `includes` per
 * needle, which cost more than the rules themselves on a megabyte). The needles are found once, on
 * the input: a replacement only removes text and inserts a bracketed marker, which no token pattern
 * matches, so it never makes a rule match that could not match before. `present` may be given: any
 * set that holds every needle of the text (more only costs rules that find nothing).
 */
export function redactTokens(text: string, run: Run, present: ReadonlySet<string> = needlesIn(text)): string {
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
 * Where a line break cuts a run of token characters: what may stand between the run that ends one
 * line and the run that starts the next. Either a string split over lines, a quote closing one
 * line and the same quote opening the next, with a concatenation (`+`, `.`, `&`) or a shell `\`
 * between (`"ghp_…" +⏎  "…"`, `'…'\⏎'…'`, `("…"⏎ "…")`); or a bare break, maybe after a `\`
 * continuation, before indentation and a line prefix (a mail-reply `>`, a comment's `#`, `//`,
 * `*`, `--` or `;`, a table's `|`). The break may be an escaped `\n` inside a JSON string.
 */
export const WRAP_JOINT =
  /(?<=[A-Za-z0-9_\-])(?:(["'`])[ \t]{0,8}(?:(?:\\|\+|\.|&)[ \t]{0,8})?(?:\r?\n|(?:\\r)?\\n)[ \t]{0,64}(?:[+.&][ \t]{0,8})?\1|[ \t]{0,8}(?:\\[ \t]{0,8})?(?:\r?\n|(?:\\r)?\\n)[ \t]{0,64}(?:(?:>|#|\/\/|\||\*|--|;)[ \t]{0,4})?)(?=[A-Za-z0-9_\-])/g;

/**
 * How many parts after joint `first` (of the `inside` joints in a token ending at `b` in the
 * joined text) come before the first that reads as a word after a plain line break, with more of
 * its line after it.
 */
function wordPartsFrom(text: string, u: Unwrapped, first: number, inside: number, b: number): number {
  for (let k = 0; k < inside; k++) {
    const part = u.joined.slice(u.at[first + k] as number, k + 1 < inside ? (u.at[first + k + 1] as number) : b);
    if (!isWordPart(part) || isSyntaxJoint(text.slice(u.from[first + k] as number, u.to[first + k] as number))) continue;
    // A word with more after it on its line (`owner: acme`, `GITLAB_URL=…`) starts a line of its own;
    // a word that is the whole line may be a piece of the token.
    LINE_END.lastIndex = (u.to[first + k] as number) + part.length;
    if (!LINE_END.test(text)) return k;
  }
  return inside;
}

/**
 * Nothing but blanks, a closing quote and what closes or separates after a value (`}`, `]`, `)`,
 * `,`, `;`) before the end of the line: the part is the whole of its line's value.
 */
const LINE_END = /[ \t]*["'`]?[ \t]*[}\]),;]{0,4}[ \t]*(?:\r?\n|\\n|$)/y;

/** The text with every wrap joint taken out, and where each joint was. */
interface Unwrapped {
  joined: string;
  /** Per joint: its position in `joined` (the first character after it). */
  at: number[];
  /** Per joint: its start and end in the original text. */
  from: number[];
  to: number[];
}

function unwrap(text: string): Unwrapped | null {
  const at: number[] = [];
  const from: number[] = [];
  const to: number[] = [];
  let joined = '';
  let last = 0;
  WRAP_JOINT.lastIndex = 0;
  for (let m = WRAP_JOINT.exec(text); m; m = WRAP_JOINT.exec(text)) {
    joined += text.slice(last, m.index);
    at.push(joined.length);
    from.push(m.index);
    to.push(m.index + m[0].length);
    last = m.index + m[0].length;
  }
  if (at.length === 0) return null;
  return { joined: joined + text.slice(last), at, from, to };
}

/** How many joints lie at or before position `p` of the joined text (binary search). */
function jointsUpTo(u: Unwrapped, p: number): number {
  let lo = 0;
  let hi = u.at.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((u.at[mid] as number) <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The position in the original text of position `p` of the joined text. */
function original(u: Unwrapped, p: number): number {
  const k = jointsUpTo(u, p);
  return k === 0 ? p : (u.to[k - 1] as number) + (p - (u.at[k - 1] as number));
}

/**
 * True when a part after a line break reads as a word or a name (`owner`, `Next`, `GITLAB_URL`,
 * `next_line`), not as the rest of a token (mixed case within a word, digits).
 */
const isWordPart = (part: string) => WORDS.test(part);
const WORD = '(?:[A-Z]?[a-z]+|[A-Z]+)';
/** Words (lower, Capitalised, UPPER) joined by `_` or `-`: a name, not the rest of a token (mixed case in one word is random). */
const WORDS = new RegExp(`^${WORD}(?:[_-]${WORD})*$`);

/**
 * True when a joint joins two parts of one string by syntax: a `\\` continuation, a concatenation
 * (`+`, `.`, `&`), or a quote closing one line and another opening the next (`"…"⏎  "…"`).
 */
function isSyntaxJoint(joint: string): boolean {
  const around = joint.replace(/(?:\\r)?\\n|\r?\n/g, '\n');
  return /[+.&]|\\(?=[ \t]*\n)/.test(around) || /^["'`][^\n]*\n[^\n]*["'`]$/.test(around);
}

/**
 * The token stages: first a provider token cut by line breaks (redactWrapped), then tokens on one
 * line (redactTokens). The needles are found once, in the text with its joints taken out: every
 * needle of the text is there too (a needle holds no line break), so the same set serves both.
 */
export function redactAllTokens(text: string, run: Run): string {
  const wrapped = redactWrapped(text, run);
  return redactTokens(wrapped.text, run, wrapped.present ?? needlesIn(wrapped.text));
}

/**
 * A provider token cut by line breaks (a width-limited log or terminal, a key pasted into a fence,
 * a string literal split over lines): the text is read with its wrap joints taken out, and a token
 * that a rule finds across one or more joints, whose part before the first joint is no such token
 * by itself, is replaced where it stands: its first part by the provider's marker, each further
 * part by a continuation marker; the joints (breaks, quotes, operators) stay. Linear: one pass to
 * take the joints out, the token rules once over the result. Returns the needles found in the
 * unwrapped text too (none when there was nothing to unwrap).
 */
function redactWrapped(text: string, run: Run): { text: string; present?: ReadonlySet<string> } {
  if (!text.includes('\n') && !text.includes('\\n')) return { text };
  const u = unwrap(text);
  if (u === null) return { text };
  const present = needlesIn(u.joined);
  if (present.size === 0) return { text, present };
  // Replacements in the original text, [start, end, marker], from non-overlapping matches.
  const cuts: [number, number, string][] = [];
  const taken: [number, number][] = [];
  for (const { rule, regex, once, whole } of COMPILED_TOKEN_RULES) {
    if (!rule.needles.some((n) => present.has(n))) continue;
    regex.lastIndex = 0;
    for (let m = regex.exec(u.joined); m; m = regex.exec(u.joined)) {
      const a = m.index + (rule.keepsPrefix && typeof m[1] === 'string' ? m[1].length : 0);
      let b = m.index + m[0].length;
      const first = jointsUpTo(u, a);
      // Joints strictly inside the token: those at positions a+1 … b-1.
      let inside = jointsUpTo(u, b - 1) - first;
      if (inside === 0) continue;
      // The rule's length is a range: the token ends before the first part that is a word (the
      // next line's `owner: acme`), if what is left is still a whole token.
      const words = wordPartsFrom(text, u, first, inside, b);
      if (words < inside && whole.test(u.joined.slice(m.index, u.at[first + words] as number))) {
        b = u.at[first + words] as number;
        inside = words;
      }
      // A token whole on its first line is that line's token, unless syntax joins the next lines to it or they are random.
      if (once.test(u.joined.slice(m.index, u.at[first] as number))) {
        const joints = u.from.slice(first, first + inside).map((f, i) => text.slice(f, u.to[first + i] as number));
        if (inside === 0 || (words < inside && !joints.some(isSyntaxJoint))) continue;
      }
      if (inside === 0 || taken.some(([x, y]) => a < y && x < b)) continue;
      taken.push([a, b]);
      run.hit(rule.id);
      run.hit('continuation');
      cuts.push([original(u, a), u.from[first] as number, marker(rule.id)]);
      for (let k = first; k < first + inside; k++) {
        const end = k + 1 < first + inside ? (u.from[k + 1] as number) : original(u, b - 1) + 1;
        cuts.push([u.to[k] as number, end, marker('continuation')]);
      }
    }
  }
  if (cuts.length === 0) return { text, present };
  cuts.sort((x, y) => x[0] - y[0]);
  let out = '';
  let last = 0;
  for (const [start, end, mark] of cuts) {
    out += text.slice(last, start) + mark;
    last = end;
  }
  return { text: out + text.slice(last), present };
}
