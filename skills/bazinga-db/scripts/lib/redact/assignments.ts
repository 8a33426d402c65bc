/** Stage 3d: key = value assignments whose key names a secret, in every syntax the engine reads. Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { classifyKey } from './keys.ts';
import { NextMatch } from './urls.ts';
import { CONFIG_DOCUMENT, LineStarts, VALUE_BELOW, isIniLine, isTableValue, readYamlBlock, restOfLine, startsLine } from './layouts.ts';
import { MAX_VALUE, type ValueSpan, endsBareValue, operatorAt, isRedactedHere, isReference, isSecretValue, readValue, replaceValue } from './values.ts';

/**
 * Finds `key <op> ` where the key is a whole run of name characters (up to 64): `=`, `:`, `:=`,
 * `=>`, with optional quotes around the key (also JSON-escaped ones) and an index closing after
 * them (`os.environ["API_KEY"] = …`). Starts only where a name
 * starts, so it costs O(64) per name in the text.
 */
export const ASSIGNMENT_HEAD = /(?<![\p{L}\p{N}_.$-])([\w.$-]{1,64})(?![\p{L}\p{N}_.$-])((?:\\?["'`]\]?)?)([ \t]{0,32})(=>|:=|[=:])([ \t]{0,32})/gu;
/** A command-line flag and a blank: `--password hunter2`. */
export const FLAG_HEAD = /(?<![\w-])(--?[A-Za-z][\w-]{0,62})(?![\w-])([ \t]{1,4})(?=\S)/g;
/** PHP `define('AUTH_KEY', '…')`. */
export const DEFINE_HEAD = /(?<![\w$])(define\([ \t]{0,8}['"])([A-Za-z_]\w{0,63})(['"][ \t]{0,32},[ \t]{0,32})(?=\\?["'`])/g;
/** .NET config `<add key="SmtpPassword" value="…"/>`. */
export const XML_KV_HEAD = /(?<![\w-])((?:key|name)[ \t]{0,4}=[ \t]{0,4}")([\w.:-]{1,64})("[ \t]{1,8}value[ \t]{0,4}=[ \t]{0,4})(?=["'])/gi;
/** Shell forms that set a variable without `=`: fish `set -x KEY value`, csh `setenv KEY value`, Dockerfile `ENV KEY value`. */
export const SET_HEAD = /(?<![\w-])((?:set[ \t]{1,4}-[a-zA-Z]{1,4}|setenv|ENV)[ \t]{1,4})([A-Za-z_]\w{0,63})([ \t]{1,8})(?=[^\s=])/g;

/** .netrc: `machine host [login user] [account a] password value`, tokens in any order, on one line or several. */
export const NETRC_HEAD = /(?<![\w-])((?:machine[ \t]{1,8}[^\s]{1,253}|default)(?:\s{1,64}(?:login|account|port)\s{1,64}[^\s]{1,256}){0,4}\s{1,64})(password|passwd)([ \t]{1,8})(?=[^\s])/g;
/** A key in Markdown emphasis: `**Password:** value`, `- **DB password**: value`, `*Token*: value`, `__Secret:__ value`. */
export const EMPHASIS_HEAD = /(?<![\w*])(\*{1,2}|__)([A-Za-z][\w .-]{0,63}?)(?:\1[ \t]{0,4}:|:[ \t]{0,4}\1)[ \t]{1,8}(?=\S)/g;
/** A Markdown table row's key cell: `| DB_PASSWORD | value |`. */
export const TABLE_HEAD = /(?<=\|)([ \t]{0,8}`?)([A-Za-z_][\w.-]{0,63})(`?[ \t]{0,8}\|[ \t]{0,8})(?=[^\s|])/g;
/**
 * A name and its value as separate fields: a Kubernetes or Compose `env` entry (`- name: KEY` then
 * `value: …` below), `{"name": "KEY", "value": "…"}` (ECS, CloudFormation `ParameterKey`).
 */
export const NAME_VALUE_HEAD =
  /(?<![\w-])(["']?(?:name|Name|NAME|key|Key|ParameterKey|ParameterName)["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([A-Za-z_][\w.-]{0,63})(["']?[ \t]{0,4}(?:,[ \t]{0,4}|\r?\n[ \t]{0,32}(?:-[ \t]{1,4})?)["']?(?:value|Value|VALUE|ParameterValue)["']?[ \t]{0,4}[:=][ \t]{0,4})(?=\S)/g;
/**
 * The literal default of a read from the environment: `os.environ.get('KEY', '…')`,
 * `getenv("KEY", "…")`, `env('KEY', default='…')`, `config("KEY", default="…")`,
 * `process.env.KEY || '…'`, `process.env.KEY ?? "…"`, `os.environ.get('KEY') or '…'`.
 */
export const FALLBACK_HEAD =
  /(?<![\w$.])(?:(?:os\.environ\.get|os\.getenv|getenv|environ\.get|env(?:\.str)?|config|ENV\.fetch|Deno\.env\.get)\([ \t]{0,8}(["'])([A-Za-z_][\w.-]{0,63})\1[ \t]{0,8}(?:,[ \t]{0,8}(?:default[ \t]{0,4}=[ \t]{0,4})?|\)[ \t]{0,8}(?:or|\|\||\?\?)[ \t]{0,8})|(?:process\.env|import\.meta\.env|ENV)(?:\.([A-Za-z_]\w{0,63})|\[[ \t]{0,4}["']([A-Za-z_]\w{0,63})["'][ \t]{0,4}\])[ \t]{0,8}(?:\|\||\?\?)[ \t]{0,8})(?=["'`])/g;
/** The default of a shell parameter expansion: `${KEY:-…}`, `${KEY-…}`, `${KEY:=…}`. */
export const SHELL_DEFAULT_HEAD = /\$\{([A-Za-z_]\w{0,63}):?[-=](?=[^}\s])/g;

/**
 * The default of `${KEY:-…}` runs to the first `}` on its line (at most 256 characters): nothing
 * inside ends it sooner. `closes` finds the next `}` or line break (a cursor that only moves on).
 */
export function readShellDefault(text: string, at: number, closes: NextMatch): ValueSpan | null {
  const end = closes.from(at);
  if (end >= text.length || text[end] !== '}' || end === at || end - at > 256) return null;
  return { start: at, end, quote: '', bare: text.slice(at, end), open: false };
}

/**
 * The key of an assignment that ends right before `at` on its line (`SECRET_KEY = ` before
 * `os.environ.get(…)`, `export KEY="` before `${…}`), read backwards: a quote, blanks, the
 * operator, blanks, a closing quote or bracket, then up to 64 name characters. Null when none.
 */
export function assignedBefore(text: string, at: number, lineStart: number): string | null {
  let i = at - 1;
  const back = (ok: (c: string) => boolean, max: number) => {
    for (let n = 0; n < max && i >= lineStart && ok(text[i] as string); n++) i--;
  };
  back((c) => c === '"' || c === "'" || c === '`', 1);
  back((c) => c === ' ' || c === '\t', 8);
  const op = text.slice(Math.max(lineStart, i - 1), i + 1);
  if (op === '=>' || op === ':=') i -= 2;
  else if (text[i] === '=' || text[i] === ':') i--;
  else return null;
  back((c) => c === ' ' || c === '\t', 8);
  back((c) => c === '"' || c === "'" || c === '`' || c === ']', 1);
  const end = i + 1;
  back((c) => /[\w.$-]/.test(c), 64);
  return end > i + 1 ? text.slice(i + 1, end) : null;
}

/** A value that is itself the next key and its operator (`password=password: "…"`, `password: password = "…"`). */
export const INNER_KEY = /^([\w.$-]{1,64})(?:\\?["'`]\]?)?[ \t]{0,8}(?:=>|:=|[=:])[ \t]{0,8}(?![\s#]|\/\/|$)/;

/** A command-line flag (the value after a flag is the next flag, not a password). */
export const FLAG_LIKE = /^--?[A-Za-z][\w-]{0,62}$/;

/**
 * A key form: its regex and the names a match offers, in order (the first that names a secret is
 * the key). A read from the environment offers the variable it reads, then the one it is assigned to.
 */
interface HeadForm {
  re: RegExp;
  names: (m: RegExpExecArray, text: string, lines: LineStarts) => string[];
  /** False when the text lacks what every match of `re` holds (a literal), so the pass is skipped. */
  mayMatch: (text: string) => boolean;
}

const group = (i: number) => (m: RegExpExecArray) => [m[i] as string];
/** The variable a read names, then (only when that names no secret) the key it is assigned to. */
const withAssigned = (inner: string | undefined, text: string, lines: LineStarts, at: number): string[] => {
  if (inner !== undefined && classifyKey(inner) !== null) return [inner];
  const before = assignedBefore(text, at, lines.of(at));
  return [...(inner === undefined ? [] : [inner]), ...(before === null ? [] : [before])];
};

const holds = (...literals: string[]) => (text: string) => literals.some((l) => text.includes(l));
const holdsValue = (text: string) => /value/i.test(text);

export const HEAD_FORMS: readonly HeadForm[] = [
  { re: ASSIGNMENT_HEAD, names: group(1), mayMatch: holds('=', ':') },
  { re: FLAG_HEAD, names: group(1), mayMatch: holds('-') },
  { re: SET_HEAD, names: group(2), mayMatch: holds('set', 'ENV') },
  { re: DEFINE_HEAD, names: group(2), mayMatch: holds('define(') },
  { re: XML_KV_HEAD, names: group(2), mayMatch: holdsValue },
  { re: NAME_VALUE_HEAD, names: group(2), mayMatch: holdsValue },
  { re: FALLBACK_HEAD, names: (m, text, lines) => withAssigned(m[2] ?? m[3] ?? m[4], text, lines, m.index), mayMatch: holds('(', 'env', 'ENV') },
  { re: SHELL_DEFAULT_HEAD, names: (m, text, lines) => withAssigned(m[1], text, lines, m.index), mayMatch: holds('${') },
  { re: NETRC_HEAD, names: group(2), mayMatch: holds('passw') },
  { re: TABLE_HEAD, names: group(2), mayMatch: holds('|') },
  { re: EMPHASIS_HEAD, names: group(2), mayMatch: holds('*', '__') },
];

/** INNER_KEY, sticky: tried at one position of the whole text. */
const INNER_KEY_AT = new RegExp(INNER_KEY.source.slice(1), 'y');
/** How many keys deep a value that is itself a key is followed (`password=password=password: x`) in one walk. */
export const MAX_INNER_KEYS = 64;

type SecretClass = Exclude<ReturnType<typeof classifyKey>, null>;
interface InnerValue {
  v: ValueSpan;
  cls: SecretClass;
  name: string;
}

/**
 * Walks of values that are keys (valueAt), for one pass over a text: the keys a walk passed
 * and what it found. The scanner's next key is often the one a walk passed (`password: password:
 * …`); it is answered from here, so each key is walked once.
 */
export class InnerWalks {
  /** Where the last walk found keys (at most MAX_INNER_KEYS). */
  private passed: number[] = [];
  private found: InnerValue | null = null;

  /**
   * When the value at `at` is itself a key naming a secret, with an operator (`password=password:
   * "…"`, `password: password = …`), the value that key gives, if that is a secret (or was
   * redacted): that value is the one to remove, and the keys stay. Null when the value is the
   * value (`password=password123=x`). Reads one value per walk.
   */
  valueAt(text: string, at: number): InnerValue | null {
    if (this.passed.includes(at)) return this.found;
    this.passed.length = 0;
    let pos = at;
    let last: { name: string; cls: SecretClass; valueAt: number } | null = null;
    for (let depth = 0; depth < MAX_INNER_KEYS; depth++) {
      INNER_KEY_AT.lastIndex = pos;
      const m = INNER_KEY_AT.exec(text);
      // A key is words (`db_password`, `adminPassword`, `password2`); `passwd5PC0w:` is a value ending in a colon.
      const cls = m === null || !/^[A-Za-z_$][A-Za-z_$.-]*\d*$/.test(m[1] as string) ? null : classifyKey(m[1] as string);
      if (m === null || cls === null) break;
      this.passed.push(pos);
      last = { name: m[1] as string, cls, valueAt: pos + m[0].length };
      pos = last.valueAt;
    }
    this.found = null;
    if (last !== null) {
      const v = readValue(text, last.valueAt, { throughBrackets: last.cls === 'password' || last.cls === 'secret' });
      if (v !== null && (isRedactedHere(v.bare) || isSecretValue(last.cls, v, false, text, last.name, true))) this.found = { v, cls: last.cls, name: last.name };
    }
    return this.found;
  }
}

/** The first of `names` that names a secret, and its class. */
function secretName(names: readonly string[]): { name: string; cls: SecretClass } | null {
  for (const name of names) {
    const cls = classifyKey(name.replace(/^-+/, ''));
    if (cls !== null) return { name, cls };
  }
  return null;
}

/**
 * Replaces the values of secret-named keys. A scanner, not one regex: it finds `key op`, asks
 * classifyKey, reads the value with bounded loops, and moves on past what it replaced (or past the
 * key when it did not), so each character is read a bounded number of times.
 */
export function redactAssignments(text: string, run: Run): string {
  // One pass per head form, each over the output of the previous.
  let work = text;
  for (const { re, names, mayMatch } of HEAD_FORMS) {
    if (!mayMatch(work)) continue;
    const out: string[] = [];
    let from = 0;
    const lines = new LineStarts(work);
    const configDocument = re === ASSIGNMENT_HEAD && CONFIG_DOCUMENT.test(work);
    const walks = new InnerWalks();
    const closes = new NextMatch(work, /[}\n]/g);
    let wholeUntil = 0;
    re.lastIndex = 0;
    for (let m = re.exec(work); m; m = re.exec(work)) {
      const offered = names(m, work, lines);
      // `"A=1\nPASS=x"`: inside an escaped JSON string the key follows a `\n`, `\r` or `\t` escape.
      if (re === ASSIGNMENT_HEAD && /^[nrt]/.test(offered[0] as string) && work[m.index - 1] === '\\') offered[0] = (offered[0] as string).slice(1);
      // `${KEY:-default}` is a parameter expansion: its default is read by SHELL_DEFAULT_HEAD.
      const expansion = re === ASSIGNMENT_HEAD && work.startsWith('${', m.index - 2);
      const found = expansion ? null : secretName(offered);
      if (found === null) {
        re.lastIndex = m.index + Math.max(1, (offered[0] ?? '').length);
        continue;
      }
      const { name, cls } = found;
      const keyFirst = re === ASSIGNMENT_HEAD && startsLine(work, lines, m.index);
      const words = cls === 'password' || cls === 'secret';
      // A password or secret is read as a shell word, unless its key follows `?`, `&` or `;` (a
      // query or connection string, where `&name=` starts the next pair).
      const reading = { throughBrackets: words, throughSeparators: words && !/[?&;]/.test(work[m.index - 1] ?? '') };
      const valueAt = m.index + m[0].length;
      let v: ValueSpan | null;
      const below = m[4] === ':' ? VALUE_BELOW.exec(work.slice(valueAt, valueAt + 258)) : null;
      if (below !== null && !keyFirst && below[1] !== undefined) {
        // `{"db": {"password":\n  "x"}}`: a quoted value on the next line.
        v = readValue(work, valueAt + below[0].length - 1, reading);
      } else if (keyFirst && (below !== null || /^[|>]/.test(work[valueAt] ?? ''))) {
        // A YAML value below its key. One that is not a secret is scanned key by key (it may hold a config file).
        // A block is read whole once; keys inside one that was kept are read two lines at a time.
        const whole = m.index >= wholeUntil;
        const block = readYamlBlock(work, lines, m.index, valueAt, whole, words);
        if (whole && block !== null) wholeUntil = block.end;
        if (block !== null && block.quote === '' && isSecretValue(cls, block, false, work, name)) {
          run.hit(cls);
          out.push(work.slice(from, block.start), marker(cls));
          from = block.end;
          re.lastIndex = block.end;
          continue;
        }
        v = block !== null && block.quote !== '' ? block : null;
        if (v === null) {
          re.lastIndex = valueAt;
          continue;
        }
      } else if (re === SHELL_DEFAULT_HEAD) {
        v = readShellDefault(work, valueAt, closes);
      } else {
        // A YAML anchor before the value (`password: &pw value`) is not the value.
        const anchor = keyFirst && m[4] === ':' ? /^&[\w-]{1,64}[ \t]{1,8}(?=\S)/.exec(work.slice(valueAt, valueAt + 80)) : null;
        v = readValue(work, valueAt + (anchor ? anchor[0].length : 0), reading);
      }
      if (v === null) {
        re.lastIndex = m.index + Math.max(1, name.length);
        continue;
      }
      // The value is the next key that names a secret (`password=password: "…"`, `password: password = …`):
      // the value that key gives is the one replaced; the keys stay.
      const inner = v.quote === '' ? walks.valueAt(work, v.start) : null;
      if (inner !== null) {
        re.lastIndex = inner.v.end;
        if (isRedactedHere(inner.v.bare)) {
          run.redacted = true;
          continue;
        }
        const rule = re === FLAG_HEAD && inner.cls === 'password' ? 'cli_password' : inner.cls;
        run.hit(rule);
        out.push(work.slice(from, inner.v.start), replaceValue(inner.v, rule, work));
        from = inner.v.end;
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
      if (re === FLAG_HEAD && v.quote === '' && FLAG_LIKE.test(v.bare)) {
        re.lastIndex = m.index + name.length;
        continue;
      }
      // `KEY==x` on an env line, `key: =x` in YAML and `--key==x` set a value that starts with `=`; elsewhere `==` compares.
      const literalEquals =
        (re === ASSIGNMENT_HEAD && ((keyFirst && (m[4] === ':' || (m[4] === '=' && m[3] === ''))) || name.startsWith('-'))) || re === FLAG_HEAD || re === SHELL_DEFAULT_HEAD;
      if (!isSecretValue(cls, v, spaced, work, name, literalEquals)) {
        // Past a bare value read in full (each character is read once), unless the value is the next
        // key (`password: password = "…"`); a quoted value may hold keys of its own.
        const nextKey = operatorAt(work, v.end);
        re.lastIndex = v.quote === '' && !nextKey ? Math.max(v.end, m.index + 1) : m.index + Math.max(1, name.length);
        continue;
      }
      // A value longer than the bound goes whole: the part past it is as secret as the rest.
      if (v.quote === '' && v.end - v.start === MAX_VALUE) while (v.end < work.length && !endsBareValue(work, v.end)) v.end++;
      const rule = re === FLAG_HEAD && cls === 'password' ? 'cli_password' : cls;
      run.hit(rule);
      out.push(work.slice(from, v.start), replaceValue(v, rule, work));
      from = v.end;
      re.lastIndex = v.end;
    }
    if (from > 0) {
      out.push(work.slice(from));
      work = out.join('');
    }
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
