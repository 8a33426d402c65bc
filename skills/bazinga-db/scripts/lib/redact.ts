/**
 * The redaction engine: one module that every text this product stores or prints goes through.
 * bazinga-db runs it on each field before writing a row; the context-assembler runs it on each
 * string it emits. A secret is replaced by a marker that names the rule that found it and keeps
 * what identifies it (the key, the user of a URL): `password=[REDACTED:password]`,
 * `[REDACTED:jwt]`. Text between `<private>` and `</private>` is removed whole.
 *
 * Stages, in order (each sees the previous one's output):
 *   1. `<private>…</private>` blocks (always);
 *   2. allowlisted matches are set aside and put back unchanged at the end;
 *   3. patterns (unless mode is `entropy`): private-key blocks, provider tokens (redactRules.ts),
 *      URL credentials, Authorization headers, cookies, command-line secrets, key = value
 *      assignments whose key names a secret, and the wrapped tail of a redacted value;
 *   4. the entropy check (unless mode is `pattern_only`): long random-looking tokens that are not
 *      an obvious non-secret (UUIDs, hashes in a commit or checksum context, paths, base64 prose).
 *
 * Linear time: every regex is anchored to a literal or a word start and bounded, the key = value
 * scanner consumes what it reads, so no input makes the engine backtrack for long (see
 * bench/redaction.ts). Pure functions: text in, text out.
 */
import { TOKEN_RULES, type TokenRule } from './redactRules.ts';

export type RedactionMode = 'pattern_only' | 'entropy' | 'both';
export const REDACTION_MODES: readonly RedactionMode[] = ['pattern_only', 'entropy', 'both'];

export interface RedactionPolicy {
  mode: RedactionMode;
  /** Regexes; text they match is never redacted (private blocks excepted). */
  allowlist: readonly RegExp[];
}

export const DEFAULT_POLICY: RedactionPolicy = Object.freeze({ mode: 'both', allowlist: Object.freeze([]) as readonly RegExp[] });

export interface Redaction {
  text: string;
  /** True when any rule fired, even on a value that was already redacted (the original's meaning). */
  redacted: boolean;
  /** Replacements made, per rule id. */
  hits: Record<string, number>;
}

/** The marker a rule leaves. */
export const marker = (rule: string) => `[REDACTED:${rule}]`;

export interface RuleDoc {
  id: string;
  title: string;
  example: { removes: string; keeps: string };
}

const doc = (id: string, title: string, removes: string, keeps: string): RuleDoc => ({ id, title, example: { removes, keeps } });

/** The rules that are not provider token formats, in the order they run around those. */
const LEADING_RULES: readonly RuleDoc[] = [
  doc('private', 'text between <private> and </private> (the tags too); an unclosed tag hides the rest', 'notes <private>call Dana on 555-0100</private> done', 'the private_key_id field is public'),
  doc('private_key', 'PEM, OpenSSH and PGP private-key blocks; one without END is cut to the end of the text', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----', '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----'),
];
const TRAILING_RULES: readonly RuleDoc[] = [
  doc('url_password', 'the password of credentials in any URL (database and broker URLs, basic auth, git remotes), also one holding an unencoded @ or /; the user stays', 'DATABASE_URL=postgres://shop:Tr0ub4dor-and-3@db.internal:5432/shop', 'git@github.com:acme/shop.git and https://registry.npmjs.org/@types/node'),
  doc('authorization', 'the credentials of an Authorization or Proxy-Authorization header, any scheme', 'Authorization: Basic c2hvcDpUcjB1YjRkb3ItYW5kLTM=', 'Authorization header missing'),
  doc('bearer', 'a Bearer or Basic credential outside a header', 'curl with Bearer 9f8e7d6c5b4a39281706f5e4', 'the bearer token expired'),
  doc('cookie', 'cookie values in Cookie / Set-Cookie headers and named session cookies (PHPSESSID, connect.sid, …)', 'Cookie: sessionid=k2j4h5g6f7d8s9a0; theme=dark', 'credentials: include'),
  doc('cli_password', 'passwords on command lines: --password x, curl -u user:pass, mysql -pX, sshpass -p x, docker login -p x (joined too, across \\ continuations), ConvertTo-SecureString', 'psql --password Qz8pLm4Nv2 -h db', 'docker login --password-stdin'),
  doc('password', 'the value of a key naming a password (password, passwd, pwd, passphrase, DB_PASS, …) in env, shell, YAML (also a block or next-line value), JSON, TOML, INI, XML elements, Markdown table rows, code; .netrc and .pgpass entries', 'DATABASE_PASSWORD=correct-horse-battery-9', 'password_reset_url: https://example.com/reset'),
  doc('secret', 'the value of a key naming a secret (client_secret, SECRET_KEY, private_key, …)', 'export SECRET_KEY="d8Kq2LmZ9xR4vB7n"', 'secret_name: prod-db-credentials'),
  doc('api_key', 'a token-like value of a key naming an API, access, account or signing key', '"apiKey": "9f8e7d6c5b4a39281706f5e4d3c2b1a0"', 'apiKeyHeader: "X-API-Key"'),
  doc('token', 'a token-like value of a key naming a token (access_token, API_TOKEN, _authToken, …)', 'GITHUB_TOKEN: abcd1234efgh5678ijkl', 'tokenizer: cl100k_base and max_tokens: 4096'),
  doc('credential', 'a token-like value of a key naming credentials, auth or a signature', 'DOCKER_AUTH=dXNlcjpwYXNzd29yZDEyMw', 'auth: true'),
  doc('continuation', 'the tail of a redacted value wrapped onto the next line (a `\\` continuation, a key broken in a code fence)', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDEN\\\nG/bPxRfiCYzq8LmNoP12', 'API_KEY=[REDACTED:api_key]\nLOG_LEVEL=info'),
  doc('high_entropy', 'a long random-looking token (base64-like over 4.5 bits/char, or hex after a key word) that is not a UUID, hash, path or base64 prose', 'the secret was Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dG', 'commit 3f9a2c7e1b8d4f6a0c5e9b2d7f1a4c8e6b3d9f2a'),
];

/** Every rule, in the order it runs, with what it removes and an example of each side. */
export const RULE_DOCS: readonly RuleDoc[] = [...LEADING_RULES, ...TOKEN_RULES.map((r) => ({ id: r.id, title: r.title, example: r.example })), ...TRAILING_RULES];

/** Every rule id the engine can name (for counts and tests). */
export const RULE_IDS: readonly string[] = RULE_DOCS.map((d) => d.id);

// ------------------------------------------------------------------------------------ helpers

class Run {
  redacted = false;
  readonly hits: Record<string, number> = {};
  hit(rule: string): void {
    this.redacted = true;
    this.hits[rule] = (this.hits[rule] ?? 0) + 1;
  }
}

/** Already a marker: the original's `REDACTED` words, this engine's `[REDACTED:x]`, masks. */
const ALREADY_REDACTED = /^(?:\[REDACTED(?::[a-z_]+)?\]|[A-Z_]*REDACTED[A-Z_]*|\*{3,}|x{4,}|X{4,}|•{3,}|<redacted>)$/;

/** Private-use characters that wrap an allowlisted match while the rules run. */
const HOLD_OPEN = '\uE000';
const HOLD_CLOSE = '\uE001';
const HELD_ONLY = /^(?:\uE000\d+\uE001)+$/;

// ------------------------------------------------------------------------------------ 1. private

const PRIVATE_OPEN = /<private>/gi;

function removePrivate(text: string, run: Run): string {
  if (!/<private>/i.test(text)) return text;
  const lower = text.toLowerCase();
  let out = '';
  let from = 0;
  PRIVATE_OPEN.lastIndex = 0;
  for (let m = PRIVATE_OPEN.exec(text); m; m = PRIVATE_OPEN.exec(text)) {
    const close = lower.indexOf('</private>', m.index + m[0].length);
    out += text.slice(from, m.index) + marker('private');
    run.hit('private');
    if (close === -1) return out; // unterminated: everything after the tag is private
    from = close + '</private>'.length;
    PRIVATE_OPEN.lastIndex = from;
  }
  return out + text.slice(from);
}

// ------------------------------------------------------------------------------------ 3a. key blocks

const KEY_BLOCK_BEGIN = /-----BEGIN ((?:[A-Z0-9]{1,12} ){0,3})PRIVATE KEY(?: BLOCK)?-----/g;
const KEY_BLOCK_END = /-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;

/** PEM, OpenSSH and PGP private-key blocks; one without its END line is cut to the end of the text. */
function redactKeyBlocks(text: string, run: Run): string {
  if (!text.includes('PRIVATE KEY')) return text;
  let out = '';
  let from = 0;
  KEY_BLOCK_BEGIN.lastIndex = 0;
  for (let m = KEY_BLOCK_BEGIN.exec(text); m; m = KEY_BLOCK_BEGIN.exec(text)) {
    KEY_BLOCK_END.lastIndex = m.index + m[0].length;
    const end = KEY_BLOCK_END.exec(text);
    out += text.slice(from, m.index) + marker('private_key');
    run.hit('private_key');
    if (!end) return out;
    from = end.index + end[0].length;
    KEY_BLOCK_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}

// ------------------------------------------------------------------------------------ 3b. tokens

interface CompiledTokenRule {
  rule: TokenRule;
  regex: RegExp;
}

const COMPILED_TOKEN_RULES: readonly CompiledTokenRule[] = TOKEN_RULES.map((rule) => {
  const b = rule.boundary ?? 'A-Za-z0-9_';
  const source = b === '' ? `(?:${rule.pattern})` : `(?<![${b}])(?:${rule.pattern})(?![${b}])`;
  return { rule, regex: new RegExp(source, rule.caseInsensitive ? 'gi' : 'g') };
});

const ALL_NEEDLES = [...new Set(TOKEN_RULES.flatMap((r) => r.needles))].sort((a, b) => b.length - a.length);

/**
 * Every rule's needles in one look-ahead, longest first: tried at every position, it names the
 * longest needle starting there; the shorter ones it hides are those it contains (CONTAINED).
 */
const NEEDLES = new RegExp(`(?=(${ALL_NEEDLES.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')}))`, 'g');

/** For each needle, the needles inside it (itself included). */
const CONTAINED = new Map(ALL_NEEDLES.map((n) => [n, ALL_NEEDLES.filter((m) => n.includes(m))]));

/**
 * Runs the token rules whose needles occur in the text (one scan instead of an `includes` per
 * needle, which cost more than the rules themselves on a megabyte). The needles are found once, on
 * the input: a replacement only removes text and inserts a bracketed marker, which no token pattern
 * matches, so it never makes a rule match that could not match before.
 */
function redactTokens(text: string, run: Run): string {
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

// ------------------------------------------------------------------------------------ 3c. URLs, headers, command lines

/** Where URL credentials start: `scheme://user:` (an empty user is allowed); the password follows. */
const URL_USER_HEAD = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)([^\s:/'"[\]]{0,256}):/g;
/** What follows the `@` that ends a password: a dotted name, a name with a port, localhost or an IPv6 literal. */
const HOST_AFTER_AT = /(?:localhost|[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,16}|[A-Za-z0-9-]{1,63}(?=:\d)|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?(?![\w@-])/y;
/** A host with neither a dot nor a port (`@db/app`): taken only when no `@` within reach is followed by a HOST_AFTER_AT. */
const BARE_HOST_AFTER_AT = /[A-Za-z][A-Za-z0-9-]{0,62}(?=[/?#\s'"`,;)>}\]\\]|$)/y;
/**
 * A "password" that reads as a port and a path is a path: `localhost:3000/users/a@b.com`,
 * `$HOST:$PORT/invite?email=b@c.io`, `host:port/…`, `file://C:/Users/b@corp.com`.
 */
const PORT_AND_PATH = /(?:\d{1,5}|\$\{?\w{1,64}\}?|<\w{1,64}>|\{\{[ \t]{0,4}\w{1,64}[ \t]{0,4}\}\}|port)(?:[/?#]|$)/iy;
const MAX_URL_PASSWORD = 512;
/** How many `@` a password may hold before the one that ends it. */
const MAX_URL_ATS = 4;

/** The next position at or after `from` where `re` (global) matches, or `text.length`; cached while `from` only grows. */
class NextMatch {
  private at = -1;
  constructor(private readonly text: string, private readonly re: RegExp) {}
  from(from: number): number {
    if (this.at < from) {
      this.re.lastIndex = from;
      const m = this.re.exec(this.text);
      this.at = m === null ? this.text.length : m.index;
    }
    return this.at;
  }
}

/**
 * The password of `scheme://user:password@host`. It ends at the first `@` that a host follows, so
 * one holding an unencoded `@`, `/` or `:` goes whole; when no `@` within reach is followed by a
 * host (`amqp://guest:guest@rabbitmq/`), at the first `@` with no `/` before it, else at the last
 * one a bare host name follows. The user stays (an e-mail address as the user too).
 * Linear: the next `@`, blank and `/` are cached cursors, and each `@` is checked for a host once.
 */
function redactUrlCredentials(text: string, run: Run): string {
  const ats: number[] = [];
  for (let i = text.indexOf('@'); i !== -1; i = text.indexOf('@', i + 1)) ats.push(i);
  if (ats.length === 0) return text;
  const nextBreak = new NextMatch(text, /[\s'"]/g);
  const nextSlash = new NextMatch(text, /\//g);
  // Whether a host follows each `@` (by its index in ats): 0 not yet checked, 1 yes, 2 no.
  const hostAfter = new Int8Array(ats.length);
  const hostOk = (j: number) => {
    if (hostAfter[j] === 0) {
      HOST_AFTER_AT.lastIndex = (ats[j] as number) + 1;
      hostAfter[j] = HOST_AFTER_AT.test(text) ? 1 : 2;
    }
    return hostAfter[j] === 1;
  };
  let out = '';
  let from = 0;
  let k = 0; // index into ats, only grows
  URL_USER_HEAD.lastIndex = 0;
  for (let m = URL_USER_HEAD.exec(text); m; m = URL_USER_HEAD.exec(text)) {
    const p = m.index + m[0].length;
    while (k < ats.length && (ats[k] as number) < p) k++;
    const end = Math.min(p + MAX_URL_PASSWORD + 1, nextBreak.from(p));
    PORT_AND_PATH.lastIndex = p;
    if (PORT_AND_PATH.test(text)) continue;
    const user = m[2] as string;
    if (/^[A-Za-z]$/.test(user) && text[p] === '/') continue; // file://C:/Users/…: a drive, not a user
    // A user with an `@` (an e-mail address, or `git@host:path` in an ssh URL) takes only an `@` a host follows.
    const emailUser = user.includes('@');
    // The `@`s within reach, in order: the first one a host follows; else the first with no `/`
    // before it; else the last one a bare host name follows (`kT9/vQ2@db/app`).
    let at = -1;
    let last = -1;
    for (let j = k; j < Math.min(ats.length, k + MAX_URL_ATS) && (ats[j] as number) < end; j++) {
      const a = ats[j] as number;
      if (a === p) break; // an empty password
      if (hostOk(j)) {
        at = a;
        break;
      }
      last = a;
    }
    if (at === -1 && last !== -1 && !emailUser) {
      const first = ats[k] as number;
      if (first < nextSlash.from(p)) at = first;
      else {
        BARE_HOST_AFTER_AT.lastIndex = last + 1;
        if (BARE_HOST_AFTER_AT.test(text)) at = last;
      }
    }
    if (at === -1) continue;
    const password = text.slice(p, at);
    URL_USER_HEAD.lastIndex = at + 1;
    if (isReference(password) || PLAIN_VALUES.has(password.toLowerCase())) continue; // `${DB_PASS}`, `USER:PASSWORD@HOST`
    if (emailUser && password.includes('/')) continue; // `git+ssh://git@host:group/repo.git@v1.2`: a path and a ref
    if (isAlreadyRedacted(password)) {
      run.redacted = true;
      continue;
    }
    run.hit('url_password');
    out += text.slice(from, p) + marker('url_password');
    from = at;
  }
  return out + text.slice(from);
}

/** `Authorization: <scheme> <credentials>` (also Proxy-Authorization), quoted or not. */
const AUTHORIZATION = /(?<![\w-])((?:proxy-)?authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key|dpop|hmac)[ \t]{1,8})?)([^\s"'`,;)\]}>]{8,4096})/gi;

/** `Bearer <token>` and `Basic <base64>` outside a header (curl lines, prose). */
const BEARER = /(?<![\w-])((?:bearer|basic)[ \t]{1,4})([A-Za-z0-9._~+/-]{16,4096}=*)(?![A-Za-z0-9._~+/=-])/gi;

/** `Cookie:` and `Set-Cookie:` header lines. */
const COOKIE_HEADER = /(?<![\w-])((?:set-)?cookie[ \t]{0,4}:[ \t]{0,8})([^\n]{1,8192})/gi;
const COOKIE_PAIR = /([^\s=;,]{1,128})=("[^"\n]{0,4096}"|[^\s;,]{0,4096})/g;
const COOKIE_ATTRIBUTES = new Set(['path', 'domain', 'expires', 'max-age', 'samesite', 'priority', 'version', 'comment']);

/** Session cookies named outside a header: `PHPSESSID=…`, `connect.sid=…`. */
const SESSION_COOKIE =
  /(?<![\w.-])(PHPSESSID|JSESSIONID|ASP\.NET_SessionId|connect\.sid|sessionid|laravel_session|_gh_sess|__Secure-next-auth\.session-token|next-auth\.session-token)(=)([^\s;,&"']{8,4096})/g;

/** `curl -u user:password`, `--user user:password`. */
const CLI_USER = /(?<![\w-])(-u|--user)([ \t]{1,4}|=)(["']?)([^\s:'"]{1,256}):([^\s'"]{1,512})\3/g;

/**
 * Commands whose `-p` takes the password: the mysql clients, `sshpass`, `docker login` (`-p X` or
 * joined `-pX`; a mysql `-p` alone prompts). Where the name starts a command (a line start or
 * prompt, after `|`, `;`, `&`, `(`, a backtick, `sudo`, `exec`, `time`) any value goes; in the
 * middle of prose only one with a letter and a digit, or 8+ characters, so `then cp -pr` and
 * `docker run -p 8080:80` stay. Elsewhere `-p` is a port or a path and stays.
 */
const CLI_CLIENT = /(?<![\w-])(?:(mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)|(sshpass)|docker[ \t]{1,4}login)(?=[ \t])/g;
/** What comes right before a command name that starts a command (checked on the 32 characters before it). */
const COMMAND_START = /(?:\n|[|;&(`"':]|[$#>*-][ \t]|\d\.[ \t]|\b(?:sudo|exec|time|xargs|nohup)[ \t])[ \t]{0,16}$/;
const COMMAND_START_OF_TEXT = /(?:^|\n|[|;&(`"':]|[$#>*-][ \t]|\d\.[ \t]|\b(?:sudo|exec|time|xargs|nohup)[ \t])[ \t]{0,16}$/;
/** Words that end a client's arguments in prose or a pipeline: another command, a conjunction. */
const ENDS_CLI_ARGS = new Set(['docker', 'mysql', 'sshpass', 'and', 'then', 'or', 'to', 'with']);
/** Other tools' flags that start with `-p` and sit on the same line as a mysql command (find, cp, mkdir). */
const NOT_A_JOINED_PASSWORD = new Set(['-print', '-print0', '-printf', '-prune', '-perm', '-path', '-pr', '-pv', '-pf', '-pa']);
/** How many words after the command name are read for its `-p`. */
const MAX_CLI_WORDS = 64;
/** sshpass options that take a value; its own options end at the first other word (the command it runs). */
const SSHPASS_VALUE_FLAGS = new Set(['-f', '-d', '-P']);

/** True for the characters that end a command-line word: blanks, line ends, `|`, `;`, `&`. */
const endsWord = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 124 || c === 59 || c === 38;
/**
 * What ends an unquoted word inside the text around a command: a quote, backtick or bracket that
 * closes the string or the span holding it, a comma, an escaped `\n` of a JSON string.
 */
const endsWordInText = (text: string, j: number) => {
  const c = text.charCodeAt(j);
  return endsWord(c) || c === 34 || c === 39 || c === 96 || c === 41 || c === 93 || c === 125 || c === 44 || (c === 92 && /[nrt]/.test(text[j + 1] ?? ''));
};

/**
 * Walks the words after each client name up to the end of the command (`|`, `;`, `&`, a line end
 * that no `\` continues) and replaces the password its `-p` gives. Walks never overlap, so each
 * character is read once. A value starting with `$` or a backtick (a variable, `$(…)`) stays
 * unless single-quoted.
 */
function redactShortPasswordFlags(text: string, run: Run): string {
  let out = '';
  let from = 0;
  CLI_CLIENT.lastIndex = 0;
  for (let m = CLI_CLIENT.exec(text); m; m = CLI_CLIENT.exec(text)) {
    const mysql = m[1] !== undefined;
    const sshpass = m[2] !== undefined;
    const before = text.slice(Math.max(0, m.index - 32), m.index);
    const atCommand = (m.index <= 32 ? COMMAND_START_OF_TEXT : COMMAND_START).test(before);
    let i = m.index + m[0].length;
    let passwordNext = false;
    let skipNext = false;
    for (let words = 0; words < MAX_CLI_WORDS && i < text.length; words++) {
      // Blanks and `\` line continuations between words.
      for (;;) {
        const c = text.charCodeAt(i);
        if (c === 32 || c === 9) i++;
        else if (c === 92 && (text.charCodeAt(i + 1) === 10 || (text.charCodeAt(i + 1) === 13 && text.charCodeAt(i + 2) === 10))) i += text.charCodeAt(i + 1) === 10 ? 2 : 3;
        else break;
      }
      if (i >= text.length || endsWord(text.charCodeAt(i))) break;
      // A quoted word, or a joined `-p'…'`: read to the closing quote on the line.
      const quoteAt = text.startsWith('-p', i) ? i + 2 : i;
      const c = text[quoteAt] as string;
      const q = c === '"' || c === "'" ? c : '';
      let j = q === '' ? i : quoteAt + 1;
      if (q !== '') {
        const inside = text.slice(j, j + MAX_VALUE);
        const close = inside.indexOf(q);
        if (close !== -1 && !inside.slice(0, close).includes('\n')) j += close + 1;
      }
      while (j < text.length && !endsWordInText(text, j)) j++;
      if (j === i) break; // a closing quote or bracket: the command ended
      const word = text.slice(i, j);
      if (ENDS_CLI_ARGS.has(word)) break;
      let value = -1;
      if (passwordNext) value = i;
      else if (word.length > 2 && word.startsWith('-p') && word[2] !== '-' && !NOT_A_JOINED_PASSWORD.has(word)) value = i + 2;
      else if (skipNext) skipNext = false;
      else if (sshpass && !word.startsWith('-')) break; // the command sshpass runs: its flags are its own
      passwordNext = word === '-p' && !mysql;
      skipNext = sshpass && SSHPASS_VALUE_FLAGS.has(word);
      if (value !== -1) replaceWord(value, j, atCommand);
      i = j;
    }
    CLI_CLIENT.lastIndex = Math.max(i, m.index + m[0].length);
  }
  return out + text.slice(from);

  function replaceWord(value: number, end: number, atCommand: boolean): void {
    const raw = text.slice(value, end);
    const quote = raw[0] === '"' || raw[0] === "'" ? raw[0] : '';
    const bare = quote !== '' && raw.endsWith(quote) && raw.length > 1 ? raw.slice(1, -1) : raw;
    if (isRedactedHere(bare)) {
      run.redacted = true;
      return;
    }
    if (bare === '' || (quote !== "'" && /^[$`]/.test(bare)) || (quote === "'" ? false : isReference(bare))) return;
    if (!atCommand && !(bare.length >= 8 || (/\p{L}/u.test(bare) && /\d/.test(bare)))) return;
    run.hit('cli_password');
    out += text.slice(from, value) + (quote !== '' && bare !== raw ? quote + marker('cli_password') + quote : marker('cli_password'));
    from = end;
  }
}

/** PostgreSQL's ports (and pgbouncer's): a five-field line with another port is a .pgpass line only in a text that says pgpass. */
const PGPASS_PORTS = new Set(['5432', '5433', '6432', '*']);

/**
 * A .pgpass line, `host:port:database:user:password` (indented in a code block or not); the host
 * has a letter, is an IPv4 address or `*`; the port is a number or `*`.
 */
const PGPASS_LINE = /^([ \t]{0,16}([A-Za-z0-9.*_-]{1,253}):(\d{1,5}|\*):[\w.*-]{1,64}:[\w.@*-]{1,64}:)([^\s]{1,512})(?=[ \t]{0,16}\r?$)/gm;

/** PowerShell's `ConvertTo-SecureString "…" -AsPlainText`. */
const SECURE_STRING = /(ConvertTo-SecureString[ \t]{1,8}(?:-String[ \t]{1,8})?)("[^"\n]{1,1024}"|'[^'\n]{1,1024}')/gi;

function redactUrlsHeadersCli(text: string, run: Run): string {
  let out = text;
  if (out.includes('://')) out = redactUrlCredentials(out, run);
  const lower = out.toLowerCase();
  if (lower.includes('authorization')) {
    out = out.replace(AUTHORIZATION, (m, head: string, value: string) => {
      if (isAlreadyRedacted(value) || value.includes('[REDACTED') || isReference(value)) return m;
      run.hit('authorization');
      return head + marker('authorization');
    });
  }
  if (lower.includes('bearer') || lower.includes('basic')) {
    out = out.replace(BEARER, (m, head: string, value: string) => {
      if (!/\d/.test(value) && value.length < 24) return m;
      run.hit('bearer');
      return head + marker('bearer');
    });
  }
  if (lower.includes('cookie')) {
    out = out.replace(COOKIE_HEADER, (_m, head: string, pairs: string) => head + redactCookiePairs(pairs, /^set-/i.test(head), run));
  }
  if (/phpsessid|jsessionid|sessionid|connect\.sid|laravel_session|_gh_sess|session-token/i.test(out)) {
    out = out.replace(SESSION_COOKIE, (m, name: string, eq: string, value: string) => {
      if (isAlreadyRedacted(value)) return m;
      run.hit('cookie');
      return name + eq + marker('cookie');
    });
  }
  if (/(?:^|\s)(?:-u|--user)[ \t=]/.test(out)) {
    out = out.replace(CLI_USER, (m, flag: string, sep: string, q: string, user: string, password: string) => {
      if (isAlreadyRedacted(password) || isReference(password) || user.startsWith('-')) return m;
      run.hit('cli_password');
      return `${flag}${sep}${q}${user}:${marker('cli_password')}${q}`;
    });
  }
  if (/mysql|mariadb|sshpass|docker/.test(lower)) out = redactShortPasswordFlags(out, run);
  const pgpassFile = /pgpass/i.test(out);
  out = out.replace(PGPASS_LINE, (m, head: string, host: string, port: string, password: string) => {
    if (!(/[A-Za-z*]/.test(host) || /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host)) || isAlreadyRedacted(password)) return m;
    if (!pgpassFile && !PGPASS_PORTS.has(port)) return m; // `worker:8080:queue:jobs:started` is a log line
    run.hit('password');
    return head + marker('password');
  });
  if (lower.includes('convertto-securestring')) {
    out = out.replace(SECURE_STRING, (_m, head: string, value: string) => {
      run.hit('cli_password');
      return head + value[0] + marker('cli_password') + value[0];
    });
  }
  return out;
}

function redactCookiePairs(pairs: string, setCookie: boolean, run: Run): string {
  let first = true;
  return pairs.replace(COOKIE_PAIR, (m, name: string, value: string) => {
    const isFirst = first;
    first = false;
    if (setCookie && !isFirst) return m; // Set-Cookie: only the first pair is the cookie; the rest are attributes
    const bare = value.replace(/"/g, '');
    if (COOKIE_ATTRIBUTES.has(name.toLowerCase()) || bare.length < 6 || !(/\d/.test(bare) || bare.length >= 16)) return m;
    if (isRedactedHere(value)) return m;
    run.hit('cookie');
    const q = value.startsWith('"') && value.endsWith('"') && value.length > 1 ? '"' : '';
    return `${name}=${q}${marker('cookie')}${q}`;
  });
}

// ------------------------------------------------------------------------------------ 3d. key = value

type KeyClass = 'password' | 'secret' | 'api_key' | 'token' | 'credential' | null;

/** Words that, ending a key, say its value is a name, a setting or a pointer, not a secret. */
const NOT_A_VALUE = new Set([
  'name', 'names', 'ref', 'arn', 'path', 'file', 'files', 'url', 'uri', 'urls', 'endpoint', 'id', 'ids', 'version',
  'length', 'len', 'size', 'rounds', 'policy', 'policies', 'field', 'fields', 'header', 'headers', 'type', 'types',
  'count', 'counts', 'enabled', 'disabled', 'enable', 'required', 'hint', 'label', 'prompt', 'regex', 'pattern',
  'min', 'max', 'ttl', 'expiry', 'expires', 'expiration', 'expired', 'strength', 'mode', 'format', 'location', 'dir',
  'stdin', 'env', 'var', 'variable', 'source', 'provider', 'manager', 'store', 'helper', 'command', 'cmd',
  'hash', 'algorithm', 'algo', 'reset', 'prefix', 'suffix', 'limit', 'index', 'kind', 'style', 'lifetime',
  'placeholder', 'description', 'desc', 'help', 'changed', 'set', 'valid', 'invalid', 'error', 'errors',
  'input', 'class', 'scope', 'scopes', 'audience', 'issuer', 'used', 'usage', 'budget', 'estimate', 'estimator',
  'chars', 'bytes', 'bits', 'tokens', 'rules', 'rule', 'requirements', 'complexity', 'confirmation', 'ip', 'repo', 'zone', 'dns',
]);

/** Splits a key into lower-case words: `X-API-Key` → x api key, `secretKey` → secret key. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

const KEY_QUALIFIERS = new Set([
  'secret', 'private', 'master', 'encryption', 'signing', 'client', 'service', 'account', 'app', 'license',
  'shared', 'primary', 'secondary', 'session', 'consumer', 'webhook', 'access', 'api', 'auth', 'admin', 'root',
  'storage', 'sas', 'hmac', 'jwt', 'subscription', 'deploy', 'ingestion', 'write', 'read', 'personal', 'server',
]);

/** What a `pass` or `pw` key word may follow and still mean a password. */
const PASS_OWNERS = new Set([
  'db', 'database', 'smtp', 'mail', 'email', 'redis', 'mysql', 'mongo', 'mongodb', 'pg', 'postgres', 'ftp', 'sftp', 'admin',
  'root', 'user', 'key', 'ldap', 'proxy', 'amqp', 'rabbitmq', 'rabbit', 'sql', 'ssh', 'app', 'api', 'service', 'bind', 'vpn',
  'wifi', 'keystore', 'truststore', 'store', 'login', 'account', 'basic', 'auth', 'http', 'registry', 'docker', 'git',
]);

/** Every key classifyKey can name contains one of these. */
const SECRETISH_KEY = /pass|pwd|pw|secret|key|token|cred|auth|sig|bearer|private/i;

/** What a key says its value is; null for keys that hold no secret. */
function classifyKey(key: string): KeyClass {
  // Most names in a text name nothing secret: one cheap test before splitting them into words.
  if (!SECRETISH_KEY.test(key)) return null;
  const known = KEY_CLASSES.get(key);
  if (known !== undefined) return known;
  if (KEY_CLASSES.size >= 4096) KEY_CLASSES.clear();
  const cls = classifyWords(key);
  KEY_CLASSES.set(key, cls);
  return cls;
}

/** Keys repeat within a text (and across a run of redact-existing): each is split into words once. */
const KEY_CLASSES = new Map<string, KeyClass>();

function classifyWords(key: string): KeyClass {
  // A file name (`password.ts:12:5` in a stack trace), an AWS service prefix.
  if (/\.(?:[cm]?[jt]sx?|py|java|kt|go|rb|php|cs|rs|swift|c|h|cpp|md|json|ya?ml|toml|xml|html?|css|scss|sql|sh|txt|env)$/i.test(key)) return null;
  if (/^secretsmanager$/i.test(key)) return null;
  const words = keyWords(key);
  if (words.length === 0 || words.length > 12) return null;
  const last = words[words.length - 1] as string;
  if (NOT_A_VALUE.has(last) && !(last === 'tokens' && words.length === 1)) return null;
  // One compound word: `passwordrules`, `tokenurl`.
  const tail = /^(?:password|passwd|secret|token|apikey|auth)(.+)$/.exec(last);
  if (tail && NOT_A_VALUE.has(tail[1] as string)) return null;
  const joined = words.join('');
  if (/passw|passphrase|passwd/.test(joined) || words.some((w) => w === 'pwd' || w === 'pword')) return 'password';
  // `pass` alone or after what it unlocks (DB_PASS, SMTP_PASS), not `first_pass` or `bypass`.
  const passAt = words.findIndex((w) => w === 'pass' || w === 'pw');
  if (passAt === 0 ? words.length === 1 : passAt > 0 && PASS_OWNERS.has(words[passAt - 1] as string)) return 'password';
  if (words.some((w) => w.startsWith('secret') || w.endsWith('secret'))) return 'secret';
  if (words.some((w) => w === 'apikey' || w === 'apikeys') || /api(?:key|_key)/.test(joined) || (words.includes('api') && words.includes('key'))) return 'api_key';
  const keyIndex = words.findIndex((w) => w === 'key' || w === 'keys');
  if (keyIndex > 0 && KEY_QUALIFIERS.has(words[keyIndex - 1] as string)) return words[keyIndex - 1] === 'private' ? 'secret' : 'api_key';
  if (words.some((w) => /^(?:accesskey|secretkey|privatekey|authkey|masterkey|signingkey|encryptionkey|accountkey|sharedaccesskey|clientkey|sessionkey)$/.test(w))) return 'api_key';
  if (words.some((w) => (/token$/.test(w) || w === 'tokens' || /^token/.test(w)) && !/^tokeni[sz]/.test(w))) return 'token';
  if (words.some((w) => /^(?:credential|credentials|creds|cred)$/.test(w))) return 'credential';
  if (last === 'auth' || words.includes('authorization') || words.includes('bearer') || words.includes('sig') || words.includes('signature')) return 'credential';
  return null;
}

/** Every reference form below holds one of these characters (or is empty). */
const REFERENCE_CHARS = /[$%{<[.(:*]/;

/** Values that point to a secret instead of holding it. */
function isReference(value: string): boolean {
  if (value.length > 4 && !REFERENCE_CHARS.test(value)) return false; // longer than a pair of (escaped) quotes
  const v = value.replace(/^\\?["'`]|\\?["'`]$/g, '');
  return (
    v === '' ||
    /^\$\{[^}]*\}$|^\$[A-Z_][A-Z0-9_]*$|^\$[a-z_][a-z0-9_]*$|^\$\([^)]*\)$|^%[A-Za-z_][\w]*%$|^\{\{[^}]*\}\}$|^<[^>]*>$|^\[[A-Z_ ]*\]$|^\*[A-Za-z_][\w-]{0,63}$/.test(v) ||
    /^(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|env\(|ENV\[|getenv\(|secrets\.|vault:|op:\/\/|arn:aws:secretsmanager|ssm:|\{\{)/.test(v)
  );
}

/** First words of a description, not of a passphrase. */
const PROSE_STARTS = new Set([
  'the', 'a', 'an', 'your', 'our', 'their', 'its', 'this', 'that', 'these', 'user', "user's", 'users', 'enter', 'optional',
  'required', 'must', 'should', 'used', 'use', 'set', 'see', 'if', 'when', 'defaults', 'default', 'password', 'secret',
  'token', 'is', 'was', 'will', 'for', 'to', 'of', 'in', 'not', 'no',
]);

const PLAIN_VALUES = new Set([
  'true', 'false', 'null', 'none', 'nil', 'undefined', 'yes', 'no', 'on', 'off', 'required', 'optional', 'enabled',
  'disabled', 'inherit', 'include', 'omit', 'same-origin', 'bearer', 'basic', 'string', 'str', 'number', 'int', '?',
  'boolean', 'bool', 'any', 'object', 'text', 'password', 'secret', 'token', 'hidden', 'new', 'await', 'self',
  'this', 'input', 'changeme', 'default', 'empty', 'unset', 'redacted', 'masked', 'sensitive',
  // The product's own messages after a path that ends in a key word (`--params-file /tmp/password:
  // not valid JSON`, `…/token: is a FIFO`): a verb or a negation is the message, never a value.
  'not', 'is', 'are', 'was', 'were', 'has', 'have', 'does', 'did', 'cannot', 'lies', 'holds', 'must',
]);

/** Every marker ALREADY_REDACTED accepts holds one of these. */
const REDACTED_CHARS = /REDACTED|redacted|\*\*\*|xxxx|XXXX|•••/;

function isAlreadyRedacted(value: string): boolean {
  if (!REDACTED_CHARS.test(value)) return false;
  return ALREADY_REDACTED.test(value.replace(/^\\?["'`]|\\?["'`]$/g, ''));
}

/** A rule already fired on this value: it is a mask, or an earlier rule left its marker in it. */
const isRedactedHere = (value: string): boolean => isAlreadyRedacted(value) || value.includes('[REDACTED:');

/** A value long and random enough to be a token: 8+ characters with a digit and a letter, or 16+, no blanks. */
function looksLikeToken(bare: string): boolean {
  if (/\s/.test(bare)) return false;
  return bare.length >= 16 || (bare.length >= 8 && /\d/.test(bare) && /[A-Za-z]/.test(bare));
}

/**
 * Finds `key <op> ` where the key is a whole run of name characters (up to 64): `=`, `:`, `:=`,
 * `=>`, with optional quotes around the key (also JSON-escaped ones) and an index closing after
 * them (`os.environ["API_KEY"] = …`). Starts only where a name
 * starts, so it costs O(64) per name in the text.
 */
const ASSIGNMENT_HEAD = /(?<![\p{L}\p{N}_.$-])([\w.$-]{1,64})(?![\p{L}\p{N}_.$-])((?:\\?["'`]\]?)?)([ \t]{0,32})(=>|:=|[=:])([ \t]{0,32})/gu;
/** A command-line flag and a blank: `--password hunter2`. */
const FLAG_HEAD = /(?<![\w-])(--?[A-Za-z][\w-]{0,62})(?![\w-])([ \t]{1,4})(?=[^\s-])/g;
/** PHP `define('AUTH_KEY', '…')`. */
const DEFINE_HEAD = /(?<![\w$])(define\([ \t]{0,8}['"])([A-Za-z_]\w{0,63})(['"][ \t]{0,32},[ \t]{0,32})(?=["'])/g;
/** .NET config `<add key="SmtpPassword" value="…"/>`. */
const XML_KV_HEAD = /(?<![\w-])((?:key|name)[ \t]{0,4}=[ \t]{0,4}")([\w.:-]{1,64})("[ \t]{1,8}value[ \t]{0,4}=[ \t]{0,4})(?=["'])/gi;
/** Shell forms that set a variable without `=`: fish `set -x KEY value`, csh `setenv KEY value`, Dockerfile `ENV KEY value`. */
const SET_HEAD = /(?<![\w-])((?:set[ \t]{1,4}-[a-zA-Z]{1,4}|setenv|ENV)[ \t]{1,4})([A-Za-z_]\w{0,63})([ \t]{1,8})(?=[^\s=])/g;

/** .netrc: `machine host [login user] [account a] password value`, tokens in any order, on one line or several. */
const NETRC_HEAD = /(?<![\w-])((?:machine[ \t]{1,8}[^\s]{1,253}|default)(?:\s{1,64}(?:login|account|port)\s{1,64}[^\s]{1,256}){0,4}\s{1,64})(password|passwd)([ \t]{1,8})(?=[^\s])/g;
/** A Markdown table row's key cell: `| DB_PASSWORD | value |`. */
const TABLE_HEAD = /(?<=\|)([ \t]{0,8}`?)([A-Za-z_][\w.-]{0,63})(`?[ \t]{0,8}\|[ \t]{0,8})(?=[^\s|])/g;

const MAX_VALUE = 1024;
const CLOSERS: Record<string, string> = { '"': '"', "'": "'", '`': '`' };

interface ValueSpan {
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
const BARE_STOPS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '"', "'", '`', ')', ']', '}', '<', '>', '|']);

function endsBareValue(text: string, i: number): boolean {
  const ch = text[i] as string;
  if (BARE_STOPS.has(ch) || (ch > '\u007f' && /\s/.test(ch))) return true;
  // An escaped line break or tab inside a JSON string (`"auth: true\nttl: 30"`) ends the line.
  if (ch === '\\') return /[nrt]/.test(text[i + 1] ?? '');
  if (ch !== ',' && ch !== ';' && ch !== '&') return false;
  const next = text.slice(i + 1, i + 67);
  return next === '' || /^[\s,;&]/.test(next) || /^[ \t]*[\w.-]{1,64}=/.test(next);
}

/** A marker or a template reference where a value starts: read whole. */
const PLACED = /^\[REDACTED(?::[a-z_]+)?\]|^\$\{[^}\n]{0,256}\}|^\{\{[^}\n]{0,256}\}\}/;

/** Reads the value that starts at `pos` (after the operator), bounded by MAX_VALUE characters. */
function readValue(text: string, pos: number): ValueSpan | null {
  const c = text[pos];
  if (c === undefined || c === '\n' || c === '\r') return null;
  const placed = c === '[' || c === '$' || c === '{' ? PLACED.exec(text.slice(pos, pos + 300)) : null;
  if (placed) return { start: pos, end: pos + placed[0].length, quote: '', bare: placed[0], open: false };
  let quote = '';
  if (c === '\\' && text[pos + 1] === '"') quote = '\\"';
  else if (c in CLOSERS) quote = c;
  if (quote !== '') {
    const first = pos + quote.length;
    const limit = Math.min(text.length, first + MAX_VALUE);
    for (let i = first; i < limit; i++) {
      const ch = text[i];
      if (ch === '\n') return { start: pos, end: i, quote, bare: text.slice(first, i), open: true };
      if (quote === '\\"') {
        if (ch === '\\' && text[i + 1] === '"') return { start: pos, end: i + 2, quote, bare: text.slice(first, i), open: false };
        continue;
      }
      if (ch === '\\' && quote === '"') {
        i++;
        continue;
      }
      if (ch === quote) return { start: pos, end: i + 1, quote, bare: text.slice(first, i), open: false };
    }
    return { start: pos, end: limit, quote, bare: text.slice(first, limit), open: true };
  }
  const limit = Math.min(text.length, pos + MAX_VALUE);
  let i = pos;
  while (i < limit && !endsBareValue(text, i)) i++;
  // A full stop that ends the sentence is not part of the value.
  if (i > pos + 1 && text[i - 1] === '.' && (i === text.length || /\s/.test(text[i] as string))) i--;
  if (i === pos) return null;
  // A structure, not a literal: its own keys are scanned on their own.
  if (/^[{([]/.test(text[pos] as string)) return null;
  return { start: pos, end: i, quote: '', bare: text.slice(pos, i), open: false };
}

/** Decides whether a value read after a key of class `cls` is a secret to remove. */
function isSecretValue(cls: Exclude<KeyClass, null>, v: ValueSpan, spacedOperator: boolean, text: string, key = ''): boolean {
  const bare = v.bare;
  if (bare.trim() === '' || isReference(bare) || HELD_ONLY.test(bare)) return false;
  // A comparison (`password == null`, `!= ''`), a placeholder (`?`, `...`), punctuation only.
  if ((v.quote === '' && /^(?:=|!=)/.test(bare)) || !/[\p{L}\p{N}]/u.test(bare)) return false;
  if (v.quote === '' && PLAIN_VALUES.has(bare.toLowerCase())) return false;
  if (v.quote === '') {
    // The value is the next key (`password: password = "…"`): the real value comes after it.
    if (/^[ \t]{0,8}(?:=>|:=|[=:])/.test(text.slice(v.end, v.end + 10)) && !/[=:]/.test(bare)) return false;
    // Code, not a literal: a call, an index, a member of an object, an identifier after a spaced `=`.
    if (/[()[\]]/.test(bare) && /^[A-Za-z_$][\w$.]*[([]/.test(bare)) return false;
    if (/^(?:this|self|config|settings|options|opts|env|props|params|args|req|request|ctx|context|cfg|os|process|window|document|user|account|form|data|body|values|input|row|record|payload|state|model|auth|credentials|creds|secrets)\./.test(bare)) return false;
    if (spacedOperator && /^[A-Za-z_$][A-Za-z_$.]*$/.test(bare) && !/\d/.test(bare)) return false;
    if (/^-?\d+(?:\.\d+)?%?$/.test(bare) && (cls !== 'password' || /^(?:pass|pw)$/i.test(key))) return false;
  }
  // Several words opening like a sentence (`password: The user password.`) describe the value.
  if (v.quote === '' && /\s/.test(bare.trim()) && PROSE_STARTS.has((bare.trim().split(/\s/)[0] as string).toLowerCase())) return false;
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

function replaceValue(v: ValueSpan, rule: string, text: string): string {
  if (v.quote === '') return marker(rule);
  const close = v.open ? '' : v.quote;
  return v.quote + marker(rule) + close + (v.open ? text.slice(v.start + v.quote.length + v.bare.length, v.end) : '');
}

/**
 * Replaces the values of secret-named keys. A scanner, not one regex: it finds `key op`, asks
 * classifyKey, reads the value with bounded loops, and moves on past what it replaced (or past the
 * key when it did not), so each character is read a bounded number of times.
 */
function redactAssignments(text: string, run: Run): string {
  const heads: { re: RegExp; key: number }[] = [
    { re: ASSIGNMENT_HEAD, key: 1 },
    { re: FLAG_HEAD, key: 1 },
    { re: SET_HEAD, key: 2 },
    { re: DEFINE_HEAD, key: 2 },
    { re: XML_KV_HEAD, key: 2 },
    { re: NETRC_HEAD, key: 2 },
    { re: TABLE_HEAD, key: 2 },
  ];
  // One pass per head form, each over the output of the previous.
  let work = text;
  for (const { re, key } of heads) {
    let out = '';
    let from = 0;
    const lines = new LineStarts(work);
    const configDocument = re === ASSIGNMENT_HEAD && CONFIG_DOCUMENT.test(work);
    let wholeUntil = 0;
    re.lastIndex = 0;
    for (let m = re.exec(work); m; m = re.exec(work)) {
      let name = m[key] as string;
      // `"A=1\nPASS=x"`: inside an escaped JSON string the key follows a `\n`, `\r` or `\t` escape.
      if (re === ASSIGNMENT_HEAD && /^[nrt]/.test(name) && work[m.index - 1] === '\\') name = name.slice(1);
      const cls = classifyKey(name.replace(/^-+/, ''));
      if (cls === null) {
        re.lastIndex = m.index + Math.max(1, name.length);
        continue;
      }
      const valueAt = m.index + m[0].length;
      const keyFirst = re === ASSIGNMENT_HEAD && startsLine(work, lines, m.index);
      let v: ValueSpan | null;
      const below = m[4] === ':' ? VALUE_BELOW.exec(work.slice(valueAt, valueAt + 258)) : null;
      if (below !== null && !keyFirst && below[1] !== undefined) {
        // `{"db": {"password":\n  "x"}}`: a quoted value on the next line.
        v = readValue(work, valueAt + below[0].length - 1);
      } else if (keyFirst && (below !== null || /^[|>]/.test(work[valueAt] ?? ''))) {
        // A YAML value below its key. One that is not a secret is scanned key by key (it may hold a config file).
        // A block is read whole once; keys inside one that was kept are read two lines at a time.
        const whole = m.index >= wholeUntil;
        const block = readYamlBlock(work, lines, m.index, valueAt, whole, cls === 'password' || cls === 'secret');
        if (whole && block !== null) wholeUntil = block.end;
        if (block !== null && block.quote === '' && isSecretValue(cls, block, false, work, name)) {
          run.hit(cls);
          out += work.slice(from, block.start) + marker(cls);
          from = block.end;
          re.lastIndex = block.end;
          continue;
        }
        v = block !== null && block.quote !== '' ? block : null;
        if (v === null) {
          re.lastIndex = valueAt;
          continue;
        }
      } else {
        // A YAML anchor before the value (`password: &pw value`) is not the value.
        const anchor = keyFirst && m[4] === ':' ? /^&[\w-]{1,64}[ \t]{1,8}(?=\S)/.exec(work.slice(valueAt, valueAt + 80)) : null;
        v = readValue(work, valueAt + (anchor ? anchor[0].length : 0));
      }
      if (v === null) {
        re.lastIndex = m.index + Math.max(1, name.length);
        continue;
      }
      if (isRedactedHere(v.bare)) {
        run.redacted = true; // a rule fired on (part of) this value already
        re.lastIndex = v.end;
        continue;
      }
      // A reference (`${DB_PASSWORD:-x}`) is passed over whole, not scanned for keys inside.
      if (isReference(v.bare)) {
        re.lastIndex = v.end;
        continue;
      }
      // A .netrc entry names its login (before the password or after it): `default password is admin` is prose.
      if (re === NETRC_HEAD && !/\blogin\s/.test(m[1] as string) && !/^\s{1,64}login\s/.test(work.slice(v.end, v.end + 80))) {
        re.lastIndex = v.end;
        continue;
      }
      if (re === TABLE_HEAD && !isTableValue(work, lines, m.index, v)) {
        re.lastIndex = v.end;
        continue;
      }
      // `password = hunter` (or Go's `password := pw`) is code assigning a variable, unless it is a whole INI-style line.
      const spaced = re === ASSIGNMENT_HEAD && (((m[3] !== '' || m[5] !== '') && m[4] === '=' && !(keyFirst && isIniLine(work, lines, m.index, v))) || m[4] === ':=');
      // In a config document a plain password or secret value at the start of a line runs to the line's
      // end (`password: correct horse battery staple`); not after a tight `=` (`PGPASSWORD=x psql …`).
      if (keyFirst && configDocument && v.quote === '' && (cls === 'password' || cls === 'secret') && (m[4] === ':' || (m[4] === '=' && m[5] !== ''))) {
        const end = restOfLine(work, lines, v.end);
        if (end > v.end) v = { ...v, end, bare: work.slice(v.start, end) };
      }
      if (re === FLAG_HEAD && v.quote === '' && /^-/.test(v.bare)) {
        re.lastIndex = m.index + name.length;
        continue;
      }
      if (!isSecretValue(cls, v, spaced, work, name)) {
        // Past a bare value read in full (each character is read once), unless the value is the next
        // key (`password: password = "…"`); a quoted value may hold keys of its own.
        const nextKey = /^[ \t]{0,8}(?:=>|:=|[=:])/.test(work.slice(v.end, v.end + 10));
        re.lastIndex = v.quote === '' && !nextKey ? Math.max(v.end, m.index + 1) : m.index + Math.max(1, name.length);
        continue;
      }
      // A value longer than the bound goes whole: the part past it is as secret as the rest.
      if (v.quote === '' && v.end - v.start === MAX_VALUE) while (v.end < work.length && !endsBareValue(work, v.end)) v.end++;
      const rule = re === FLAG_HEAD && cls === 'password' ? 'cli_password' : cls;
      run.hit(rule);
      out += work.slice(from, v.start) + replaceValue(v, rule, work);
      from = v.end;
      re.lastIndex = v.end;
    }
    work = out + work.slice(from);
  }
  return redactXmlElements(work, run);
}

/** `<password>…</password>`, `<ns:apiKey attr="x">…</ns:apiKey>`, `<entry key="db.password">…</entry>`, CDATA too, on one line. */
const XML_ELEMENT = /<([A-Za-z_][\w.-]{0,63}(?::[A-Za-z_][\w.-]{0,63})?)((?:[ \t][^<>\n]{0,256})?>)(<!\[CDATA\[[^\]\n]{1,1024}\]\]>|[^<\n]{1,1024})(<\/\1[ \t]{0,8}>)/g;

function redactXmlElements(text: string, run: Run): string {
  if (!text.includes('</')) return text;
  return text.replace(XML_ELEMENT, (m, name: string, attrs: string, element: string, close: string, offset: number) => {
    const cdata = element.startsWith('<![CDATA[');
    const content = cdata ? element.slice(9, -3) : element;
    // The element names the value (`<password>`), or its key attribute does (`<entry key="db.password">`).
    const keyAttr = /^(?:entry|property|param|parameter|setting|env|variable|var|item)$/i.test(name) ? /[ \t](?:key|name)[ \t]{0,4}=[ \t]{0,4}["']([\w.:-]{1,64})["']/.exec(attrs) : null;
    const cls = classifyKey(name.replace(/^[^:]*:/, '')) ?? (keyAttr ? classifyKey(keyAttr[1] as string) : null);
    if (cls === null) return m;
    const bare = content.trim();
    if (isRedactedHere(bare)) return m;
    const start = offset + name.length + 1 + attrs.length + (cdata ? 9 : 0);
    if (!isSecretValue(cls, { start, end: start + content.length, quote: '', bare, open: false }, false, text, name)) return m;
    run.hit(cls);
    return cdata ? `<${name}${attrs}<![CDATA[${marker(cls)}]]>${close}` : `<${name}${attrs}${marker(cls)}${close}`;
  });
}

/**
 * Where the line holding a position starts, for positions asked in increasing order (the scanner's
 * keys): a cursor over the newlines, so a long line costs its length once, not once per key on it.
 */
class LineStarts {
  private start = 0;
  private next: number;
  constructor(private readonly text: string) {
    this.next = text.indexOf('\n');
  }
  of(at: number): number {
    if (at < this.start) return this.text.lastIndexOf('\n', at - 1) + 1; // asked out of order: not on the scanner's path
    while (this.next !== -1 && this.next < at) {
      this.start = this.next + 1;
      this.next = this.text.indexOf('\n', this.start);
    }
    return this.start;
  }
  /** Where the line holding `at` ends (its newline, or the text's end); `at` on the line last asked about is free. */
  endOf(at: number): number {
    const nl = at >= this.start && (this.next === -1 || at <= this.next) ? this.next : this.text.indexOf('\n', at);
    return nl === -1 ? this.text.length : nl;
  }
}

/**
 * A text with a `key: value` or `key = value` line after its first line: a config document, where
 * a value runs to the end of its line. In a one-line message (`password: abc123 was wrong`) the
 * words after the value are the message.
 */
const CONFIG_DOCUMENT = /\n[ \t]{0,64}(?:-[ \t]{1,8})?["']?[\w.-]{1,64}["']?[ \t]{0,8}(?::[ \t]|:\r?$|=)/m;

/** True when only indentation, a list dash or `export` come before `at` on its line. */
function startsLine(text: string, lines: LineStarts, at: number): boolean {
  return /^[ \t]*(?:-[ \t]+|export[ \t]+)?["']?$/.test(text.slice(lines.of(at), at));
}

/**
 * Where a plain value starting a line's value ends when it is several words: the end of the line,
 * before a ` #` comment and trailing blanks; `end` itself when what follows is not more words
 * (punctuation, another `key=`/`key: `).
 */
function restOfLine(text: string, lines: LineStarts, end: number): number {
  const lineEnd = lines.endOf(end);
  const rest = text.slice(end, lineEnd);
  if (!/^[ \t]+[^\s#;]/.test(rest) || /(?:^|[ \t])[\w.-]{1,64}(?:=|:[ \t])/.test(rest)) return end;
  const comment = rest.search(/[ \t]#/);
  return end + (comment === -1 ? rest : rest.slice(0, comment)).trimEnd().length;
}

/** The end of a key's line with no value on it (a comment allowed), then the next line's indentation; group 1 when a quote starts it. */
const VALUE_BELOW = /^(?:[ \t]{0,8}#[^\n]{0,200})?\r?\n[ \t]{0,32}(["'])?/;

/** A YAML block scalar header (`|`, `>-`, `|2+`) and an optional comment, ending the line. */
const BLOCK_HEADER = /^[|>](?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#[^\n]*)?\r?\n/;
/** A line that opens structure, not a plain scalar: a key, a list item, a comment, a flow collection, an indicator. */
const STRUCTURE_LINE = /^[ \t]*(?:[\w."'$-]{1,64}[ \t]*:(?:[ \t]|\r?$)|-(?:[ \t]|\r?$)|[#{[|>!&*%@`?:,\]}]|---|\.\.\.)/;

/**
 * A YAML value below its key: a block scalar (`password: |` then indented lines), a plain scalar
 * on the next, deeper lines, or a quoted scalar there (returned as read by readValue, quotes kept).
 * Reads the lines indented past the key's column (blank lines inside a block scalar included); the
 * span starts at the first content character, so the indentation stays. `whole` reads every line;
 * otherwise at most two. `words` (a password or secret) joins lines with their breaks; otherwise
 * lines that are each one token join into one (a wrapped key). Null when what follows is a nested
 * mapping, a list, code or nothing.
 */
function readYamlBlock(text: string, lines: LineStarts, keyAt: number, valueAt: number, whole: boolean, words: boolean): ValueSpan | null {
  const rest = text.slice(valueAt, valueAt + 256);
  const header = BLOCK_HEADER.exec(rest);
  const bareNewline = /^(?:[ \t]{0,8}#[^\n]{0,200})?\r?\n/.exec(rest);
  if (header === null && bareNewline === null) return null;
  const start0 = valueAt + (header ?? bareNewline)![0].length;
  const keyColumn = keyAt - lines.of(keyAt);
  let end = start0;
  let first = -1;
  let count = 0;
  for (let at = start0; at < text.length && (whole || count < 2); ) {
    const nl = text.indexOf('\n', at);
    const lineEnd = nl === -1 ? text.length : nl;
    const line = text.slice(at, lineEnd);
    const indent = /^[ \t]*/.exec(line)![0].length;
    if (line.trim() === '') {
      if (header === null) break; // a plain scalar ends at a blank line
    } else {
      if (indent <= keyColumn) break;
      if (first === -1) {
        first = at + indent;
        if (header === null && /^["']/.test(line.slice(indent))) return readValue(text, first);
        if (header === null && STRUCTURE_LINE.test(line)) return null;
        // `KEY=value` lines in a block (an env file): their keys are scanned on their own.
        if (/^[\w.-]{1,64}[ \t]*[=:]/.test(line.slice(indent))) return null;
      }
      end = at + line.trimEnd().length;
      count++;
    }
    if (nl === -1) break;
    at = nl + 1;
  }
  if (first === -1 || count === 0) return null;
  const parts = text.slice(first, end).split(/\r?\n[ \t]*/);
  // A token wrapped over lines (a base64 key under `signing_key: |`) is one token; words keep their breaks.
  const bare = !words && parts.every((l) => !/\s/.test(l)) ? parts.join('') : parts.join(header !== null && header[0][0] === '|' ? '\n' : ' ');
  return { start: first, end, quote: '', bare: count > 1 ? bare : bare.trim(), open: false };
}

/**
 * A table value cell: a two-cell row (`| DB_PASSWORD | value |`) of a table whose next line is not
 * its `|---|` separator (a header), the value one token of 6+ characters, not Markdown emphasis,
 * with a letter and a digit or a symbol (so `N/A`, `varchar`, `64`, `bcrypt` in documentation
 * tables stay).
 */
function isTableValue(text: string, lines: LineStarts, keyAt: number, v: ValueSpan): boolean {
  const start = lines.of(keyAt);
  const end = lines.endOf(v.end);
  if (end - start > 512 || !/^[ \t]*\|/.test(text.slice(start, keyAt + 1))) return false;
  const row = text.slice(start, end).trim();
  if (!/^\|[^|]*\|[^|]*\|$/.test(row)) return false;
  if (!/^[ \t]*\|/.test(text.slice(v.end, v.end + 10)) || /^[\s*_~-]/.test(v.bare) || PLAIN_VALUES.has(v.bare.toLowerCase())) return false;
  if (v.bare.length < 6 || !/\p{L}/u.test(v.bare) || !/[\p{N}\W_]/u.test(v.bare)) return false;
  return end === text.length || !/^[ \t]*\|?[ \t]*:?-{3,}/.test(text.slice(end + 1, end + 40));
}

/**
 * `password = hunter` as an INI or properties line: the key at the start of an unindented line
 * (code assigning a variable is indented in its function), then words up to the line's end or a
 * ` #`/` ;` comment.
 */
function isIniLine(text: string, lines: LineStarts, keyAt: number, v: ValueSpan): boolean {
  if (v.quote !== '' || /[.([]/.test(v.bare) || lines.of(keyAt) !== keyAt) return false;
  return /^(?:[ \t]+[#;][^\n]*|[ \t]*)(?:\r?\n|$)/.test(text.slice(v.end, v.end + 256)) || restOfLine(text, lines, v.end) > v.end;
}

/** How many wrapped lines after a redacted value are followed (each pass of CONTINUATION takes one more). */
const MAX_CONTINUED_LINES = 16;

/**
 * The tail of a value wrapped onto the next line (a shell `\` continuation, a key broken across
 * lines in a code fence): a line holding nothing but one token right after a redacted value.
 */
const CONTINUATION = /(\[REDACTED:(?!high_entropy\])[a-z_]+\]["'`]?[ \t]{0,64}(?:\\[ \t]{0,64})?\r?\n)([ \t]{0,64})([A-Za-z0-9+/_.~-]{8,4096}={0,3})(?=[ \t]{0,64}(?:\\?\r?\n|$|["'`]))/g;

function redactContinuations(text: string, run: Run): string {
  if (!text.includes('[REDACTED:')) return text;
  // A tail that is itself continued is found on the next pass (its marker heads the next line).
  let out = text;
  for (let pass = 0; pass < MAX_CONTINUED_LINES; pass++) {
    let changed = false;
    out = out.replace(CONTINUATION, (m, head: string, indent: string, value: string) => {
      const wrapped = /\\[ \t]*\r?\n$/.test(head);
      if (!wrapped && !(value.length >= 16 && /\d/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value))) return m;
      if (/^\[REDACTED/.test(value) || /^[-=`~]{3,}$/.test(value)) return m;
      run.hit('continuation');
      changed = true;
      return head + indent + marker('continuation');
    });
    if (!changed) break;
  }
  return out;
}

// ------------------------------------------------------------------------------------ 4. entropy

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Words that, just before a hex run, say it is a content hash or a commit, not a credential. */
const HASH_CONTEXT_RE =
  /(?:commit|commits|sha\d*|hash|checksum|integrity|digest|revision|rev|merge|head|blob|tree|etag|object|cherry-pick|revert|fingerprint|(?:rsa|dsa|ecdsa|gpg|pgp|public|signing) key|\bh1|\bid(?:-\d)?|request-id|trace-id|span-id|ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+)\W{0,4}$/i;
/** Words that, shortly before a hex run, say it is a credential. */
const SECRET_CONTEXT_RE = /(?:key|secret|token|passw|auth|credential|signature|signing)[^\n]{0,12}$/i;

/** A path: absolute, or relative with segments ending in a file extension or all lower-case. */
function isPathLike(token: string): boolean {
  // Absolute paths (`/var/lib/…`, `~/Library/…`): any segments.
  if (/^\/[\w.-]+(?:\/[\w.-]*)+$/.test(token)) return true;
  if (!/^[\w.-]+(?:\/[\w.-]+)+\/?$/.test(token)) return false;
  return /\.[A-Za-z0-9]{1,8}$/.test(token) || token.split('/').every((seg) => /^[a-z0-9_.-]*$/.test(seg));
}

/** True when base64 text decodes to ordinary readable text (so it is data, not a key). */
function decodesToText(candidate: string): boolean {
  const normalised = candidate.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]+=*$/.test(normalised)) return false;
  const bytes = Buffer.from(normalised, 'base64');
  if (bytes.length < 12) return false;
  let printable = 0;
  for (const b of bytes) if ((b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d || b === 0x09) printable++;
  return printable / bytes.length >= 0.95;
}

/**
 * Candidate tokens for the entropy check: runs of base64/hex-like characters. The look-behind makes
 * each attempt start only where a run starts (inside a short run it fails on one character instead
 * of reading up to 19), which matches the same runs at a fraction of the cost.
 */
const ENTROPY_TOKEN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{20,}/g;

/**
 * True when a long token looks like a credential: high-entropy base64-like (≥ 20 chars, > 4.5
 * bits/char), or hex (≥ 32 chars, > 3.0 bits/char) that a key word shortly before calls a secret;
 * and not an obvious non-secret (UUID, a hash in a commit/checksum/lockfile context, a path,
 * base64 of readable text).
 */
function isHighEntropySecret(token: string, before: string): boolean {
  if (UUID_RE.test(token)) return false;
  if (isPathLike(token)) return false;
  if (/[/.\\@]$/.test(before) || /(?:^|[\s(])[.~]?\/\S*$/.test(before)) return false;
  if (/^sha\d+-/i.test(token) || /(?:sha\d*|md5)[:-]$/i.test(before)) return false;
  if (/^[0-9a-f]+$/i.test(token)) {
    if (token.length < 32) return false;
    if (HASH_CONTEXT_RE.test(before) || /[@#]$/.test(before)) return false;
    return SECRET_CONTEXT_RE.test(before) && shannonEntropy(token) > 3.0;
  }
  if (/^[A-Za-z_-]+$/.test(token) || /^[0-9_-]+$/.test(token)) return false;
  // camelCase identifiers; each segment is maximal (the look-ahead), so a run of digits splits one way only
  if (/^[A-Za-z][a-z]+(?:[A-Z0-9][a-z0-9]+(?![a-z0-9]))+$/.test(token)) return false;
  if (HASH_CONTEXT_RE.test(before)) return false;
  if (decodesToText(token)) return false;
  return shannonEntropy(token) > 4.5;
}

const PUBLIC_BLOCK_BEGIN = /-----BEGIN ((?:[A-Z0-9]{1,12} ){0,3}(?:PUBLIC KEY|CERTIFICATE|CERTIFICATE REQUEST|PUBLIC KEY BLOCK|SIGNATURE|SIGNED MESSAGE))-----/g;

/** Public keys, certificates and signatures are random by design and not secret: set aside from the entropy check. */
function holdPublicBlocks(text: string, held: string[]): string {
  if (!text.includes('-----BEGIN ')) return text;
  let out = '';
  let from = 0;
  PUBLIC_BLOCK_BEGIN.lastIndex = 0;
  for (let m = PUBLIC_BLOCK_BEGIN.exec(text); m; m = PUBLIC_BLOCK_BEGIN.exec(text)) {
    const endTag = `-----END ${m[1]}-----`;
    const end = text.indexOf(endTag, m.index + m[0].length);
    if (end === -1) break;
    held.push(text.slice(m.index, end + endTag.length));
    out += text.slice(from, m.index) + `${HOLD_OPEN}${held.length - 1}${HOLD_CLOSE}`;
    from = end + endTag.length;
    PUBLIC_BLOCK_BEGIN.lastIndex = from;
  }
  return out + text.slice(from);
}

function redactHighEntropy(text: string, run: Run): string {
  return text.replace(ENTROPY_TOKEN, (token: string, offset: number) => {
    if (token.includes('REDACTED')) return token;
    const before = text.slice(Math.max(0, offset - 32), offset);
    // KEY=value in one run: judge the value alone and keep the key name.
    const kv = /^([A-Za-z_][\w.-]{0,63}=)([^=]+=*)$/.exec(token);
    if (kv) {
      const [, key, value] = kv as unknown as [string, string, string];
      if (value.length < 20 || NOT_A_VALUE.has(keyWords(key).pop() ?? '') || !isHighEntropySecret(value, before + key)) return token;
      run.hit('high_entropy');
      return key + marker('high_entropy');
    }
    if (!isHighEntropySecret(token, before)) return token;
    run.hit('high_entropy');
    return marker('high_entropy');
  });
}

// ------------------------------------------------------------------------------------ engine

/**
 * Redacts one text under a policy. Meant to be idempotent (redacting the output again changes
 * nothing), and it is on the corpus; not always: a marker can leave what follows it for another
 * rule to read (`-u <token>%3A<password>`), or an allowlist can read context that redaction
 * changed. redactionMemo checks before it relies on it.
 */
export function redact(text: string, policy: RedactionPolicy = DEFAULT_POLICY): Redaction {
  const run = new Run();
  let work = removePrivate(text, run);
  const held: string[] = [];
  for (const allow of policy.allowlist) {
    const re = new RegExp(allow.source, allow.flags.includes('g') ? allow.flags : allow.flags + 'g');
    work = work.replace(re, (m) => {
      if (m === '') return m;
      held.push(m);
      return `${HOLD_OPEN}${held.length - 1}${HOLD_CLOSE}`;
    });
  }
  if (policy.mode !== 'entropy') {
    work = redactKeyBlocks(work, run);
    work = redactTokens(work, run);
    work = redactUrlsHeadersCli(work, run);
    work = redactAssignments(work, run);
    work = redactContinuations(work, run);
  }
  if (policy.mode !== 'pattern_only') work = holdPublicBlocks(work, held);
  if (policy.mode !== 'pattern_only') work = redactHighEntropy(work, run);
  if (held.length > 0) work = work.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => held[Number(i)] ?? '');
  return { text: work, redacted: run.redacted, hits: run.hits };
}

/** Redacts a text and returns only the text. */
export const redactText = (text: string, policy: RedactionPolicy = DEFAULT_POLICY): string => redact(text, policy).text;

/** A function that redacts one text under a policy, as redactText does. */
export type TextRedaction = (text: string, policy: RedactionPolicy) => string;

/**
 * redactText with a memory, for one process that redacts the same texts more than once: an
 * assembly redacts each item before it is counted and packed, then the whole printed document
 * again at the door (print.ts), and some texts (the query of a request) on several steps. What a
 * text redacts to is remembered, and so is an output as its own result once redacting it again
 * is seen to change nothing (checked, not assumed: see redact): the door's pass over texts
 * redacted already costs a lookup each, and a text that a second pass changes is redacted again
 * there, as without the memo. Texts are remembered per policy object, up to `maxChars`
 * characters in all (keys and results), then only computed.
 */
export function redactionMemo(maxChars = 4_000_000): TextRedaction {
  const byPolicy = new WeakMap<RedactionPolicy, Map<string, string>>();
  let stored = 0;
  return (text, policy) => {
    let memo = byPolicy.get(policy);
    const known = memo?.get(text);
    if (known !== undefined) return known;
    const out = redact(text, policy).text;
    const settled = out === text || redact(out, policy).text === out;
    const cost = text.length + (settled && out !== text ? out.length : 0);
    if (stored + cost <= maxChars) {
      if (memo === undefined) byPolicy.set(policy, (memo = new Map()));
      memo.set(text, out);
      if (settled && out !== text) memo.set(out, out);
      stored += cost;
    }
    return out;
  };
}

/**
 * Redacts every string inside a JSON value (keys kept), for documents printed or stored as JSON.
 * A value under a key that is a key = value secret by itself (`{"password": "x"}`) is redacted
 * even when the engine would not know it from the string alone. Strings under `skipKeys` (ids and
 * hashes the product itself made) are left alone.
 */
export function redactJson<T>(value: T, policy: RedactionPolicy = DEFAULT_POLICY, skipKeys: ReadonlySet<string> = NO_KEYS): { value: T; redacted: boolean; hits: Record<string, number> } {
  return walkJson(value, policy, skipKeys, redact);
}

/**
 * redactJson's value only, each string redacted by `redactString` (a text redactor such as one of
 * redactionMemo()'s), with the same rule for values under secret keys.
 */
export function redactJsonValue<T>(value: T, policy: RedactionPolicy, redactString: TextRedaction): T {
  return walkJson(value, policy, NO_KEYS, (text, p) => ({ text: redactString(text, p), redacted: false, hits: {} })).value;
}

function walkJson<T>(value: T, policy: RedactionPolicy, skipKeys: ReadonlySet<string>, redact: (text: string, policy: RedactionPolicy) => Redaction): { value: T; redacted: boolean; hits: Record<string, number> } {
  const total = new Run();
  const walk = (v: unknown, key: string | null): unknown => {
    if (typeof v === 'string') {
      // Ids and hashes the product made would read as random tokens: patterns only, no entropy.
      const skip = key !== null && skipKeys.has(key);
      if (skip && policy.mode === 'entropy') return v;
      let r = redact(v, skip ? { mode: 'pattern_only', allowlist: policy.allowlist } : policy);
      const cls = key === null ? null : classifyKey(key);
      if (cls !== null && policy.mode !== 'entropy' && r.text === v && !isAlreadyRedacted(v)) {
        const span: ValueSpan = { start: 0, end: v.length, quote: '', bare: v, open: false };
        if (isSecretValue(cls, span, false, '')) r = { text: marker(cls), redacted: true, hits: { [cls]: 1 } };
      }
      if (r.redacted) total.redacted = true;
      addHits(total.hits, r.hits);
      return r.text;
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, key));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) out[k] = walk(item, k);
      return out;
    }
    return v;
  };
  const out = walk(value, null) as T;
  return { value: out, redacted: total.redacted, hits: total.hits };
}

const NO_KEYS: ReadonlySet<string> = new Set();

/** Adds one redaction's hits to a running total (for counts per rule). */
function addHits(total: Record<string, number>, hits: Record<string, number>): void {
  for (const [rule, n] of Object.entries(hits)) total[rule] = (total[rule] ?? 0) + n;
}

/**
 * Redacts the texts of one write (or one printed document) under one policy and remembers
 * whether any rule fired and how often each did.
 */
export class Redactor {
  redacted = false;
  readonly hits: Record<string, number> = {};
  constructor(readonly policy: RedactionPolicy = DEFAULT_POLICY) {}

  text(value: string): string {
    return this.take(redact(value, this.policy)).text;
  }

  /** A text that may be null (an optional column). */
  optional(value: string | null | undefined): string | null {
    return value === null || value === undefined ? null : this.text(value);
  }

  json<T>(value: T, skipKeys?: ReadonlySet<string>): T {
    return this.take(redactJson(value, this.policy, skipKeys)).value;
  }

  private take<R extends { redacted: boolean; hits: Record<string, number> }>(r: R): R {
    if (r.redacted) this.redacted = true;
    addHits(this.hits, r.hits);
    return r;
  }
}
