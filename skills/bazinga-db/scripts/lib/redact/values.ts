/** Reading the value after a key (bare, quoted, placed) and judging whether it is a secret. Part of the redaction engine (../redact.ts). */
import { ALREADY_REDACTED, HELD_ONLY, marker } from './rules.ts';
import { type KeyClass, isShellDirectoryVariable } from './keys.ts';
import { charTable, inTable } from './runs.ts';

/** Every reference form below holds one of these characters (or is empty). */
export const REFERENCE_CHARS = /[$%{<[.(:*]/;

const QUOTES = new Set(['"', "'", '`']);

/** A value without one quote (or backslash-escaped quote) at each end, if it has them. */
export function withoutQuotes(value: string): string {
  let start = 0;
  let end = value.length;
  if (QUOTES.has(value[0] as string)) start = 1;
  else if (value[0] === '\\' && QUOTES.has(value[1] as string)) start = 2;
  if (end > start && QUOTES.has(value[end - 1] as string)) end -= end - 2 >= start && value[end - 2] === '\\' ? 2 : 1;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Values that point to a secret instead of holding it (a command substitution is a command: one word, or words). */
export function isReference(value: string): boolean {
  if (value.length > 4 && !REFERENCE_CHARS.test(value)) return false; // longer than a pair of (escaped) quotes
  const v = withoutQuotes(value);
  return (
    v === '' ||
    /^\$\{[^}]*\}$|^\$[A-Z_][A-Z0-9_]*$|^\$[a-z_][a-z0-9_]*$|^\$\((?:[A-Za-z_][\w.-]*|[^)\s]*\s[^)]*)\)$|^%[A-Za-z_][\w]*%$|^\{\{[^}]*\}\}$|^<[^>]*>$|^\[[A-Z_ ]*\]$|^\*[A-Za-z_][\w-]{0,63}$/.test(v) ||
    /^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|env\(|ENV\[|getenv\(|secrets\.|vault:|op:\/\/|arn:aws:secretsmanager|ssm:|\{\{)/.test(v)
  );
}

/** First words of a description, not of a passphrase. */
export const PROSE_STARTS = new Set([
  'the', 'a', 'an', 'your', 'our', 'their', 'its', 'this', 'that', 'these', 'user', "user's", 'users', 'enter', 'optional',
  'required', 'must', 'should', 'used', 'use', 'set', 'see', 'if', 'when', 'defaults', 'default', 'password', 'secret',
  'token', 'is', 'was', 'will', 'for', 'to', 'of', 'in', 'not', 'no',
]);

export const PLAIN_VALUES = new Set([
  'true', 'false', 'null', 'none', 'nil', 'undefined', 'yes', 'no', 'on', 'off', 'required', 'optional', 'enabled',
  'disabled', 'inherit', 'include', 'omit', 'same-origin', 'bearer', 'basic', 'string', 'str', 'number', 'int', '?',
  'boolean', 'bool', 'any', 'object', 'text', 'password', 'secret', 'token', 'hidden', 'new', 'await', 'self',
  'this', 'input', 'changeme', 'default', 'empty', 'unset', 'redacted', 'masked', 'sensitive',
  // The product's own messages after a path that ends in a key word (`--params-file /tmp/password:
  // not valid JSON`, `…/token: is a FIFO`): a verb or a negation is the message, never a value.
  'not', 'is', 'are', 'was', 'were', 'has', 'have', 'does', 'did', 'cannot', 'lies', 'holds', 'must',
  // A test run's result (`Password: OK`, `password tests: passed`): a status, not a password. Not
  // `pass` or `fail`, which a person may pick as a password's word.
  'ok', 'passed', 'failed', 'passing', 'failing', 'skipped', 'succeeded', 'errored',
]);

/** Every marker ALREADY_REDACTED accepts holds one of these. */
export const REDACTED_CHARS = /REDACTED|redacted|\*\*\*|xxxx|XXXX|•••/;

export function isAlreadyRedacted(value: string): boolean {
  if (!REDACTED_CHARS.test(value)) return false;
  return ALREADY_REDACTED.test(withoutQuotes(value));
}

/** A rule already fired on this value: it is a mask, or an earlier rule left its marker in it. */
export const isRedactedHere = (value: string): boolean => isAlreadyRedacted(value) || value.includes('[REDACTED:');

/** A value long and random enough to be a token: 8+ characters with a digit and a letter, or 16+, no blanks. */
export function looksLikeToken(bare: string): boolean {
  if (/\s/.test(bare)) return false;
  return bare.length >= 16 || (bare.length >= 8 && /\d/.test(bare) && /[A-Za-z]/.test(bare));
}

export const MAX_VALUE = 1024;
export const CLOSERS: Record<string, string> = { '"': '"', "'": "'", '`': '`' };

export interface ValueSpan {
  start: number;
  end: number;
  /** The opening quote (`"`, `'`, `` ` ``, `\"`), '' when bare. */
  quote: string;
  /** The value without its quotes. */
  bare: string;
  /** True when the quoted value had no closing quote within reach: everything read is taken. */
  open: boolean;
}

/**
 * Where a bare value stops: a blank, a quote, a closing bracket, an escaped `\n`; `,` `;` `&` only when what follows
 * is another `name=` (a query string, a connection string) or nothing, since passwords use them.
 */
export const BARE_STOPS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '"', "'", '`', ')', ']', '}', '<', '>', '|']);
/** BARE_STOPS by character code (all are ASCII), for the scanner's inner loop. */
const BARE_STOP_TABLE = charTable([...BARE_STOPS].join(''));

export function endsBareValue(text: string, i: number): boolean {
  if (text.charCodeAt(i) < 128 ? inTable(text, i, BARE_STOP_TABLE) : /\s/.test(text[i] as string)) return true;
  const ch = text[i] as string;
  // An escaped line break or tab inside a JSON string (`"auth: true\nttl: 30"`) ends the line.
  if (ch === '\\') return /[nrt]/.test(text[i + 1] ?? '');
  if (ch !== ',' && ch !== ';' && ch !== '&') return false;
  const next = text[i + 1];
  if (next === undefined || /[\s,;&]/.test(next)) return true;
  NEXT_PAIR.lastIndex = i + 1;
  return NEXT_PAIR.test(text);
}

/** Another `name=` right after a separator: sticky, tried at one position. */
const NEXT_PAIR = /[\w.-]{1,64}=/y;

/** An operator (`=`, `:`, `:=`, `=>`) after at most 8 blanks at `at`: the text there is a key's value, not a value. */
export function operatorAt(text: string, at: number): boolean {
  OPERATOR.lastIndex = at;
  return OPERATOR.test(text);
}
const OPERATOR = /[ \t]{0,8}(?:=>|:=|[=:])/y;

/** A marker or a template reference where a value starts: read whole. */
export const PLACED = /^\[REDACTED(?::[a-z_]+)?\]|^\$\{[^}\n]{0,256}\}|^\{\{[^}\n]{0,256}\}\}/;

/** What ends a bare value only before another `name=` (a query or connection string). */
export const SEPARATORS = new Set([',', ';', '&']);

/** Closing brackets that end a bare value, unless more of the value follows them (`}`, `<`, `>`, `|` always end it). */
export const CLOSING_STOPS = new Set([')', ']']);

/** How a bare value is read beyond the stops every value has (blanks, quotes, escaped line breaks). */
export interface BareReading {
  /**
   * A password or secret: a `)`, `]` or a separator with more of the value right after it
   * (`abc)d(ef`, `x&&y`, a Django key) does not end it; a separator before another `name=` or
   * `name:` does.
   */
  throughBrackets?: boolean;
  /** An env line (`KEY=…` first on its line): `,` `;` `&` do not end it either, even before another `name=`. */
  throughSeparators?: boolean;
}

/** A `name=` or `name:` with a letter first at `at`: sticky, tried at one position. */
const NEXT_KEY = /[A-Za-z_][\w.-]{0,63}[=:]/y;
const nextKeyAt = (text: string, at: number): boolean => {
  NEXT_KEY.lastIndex = at;
  return NEXT_KEY.test(text);
};

/** Reads the value that starts at `pos` (after the operator), bounded by MAX_VALUE characters. */
export function readValue(text: string, pos: number, reading: BareReading = {}): ValueSpan | null {
  const { throughBrackets = false, throughSeparators = false } = reading;
  const c = text[pos];
  if (c === undefined || c === '\n' || c === '\r') return null;
  const placed = c === '[' || c === '$' || c === '{' ? PLACED.exec(text.slice(pos, pos + 300)) : null;
  if (placed) return { start: pos, end: pos + placed[0].length, quote: '', bare: placed[0], open: false };
  let quote = '';
  if (c === '\\' && text[pos + 1] === '"') quote = '\\"';
  else if (c in CLOSERS) quote = c;
  if (quote !== '') return readQuoted(text, pos, quote);
  const limit = Math.min(text.length, pos + MAX_VALUE);
  let i = pos;
  while (i < limit) {
    if (!endsBareValue(text, i)) {
      i++;
      continue;
    }
    // Inside a word, or a `)` or separator that starts one (a Django key): a value that starts with another stop (`</label>`) is none.
    const inWord = CLOSING_STOPS.has(text[i] as string) || SEPARATORS.has(text[i] as string);
    if (!(throughBrackets || throughSeparators) || !inWord || (i === pos && text[i] !== ')' && !SEPARATORS.has(text[i] as string))) break;
    // A run of brackets and separators inside a word: the value goes on, unless a blank follows, or
    // (where a query string can be) another `name=` with a letter first.
    let j = i;
    while (j < limit && (CLOSING_STOPS.has(text[j] as string) || SEPARATORS.has(text[j] as string))) j++;
    if (!throughBrackets && [...text.slice(i, j)].some((c) => CLOSING_STOPS.has(c))) break;
    if (j >= limit || endsBareValue(text, j)) break;
    if (!throughSeparators && SEPARATORS.has(text[j - 1] as string) && nextKeyAt(text, j)) break;
    i = j;
  }
  // A full stop that ends the sentence is not part of the value.
  if (i > pos + 1 && text[i - 1] === '.' && (i === text.length || /\s/.test(text[i] as string))) i--;
  if (i === pos) return null;
  const bare = text.slice(pos, i);
  // A structure, not a literal: its own keys are scanned on their own. A password read as a word
  // may start with a bracket; a structure holds blanks, commas, colons or quotes.
  if (/^[{([]/.test(bare) && (!throughBrackets || /[\s,:"'`]/.test(bare) || /^[{([][)\]}]?$/.test(bare))) return null;
  return { start: pos, end: i, quote: '', bare, open: false };
}

/**
 * Where one quoted piece that opens at `at` with quote `q` closes (the index after its closing
 * quote), or -1 when the line or `limit` ends first. A backslash escapes the next character
 * (`'ab\'cd'`, `"pa\"ss"`), also written for a string inside an escaped JSON string (`\\'`); in
 * an escaped JSON string (`\"…\"`) `\\\"` is a quote of the inner string and `\\` a backslash.
 */
export function closeOfPiece(text: string, at: number, q: string, limit: number): number {
  for (let i = at + q.length; i < limit; i++) {
    const ch = text[i];
    if (ch === '\n') return -1;
    if (q === '\\"') {
      if (text.startsWith('\\\\\\"', i)) i += 3;
      else if (text.startsWith('\\\\', i)) i += 1;
      else if (ch === '\\' && text[i + 1] === '"') return i + 2;
      continue;
    }
    if (ch === '\\') {
      i += text[i + 1] === '\\' && text[i + 2] === q ? 2 : 1;
      continue;
    }
    if (ch === q) return i + 1;
  }
  return -1;
}

/** The quote that opens a piece at `at` (`'`, `"`, `\"`), or '' when none does. */
function pieceQuote(text: string, at: number): string {
  const ch = text[at];
  if (ch === "'" || ch === '"') return ch;
  return ch === '\\' && text[at + 1] === '"' ? '\\"' : '';
}

/**
 * A quoted value from its opening quote at `pos`. Pieces written right after it are the same
 * value, as a shell reads them: another quoted piece (`'it'"'"'s'`, a doubled quote `'it''s'`),
 * an escaped quote between pieces (`'it'\''s'`). Each piece must close on the line; a first piece
 * that does not is open (everything read is taken).
 */
export function readQuoted(text: string, pos: number, quote: string): ValueSpan {
  const first = pos + quote.length;
  const limit = Math.min(text.length, first + MAX_VALUE);
  let end = closeOfPiece(text, pos, quote, limit);
  if (end === -1) {
    const nl = text.indexOf('\n', first);
    const stop = nl === -1 || nl > limit ? limit : nl;
    return { start: pos, end: stop, quote, bare: text.slice(first, stop), open: true };
  }
  let closing = quote.length;
  if (quote !== '`') {
    for (;;) {
      const q = pieceQuote(text, end);
      const close = q === '' ? -1 : closeOfPiece(text, end, q, limit);
      if (close !== -1) {
        closing = q.length;
        end = close;
        continue;
      }
      // An escaped quote between pieces (`'it'\''s'`, or `\\'` inside an escaped JSON string).
      const escaped = /^\\{1,2}["']/.exec(text.slice(end, end + 3));
      const next = escaped === null ? '' : pieceQuote(text, end + escaped[0].length);
      const after = next === '' ? -1 : closeOfPiece(text, end + escaped![0].length, next, limit);
      if (after === -1) break;
      closing = next.length;
      end = after;
    }
  }
  return { start: pos, end, quote, bare: text.slice(first, end - closing), open: false };
}

/** Several words whose first opens a description (`The user password.`). */
const startsLikeProse = (trimmed: string): boolean => /\s/.test(trimmed) && PROSE_STARTS.has((trimmed.split(/\s/)[0] as string).toLowerCase());

/** An absolute directory: `/home/dev/shop`, `~/src`, `~`, `C:\\Users\\dev`. */
const ABSOLUTE_DIRECTORY = /^(?:\/|~\/|~$|[A-Za-z]:[\\/])[^\n]*$/;

/** A comparison read as a value: `==`, `!=` and what they compare to, a name, a number or nothing (`password==input`, `!= ''`). */
export const COMPARISON = /^!?==?[ \t]*(?:[A-Za-z_$][\w$.]*(?:\(\))?|-?\d+(?:\.\d+)?)?$/;

/**
 * Decides whether a value read after a key of class `cls` is a secret to remove. `literalEquals`:
 * where the value stands, a leading `=` or `!=` is part of it, not a comparison (an env line
 * `KEY==x`, a flag `--key==x`, a shell default `${KEY:-!=x}`).
 */
export function isSecretValue(cls: Exclude<KeyClass, null>, v: ValueSpan, spacedOperator: boolean, text: string, key = '', literalEquals = false): boolean {
  const bare = v.bare;
  if (bare.trim() === '' || isReference(bare) || HELD_ONLY.test(bare)) return false;
  // A comparison (`password == null`, `!= ''`), a placeholder (`?`, `...`), punctuation only.
  if ((v.quote === '' && !literalEquals && COMPARISON.test(bare)) || !/[\p{L}\p{N}]/u.test(bare)) return false;
  if (v.quote === '' && PLAIN_VALUES.has(bare.toLowerCase())) return false;
  // `PWD=/home/dev/shop`, `OLDPWD=/tmp`: the shell's working directory.
  if (isShellDirectoryVariable(key) && ABSOLUTE_DIRECTORY.test(bare)) return false;
  if (v.quote === '') {
    // The value is the next key (`password: password = "…"`): the real value comes after it.
    if (operatorAt(text, v.end) && !/[=:]/.test(bare)) return false;
    // Code, not a literal: a call, an index, a member of an object, an identifier after a spaced `=`.
    if (/^[A-Za-z_$][\w$.]*[([][\w$.'",()[\]-]*$/.test(bare)) return false;
    // A regular expression literal (`/pass|pwd/i;`): an alternation, a class, a group or an escape in it.
    if (/^\/[^/\s]*[|\\[\]()][^/\s]*\/[dgimsuy]{0,6}[;,)]?$/.test(bare)) return false;
    if (/^(?:this|self|config|settings|options|opts|env|props|params|args|req|request|ctx|context|cfg|os|process|window|document|user|account|form|data|body|values|input|row|record|payload|state|model|auth|credentials|creds|secrets)\./.test(bare)) return false;
    if (spacedOperator && /^[A-Za-z_$][A-Za-z_$.]*$/.test(bare) && !/\d/.test(bare)) return false;
    if (/^-?\d+(?:\.\d+)?%?$/.test(bare) && (cls !== 'password' || /^(?:pass|pw)$/i.test(key))) return false;
    // `Password: 12/12 passed`, `pwd: 91% coverage`: a count with the word of a result after it, under any key.
    if (isResultReport(bare + text.slice(v.end, v.end + 48))) return false;
    // `passwd: files systemd` (nsswitch.conf): the sources a name service reads, not a password.
    if (NAME_SERVICE_DATABASES.has(key) && isNameServiceLine(key, bare + restOfLineAt(text, v.end))) return false;
    // `PASS: 18/18 tests`, `--- PASS: TestLogin (0.00s)`: a test run's status, not a password.
    if (/^(?:pass|pw)$/i.test(key) && isTestResult(bare, text.slice(v.end, v.end + 24))) return false;
  }
  // Several words opening like a sentence (`password: The user password.`) describe the value.
  if (v.quote === '' && /\s/.test(bare) && startsLikeProse(bare.trim())) return false;
  switch (cls) {
    case 'password':
      return true;
    case 'secret':
      // Lower-case words joined by hyphens name a resource (`existingSecret: postgres-credentials`).
      return bare.length >= 6 && !(v.quote === '' && /^[a-z]+(?:-[a-z0-9]+)+$/.test(bare));
    default:
      return looksLikeToken(bare);
  }
}

/**
 * A test run's result after `PASS:` or `pass=`: a count, ratio, percentage, duration or version, a
 * test's name (`TestLogin`, `test_login`, a path, a pytest id), or anything followed by a duration
 * in brackets or a word of a result (`tests`, `passed`).
 */
export function isTestResult(bare: string, after: string): boolean {
  if (/^v?[\d.,/:%]+(?:ms|s|m|h)?$/i.test(bare)) return true;
  if (/^(?:Test|Example|Benchmark|Fuzz)[A-Z0-9_]|^tests?[_/.:-]|[/\\]|::|\.(?:test|spec)\.|\.(?:[jt]sx?|py|go|rb|rs|java|kt)$/.test(bare)) return true;
  return /^[ \t]{1,4}(?:\(\d[\d.]*\s?m?s\)|\[\d[\d.]*\s?m?s\]|tests?\b|passed\b|passing\b|ok\b)/i.test(after);
}

/** Words that say what a count or a run came to: `12 passed`, `18 tests`, `91% coverage`, `OK`. */
const RESULT_WORD = String.raw`(?:tests?|specs?|checks?|cases?|assertions?|suites?|passed|passing|passes|failed|failing|failures?|skipped|skips?|pending|todo|ok|coverage|covered|succeeded|errors?|warnings?)`;

/**
 * A test run's result where a value is read (the value and what follows it on its line): a count,
 * ratio or percentage then a result word (`12/12 passed`, `12 passed, 0 failed`, `91% coverage`,
 * `18 of 18 tests`, `12/12 (100%) passed`), or a result word alone or before punctuation (`OK`,
 * `passed (3.2s)`, `OK — 12 passed`). A PIN with nothing after it (`1234`) is none.
 */
export function isResultReport(valueAndAfter: string): boolean {
  return RESULT_REPORT.test(valueAndAfter);
}
const RESULT_REPORT = new RegExp(
  String.raw`^(?:\d{1,9}(?:[.,]\d{1,4})?%?(?:[ \t]{0,4}\/[ \t]{0,4}\d{1,9}%?|[ \t]{1,4}of[ \t]{1,4}\d{1,9})?(?:[ \t]{1,4}\(\d{1,3}(?:\.\d{1,2})?%\))?[ \t]{1,4}${RESULT_WORD}(?![\p{L}\p{N}])` +
    String.raw`|(?:ok|passed|failed|passing|failing|skipped|succeeded)[.,;:!]?(?=$|\s)(?![ \t]{0,8}[\p{L}\p{N}]))`,
  'iu',
);

/** The sources a name service reads its entries from (nsswitch.conf): `files`, `systemd`, `ldap`, … */
const NSS_SOURCES = String.raw`(?:files|systemd|db|nis|nisplus|ldap|sss|compat|dns|mymachines|winbind|hesiod|myhostname|resolve|altfiles|cache|extrausers)`;
/** An nsswitch.conf action between sources: `[NOTFOUND=return]`, `[!UNAVAIL=return SUCCESS=merge]`. */
const NSS_ACTION = String.raw`\[!?[A-Za-z]{1,12}=[a-z]{1,12}(?:[ \t]{1,8}!?[A-Za-z]{1,12}=[a-z]{1,12}){0,5}\]`;
const NSS_LINE = new RegExp(String.raw`^${NSS_SOURCES}(?:[ \t]{1,32}(?:${NSS_SOURCES}|${NSS_ACTION})){0,15}[ \t]*$`);

/**
 * An nsswitch.conf line: the `passwd`, `shadow` or `group` database and the sources it is read
 * from (`passwd: files systemd`, `passwd: compat`, `passwd: files ldap [NOTFOUND=return]`). Its
 * value names where accounts are looked up, never a password.
 */
export function isNameServiceLine(key: string, line: string): boolean {
  return NAME_SERVICE_DATABASES.has(key) && NSS_LINE.test(line);
}
/** The nsswitch.conf databases whose names a password key could be. */
const NAME_SERVICE_DATABASES = new Set(['passwd', 'shadow', 'gshadow', 'group']);

/** The rest of the line from `at` (bounded), for the checks that read a value with what follows it. */
function restOfLineAt(text: string, at: number): string {
  const window = text.slice(at, at + 256);
  const end = window.indexOf('\n');
  return (end === -1 ? window : window.slice(0, end)).replace(/\r$/, '');
}

export function replaceValue(v: ValueSpan, rule: string, text: string): string {
  if (v.quote === '') return marker(rule);
  const close = v.open ? '' : v.quote;
  return v.quote + marker(rule) + close + (v.open ? text.slice(v.start + v.quote.length + v.bare.length, v.end) : '');
}
