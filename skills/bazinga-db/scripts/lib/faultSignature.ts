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

/** A path (two or more segments, or one with an extension), POSIX or Windows, absolute or relative. */
const PATH = /(?:[A-Za-z]:)?(?:[.~]{0,2}[\\/])?(?:[\w@.+-]+[\\/])+[\w@.+-]+|\b[\w@+-]+\.(?:[cm]?[jt]sx?|py|json|node|d\.ts|vue|svelte|rs|go|java|rb|php|cs|c|cc|cpp|h|hpp)\b/g;

/**
 * Where a fault happened, as a message says it (`… at src/x.ts line 3`, `… in lib/a.py:12`): the
 * place is dropped with its preposition, not kept as a stem, so the same fault at another file, or
 * told with its place in a stack frame instead, is the same fault.
 */
const LOCATION = new RegExp(`\\s*\\b(?:at|in) (?:${PATH.source})(?::\\d+){0,2}`, 'g');

/** A path's last component without its extension(s): `src/a/notification.service.ts` → `notification.service`. */
function stem(path: string): string {
  const last = path.split(/[\\/]/).pop() ?? path;
  return last.replace(/(\.d)?\.(?:[cm]?[jt]sx?|py|json|node|vue|svelte|rs|go|java|rb|php|cs|c|cc|cpp|h|hpp)$/, '');
}

/**
 * The words of a message with what varies between occurrences of one fault replaced: the place
 * it names (`at <path>`, `in <path>`, with the word) dropped, other paths by their stem, `:line:col` and `(line,col)` dropped, ISO times → T, durations → Nms, hex addresses →
 * 0xN, UUIDs and long hex ids → ID, other numbers → N; whitespace folded.
 */
export function normaliseFaultText(text: string): string {
  return text
    .replace(ANSI, '')
    .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, 'T')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, 'ID')
    .replace(/\b0x[0-9a-f]+\b/gi, '0xN')
    .replace(/\b[0-9a-f]{12,}\b/gi, 'ID')
    .replace(LOCATION, '')
    .replace(PATH, (p) => stem(p))
    .replace(/(?::\d+){1,2}\b|\(\d+,\d+\)/g, '')
    .replace(/\b\d+(?:\.\d+)?\s?(?:ms|s|m)\b/g, 'Nms')
    .replace(/(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])/g, 'N')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A signature with the error's own message as the tool printed it (before normaliseFaultText). */
interface Found extends FaultSignature {
  message: string;
}

const found = (tool: string, errorType: string, message: string): Found => ({ tool, error_type: errorType, message_pattern: normaliseFaultText(message), message });

const lines = (text: string) => text.replace(ANSI, '').replace(/\r/g, '').split('\n');

/** tsc: `file(12,5): error TS2305: …` or `file:12:5 - error TS2305: …` (pretty). */
function tsc(text: string): Found | undefined {
  for (const line of lines(text)) {
    const m = /\berror (TS\d+): (.+)$/.exec(line);
    if (m) return found('tsc', m[1] as string, m[2] as string);
  }
  return undefined;
}

/** eslint (stylish): `  12:5  error  'x' is defined but never used  no-unused-vars`. */
function eslint(text: string): Found | undefined {
  for (const line of lines(text)) {
    const m = /^\s+\d+:\d+\s+error\s+(.+?)\s{2,}(@?[\w/-]+)\s*$/.exec(line);
    if (m) return found('eslint', m[2] as string, m[1] as string);
  }
  return undefined;
}

/** pytest: `E       AssertionError: …`, or `FAILED tests/test_x.py::test_y - ZeroDivisionError: …`. */
function pytest(text: string): Found | undefined {
  const all = lines(text);
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
function npm(text: string): Found | undefined {
  const all = lines(text);
  const code = all.map((l) => /^npm (?:ERR!|error) code (\S+)/.exec(l)?.[1]).find((c) => c !== undefined);
  const gyp = all.find((l) => /^gyp ERR! (?:stack|find|configure|build)? ?\w*Error/.test(l) || /^gyp ERR! (?:stack )?Error:/.test(l));
  if (gyp) {
    const m = /(\w*Error): (.*)$/.exec(gyp);
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
function jsError(text: string): Found | undefined {
  const all = lines(text);
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
  const f = tsc(text) ?? eslint(text) ?? pytest(text) ?? npm(text) ?? jsError(text) ?? prose(text);
  const { message, ...signature } = f;
  return { signature, message };
}

/** A text no tool's output was recognised in: its first non-empty line, typed when it starts `Word: …`. */
function prose(text: string): Found {
  const first = lines(text).find((l) => l.trim() !== '') ?? '';
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
  const capped = { ...f, message_pattern: Array.from(f.message_pattern).slice(0, PATTERN_MAX_CHARS).join('') };
  if (f.tool !== 'text' || f.error_type !== 'Unknown') return capped;
  const given = errorType.trim();
  return { ...capped, error_type: given === '' ? 'Unknown' : given };
}
