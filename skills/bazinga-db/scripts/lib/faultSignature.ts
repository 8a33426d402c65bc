/**
 * One fault, one signature: the error type and message pattern of an error text as the tools
 * agents run print it (tsc, vitest and jest, Node's uncaught errors and stack traces, eslint,
 * pytest, npm and node-gyp), with everything that differs between two occurrences of the same
 * fault taken out: which file and where in it (paths, lines, columns, stack frames), and the
 * values that change from run to run (numbers, addresses, ids, timestamps, durations). What stays
 * is what names the fault: the tool's error code or class, and the message's words, identifiers
 * and the module it concerns (a path kept as its last component, without its extension).
 *
 * Pure, and total: any text gives a signature (an unknown shape keeps its first non-empty line,
 * normalised the same way).
 */
import { DIR_PATH, FILE_NAME, replacePaths } from './faultPaths.ts';
import { firstCodePoints, isBlank, isNotBlank, runStartBefore, withoutEndRun } from './textScan.ts';

export interface FaultSignature {
  /** The tool whose output it is, as recognised ('tsc', 'vitest', 'node', 'eslint', 'pytest', 'npm', 'gyp', or 'text'). */
  tool: string;
  /** The error's code or class: TS2305, AssertionError, TypeError, no-unused-vars, ELIFECYCLE … */
  error_type: string;
  /** The message with what varies between occurrences replaced (see normaliseFaultText). */
  message_pattern: string;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/**
 * Where a fault happened, as a message says it (`… at src/x.ts line 3`, `… in lib/a.py:12`): the
 * place is dropped with its preposition, not kept as a stem, so the same fault at another file, or
 * told with its place in a stack frame instead, is the same fault. The blanks before the word are
 * taken from the first of them (`(?<!\s)`): tried from inside a run of blanks, the match would
 * scan the rest of the run again at every one of them.
 */
const LOCATION = new RegExp(String.raw`(?<!\s)\s*\b(?:at|in) (?:${DIR_PATH}|${FILE_NAME})(?::\d+){0,2}`, 'g');

/**
 * The words of a message with what varies between occurrences of one fault replaced: the place
 * it names (`at <path>`, `in <path>`, with the word) dropped, other paths by their stem, `:line:col` and `(line,col)` dropped, ISO times → T, durations → Nms, hex addresses →
 * 0xN, UUIDs and long hex ids → ID, other numbers → N (also one that ends a sentence: `got 2.` →
 * `got N.`; not a part of a dotted version); whitespace folded. Linear in the text.
 */
export function normaliseFaultText(text: string): string {
  const placed = text
    .replace(ANSI, '')
    .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, 'T')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, 'ID')
    .replace(/\b0x[0-9a-f]+\b/gi, '0xN')
    .replace(/\b[0-9a-f]{12,}\b/gi, 'ID')
    .replace(LOCATION, '');
  return replacePaths(placed)
    .replace(/(?::\d+){1,2}\b|\(\d+,\d+\)/g, '')
    .replace(/\b\d+(?:\.\d+)?\s?(?:ms|s|m)\b/g, 'Nms')
    // A number ends at a full stop that ends a sentence (`but got 2.`), not at one inside a version (`1.2.3`).
    .replace(/(?<![\w.])-?\d+(?:\.\d+)?(?!\w|\.\w)/g, 'N')
    // Every run of blanks as one space; a lone space is one already (left as it is: fewer replacements).
    .replace(/\s{2,}|[^\S ]/g, ' ')
    .trim();
}

/** A signature with the error's own message as the tool printed it (before normaliseFaultText). */
interface Found extends FaultSignature {
  message: string;
}

const found = (tool: string, errorType: string, message: string): Found => ({ tool, error_type: errorType, message_pattern: normaliseFaultText(message), message });

/**
 * A tool's output as the detectors read it, without ANSI codes and carriage returns: whole, and
 * as lines (split when a detector first asks). Each detector first looks in the whole text for
 * what a line of its tool must hold (one native scan), so a long output of other lines costs
 * neither an expression per line per tool nor, when no tool's lines are there, the lines at all.
 */
interface Output {
  text: string;
  readonly lines: readonly string[];
}

function outputOf(raw: string): Output {
  // Carriage returns taken out by splitting: a global replace of a million of them makes garbage
  // that costs more than the text (a megabyte of CRLF lines: 25 times 100 KB's time).
  const text = raw.replace(ANSI, '').split('\r').join('');
  let lines: string[] | undefined;
  return {
    text,
    get lines() {
      return (lines ??= text.split('\n'));
    },
  };
}

/** tsc: `file(12,5): error TS2305: …` or `file:12:5 - error TS2305: …` (pretty). */
function tsc(out: Output): Found | undefined {
  if (!out.text.includes('error TS')) return undefined;
  for (const line of out.lines) {
    const m = /\berror (TS\d+): (.+)$/.exec(line);
    if (m) return found('tsc', m[1] as string, m[2] as string);
  }
  return undefined;
}

/** eslint (stylish): `  12:5  error  'x' is defined but never used  no-unused-vars`. */
function eslint(out: Output): Found | undefined {
  if (!out.text.includes('error')) return undefined;
  for (const line of out.lines) {
    const m = eslintLine(line);
    if (m) return found('eslint', m.rule, m.message);
  }
  return undefined;
}

/** The start of an eslint error line, up to the blanks after `error`. */
const ESLINT_HEAD = /^\s+\d+:\d+\s+error(\s+)/;
/** What ends an eslint line: its rule (`no-unused-vars`, `@typescript-eslint/no-explicit-any`). */
const ESLINT_RULE = /^@?[\w/-]+$/;
/** A character `.` does not match (a message never holds one). */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * The message and rule of an eslint error line: what `^\s+\d+:\d+\s+error\s+(.+?)\s{2,}(@?[\w/-]+)\s*$`
 * captures, found without it (on a long run of blanks that expression backtracks over the run at
 * every character of the run, for every split of it: cubic). The rule is the line's last word,
 * after at least two blanks; the message is what lies between the blanks after `error` and those
 * before the rule. With nothing between them, the expression gives some blanks back to a message
 * of one blank character when there are four or more; so does this.
 */
function eslintLine(line: string): { rule: string; message: string } | undefined {
  const head = ESLINT_HEAD.exec(line);
  if (!head) return undefined;
  const body = withoutEndRun(line, isBlank);
  const ruleStart = runStartBefore(body, body.length, isNotBlank);
  const rule = body.slice(ruleStart);
  if (!ESLINT_RULE.test(rule)) return undefined;
  const gapStart = runStartBefore(body, ruleStart, isBlank);
  if (ruleStart - gapStart < 2) return undefined;
  const messageStart = head[0].length;
  if (gapStart > messageStart) {
    const message = line.slice(messageStart, gapStart);
    return LINE_BREAK.test(message) ? undefined : { rule, message };
  }
  // Only blanks between `error` and the rule: one of them is the message, leaving at least one
  // blank after `error` and two before the rule, the rightmost that is no line break.
  const afterError = messageStart - (head[1] as string).length;
  for (let at = ruleStart - 3; at > afterError; at--) {
    const message = line.charAt(at);
    if (!LINE_BREAK.test(message)) return { rule, message };
  }
  return undefined;
}

/** pytest: `E       AssertionError: …`, or `FAILED tests/test_x.py::test_y - ZeroDivisionError: …`. */
function pytest(out: Output): Found | undefined {
  if (!/^(?:E|FAILED |=)/m.test(out.text)) return undefined;
  const all = out.lines;
  if (!all.some((l) => /^(E\s{2,}|FAILED |=+ .*(?:failed|FAILURES))/.test(l))) return undefined;
  for (const line of all) {
    const e = /^E\s+(\w+(?:Error|Exception|Exit|Interrupt|Warning)?):\s*(.*)$/.exec(line);
    if (e && /^[A-Z]\w*$/.test(e[1] as string)) return found('pytest', e[1] as string, e[2] as string);
  }
  // A bare `assert` that failed: `E       assert 4 == 5`.
  for (const line of all) {
    const a = /^E\s+(assert .*)$/.exec(line);
    if (a) return found('pytest', 'AssertionError', a[1] as string);
  }
  for (const line of all) {
    const f = /^FAILED \S+ - (\w+): (.*)$/.exec(line);
    if (f) return found('pytest', f[1] as string, f[2] as string);
  }
  return undefined;
}

/** npm: `npm ERR! code ELIFECYCLE` / `npm error code E404`; node-gyp: `gyp ERR! …`. */
function npm(out: Output): Found | undefined {
  if (!/^(?:npm |gyp ERR! )/m.test(out.text)) return undefined;
  const all = out.lines;
  const code = all.map((l) => /^npm (?:ERR!|error) code (\S+)/.exec(l)?.[1]).find((c) => c !== undefined);
  const gyp = all.find((l) => /^gyp ERR! (?:stack|find|configure|build)? ?\w*Error/.test(l) || /^gyp ERR! (?:stack )?Error:/.test(l));
  if (gyp) {
    // From the start of a word: `\w*` tried inside a long word would scan the rest of it at each character.
    const m = /(?<!\w)(\w*Error): (.*)$/.exec(gyp);
    return found('gyp', m?.[1] ?? 'Error', m?.[2] ?? gyp.replace(/^gyp ERR! /, ''));
  }
  // npm 7-10 print `npm ERR! code X`; npm 11 prints `npm error …` lines, with a code only for some.
  const message = all.map((l) => /^npm (?:ERR!|error) (?!code )(.+)$/.exec(l)?.[1]).find((m) => m !== undefined && m.trim() !== '');
  if (code === undefined && message === undefined) return undefined;
  return found('npm', code ?? 'npm error', message ?? '');
}

/**
 * A JavaScript error line, as Node prints an uncaught one and vitest or jest print a failed
 * assertion: `TypeError: Cannot read …`, `AssertionError: expected 4 to be 5 // Object.is equality`,
 * `Error: expect(received).toBe(expected)`; stack frames (`at …`, `❯ …`) and the test's own name
 * lines are not part of it.
 */
function jsError(out: Output): Found | undefined {
  if (!out.text.includes('Error') && !out.text.includes('Exception')) return undefined;
  const all = out.lines;
  for (let i = 0; i < all.length; i++) {
    const line = all[i] as string;
    const m = /^\s*(?:Uncaught |FAIL .* )?((?:[A-Z]\w*)?(?:Error|Exception)|AssertionError \[\w+\])(?: \[\w+\])?: (.*)$/.exec(line);
    if (!m) continue;
    let message = m[2] as string;
    // jest: the headline is `expect(received).toBe(expected) // Object.is equality`; what it
    // expected and got follow on their own lines.
    if (/^expect\(/.test(message)) {
      const detail = all.slice(i + 1, i + 6).filter((l) => /^\s*(Expected|Received)/.test(l)).map((l) => l.trim());
      if (detail.length > 0) message += ` ${detail.join(' ')}`;
    }
    const tool = all.some((l) => /\b(vitest|jest|❯|✓|×|FAIL )\b|Test Files|Tests:/.test(l)) ? 'vitest' : 'node';
    return found(tool, (m[1] as string).replace(/ \[\w+\]$/, ''), message);
  }
  return undefined;
}

/**
 * The fault of an error text (any tool's output, or one line of it) with the error's own message
 * as printed (its code or class not part of it): what an agent would pass to save-error-pattern
 * as the error type and message (the capture saves it so: capture.ts).
 */
export function faultOfText(text: string): { signature: FaultSignature; message: string } {
  const out = outputOf(text);
  const f = tsc(out) ?? eslint(out) ?? pytest(out) ?? npm(out) ?? jsError(out) ?? prose(out);
  const { message, ...signature } = f;
  return { signature, message };
}

/** A text no tool's output was recognised in: its first non-empty line, typed when it starts `Word: …`. */
function prose(out: Output): Found {
  // The line of the first character that is not a blank (what trim() would leave something of).
  const at = out.text.search(/\S/);
  const end = at === -1 ? -1 : out.text.indexOf('\n', at);
  const first = at === -1 ? '' : out.text.slice(out.text.lastIndexOf('\n', at) + 1, end === -1 ? undefined : end);
  const typed = /^\s*(\w+): (.*)$/.exec(first);
  return typed ? found('text', typed[1] as string, typed[2] as string) : found('text', 'Unknown', first);
}

/** The signature of an error text (any tool's output, or one line of it). */
export function faultSignature(text: string): FaultSignature {
  return faultOfText(text).signature;
}

/** The most characters of a stored message pattern (as the original stores its patterns). */
const PATTERN_MAX_CHARS = 500;

/**
 * The signature an error pattern is stored and keyed under, from what an agent or the capture
 * gives: an error type and an error text. A recognised tool's output names its own type (TS2305,
 * TypeError, no-unused-vars …); plain text keeps the type its first line names (`KeyError: …`),
 * else the one given (empty: "Unknown").
 */
export function patternSignature(errorType: string, message: string): FaultSignature {
  const f = faultSignature(message);
  const capped = { ...f, message_pattern: firstCodePoints(f.message_pattern, PATTERN_MAX_CHARS) };
  if (f.tool !== 'text' || f.error_type !== 'Unknown') return capped;
  const given = errorType.trim();
  return { ...capped, error_type: given === '' ? 'Unknown' : given };
}
