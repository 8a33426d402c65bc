/**
 * Hostile shapes for the redaction engine: texts of any size full of near-matches, the ones that
 * make a careless rule backtrack or a scanner read the same characters again. Used by the guard
 * test (test/redaction.linear.test.ts) and the bench (bench/redaction.ts).
 */
import fc from 'fast-check';
import { SECRET_CASES } from './corpus.ts';

/** Repeats `unit` to `bytes` characters. */
export const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

/** `n` characters from `alphabet`, the same on every call (a linear congruential generator). */
export function pseudoRandom(n: number, alphabet: string, seed = 7): string {
  let s = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[s % alphabet.length];
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Each shape, as a function of its size. */
export const HOSTILE_SHAPES: Record<string, (bytes: number) => string> = {
  // key = value runs
  'a= repeated': (n) => fill('a=', n),
  'password=password=…': (n) => fill('password=', n),
  'password=password: (a key as its own value)': (n) => fill('password=password:', n),
  'password: password = (spaced)': (n) => fill('password: password = ', n),
  'query strings (password=a&)': (n) => fill('password=a&', n),
  'SAS-like parameters (&sig=)': (n) => fill('&sig=', n),
  'INI-like keys on one line (password = word )': (n) => fill('password = word ', n),
  'env lines (DB_PASSWORD = hunter2x)': (n) => fill('DB_PASSWORD = hunter2x\n', n),
  'YAML keys without values (token: )': (n) => fill('token: ', n),
  'YAML block headers (token: then a bar)': (n) => fill('token: |\n', n),
  'wide indented lines under YAML keys': (n) => fill('password: |\n' + ' '.repeat(1010) + 'x\n', n),
  'key-like words, no operator': (n) => fill('api_key_secret_token_password ', n),
  'one word of name characters': (n) => fill('secret_token.', n),
  'keys whose values are code (token=this.)': (n) => fill('token=this.', n),
  'one key, a value of 1 MB': (n) => 'password=' + pseudoRandom(n - 9, 'abcdefgh'),
  'brackets and separators after a key': (n) => 'password=' + fill(')&;]', n - 9),
  'Django-like bare values (SECRET_KEY=a)b(c&d;e )': (n) => fill('SECRET_KEY=a)b(c&d;e ', n),
  'reads from the environment (os.environ.get(…, )': (n) => fill("os.environ.get('SECRET_KEY', ", n),
  'shell defaults (${SECRET_KEY:-)': (n) => fill('${SECRET_KEY:-', n),
  'name/value pairs (- name: … value: )': (n) => fill('- name: SECRET_KEY\n  value: ', n),
  // quotes
  'unclosed quotes after keys': (n) => fill('token="', n),
  'nested escaped quotes': (n) => fill('{\\"password\\": \\"', n),
  'quote pieces after a key': (n) => fill(`password='a'"b"`, n),
  'escaped quotes between pieces': (n) => fill(`password='a'\\''b'`, n),
  'quotes only': (n) => fill(`'"\``, n),
  'backslashes and quotes': (n) => fill('\\"', n),
  // tokens, wraps and base64
  'near-miss vendor prefixes': (n) => fill('sk-ant- ghp_ AKIA xoxb- eyJ.eyJ npm_ glpat- django-insecure- ', n),
  'one huge token': (n) => 'ghp_' + pseudoRandom(n - 4, ALNUM),
  'token-like lines of 20 (ghp_… wrapped)': (n) => fill('ghp_Rt2Lm9Qx4Zc8Vn1H\n', n),
  'string pieces joined over lines ("ab" +)': (n) => fill('"ab" +\n "cd" +\n', n),
  'long base64 run': (n) => pseudoRandom(n, B64),
  'base64 wrapped at 76': (n) => pseudoRandom(n, B64).replace(/(.{76})/g, '$1\n'),
  'base64 wrapped at 16': (n) => pseudoRandom(n, B64).replace(/(.{16})/g, '$1\n'),
  'base64 of env lines, wrapped': (n) => Buffer.from(fill('AWS_SECRET_ACCESS_KEY=abc\n', Math.floor((n * 3) / 4))).toString('base64').replace(/(.{76})/g, '$1\n'),
  'many short base64 runs of text': (n) => fill('QUJDREVGR0hJSktMTU5PUFFS ', n),
  // Lines that each decode to a secret, in a block that does not decode whole (its last line breaks it).
  'base64 lines each holding a secret, the block not whole': (n) => fill(`b=${Buffer.from('PASSWORD=hunter22\n').toString('base64')}\n`, n - 1) + 'A',
  'hex lines (xxd -p) each holding a secret, the block not whole': (n) => fill(`${Buffer.from('password=hunter2\n').toString('hex')}\n`, n - 1) + 'a',
  'digit runs in identifier-like tokens (Ab000…_)': (n) => fill('Ab' + '0'.repeat(26) + '_ ', n),
  // URLs, headers, commands
  'URLs with colons, no @': (n) => fill('postgres://user:pass:word/', n),
  'dense URL heads (a://:)': (n) => fill('a://:', n),
  'URL credentials before runs of @ (a://b:c@@@@ )': (n) => fill('a://b:c@@@@ ', n),
  'client names without -p (mysql -u )': (n) => fill('mysql -u ', n),
  'netrc words (login a password )': (n) => fill('login a password ', n),
  'Markdown table rows on one line (password cells)': (n) => fill('| password | x ', n),
  'unclosed XML elements (<password>x)': (n) => fill('<password>x', n),
  'unterminated private blocks': (n) => fill('-----BEGIN PRIVATE KEY----- <private', n),
  // prose and nesting
  'many "password" words': (n) => fill('password ', n),
  'password sentences without a value': (n) => fill('the password is now set to ', n),
  'password for a b c d (qualifiers)': (n) => fill('password for a b c d ', n),
  'test results (PASS: 18/18 tests)': (n) => fill('PASS: 18/18 tests, coverage 91%\n', n),
  'deep nesting ({"a": …)': (n) => '{"a":'.repeat(Math.floor(n / 10)) + '"x"' + '}'.repeat(Math.floor(n / 10)),
  'deep JSON of passwords ({"password": …)': (n) => fill('{"password":', n),
  'blank runs after a redacted value': (n) => fill('password=hunter2' + ' '.repeat(1000) + '\n', n),
  'corpus text (real secrets)': (n) => fill(SECRET_CASES.map((c) => c.text).join('\n'), n),
};

/** Fragments random shapes are made of: the characters and words the rules key on. */
export const FRAGMENTS = [
  'password', 'token', 'secret', 'SECRET_KEY', 'pw', 'pass', 'api_key', '=', ':', ': ', ' = ', '=>', '"', "'", '`', '\\', '\\"', '\n', ' ', '\t',
  '(', ')', '[', ']', '{', '}', '&', ';', ',', '|', '@', '://', '$', '${', ':-', '-', '--', '#', 'is ', 'for ', 'was ', 'export ', '- name: ',
  'value: ', 'ghp_', 'github_pat_', 'AKIA', 'eyJ', 'django-insecure-', 'QUJD', 'REVG', 'Rt2Lm9Qx4Zc8', '0000', 'aaaa', '+', '/', '.', '<', '>',
];

/** A random shape: a unit of one to eight fragments, repeated. */
export const RANDOM_SHAPE: fc.Arbitrary<string> = fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(''));
