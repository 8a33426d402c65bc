/**
 * Texts of any length in the shapes that make a pattern pass over stored or tool text slow: the
 * tools' own outputs (eslint, tsc, vitest, stack traces, pytest, npm and node-gyp), long runs of
 * what a path, a number, a blank or a marker is made of, and one word with no end. Each is a
 * function of about how many characters (UTF-16 units) it returns, deterministic. Used by the
 * guard test (test/linear-time.test.ts) and the bench (bench/signature.ts).
 */

/** `unit` repeated to exactly `chars` characters. */
export const fill = (unit: string, chars: number): string => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

/** Lines made by `line(i)` for i = 0, 1, … until `chars` characters (the last one cut). */
export function lines(line: (i: number) => string, chars: number): string {
  const out: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const next = line(i);
    out.push(next);
    length += next.length;
  }
  return out.join('').slice(0, chars);
}

/** A seeded run of characters from `alphabet` (a 31-bit linear congruential generator). */
export function randomRun(alphabet: string, chars: number, seed = 1): string {
  let state = seed;
  const out: string[] = [];
  for (let i = 0; i < chars; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out.push(alphabet[state % alphabet.length] as string);
  }
  return out.join('');
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** What a failure text can look like, by name: the tools' outputs and the runs a careless expression backtracks over. */
export const TEXT_SHAPES: Record<string, (chars: number) => string> = {
  'eslint output': (n) => lines((i) => `/home/dev/app/src/components/Button${i}.tsx\n  ${i % 300}:${i % 40}  error  'x${i}' is defined but never used  no-unused-vars\n`, n),
  'eslint line, blanks after the message': (n) => `  1:1  error  x${fill(' ', n - 17)}y z`,
  'eslint line, blanks after error': (n) => `  1:1  error${fill(' ', n - 15)}y z`,
  'tsc output': (n) => lines((i) => `src/api/users${i}.ts(${i + 1},5): error TS2305: Module './x' has no exported member 'y${i}'.\n`, n),
  'vitest output': (n) => ` FAIL  test/a.test.ts > adds\nAssertionError: expected 4 to be 5 // Object.is equality\n${lines((i) => ` ❯ test/a${i}.test.ts:${i}:5\n`, n - 85)}`,
  'stack trace': (n) => `TypeError: Cannot read properties of undefined (reading 'name')\n${lines((i) => `    at Object.<anonymous> (/home/dev/app/src/f${i}.js:${i}:7)\n`, n - 64)}`,
  'pytest, one long line': (n) => `E       AssertionError: ${fill('a ', n - 24)}`,
  'node-gyp, one long word': (n) => `gyp ERR! stack FooError${fill('x', n - 23)}`,
  'one token, letters and digits': (n) => randomRun(ALNUM, n),
  'one token of path characters': (n) => fill('ab-c.d+@e_f', n),
  'words joined by dashes': (n) => fill('a-', n),
  'digits, then a letter': (n) => `${fill('1', n - 1)}x`,
  'numbers with dots': (n) => fill('1.', n),
  'positions (:1:1)': (n) => `${fill(':1', n - 1)}x`,
  'blanks inside a line': (n) => `x${fill(' ', n - 2)}y`,
  'blank lines': (n) => fill('\n', n),
  'CRLF lines': (n) => fill('\r\n', n),
  'slashes': (n) => fill('/', n),
  'one long path (/a/a/…)': (n) => fill('/a', n),
  'Windows paths (C:\\a…)': (n) => fill('C:\\a', n),
  'a path, then drive heads run together (a/bC:\\a…)': (n) => `a/b${fill('C:\\a', n - 3)}`,
  'nested brackets': (n) => `${fill('(', n >> 1)}${fill(')', n - (n >> 1))}`,
  'hex run ending in g': (n) => `${fill('a', n - 1)}g`,
  'at / in words': (n) => fill('at in ', n),
  'ANSI escape with no end': (n) => `\u001b[${fill(';', n - 2)}`,
  'quotes': (n) => fill("'a", n),
  'redaction markers with no end': (n) => fill('[REDACTED:', n),
  'combining marks': (n) => `e${fill('\u0301', n - 1)}`,
  'CJK prose': (n) => fill('漢字 ', n),
  'ISO times run together': (n) => fill('2024-01-01T', n),
  'UUID-like run': (n) => fill('abcdef01-', n),
  'sentences (a. a. …)': (n) => fill('a. ', n),
  'a path, then one long word': (n) => `a/ ${fill('a', n - 3)}`,
  'a path, then a run of dots': (n) => `a/b${fill('.', n - 4)}c`,
  'unclosed markers ([REDACTED[REDACTED…)': (n) => fill('[REDACTED', n),
  'highlight marks with no end': (n) => fill('\u0001a', n),
  'punctuation, then one word': (n) => `${fill(',', n >> 1)}${fill('x', n - (n >> 1))}`,
};
