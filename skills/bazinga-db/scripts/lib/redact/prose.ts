/** Stage 3g: a password written in a sentence ("the admin password is …"). Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { classifyKey } from './keys.ts';
import { PLAIN_VALUES, isRedactedHere, isReference, isTestResult } from './values.ts';

/** A word of what a password is for (`prod`, `the`, `admin`, `root@db1`): not a verb or a sign that gives the value. */
const QUALIFIER = String.raw`(?!(?:is|are|was|were|now|will|became|has|set|-|->|→)(?!\S))[^\s:=]{1,40}`;

/** What a password is for: `for prod`, `of the admin user`, `to the staging box` (up to four words). */
const FOR = String.raw`[ \t]{1,4}(?:for|of|to|on|at|in)[ \t]{1,4}${QUALIFIER}(?:[ \t]{1,4}${QUALIFIER}){0,3}`;
/** The words that give the value: `is`, `are`, `'s`, `was`, `is now`, `was set to`, `has been changed to`, `will be`, `became`, `: is`. */
const VERB = String.raw`(?:[ \t]{0,4}:[ \t]{0,4}is(?:[ \t]{1,4}now)?|['\u2019]s|[ \t]{1,4}(?:(?:is|are)(?:[ \t]{1,4}now)?|now[ \t]{1,4}(?:is|are)|was|were|will[ \t]{1,4}be|became|(?:has[ \t]{1,4}been|was|is)[ \t]{1,4}(?:changed|reset|set|updated|rotated)[ \t]{1,4}to|set[ \t]{1,4}to)(?:[ \t]{0,4}:)?)[ \t]{1,4}`;
/** An arrow or a dash that gives the value (`password → …`, `pw for prod - …`). */
const ARROW = String.raw`(?:[ \t]{0,4}(?:->|→)|[ \t]{1,4}-)[ \t]{1,4}`;
/** `:` or `=` after what it is for (`pw for prod: …`); right after the word, `password: x` is a key and its value (the assignment rules). */
const SIGN = String.raw`[ \t]{0,4}[:=][ \t]{1,4}`;

/** A second value after the first (`the passwords are X and Y`, `X, Y`; a bare first value may have taken the comma): bare, as the first may be. */
const MORE = String.raw`(?:((?:[ \t]{0,4},|[ \t]{1,4}(?:and|&)|(?<=,))[ \t]{1,4})([^\s"'\x60]{4,128}))?`;

/**
 * A sentence that gives a password (or several): the word for it (password, passphrase, passcode, passwd, pwd,
 * pw, pass, and the plurals), what it is for (`for prod`, `of the admin user`), a verb (`is`, `was`, `is now`, `was
 * set to`, `has been changed to`, `will be`, `became`, `: is`) or, after what it is for, a sign
 * (`:`, `=`, `-`, `→`; a plural takes a sign right after it: `the passwords: X and Y`), then the
 * value, quoted or not, and maybe a second one. Every repetition is bounded, so a match costs a
 * bounded amount of work per word that names a password.
 */
export const PROSE_PASSWORD = new RegExp(
  String.raw`(?<![\w@./\\-])((?:pass(?:words|phrases|codes)|pw(?:ds|s))${SIGN}|(?:pass(?:words?|phrases?|codes?|wd)?|pw(?:ds?|s)?)(?:${FOR}(?:${VERB}|${SIGN}|${ARROW})|${VERB}|${ARROW}))(?:(["'\x60])([^\n"'\x60]{4,128})\2|([^\s"'\x60]{4,128}))${MORE}`,
  'gi',
);

/** Hash and cipher names with a number (`SHA256-hashed`, `bcrypt2b`, `AES256`): what a password is stored with, not one. */
export const ALGORITHM = /^(?:sha|md|bcrypt|argon|pbkdf|scrypt|aes|rsa|hmac|utf|base|des|rc|x)[-_]?\d{1,4}[a-z]?(?:[-_.][a-z]+)*$/i;

/** Code, not a password: a member of `this` or `self`, a call, an arrow. */
export const CODE = /^(?:this|self)\.|\w\(|=>/;

/**
 * Whether a value written after "the password is" is a password: quoted, anything of four or more
 * characters that is no placeholder; bare, a letter with a digit or a symbol (`hunter2!x`,
 * `Xy#kq`), or six digits or more. Not: a plain word, a count, ratio, version, duration or test
 * name, a date or time, a path, a URL, an e-mail address, a hash algorithm, a reference, code.
 */
export function isProsePassword(value: string, quoted: boolean): boolean {
  if (isRedactedHere(value) || isReference(value) || PLAIN_VALUES.has(value.toLowerCase())) return false;
  if (quoted) return /[\p{L}\p{N}]/u.test(value);
  if (/^\d{6,}$/.test(value)) return true;
  if (value.length < 5 || !/\p{L}/u.test(value) || !/[\d!#$%^&*+=?~|<>@]/.test(value)) return false;
  if (isTestResult(value, '') || ALGORITHM.test(value) || /:\/\/|^[.~]?\//.test(value) || CODE.test(value)) return false;
  if (/^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$/.test(value) || /^\d{1,4}[-/:.]\d{1,2}/.test(value)) return false;
  // A version and what it says of it (`v2-compatible`, `v3-only`, `1.2-beta`, `v1.4.2-rc1`): lower-case
  // words after the number, or a release tag's number.
  if (/^v?\d{1,4}(?:\.\d{1,4}){0,3}(?:[-+.](?:[a-z]{2,}|(?:rc|alpha|beta|pre|dev|preview|build)\.?\d{1,4}))+$/.test(value)) return false;
  return !/^\d+(?:st|nd|rd|th|x|k|kb|mb|gb|ms|s|m|h|d)$/i.test(value);
}

/** A bare value without the punctuation that ends its sentence, redacted when it is a password. */
function proseValue(raw: string, run: Run): string {
  const value = raw.replace(/[.,;:!?)\]]+$/, '');
  if (!isProsePassword(value, false)) return raw;
  run.hit('password');
  return marker('password') + raw.slice(value.length);
}

/** Replaces the passwords PROSE_PASSWORD, USE_AS_PASSWORD and PROSE_KEY find. */
export function redactProse(text: string, run: Run): string {
  if (!/pass|pw|key|secret|token/i.test(text)) return text;
  let out = text;
  if (/pass|pw/i.test(out)) {
    out = out.replace(PROSE_PASSWORD, (m, head: string, quote: string | undefined, quoted: string | undefined, bare: string | undefined, joint: string | undefined, second: string | undefined) => {
      // A second value that is itself a key and its value (`…, Password=OK`) is no item of the list.
      const more = joint !== undefined && second !== undefined ? joint + (/[=:]/.test(second) ? second : proseValue(second, run)) : '';
      if (quote !== undefined && quoted !== undefined) {
        if (!isProsePassword(quoted, true)) return m;
        run.hit('password');
        return head + quote + marker('password') + quote + more;
      }
      const first = proseValue(bare as string, run);
      return first === bare && more === (joint ?? '') + (second ?? '') ? m : head + first + more;
    });
    out = out.replace(USE_AS_PASSWORD, (m, head: string, quote: string | undefined, quoted: string | undefined, bare: string | undefined) => {
      if (quote !== undefined && quoted !== undefined) {
        if (!isProsePassword(quoted, true)) return m;
        run.hit('password');
        return head + quote + marker('password') + quote;
      }
      return head + proseValue(bare as string, run);
    });
  }
  if (/key|secret|token/i.test(out)) {
    out = out.replace(PROSE_KEY, (m, head: string, name: string, quote: string | undefined, quoted: string | undefined, bare: string | undefined) => {
      const cls = classifyKey(name.replace(/[ \t]+/g, '_'));
      const value = quoted ?? (bare as string).replace(/[.,;:!?)\]]+$/, '');
      if (cls === null || cls === 'password' || !isProseKey(value)) return m;
      run.hit(cls);
      return quote !== undefined ? head + quote + marker(cls) + quote : head + marker(cls) + (bare as string).slice(value.length);
    });
  }
  return out;
}

/** `Use X as the password`, `try 'X' as the admin passphrase`: the value before what it is. */
export const USE_AS_PASSWORD = new RegExp(
  String.raw`(?<![\w-])((?:use|using|try|set)[ \t]{1,4})(?:(["'\x60])([^\n"'\x60]{4,128})\2|([^\s"'\x60]{4,128}))(?=[ \t]{1,4}as[ \t]{1,4}(?:(?:the|a|an|your|my|our|its)[ \t]{1,4})?(?:[\w-]{1,32}[ \t]{1,4}){0,2}(?:password|passphrase|passcode|passwd|pwd|pw)\b)`,
  'gi',
);

/**
 * A key or token given in a sentence: `The Django secret key is …`, `the API token was …`,
 * `the signing secret: …`, `the session token - …`. Only a value that looks like one (isProseKey) goes.
 */
export const PROSE_KEY = new RegExp(
  String.raw`(?<![\w@./\\-])(((?:secret|signing|api|access|private|encryption|master|client|auth|bearer|session)[ \t]{1,4}(?:keys?|tokens?|secrets?)|secrets?|tokens?)(?:${VERB}|${SIGN}|${ARROW}))(?:(["'\x60])([^\n"'\x60]{8,256})\3|([^\s"'\x60]{8,256}))`,
  'gi',
);

/** A key's value in prose: one word with a letter and a digit, 12 characters or more, no plain value, reference or path. */
export function isProseKey(value: string): boolean {
  if (isRedactedHere(value) || isReference(value) || PLAIN_VALUES.has(value.toLowerCase())) return false;
  if (/\s/.test(value) || value.length < 12 || !/\p{L}/u.test(value) || !/\d/.test(value)) return false;
  return !(/:\/\/|^[.~]?\//.test(value) || ALGORITHM.test(value) || CODE.test(value) || isTestResult(value, ''));
}
