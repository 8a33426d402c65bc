/** Stage 3c: URL credentials, Authorization headers, cookies, command-line secrets. Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { PLAIN_VALUES, isAlreadyRedacted, isRedactedHere, isReference, readQuoted } from './values.ts';

/** Where URL credentials start: `scheme://user:` (an empty user is allowed); the password follows. */
export const URL_USER_HEAD = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)([^\s:/'"[\]]{0,256}):/g;
/** What follows the `@` that ends a password: a dotted name, a name with a port, localhost or an IPv6 literal. */
export const HOST_AFTER_AT = /(?:localhost|[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,16}|[A-Za-z0-9-]{1,63}(?=:\d)|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?(?![\w@-])/y;
/** A host with neither a dot nor a port (`@db/app`): taken only when no `@` within reach is followed by a HOST_AFTER_AT. */
export const BARE_HOST_AFTER_AT = /[A-Za-z][A-Za-z0-9-]{0,62}(?=[/?#\s'"`,;)>}\]\\]|$)/y;
/**
 * A "password" that reads as a port and a path is a path: `localhost:3000/users/a@b.com`,
 * `$HOST:$PORT/invite?email=b@c.io`, `host:port/…`, `file://C:/Users/b@corp.com`.
 */
export const PORT_AND_PATH = /(?:\d{1,5}|\$\{?\w{1,64}\}?|<\w{1,64}>|\{\{[ \t]{0,4}\w{1,64}[ \t]{0,4}\}\}|port)(?:[/?#]|$)/iy;
export const MAX_URL_PASSWORD = 512;
/** How many `@` a password may hold before the one that ends it. */
export const MAX_URL_ATS = 4;

/** The next position at or after `from` where `re` (global) matches, or `text.length`; cached while `from` only grows. */
export class NextMatch {
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
 * one a bare host name follows. The user stays (an e-mail address as the user too). A blank or a
 * `"` ends the reach, and so does a `'` when one opens the URL.
 * Linear: the next `@`, blank and `/` are cached cursors, and each `@` is checked for a host once.
 */
export function redactUrlCredentials(text: string, run: Run): string {
  const ats: number[] = [];
  for (let i = text.indexOf('@'); i !== -1; i = text.indexOf('@', i + 1)) ats.push(i);
  if (ats.length === 0) return text;
  // A password may hold an apostrophe (`admin:it's-s3cret@db`); a `'` ends it only in a URL a `'` opens.
  const nextBreak = new NextMatch(text, /[\s"]/g);
  const nextApostrophe = new NextMatch(text, /'/g);
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
    const quoted = text[m.index - 1] === "'";
    const end = Math.min(p + MAX_URL_PASSWORD + 1, nextBreak.from(p), quoted ? nextApostrophe.from(p) : Infinity);
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
export const AUTHORIZATION = /(?<![\w-])((?:proxy-)?authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key|dpop|hmac)[ \t]{1,8})?)([^\s"'`,;)\]}>]{8,4096})/gi;

/** `Bearer <token>` and `Basic <base64>` outside a header (curl lines, prose). */
export const BEARER = /(?<![\w-])((?:bearer|basic)[ \t]{1,4})([A-Za-z0-9._~+/-]{16,4096}=*)(?![A-Za-z0-9._~+/=-])/gi;

/** `Cookie:` and `Set-Cookie:` header lines. */
export const COOKIE_HEADER = /(?<![\w-])((?:set-)?cookie[ \t]{0,4}:[ \t]{0,8})([^\n]{1,8192})/gi;
export const COOKIE_PAIR = /([^\s=;,]{1,128})=("[^"\n]{0,4096}"|[^\s;,]{0,4096})/g;
export const COOKIE_ATTRIBUTES = new Set(['path', 'domain', 'expires', 'max-age', 'samesite', 'priority', 'version', 'comment']);

/** Session cookies named outside a header: `PHPSESSID=…`, `connect.sid=…`. */
export const SESSION_COOKIE =
  /(?<![\w.-])(PHPSESSID|JSESSIONID|ASP\.NET_SessionId|connect\.sid|sessionid|laravel_session|_gh_sess|__Secure-next-auth\.session-token|next-auth\.session-token)(=)([^\s;,&"']{8,4096})/g;

/** `curl -u user:password`, `--user user:password`. */
export const CLI_USER = /(?<![\w-])(-u|--user)([ \t]{1,4}|=)(["']?)([^\s:'"]{1,256}):([^\s'"]{1,512})\3/g;

/**
 * Commands whose `-p` takes the password: the mysql clients, `sshpass`, `docker login` (`-p X` or
 * joined `-pX`; a mysql `-p` alone prompts). Where the name starts a command (a line start or
 * prompt, after `|`, `;`, `&`, `(`, a backtick, `sudo`, `exec`, `time`) any value goes; in the
 * middle of prose only one with a letter and a digit, or 8+ characters, so `then cp -pr` and
 * `docker run -p 8080:80` stay. Elsewhere `-p` is a port or a path and stays.
 */
export const CLI_CLIENT = /(?<![\w-])(?:(mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)|(sshpass)|docker[ \t]{1,4}login)(?=[ \t])/g;
/** What comes right before a command name that starts a command (checked on the 32 characters before it). */
export const COMMAND_START = /(?:\n|[|;&(`"':]|[$#>*-][ \t]|\d\.[ \t]|\b(?:sudo|exec|time|xargs|nohup)[ \t])[ \t]{0,16}$/;
export const COMMAND_START_OF_TEXT = /(?:^|\n|[|;&(`"':]|[$#>*-][ \t]|\d\.[ \t]|\b(?:sudo|exec|time|xargs|nohup)[ \t])[ \t]{0,16}$/;
/** Words that end a client's arguments in prose or a pipeline: another command, a conjunction. */
export const ENDS_CLI_ARGS = new Set(['docker', 'mysql', 'sshpass', 'and', 'then', 'or', 'to', 'with']);
/** Other tools' flags that start with `-p` and sit on the same line as a mysql command (find, cp, mkdir). */
export const NOT_A_JOINED_PASSWORD = new Set(['-print', '-print0', '-printf', '-prune', '-perm', '-path', '-pr', '-pv', '-pf', '-pa']);
/** How many words after the command name are read for its `-p`. */
export const MAX_CLI_WORDS = 64;
/** sshpass options that take a value; its own options end at the first other word (the command it runs). */
export const SSHPASS_VALUE_FLAGS = new Set(['-f', '-d', '-P']);

/** True for the characters that end a command-line word: blanks, line ends, `|`, `;`, `&`. */
export const endsWord = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 124 || c === 59 || c === 38;
/**
 * What ends an unquoted word inside the text around a command: a quote, backtick or bracket that
 * closes the string or the span holding it, a comma, an escaped `\n` of a JSON string.
 */
export const endsWordInText = (text: string, j: number) => {
  const c = text.charCodeAt(j);
  return endsWord(c) || c === 34 || c === 39 || c === 96 || c === 41 || c === 93 || c === 125 || c === 44 || (c === 92 && /[nrt]/.test(text[j + 1] ?? ''));
};

/**
 * Walks the words after each client name up to the end of the command (`|`, `;`, `&`, a line end
 * that no `\` continues) and replaces the password its `-p` gives. Walks never overlap, so each
 * character is read once. A value starting with `$` or a backtick (a variable, `$(…)`) stays
 * unless single-quoted.
 */
export function redactShortPasswordFlags(text: string, run: Run): string {
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
      // A quoted word, or a joined `-p'…'`: read to the closing quote on the line, with the pieces
      // a shell joins to it (`'it'\''s s3cret'`, `'it'"'"'s'`).
      const quoteAt = text.startsWith('-p', i) ? i + 2 : i;
      const c = text[quoteAt] as string;
      // `\"` inside an escaped JSON string (a logged command) quotes as `"` does.
      const q = c === '"' || c === "'" ? c : c === '\\' && text[quoteAt + 1] === '"' ? '\\"' : '';
      let j = q === '' ? i : quoteAt + q.length;
      if (q !== '') {
        const quoted = readQuoted(text, quoteAt, q);
        if (!quoted.open) j = quoted.end;
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
    const quote = raw.startsWith('\\"') ? '\\"' : raw[0] === '"' || raw[0] === "'" ? raw[0] : '';
    const bare = quote !== '' && raw.endsWith(quote) && raw.length >= 2 * quote.length ? raw.slice(quote.length, -quote.length) : raw;
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
export const PGPASS_PORTS = new Set(['5432', '5433', '6432', '*']);

/**
 * A .pgpass line, `host:port:database:user:password` (indented in a code block or not); the host
 * has a letter, is an IPv4 address or `*`; the port is a number or `*`.
 */
export const PGPASS_LINE = /^([ \t]{0,16}([A-Za-z0-9.*_-]{1,253}):(\d{1,5}|\*):[\w.*-]{1,64}:[\w.@*-]{1,64}:)([^\s]{1,512})(?=[ \t]{0,16}\r?$)/gm;

/** SQL's quoted password: `IDENTIFIED BY '…'`, `WITH PASSWORD '…'`, `ENCRYPTED PASSWORD '…'` (a doubled quote inside is one quote). */
export const SQL_PASSWORD = /(?<![\w-])((?:IDENTIFIED[ \t]{1,8}BY(?:[ \t]{1,8}PASSWORD)?|(?:(?:UN)?ENCRYPTED[ \t]{1,8})?PASSWORD)[ \t]{1,8})('(?:[^'\n]|''){1,256}'(?!')|"[^"\n]{1,256}")/gi;

/** PowerShell's `ConvertTo-SecureString "…" -AsPlainText`. */
export const SECURE_STRING = /(ConvertTo-SecureString[ \t]{1,8}(?:-String[ \t]{1,8})?)("[^"\n]{1,1024}"|'[^'\n]{1,1024}')/gi;

export function redactUrlsHeadersCli(text: string, run: Run): string {
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
  if (lower.includes('password') || lower.includes('identified')) {
    out = out.replace(SQL_PASSWORD, (m, head: string, value: string) => {
      if (isAlreadyRedacted(value)) return m;
      run.hit('password');
      return head + value[0] + marker('password') + value[0];
    });
  }
  if (lower.includes('convertto-securestring')) {
    out = out.replace(SECURE_STRING, (_m, head: string, value: string) => {
      run.hit('cli_password');
      return head + value[0] + marker('cli_password') + value[0];
    });
  }
  return out;
}

export function redactCookiePairs(pairs: string, setCookie: boolean, run: Run): string {
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
