/** Stage 3d: key = value assignments whose key names a secret, in every syntax the engine reads. Part of the redaction engine (../redact.ts). */
import { ALREADY_REDACTED, HELD_ONLY, Run, marker } from './rules.ts';

export type KeyClass = 'password' | 'secret' | 'api_key' | 'token' | 'credential' | null;

/** Words that, ending a key, say its value is a name, a setting or a pointer, not a secret. */
export const NOT_A_VALUE = new Set([
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
export function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

export const KEY_QUALIFIERS = new Set([
  'secret', 'private', 'master', 'encryption', 'signing', 'client', 'service', 'account', 'app', 'license',
  'shared', 'primary', 'secondary', 'session', 'consumer', 'webhook', 'access', 'api', 'auth', 'admin', 'root',
  'storage', 'sas', 'hmac', 'jwt', 'subscription', 'deploy', 'ingestion', 'write', 'read', 'personal', 'server',
]);

/** What a `pass` or `pw` key word may follow and still mean a password. */
export const PASS_OWNERS = new Set([
  'db', 'database', 'smtp', 'mail', 'email', 'redis', 'mysql', 'mongo', 'mongodb', 'pg', 'postgres', 'ftp', 'sftp', 'admin',
  'root', 'user', 'key', 'ldap', 'proxy', 'amqp', 'rabbitmq', 'rabbit', 'sql', 'ssh', 'app', 'api', 'service', 'bind', 'vpn',
  'wifi', 'keystore', 'truststore', 'store', 'login', 'account', 'basic', 'auth', 'http', 'registry', 'docker', 'git',
]);

/** Every key classifyKey can name contains one of these. */
export const SECRETISH_KEY = /pass|pwd|pw|secret|key|token|cred|auth|sig|bearer|private/i;

/** What a key says its value is; null for keys that hold no secret. */
export function classifyKey(key: string): KeyClass {
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
export const KEY_CLASSES = new Map<string, KeyClass>();

export function classifyWords(key: string): KeyClass {
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
export const REFERENCE_CHARS = /[$%{<[.(:*]/;

/** Values that point to a secret instead of holding it. */
export function isReference(value: string): boolean {
  if (value.length > 4 && !REFERENCE_CHARS.test(value)) return false; // longer than a pair of (escaped) quotes
  const v = value.replace(/^\\?["'`]|\\?["'`]$/g, '');
  return (
    v === '' ||
    /^\$\{[^}]*\}$|^\$[A-Z_][A-Z0-9_]*$|^\$[a-z_][a-z0-9_]*$|^\$\([^)]*\)$|^%[A-Za-z_][\w]*%$|^\{\{[^}]*\}\}$|^<[^>]*>$|^\[[A-Z_ ]*\]$|^\*[A-Za-z_][\w-]{0,63}$/.test(v) ||
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
]);

/** Every marker ALREADY_REDACTED accepts holds one of these. */
export const REDACTED_CHARS = /REDACTED|redacted|\*\*\*|xxxx|XXXX|•••/;

export function isAlreadyRedacted(value: string): boolean {
  if (!REDACTED_CHARS.test(value)) return false;
  return ALREADY_REDACTED.test(value.replace(/^\\?["'`]|\\?["'`]$/g, ''));
}

/** A rule already fired on this value: it is a mask, or an earlier rule left its marker in it. */
export const isRedactedHere = (value: string): boolean => isAlreadyRedacted(value) || value.includes('[REDACTED:');

/** A value long and random enough to be a token: 8+ characters with a digit and a letter, or 16+, no blanks. */
export function looksLikeToken(bare: string): boolean {
  if (/\s/.test(bare)) return false;
  return bare.length >= 16 || (bare.length >= 8 && /\d/.test(bare) && /[A-Za-z]/.test(bare));
}

/**
 * Finds `key <op> ` where the key is a whole run of name characters (up to 64): `=`, `:`, `:=`,
 * `=>`, with optional quotes around the key (also JSON-escaped ones) and an index closing after
 * them (`os.environ["API_KEY"] = …`). Starts only where a name
 * starts, so it costs O(64) per name in the text.
 */
export const ASSIGNMENT_HEAD = /(?<![\p{L}\p{N}_.$-])([\w.$-]{1,64})(?![\p{L}\p{N}_.$-])((?:\\?["'`]\]?)?)([ \t]{0,32})(=>|:=|[=:])([ \t]{0,32})/gu;
/** A command-line flag and a blank: `--password hunter2`. */
export const FLAG_HEAD = /(?<![\w-])(--?[A-Za-z][\w-]{0,62})(?![\w-])([ \t]{1,4})(?=[^\s-])/g;
/** PHP `define('AUTH_KEY', '…')`. */
export const DEFINE_HEAD = /(?<![\w$])(define\([ \t]{0,8}['"])([A-Za-z_]\w{0,63})(['"][ \t]{0,32},[ \t]{0,32})(?=["'])/g;
/** .NET config `<add key="SmtpPassword" value="…"/>`. */
export const XML_KV_HEAD = /(?<![\w-])((?:key|name)[ \t]{0,4}=[ \t]{0,4}")([\w.:-]{1,64})("[ \t]{1,8}value[ \t]{0,4}=[ \t]{0,4})(?=["'])/gi;
/** Shell forms that set a variable without `=`: fish `set -x KEY value`, csh `setenv KEY value`, Dockerfile `ENV KEY value`. */
export const SET_HEAD = /(?<![\w-])((?:set[ \t]{1,4}-[a-zA-Z]{1,4}|setenv|ENV)[ \t]{1,4})([A-Za-z_]\w{0,63})([ \t]{1,8})(?=[^\s=])/g;

/** .netrc: `machine host [login user] [account a] password value`, tokens in any order, on one line or several. */
export const NETRC_HEAD = /(?<![\w-])((?:machine[ \t]{1,8}[^\s]{1,253}|default)(?:\s{1,64}(?:login|account|port)\s{1,64}[^\s]{1,256}){0,4}\s{1,64})(password|passwd)([ \t]{1,8})(?=[^\s])/g;
/** A Markdown table row's key cell: `| DB_PASSWORD | value |`. */
export const TABLE_HEAD = /(?<=\|)([ \t]{0,8}`?)([A-Za-z_][\w.-]{0,63})(`?[ \t]{0,8}\|[ \t]{0,8})(?=[^\s|])/g;

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

export function endsBareValue(text: string, i: number): boolean {
  const ch = text[i] as string;
  if (BARE_STOPS.has(ch) || (ch > '\u007f' && /\s/.test(ch))) return true;
  // An escaped line break or tab inside a JSON string (`"auth: true\nttl: 30"`) ends the line.
  if (ch === '\\') return /[nrt]/.test(text[i + 1] ?? '');
  if (ch !== ',' && ch !== ';' && ch !== '&') return false;
  const next = text.slice(i + 1, i + 67);
  return next === '' || /^[\s,;&]/.test(next) || /^[ \t]*[\w.-]{1,64}=/.test(next);
}

/** A marker or a template reference where a value starts: read whole. */
export const PLACED = /^\[REDACTED(?::[a-z_]+)?\]|^\$\{[^}\n]{0,256}\}|^\{\{[^}\n]{0,256}\}\}/;

/** Reads the value that starts at `pos` (after the operator), bounded by MAX_VALUE characters. */
export function readValue(text: string, pos: number): ValueSpan | null {
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
export function isSecretValue(cls: Exclude<KeyClass, null>, v: ValueSpan, spacedOperator: boolean, text: string, key = ''): boolean {
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

export function replaceValue(v: ValueSpan, rule: string, text: string): string {
  if (v.quote === '') return marker(rule);
  const close = v.open ? '' : v.quote;
  return v.quote + marker(rule) + close + (v.open ? text.slice(v.start + v.quote.length + v.bare.length, v.end) : '');
}

/**
 * Replaces the values of secret-named keys. A scanner, not one regex: it finds `key op`, asks
 * classifyKey, reads the value with bounded loops, and moves on past what it replaced (or past the
 * key when it did not), so each character is read a bounded number of times.
 */
export function redactAssignments(text: string, run: Run): string {
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
export const XML_ELEMENT = /<([A-Za-z_][\w.-]{0,63}(?::[A-Za-z_][\w.-]{0,63})?)((?:[ \t][^<>\n]{0,256})?>)(<!\[CDATA\[[^\]\n]{1,1024}\]\]>|[^<\n]{1,1024})(<\/\1[ \t]{0,8}>)/g;

export function redactXmlElements(text: string, run: Run): string {
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
export class LineStarts {
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
export const CONFIG_DOCUMENT = /\n[ \t]{0,64}(?:-[ \t]{1,8})?["']?[\w.-]{1,64}["']?[ \t]{0,8}(?::[ \t]|:\r?$|=)/m;

/** True when only indentation, a list dash or `export` come before `at` on its line. */
export function startsLine(text: string, lines: LineStarts, at: number): boolean {
  return /^[ \t]*(?:-[ \t]+|export[ \t]+)?["']?$/.test(text.slice(lines.of(at), at));
}

/**
 * Where a plain value starting a line's value ends when it is several words: the end of the line,
 * before a ` #` comment and trailing blanks; `end` itself when what follows is not more words
 * (punctuation, another `key=`/`key: `).
 */
export function restOfLine(text: string, lines: LineStarts, end: number): number {
  const lineEnd = lines.endOf(end);
  const rest = text.slice(end, lineEnd);
  if (!/^[ \t]+[^\s#;]/.test(rest) || /(?:^|[ \t])[\w.-]{1,64}(?:=|:[ \t])/.test(rest)) return end;
  const comment = rest.search(/[ \t]#/);
  return end + (comment === -1 ? rest : rest.slice(0, comment)).trimEnd().length;
}

/** The end of a key's line with no value on it (a comment allowed), then the next line's indentation; group 1 when a quote starts it. */
export const VALUE_BELOW = /^(?:[ \t]{0,8}#[^\n]{0,200})?\r?\n[ \t]{0,32}(["'])?/;

/** A YAML block scalar header (`|`, `>-`, `|2+`) and an optional comment, ending the line. */
export const BLOCK_HEADER = /^[|>](?:[1-9][+-]?|[+-][1-9]?)?[ \t]*(?:#[^\n]*)?\r?\n/;
/** A line that opens structure, not a plain scalar: a key, a list item, a comment, a flow collection, an indicator. */
export const STRUCTURE_LINE = /^[ \t]*(?:[\w."'$-]{1,64}[ \t]*:(?:[ \t]|\r?$)|-(?:[ \t]|\r?$)|[#{[|>!&*%@`?:,\]}]|---|\.\.\.)/;

/**
 * A YAML value below its key: a block scalar (`password: |` then indented lines), a plain scalar
 * on the next, deeper lines, or a quoted scalar there (returned as read by readValue, quotes kept).
 * Reads the lines indented past the key's column (blank lines inside a block scalar included); the
 * span starts at the first content character, so the indentation stays. `whole` reads every line;
 * otherwise at most two. `words` (a password or secret) joins lines with their breaks; otherwise
 * lines that are each one token join into one (a wrapped key). Null when what follows is a nested
 * mapping, a list, code or nothing.
 */
export function readYamlBlock(text: string, lines: LineStarts, keyAt: number, valueAt: number, whole: boolean, words: boolean): ValueSpan | null {
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
export function isTableValue(text: string, lines: LineStarts, keyAt: number, v: ValueSpan): boolean {
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
export function isIniLine(text: string, lines: LineStarts, keyAt: number, v: ValueSpan): boolean {
  if (v.quote !== '' || /[.([]/.test(v.bare) || lines.of(keyAt) !== keyAt) return false;
  return /^(?:[ \t]+[#;][^\n]*|[ \t]*)(?:\r?\n|$)/.test(text.slice(v.end, v.end + 256)) || restOfLine(text, lines, v.end) > v.end;
}

/** How many wrapped lines after a redacted value are followed (each pass of CONTINUATION takes one more). */
export const MAX_CONTINUED_LINES = 16;

/**
 * The tail of a value wrapped onto the next line (a shell `\` continuation, a key broken across
 * lines in a code fence): a line holding nothing but one token right after a redacted value.
 */
export const CONTINUATION = /(\[REDACTED:(?!high_entropy\])[a-z_]+\]["'`]?[ \t]{0,64}(?:\\[ \t]{0,64})?\r?\n)([ \t]{0,64})([A-Za-z0-9+/_.~-]{8,4096}={0,3})(?=[ \t]{0,64}(?:\\?\r?\n|$|["'`]))/g;

export function redactContinuations(text: string, run: Run): string {
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
