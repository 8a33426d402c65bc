/**
 * Secrets by class: generators of the spellings a person or a tool writes for one kind of secret,
 * for property tests (test/secrets.classes.test.ts) and, as a fixed sample, for every ingest and
 * output path (test/secrets.paths.test.ts).
 *
 * Each class is a fast-check arbitrary of GeneratedSecret: a text holding one secret, written one
 * way (the key's name and case, the separator, the quoting and escaping, the file syntax, a line
 * wrap, an encoding, the sentence around it), with the pieces of the secret that must not survive
 * redaction. A piece is what a reader could copy out of the text: the value, or each part of a
 * value that the spelling split (a wrapped line, a concatenated string, a base64 line).
 *
 * BENIGN_RESULTS generates what agents write most and must come back byte-identical: test results,
 * counts, coverage, ratios, durations, versions and short commit ids.
 *
 * All values are random; none is, or ever was, a live credential.
 */
import { ALGORITHM } from '../../skills/bazinga-db/scripts/lib/redact/prose.ts';
import fc from 'fast-check';

/** One generated spelling of a secret. */
export interface GeneratedSecret {
  /** The class it belongs to (a key of SECRET_CLASSES). */
  family: string;
  text: string;
  /** Substrings of `text`, each at least MIN_PIECE characters long, none of which may survive redaction. */
  secrets: string[];
}

/** Pieces shorter than this are not checked (a wrapped token's last two characters say nothing). */
export const MIN_PIECE = 8;

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const ALNUM = LOWER + UPPER + DIGITS;

/** A string of `min`..`max` characters drawn from `alphabet`. */
const charsOf = (alphabet: string, min: number, max: number) => fc.string({ unit: fc.constantFrom(...alphabet), minLength: min, maxLength: max });

/** Joins the parts of a generated tuple. */
const joined = (parts: readonly string[]) => parts.join('');

/** Indentation: none, blanks or a tab. */
const indent = fc.constantFrom('', '  ', '    ', '\t', '        ');

/** How a key made of words is written. */
export type KeyStyle = 'UPPER_SNAKE' | 'lower_snake' | 'camel' | 'Pascal' | 'kebab' | 'dotted';

export function spellKey(words: readonly string[], style: KeyStyle): string {
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  switch (style) {
    case 'UPPER_SNAKE':
      return words.map((w) => w.toUpperCase()).join('_');
    case 'lower_snake':
      return words.join('_');
    case 'camel':
      return words.map((w, i) => (i === 0 ? w : cap(w))).join('');
    case 'Pascal':
      return words.map(cap).join('');
    case 'kebab':
      return words.join('-');
    case 'dotted':
      return words.join('.');
  }
}

const keyStyle = fc.constantFrom<KeyStyle>('UPPER_SNAKE', 'UPPER_SNAKE', 'lower_snake', 'camel', 'Pascal', 'kebab', 'dotted');

/** A key naming the secret: one of `names` (lists of words), under an optional prefix word, in any style. */
const keyName = (names: readonly (readonly string[])[], prefixes: readonly string[] = ['']) =>
  fc.tuple(fc.constantFrom(...prefixes), fc.constantFrom(...names), keyStyle).map(([prefix, words, style]) => spellKey(prefix === '' ? words : [prefix, ...words], style));

/** The pieces long enough to check (at least MIN_PIECE characters), each once. */
function pieces(...parts: string[]): string[] {
  return [...new Set(parts.filter((p) => p.length >= MIN_PIECE))];
}

// ------------------------------------------------------------------------------------------------
// A value written in a key = value syntax (shared by several classes).

/** A key as a command-line flag names it: `DJANGO_SECRET_KEY`, `djangoSecretKey` → `django-secret-key`. */
export const flagName = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase().replace(/[_.]/g, '-');

/** A key as an environment variable or a constant names it: `djangoSecretKey`, `django.secret-key` → `DJANGO_SECRET_KEY`. */
export const envName = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase().replace(/[-.]/g, '_');

/**
 * The syntaxes a key = value pair is written in, given the key and the value already quoted the
 * way the syntax quotes (or bare). `quoted` says whether the value carries its own quotes.
 */
type Syntax = (key: string, value: string) => string;

const ASSIGNMENT_SYNTAXES: Record<string, Syntax> = {
  env: (k, v) => `${k}=${v}`,
  export: (k, v) => `export ${k}=${v}`,
  'spaced =': (k, v) => `${k} = ${v}`,
  yaml: (k, v) => `${k}: ${v}`,
  'yaml under a parent': (k, v) => `env:\n  ${k}: ${v}`,
  'compose list': (k, v) => `environment:\n  - ${k}=${v}`,
  'docker -e': (k, v) => `docker run -e ${k}=${v} app:latest`,
  'Dockerfile ENV': (k, v) => `ENV ${k}=${v}`,
  'fish set -x': (k, v) => `set -x ${envName(k)} ${v}`,
  'heroku config:set': (k, v) => `heroku config:set ${k}=${v} -a shop`,
  'kubectl --from-literal': (k, v) => `kubectl create secret generic app --from-literal=${k}=${v}`,
  'CLI flag =': (k, v) => `./manage.py run --${flagName(k)}=${v}`,
  'CLI flag blank': (k, v) => `./manage.py run --${flagName(k)} ${v}`,
  'with a comment': (k, v) => `${k}=${v}  # rotate every 90 days`,
  'config document': (k, v) => `DEBUG=False\nALLOWED_HOSTS=shop.example.com\n${k}=${v}\nDATABASE_URL=postgres://db/shop`,
};

// ------------------------------------------------------------------------------------------------
// (a) Django secret keys.

/** Django's get_random_secret_key() alphabet. */
export const DJANGO_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)';

const djangoValue = fc.tuple(fc.boolean(), charsOf(DJANGO_ALPHABET, 50, 50)).map(([insecure, body]) => ({ value: (insecure ? 'django-insecure-' : '') + body, body }));

const djangoKey = keyName(
  [
    ['secret', 'key'],
    ['django', 'secret', 'key'],
    ['django', 'secret'],
  ],
  ['', '', 'app', 'prod', 'mysite'],
);

/** Quoting a value that holds no quote and no backslash: bare, single, double. */
const plainQuote = fc.constantFrom<(v: string) => string>(
  (v) => v,
  (v) => `'${v}'`,
  (v) => `"${v}"`,
);

/** Python, JavaScript and shell spellings that read the key from the environment with the secret as the default. */
const DEFAULT_SPELLINGS: Record<string, (key: string, envName: string, value: string) => string> = {
  'os.environ.get': (k, e, v) => `${k} = os.environ.get('${e}', '${v}')`,
  'os.getenv': (k, e, v) => `${k} = os.getenv("${e}", "${v}")`,
  'django-environ': (k, e, v) => `${k} = env('${e}', default='${v}')`,
  'python-decouple': (k, e, v) => `${k} = config("${e}", default="${v}")`,
  'process.env ||': (k, e, v) => `const ${k} = process.env.${e} || '${v}';`,
  'process.env ??': (k, e, v) => `export const ${k} = process.env.${e} ?? "${v}";`,
  'shell ${:-}': (k, e, v) => `export ${k}="\${${e}:-${v}}"`,
  'settings.py literal': (k, _e, v) => `# SECURITY WARNING: keep the secret key used in production secret!\n${k} = '${v}'`,
};

const djangoSecret: fc.Arbitrary<GeneratedSecret> = fc.oneof(
  fc.tuple(djangoKey, djangoValue, plainQuote, fc.constantFrom(...Object.keys(ASSIGNMENT_SYNTAXES))).map(([key, { value, body }, quote, syntax]) => ({
    family: 'django_secret_key',
    text: (ASSIGNMENT_SYNTAXES[syntax] as Syntax)(key, quote(value)),
    secrets: pieces(body),
  })),
  fc.tuple(djangoKey, djangoValue, fc.constantFrom('"', "'")).map(([key, { value, body }, q]) => ({
    family: 'django_secret_key',
    text: `{\n  "DEBUG": false,\n  ${q}${key}${q}: ${q}${value}${q}\n}`,
    secrets: pieces(body),
  })),
  fc.tuple(djangoKey, djangoKey, djangoValue.filter(({ value }) => !value.includes("'") && !value.includes('"')), fc.constantFrom(...Object.keys(DEFAULT_SPELLINGS))).map(([key, envName, { value, body }, spelling]) => ({
    family: 'django_secret_key',
    text: (DEFAULT_SPELLINGS[spelling] as (k: string, e: string, v: string) => string)(key.replace(/[-.]/g, '_'), envName.replace(/[-.]/g, '_'), value),
    secrets: pieces(body),
  })),
  fc.tuple(djangoKey, djangoValue, indent).map(([key, { value, body }, pad]) => ({
    family: 'django_secret_key',
    text: `spec:\n  containers:\n  - env:\n${pad}  - name: ${key}\n${pad}    value: "${value}"`,
    secrets: pieces(body),
  })),
);

// ------------------------------------------------------------------------------------------------
// (b) A quoted password that itself holds a quote.

/** Password characters: no blank, quote, backslash, `$` or backtick (those are the escaping under test). */
const PASSWORD_ALPHABET = ALNUM + '!@#%^&*_+-=.:?~';

const passwordKey = keyName(
  [['password'], ['passwd'], ['pwd'], ['pass'], ['passphrase'], ['db', 'password'], ['admin', 'password'], ['root', 'password'], ['smtp', 'pass'], ['mysql', 'root', 'password'], ['pgpassword']],
  ['', '', 'app', 'prod'],
);

/**
 * How a string holding quotes is written inside quotes, for each convention: given the parts of
 * the value between its quotes and the quote inside, the spelled literal (with its outer quotes).
 */
const QUOTE_SPELLINGS: Record<string, { inner: "'" | '"'; spell: (parts: readonly string[]) => string }> = {
  "shell '…'\"'\"'…'": { inner: "'", spell: (p) => `'${p.join(`'"'"'`)}'` },
  "shell '…'\\''…'": { inner: "'", spell: (p) => `'${p.join(`'\\''`)}'` },
  "backslash '…\\'…'": { inner: "'", spell: (p) => `'${p.join(`\\'`)}'` },
  "doubled '…''…'": { inner: "'", spell: (p) => `'${p.join(`''`)}'` },
  'double "…\'…"': { inner: "'", spell: (p) => `"${p.join(`'`)}"` },
  'backslash "…\\"…"': { inner: '"', spell: (p) => `"${p.join(`\\"`)}"` },
  'single \'…"…\'': { inner: '"', spell: (p) => `'${p.join(`"`)}'` },
  'doubled "…""…"': { inner: '"', spell: (p) => `"${p.join(`""`)}"` },
  'backtick `…\'…`': { inner: "'", spell: (p) => `\`${p.join(`'`)}\`` },
  'backtick `…"…`': { inner: '"', spell: (p) => `\`${p.join(`"`)}\`` },
};

/** Where the quoted literal stands. */
const QUOTED_SYNTAXES: Record<string, (key: string, literal: string) => string> = {
  env: (k, l) => `${k}=${l}`,
  export: (k, l) => `export ${k}=${l}`,
  'python / js': (k, l) => `${k} = ${l}`,
  yaml: (k, l) => `${k}: ${l}`,
  json: (k, l) => `{"user": "admin", "${k}": ${l}}`,
  'php $var': (k, l) => `$${k.replace(/[-.]/g, '_')} = ${l};`,
  'php define': (k, l) => `define('${envName(k)}', ${l});`,
  'CLI --password blank': (_k, l) => `psql -h db -U admin --password ${l} shop`,
  'CLI --password=': (_k, l) => `mysqldump --user=admin --password=${l} shop`,
  'env before a command': (k, l) => `${envName(k)}=${l} ./migrate.sh`,
  'docker -e': (k, l) => `docker run -e ${k}=${l} postgres:16`,
  'config document': (k, l) => `host: db.internal\nport: 5432\n${k}: ${l}\nuser: admin`,
  'mysql -p joined': (_k, l) => `mysql -u root -p${l} shop`,
  'mysql -p joined after a prompt': (_k, l) => `$ mysql -h db -u admin -p${l} -e 'select 1'`,
  'sshpass -p': (_k, l) => `sshpass -p ${l} ssh deploy@web1`,
  'docker login -p': (_k, l) => `docker login -u ci -p ${l} registry.acme.io`,
};

const quotedPassword: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    passwordKey,
    fc.array(charsOf(PASSWORD_ALPHABET, MIN_PIECE, 12), { minLength: 2, maxLength: 3 }),
    fc.constantFrom(...Object.keys(QUOTE_SPELLINGS)),
    fc.constantFrom(...Object.keys(QUOTED_SYNTAXES)),
    fc.boolean(),
  )
  // A backtick on a command line runs a command: its output is the password, not what is written.
  .filter(([, , spelling, syntax]) => !(spelling.startsWith('backtick') && /^(?:mysql|sshpass|docker)/.test(syntax)))
  .map(([key, parts, spelling, syntax, jsonEscaped]) => {
    const literal = (QUOTE_SPELLINGS[spelling] as { spell: (p: readonly string[]) => string }).spell(parts);
    const line = (QUOTED_SYNTAXES[syntax] as (k: string, l: string) => string)(key, literal);
    // The same line inside a JSON string (a log record, a tool's output): quotes and backslashes escaped.
    const text = jsonEscaped ? `{"command": ${JSON.stringify(line)}, "exit": 0}` : line;
    return { family: 'quoted_password', text, secrets: pieces(...parts) };
  });

// ------------------------------------------------------------------------------------------------
// (c) A password whose key name appears twice on its line.

const PASSWORD_WORDS = ['password', 'passwd', 'pwd', 'PASSWORD', 'Password', 'DB_PASSWORD', 'db_password', 'MYSQL_PASSWORD', 'adminPassword'];

const repeatedKeyPassword: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    fc.constantFrom(...PASSWORD_WORDS),
    fc.constantFrom(...PASSWORD_WORDS),
    // The value: random, or starting with the key word itself (`password123`).
    fc.tuple(fc.boolean(), charsOf(ALNUM, 2, 4), charsOf(DIGITS, 1, 3), charsOf(PASSWORD_ALPHABET, 5, 10)),
    fc.constantFrom('=', ': ', ' = ', '=>', ' := ', ':'),
    fc.constantFrom('=', ': ', ' = ', ':', '=>'),
    fc.constantFrom('', '"', "'"),
    fc.integer({ min: 0, max: 11 }),
    fc.constantFrom('alone', 'document', 'json string'),
  )
  .map(([k1, k2, [startsWithKey, a, d, rest], op1, op2, q, shape, where]) => {
    const value = (startsWithKey ? k2.toLowerCase() : a) + d + rest;
    const v = `${q}${value}${q}`;
    const lines = [
      `${k1}${op1}${v} # ${k1}`,
      `${k1}${op1}${v}  # the ${k2} for prod`,
      `${k1}${op1}${v} (${k2})`,
      `${k1}${op1}${v} // ${k2}`,
      `${k1}${op1}${k2}${op2}${v}`,
      `--${k1.toLowerCase()} ${k2}${op2}${v}`,
      `${k1} ${k2}${op2}${v}`,
      `${k1}${op1}${v}, ${k2}_confirm_hint: "same as ${k2}"`,
      `echo "${k1} set"; ${k2}${op2}${v}`,
      `- ${k1}${op1}${v} # ${k2}`,
      `${k1}: ${k2}${op2}${v} # ${k1}`,
      `set ${k1} ${k2}${op2}${v}`,
    ];
    const line = lines[shape] as string;
    const text =
      where === 'alone' ? line : where === 'document' ? `# database\nhost: db.internal\nuser: admin\n${line}\nport: 5432\n` : `{"log": ${JSON.stringify(line)}}`;
    return { family: 'repeated_key_password', text, secrets: pieces(value) };
  });

// ------------------------------------------------------------------------------------------------
// (d) A GitHub token wrapped across lines.

const githubToken = fc.oneof(
  fc.tuple(fc.constantFrom('ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'), charsOf(ALNUM, 36, 36)).map(joined),
  fc.tuple(charsOf(ALNUM, 22, 22), charsOf(ALNUM, 59, 59)).map(([a, b]) => `github_pat_${a}_${b}`),
);

/** Cuts a token into parts of `width` characters (the last may be shorter). */
export function cut(token: string, width: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < token.length; i += width) parts.push(token.slice(i, i + width));
  return parts;
}

/**
 * How the parts are put back on several lines: a plain line break (a width-limited log or
 * terminal), after indentation, with CRLF, a shell `\` continuation, or string concatenation in
 * a language (the whole token then sits in quotes).
 */
const WRAPS: Record<string, { quoted: boolean; join: (parts: readonly string[], pad: string) => string }> = {
  newline: { quoted: false, join: (p) => p.join('\n') },
  'newline and indentation': { quoted: false, join: (p, pad) => p.join(`\n${pad === '' ? '  ' : pad}`) },
  crlf: { quoted: false, join: (p) => p.join('\r\n') },
  'shell \\ continuation': { quoted: false, join: (p, pad) => p.join(`\\\n${pad}`) },
  'quoted > mail reply': { quoted: false, join: (p) => p.join('\n> ') },
  '# comment lines': { quoted: false, join: (p) => p.join('\n# ') },
  '// comment lines': { quoted: false, join: (p) => p.join('\n// ') },
  ' * block comment lines': { quoted: false, join: (p) => p.join('\n * ') },
  '-- SQL comment lines': { quoted: false, join: (p) => p.join('\n-- ') },
  '| table cells': { quoted: false, join: (p) => p.join('\n| ') },
  'C adjacent strings': { quoted: true, join: (p, pad) => `"${p.join(`"\n${pad}"`)}"` },
  'JS +': { quoted: true, join: (p, pad) => `"${p.join(`" +\n${pad}"`)}"` },
  "JS + ''": { quoted: true, join: (p, pad) => `'${p.join(`' +\n${pad}'`)}'` },
  'PHP .': { quoted: true, join: (p, pad) => `'${p.join(`' .\n${pad}'`)}'` },
  'Python ( )': { quoted: true, join: (p, pad) => `("${p.join(`"\n${pad}"`)}")` },
  "shell '…'\\": { quoted: true, join: (p, pad) => `'${p.join(`'\\\n${pad}'`)}'` },
};

/** Where the wrapped token stands (the text before it, and after). */
const TOKEN_PLACES: readonly [string, string][] = [
  ['', ''],
  ['GITHUB_TOKEN=', ''],
  ['export GH_TOKEN=', '\necho done'],
  ['token: ', '\nowner: acme'],
  ['Authorization: token ', ''],
  ['use ', ' to push the release'],
  ['{"token": ', '}'],
  ['const token = ', ';'],
  ['2024-06-11T10:12:44Z INFO auth: token=', ' scope=repo'],
];

const wrappedGithubToken: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(githubToken, fc.oneof(fc.constant(20), fc.integer({ min: 8, max: 60 })), fc.constantFrom(...Object.keys(WRAPS)), indent, fc.constantFrom(...TOKEN_PLACES))
  .filter(([token, width]) => width < token.length)
  .map(([token, width, wrap, pad, [before, after]]) => {
    const parts = cut(token, width);
    const { quoted, join } = WRAPS[wrap] as { quoted: boolean; join: (p: readonly string[], pad: string) => string };
    // A JSON value or a `key=` needs quotes only when the spelling does not bring its own.
    const value = join(parts, pad);
    const text = before === '{"token": ' && !quoted ? `${before}"${value.replace(/\r?\n/g, '\\n')}"${after}` : `${before}${value}${after}`;
    return { family: 'wrapped_github_token', text, secrets: pieces(token, ...parts).filter((p) => text.includes(p)) };
  });

// ------------------------------------------------------------------------------------------------
// (e) Base64 of an env line holding an AWS secret access key.

const awsSecretAccessKey = charsOf(ALNUM + '+/', 40, 40);
const awsKeyId = fc.tuple(fc.constantFrom('AKIA', 'ASIA'), charsOf(UPPER + DIGITS, 16, 16)).map(joined);

/** The env-like text that gets encoded: the secret's line in one of its syntaxes, maybe with neighbours. */
const AWS_LINES: readonly ((secret: string) => string)[] = [
  (s) => `AWS_SECRET_ACCESS_KEY=${s}`,
  (s) => `export AWS_SECRET_ACCESS_KEY=${s}`,
  (s) => `AWS_SECRET_ACCESS_KEY="${s}"`,
  (s) => `aws_secret_access_key = ${s}`,
  (s) => `AWS_SECRET_ACCESS_KEY: ${s}`,
  (s) => `"SecretAccessKey": "${s}"`,
  (s) => `aws_secret_access_key=${s}`,
];

/** base64 (RFC 4648 §4) or base64url (§5), with or without padding. */
export function encodeBase64(text: string, urlSafe: boolean, padded: boolean): string {
  let b64 = Buffer.from(text, 'utf8').toString('base64');
  if (urlSafe) b64 = b64.replace(/\+/g, '-').replace(/\//g, '_');
  return padded ? b64 : b64.replace(/=+$/, '');
}

/** Where the encoded text stands: given its lines, the whole text. */
const BASE64_PLACES: Record<string, (lines: readonly string[], pad: string) => string> = {
  bare: (l) => l.join('\n'),
  'kubernetes secret data': (l, pad) => `apiVersion: v1\nkind: Secret\ndata:\n  app.env: ${l.join(`\n${pad}    `)}`,
  'YAML block': (l) => `files:\n  env_b64: |\n    ${l.join('\n    ')}\n  mode: "0600"`,
  'echo | base64 -d': (l) => `echo "${l.join('')}" | base64 -d > .env`,
  'EC2 user data': (l) => `{"ImageId": "ami-0abc", "UserData": "${l.join('')}"}`,
  'in a sentence': (l) => `The encoded env is ${l.join('')} (decode it with base64 -d).`,
  'a name that says nothing': (l) => `CONFIG_BLOB=${l.join('')}`,
};

const base64AwsEnv: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    awsSecretAccessKey,
    awsKeyId,
    fc.constantFrom(...AWS_LINES),
    fc.constantFrom('none', 'key id before', 'profile header', 'region after'),
    fc.boolean(),
    fc.boolean(),
    fc.boolean(),
    fc.oneof(fc.constant(0), fc.constant(76), fc.constant(64), fc.constant(60), fc.integer({ min: 16, max: 100 })),
    fc.constantFrom(...Object.keys(BASE64_PLACES)),
    indent,
    fc.constantFrom('base64', 'base64', 'hex', 'HEX', 'percent'),
  )
  .map(([secret, keyId, line, neighbours, trailingNewline, urlSafe, padded, width, place, pad, encoding]) => {
    const body = line(secret);
    const env =
      neighbours === 'key id before'
        ? `AWS_ACCESS_KEY_ID=${keyId}\n${body}`
        : neighbours === 'profile header'
          ? `[default]\n${body}`
          : neighbours === 'region after'
            ? `${body}\nAWS_DEFAULT_REGION=eu-central-1`
            : body;
    const plain = env + (trailingNewline ? '\n' : '');
    if (encoding === 'percent') {
      // A URL-encoded value (a query string, a form): the key stays readable once decoded, the secret must go.
      const text = (BASE64_PLACES[place] as (l: readonly string[], pad: string) => string)([`data=${encodeURIComponent(plain)}`], pad);
      return { family: 'base64_aws_env', text, secrets: pieces(encodeURIComponent(secret)) };
    }
    const hex = Buffer.from(plain, 'utf8').toString('hex');
    const encoded = encoding === 'hex' ? hex : encoding === 'HEX' ? hex.toUpperCase() : encodeBase64(plain, urlSafe, padded);
    const lines = width === 0 || width >= encoded.length ? [encoded] : cut(encoded, width);
    const text = (BASE64_PLACES[place] as (l: readonly string[], pad: string) => string)(lines, pad);
    return { family: 'base64_aws_env', text, secrets: pieces(encoded, ...lines.filter((l) => l.length >= 16)).filter((p) => text.includes(p)) };
  });

// ------------------------------------------------------------------------------------------------
// (f) A password in prose.

/**
 * A password someone types into a sentence: letters, digits, maybe a symbol, 6 to 20 characters;
 * not one that reads as a hash or cipher name with a number (`sha0a`, `md5`: a known limit, see
 * references/redaction.md).
 */
const prosePasswordValue = fc
  .tuple(charsOf(LOWER + UPPER, 3, 8), charsOf(DIGITS, 1, 4), fc.constantFrom('', '!', '#', '@', '$', '%', '&', '*', '-', '_', '+', '?'), charsOf(ALNUM, 1, 6))
  .map(joined)
  .filter((value) => !ALGORITHM.test(value));

const PROSE_SUBJECTS = ['password', 'passphrase', 'pw', 'pwd', 'passcode', 'passwd', 'PW', 'Password', 'pass'];
const PROSE_OWNERS = ['', 'admin ', 'prod ', 'root ', 'database ', 'db ', 'staging ', 'wifi ', 'VPN ', 'Jenkins ', 'the new '];
const PROSE_QUALIFIERS = ['', ' for prod', ' for the admin account', ' of the admin user', ' to the staging box', ' on the VPN', ' for root@db1', ' for Jenkins'];
const PROSE_VERBS = [' is', ' are', "'s", '’s', ' are now', ' were', ' was', ' is now', ' was set to', ' has been changed to', ' has been reset to', ' will be', ': is', ':', ' =', ' is:', ' -', ' → ', ' became', ' now is'];
const PROSE_OPENERS = ['', 'FYI ', 'Note: ', 'Heads up, ', 'btw ', 'As discussed, ', '> ', '- ', 'QA: '];
const PROSE_ENDINGS = ['', '.', '!', ',', ' (do not share)', ' - rotate it after the demo.', ', use it once', '\nThanks!', ' and the user is admin.'];

const prosePassword: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    fc.constantFrom(...PROSE_OPENERS),
    fc.constantFrom('', 'the ', 'The ', 'our ', 'my ', 'your '),
    fc.constantFrom(...PROSE_OWNERS),
    fc.constantFrom(...PROSE_SUBJECTS),
    fc.constantFrom(...PROSE_QUALIFIERS),
    fc.constantFrom(...PROSE_VERBS),
    fc.constantFrom('', '', '"', "'", '`'),
    prosePasswordValue,
    fc.constantFrom(...PROSE_ENDINGS),
  )
  // `'s` follows the word itself (`the password's …`), not what it is for.
  .filter(([, , , , qualifier, verb]) => !(qualifier !== '' && /^['’]s$/.test(verb)))
  .map(([opener, article, owner, subject, qualifier, verb, q, value, ending]) => ({
    family: 'prose_password',
    text: `${opener}${article}${owner}${subject}${qualifier}${verb} ${q}${value}${q}${ending}`,
    secrets: [value],
  }));

/** The value before what it is: `use X as the password`. */
const useAsPassword: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    fc.constantFrom(...PROSE_OPENERS),
    fc.constantFrom('Use', 'use', 'Try', 'try', 'Using', 'set'),
    fc.constantFrom('', '', '"', "'", '`'),
    prosePasswordValue,
    fc.constantFrom('', 'the ', 'a ', 'your ', 'the admin ', 'the prod DB ', 'the Jenkins '),
    fc.constantFrom('password', 'passphrase', 'passcode', 'pw', 'pwd'),
    fc.constantFrom(...PROSE_ENDINGS),
  )
  .map(([opener, verb, q, value, article, subject, ending]) => ({
    family: 'prose_password',
    text: `${opener}${verb} ${q}${value}${q} as ${article}${subject}${ending}`,
    secrets: [value],
  }));

/** Several passwords in one sentence: `the passwords are X and Y`. */
const prosePasswordList: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(fc.constantFrom('the passwords', 'The passwords', 'passwords', 'the pws', 'the passphrases'), fc.constantFrom(' are', ' are now', ' were', ':'), prosePasswordValue, fc.constantFrom(' and ', ', ', ' & '), prosePasswordValue, fc.constantFrom(...PROSE_ENDINGS))
  .filter(([, , a, , b]) => a !== b)
  .map(([subject, verb, a, joint, b, ending]) => ({ family: 'prose_password', text: `${subject}${verb} ${a}${joint}${b}${ending}`, secrets: [a, b] }));

/** A key given in a sentence: `The Django secret key is …`, `the API token was …`. */
const proseKey: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    fc.constantFrom(...PROSE_OPENERS),
    fc.constantFrom('the ', 'The ', 'our ', 'the Django ', 'The Flask ', 'the Stripe ', 'the prod '),
    fc.constantFrom('secret key', 'Secret Key', 'signing secret', 'API key', 'api token', 'access token', 'secret', 'client secret', 'encryption key', 'session token', 'auth token'),
    fc.constantFrom(' is', ' was', ' is now', "'s", ' has been changed to', ':', ' =', ' -'),
    fc.constantFrom('', '', '"', "'"),
    fc.tuple(charsOf(LOWER + UPPER, 4, 10), charsOf(DIGITS, 2, 4), charsOf(ALNUM + '-_', 6, 20)).map(joined),
    fc.constantFrom(...PROSE_ENDINGS),
  )
  .map(([opener, article, subject, verb, q, value, ending]) => ({
    family: 'prose_key',
    text: `${opener}${article}${subject}${verb} ${q}${value}${q}${ending}`,
    secrets: [value],
  }));

/** A URL whose password holds an apostrophe (`postgresql://admin:it's-s3cret@db`). */
const urlPasswordQuote: fc.Arbitrary<GeneratedSecret> = fc
  .tuple(
    fc.constantFrom('postgresql', 'postgres', 'mysql', 'mongodb', 'redis', 'amqp', 'https'),
    fc.constantFrom('admin', 'app', 'svc_user', 'root'),
    charsOf(ALNUM, MIN_PIECE, 12),
    charsOf(ALNUM + '-_.', MIN_PIECE, 12),
    fc.constantFrom('db', 'db.internal', 'db1.acme.io:5432', 'localhost:6379', '10.0.0.5'),
    fc.constantFrom((u: string) => u, (u: string) => `DATABASE_URL=${u}`, (u: string) => `connect to ${u} then run the migration`, (u: string) => `"url": "${u}"`),
  )
  .map(([scheme, user, a, b, host, place]) => ({
    family: 'url_password_quote',
    text: place(`${scheme}://${user}:${a}'${b}@${host}/app`),
    secrets: [`${a}'${b}`, a, b],
  }));

/** Every class, by name. */
export const SECRET_CLASSES: Record<string, fc.Arbitrary<GeneratedSecret>> = {
  django_secret_key: djangoSecret,
  quoted_password: quotedPassword,
  repeated_key_password: repeatedKeyPassword,
  wrapped_github_token: wrappedGithubToken,
  base64_aws_env: base64AwsEnv,
  prose_password: prosePassword,
  use_as_password: useAsPassword,
  prose_password_list: prosePasswordList,
  prose_key: proseKey,
  url_password_quote: urlPasswordQuote,
};

/** The pieces of `secrets` found in `text`. */
export function survivors(text: string, secrets: readonly string[]): string[] {
  return secrets.filter((s) => text.includes(s));
}

// ------------------------------------------------------------------------------------------------
// Benign: what agents write most.

const count = fc.integer({ min: 0, max: 5000 });
const small = fc.integer({ min: 0, max: 60 });
const percent = fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 9 })).map(([a, b]) => `${a}.${b}`));
const ms = fc.integer({ min: 1, max: 99_999 });
const seconds = fc.tuple(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 999 })).map(([s, f]) => `${s}.${String(f).padStart(3, '0')}`);
const version = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 99 })).map(([a, b, c]) => `${a}.${b}.${c}`);
const shortSha = charsOf('0123456789abcdef', 7, 12);
const testName = fc.tuple(fc.constantFrom('Login', 'Logout', 'Password', 'PasswordReset', 'Token', 'TokenRefresh', 'Secret', 'ApiKey', 'Checkout', 'Cart'), fc.constantFrom('', 'Fails', 'Works', 'Expired', 'Rotates')).map(joined);
const ratio = fc.tuple(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 500 })).map(([a, b]) => `${Math.min(a, b)}/${b}`);

/** A key naming a password, as a QA report about the password flows writes it before a result. */
const passwordResultKey = fc.constantFrom('Password', 'password', 'PASSWORD', 'pwd', 'passwd', 'passphrase', 'passwords', 'db_password', 'DB_PASSWORD', 'adminPassword', 'Password reset');
const passwordResultOperator = fc.constantFrom(': ', '=', ' = ', ':  ');
/** What a count or a run came to, after the count. */
const resultWord = fc.constantFrom('passed', 'failed', 'passing', 'failing', 'tests', 'test', 'coverage', 'covered', 'ok', 'OK', 'skipped', 'PASSED', 'specs', 'checks');
/** A run's status alone (not `pass`: a person may pick it as a password's word). */
const resultStatus = fc.constantFrom('OK', 'ok', 'passed', 'PASSED', 'Passed', 'failed', 'FAILED', 'skipped', 'passing', 'failing', 'succeeded');
/** The last word of a key that names what was found about a password, not the password. */
const resultKeyWord = fc.constantFrom('tests', 'results', 'status', 'coverage', 'checks');

/** One line of a test run's or a build's result, as tools and agents print it. */
const RESULT_LINES: fc.Arbitrary<string>[] = [
  fc.tuple(ratio, percent).map(([r, p]) => `PASS: ${r} tests, coverage ${p}%`),
  fc.tuple(ratio, percent).map(([r, p]) => `FAIL: ${r} tests, coverage ${p}%`),
  fc.tuple(ratio).map(([r]) => `PASS: ${r}`),
  fc.tuple(count, small, count).map(([a, b, c]) => `Tests: ${a} passed, ${b} failed, ${a + b + c} total`),
  fc.tuple(small, small).map(([a, b]) => `Test Suites: ${a} passed, ${a + b} total`),
  fc.tuple(count, ms).map(([a, t]) => `✓ ${a} passed (${t}ms)`),
  fc.tuple(count, ms).map(([a, t]) => `  ${a} passing (${t}ms)`),
  fc.tuple(small).map(([b]) => `  ${b} failing`),
  fc.tuple(count, seconds).map(([a, s]) => `Ran ${a} tests in ${s}s\n\nOK`),
  fc.tuple(count, small, seconds).map(([a, b, s]) => `==== ${a} passed, ${b} skipped in ${s}s ====`),
  fc.tuple(testName, seconds).map(([n, s]) => `--- PASS: Test${n} (${s}s)`),
  fc.tuple(testName, seconds).map(([n, s]) => `--- FAIL: Test${n} (${s}s)`),
  fc.tuple(seconds, percent).map(([s, p]) => `ok  \tgithub.com/acme/shop/auth\t${s}s\tcoverage: ${p}% of statements`),
  fc.tuple(count, small, seconds).map(([a, b, s]) => `test result: ok. ${a} passed; ${b} failed; 0 ignored; 0 measured; 0 filtered out; finished in ${s}s`),
  fc.tuple(count, small, small).map(([a, b, c]) => `pass: ${a} fail: ${b} skip: ${c}`),
  fc.tuple(count, small).map(([a, b]) => `PASS=${a} FAIL=${b}`),
  fc.tuple(count, small).map(([a, b]) => `Pass: ${a}, Fail: ${b}`),
  fc.tuple(count, small).map(([a, b]) => `passed=${a} failed=${b}`),
  fc.tuple(percent, count).map(([p, a]) => `Coverage: ${p}% (${a}/${a + 10} lines)`),
  fc.tuple(percent, ratio).map(([p, r]) => `Statements   : ${p}% ( ${r} )`),
  fc.tuple(percent).map(([p]) => `coverage: ${p}%`),
  fc.tuple(ratio, percent).map(([r, p]) => `Pass rate ${r} (${p}%)`),
  fc.tuple(version).map(([v]) => `v${v}`),
  fc.tuple(fc.integer({ min: 1, max: 40 })).map(([v]) => `BAZINGA v${v} schema`),
  fc.tuple(fc.constantFrom('vitest', 'jest', 'pytest', 'esbuild', 'node', 'typescript'), version).map(([p, v]) => `${p}@${v}`),
  fc.tuple(fc.constantFrom('Node.js', 'Python', 'Go', 'rustc'), version).map(([p, v]) => `${p} ${v}`),
  fc.tuple(shortSha).map(([s]) => `commit ${s}`),
  fc.tuple(shortSha, testName).map(([s, n]) => `${s} fix: ${n.toLowerCase()} test`),
  fc.tuple(ms).map(([t]) => `Duration ${t}ms`),
  fc.tuple(seconds).map(([s]) => `Time: ${s} s`),
  fc.tuple(count, count).map(([a, b]) => `tokens: ${a}/${a + b}`),
  fc.tuple(count).map(([a]) => `max_tokens: ${a}`),
  fc.tuple(small, small).map(([a, b]) => `lint: ${a} errors, ${b} warnings`),
  fc.tuple(count, small).map(([a, b]) => `${a} passed, ${b} failed`),
  fc.tuple(ratio).map(([r]) => `passwords checked: ${r}`),
  fc.tuple(ratio).map(([r]) => `password tests: ${r} PASS`),
  fc.tuple(count).map(([a]) => `token count: ${a}`),
  fc.tuple(ratio, percent).map(([r, p]) => `secrets scan: ${r} files clean (${p}%)`),
  // Under a key naming a password: a count, ratio or percentage and the word of a result, or a status alone.
  fc.tuple(passwordResultKey, passwordResultOperator, ratio, resultWord).map(([k, op, r, w]) => `${k}${op}${r} ${w}`),
  fc.tuple(passwordResultKey, passwordResultOperator, count, small).map(([k, op, a, b]) => `${k}${op}${a} passed, ${b} failed`),
  fc.tuple(passwordResultKey, passwordResultOperator, percent).map(([k, op, p]) => `${k}${op}${p}% coverage`),
  fc.tuple(passwordResultKey, passwordResultOperator, small, small).map(([k, op, a, b]) => `${k}${op}${a} of ${a + b} tests`),
  fc.tuple(passwordResultKey, passwordResultOperator, ratio, percent, resultWord).map(([k, op, r, p, w]) => `${k}${op}${r} (${p}%) ${w}`),
  fc.tuple(passwordResultKey, passwordResultOperator, resultStatus).map(([k, op, s]) => `${k}${op}${s}`),
  fc.tuple(passwordResultKey, passwordResultOperator, resultStatus, ms).map(([k, op, s, t]) => `${k}${op}${s} (${t}ms)`),
  // A key naming what was found about a password (`password_tests=12/12`), in any style.
  fc.tuple(fc.constantFrom(['password'], ['pwd'], ['db', 'password'], ['admin', 'password']), resultKeyWord, keyStyle, fc.constantFrom('=', ': '), fc.oneof(ratio, percent.map((p) => `${p}%`), resultStatus)).map(
    ([words, last, style, op, value]) => `${spellKey([...words, last], style)}${op}${value}`,
  ),
];

/** What comes before a result: an agent's status line, a heading, nothing. */
const RESULT_OPENERS = ['', 'QA Expert: ', 'Result: ', '## Summary\n', 'Status: READY_FOR_REVIEW\n', '✅ ', 'Tech lead, ', '- '];
const RESULT_JOINERS = [', ', '; ', '\n', ' | ', ' — ', '. '];

/** A text made of one to five result lines, as an agent reports a run. */
export const BENIGN_RESULTS: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...RESULT_OPENERS), fc.array(fc.oneof(...RESULT_LINES), { minLength: 1, maxLength: 5 }), fc.constantFrom(...RESULT_JOINERS))
  .map(([opener, lines, joiner]) => opener + lines.join(joiner));

/** A fixed sample of a class (the same on every run): for the path tests, which cost a process each. */
export function sampleClass(name: string, n: number, seed: number): GeneratedSecret[] {
  const arb = SECRET_CLASSES[name];
  if (arb === undefined) throw new Error(`no secret class ${name}`);
  return fc.sample(arb, { numRuns: n, seed });
}
