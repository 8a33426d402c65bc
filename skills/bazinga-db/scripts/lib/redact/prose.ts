/** Stage 3g: a password written in a sentence ("the admin password is …"). Part of the redaction engine (../redact.ts). */
import { Run, marker } from './rules.ts';
import { PLAIN_VALUES, isRedactedHere, isReference, isTestResult } from './values.ts';

/** A word of what a password is for (`prod`, `the`, `admin`, `root@db1`): not a verb or a sign that gives the value. */
const QUALIFIER = String.raw`(?!(?:is|was|now|will|became|has|set|-|->|→)(?!\S))[^\s:=]{1,40}`;

/** What a password is for: `for prod`, `of the admin user`, `to the staging box` (up to four words). */
const FOR = String.raw`[ \t]{1,4}(?:for|of|to|on|at|in)[ \t]{1,4}${QUALIFIER}(?:[ \t]{1,4}${QUALIFIER}){0,3}`;
/** The words that give the value: `is`, `was`, `is now`, `was set to`, `has been changed to`, `will be`, `became`, `: is`. */
const VERB = String.raw`(?:[ \t]{0,4}:[ \t]{0,4}is(?:[ \t]{1,4}now)?|[ \t]{1,4}(?:is(?:[ \t]{1,4}now)?|now[ \t]{1,4}is|was|will[ \t]{1,4}be|became|(?:has[ \t]{1,4}been|was|is)[ \t]{1,4}(?:changed|reset|set|updated|rotated)[ \t]{1,4}to|set[ \t]{1,4}to)(?:[ \t]{0,4}:)?)[ \t]{1,4}`;
/** An arrow or a dash that gives the value (`password → …`, `pw for prod - …`). */
const ARROW = String.raw`(?:[ \t]{0,4}(?:->|→)|[ \t]{1,4}-)[ \t]{1,4}`;
/** `:` or `=` after what it is for (`pw for prod: …`); right after the word, `password: x` is a key and its value (the assignment rules). */
const SIGN = String.raw`[ \t]{0,4}[:=][ \t]{1,4}`;

/**
 * A sentence that gives a password: the word for it (password, passphrase, passcode, passwd, pwd,
 * pw, pass), what it is for (`for prod`, `of the admin user`), a verb (`is`, `was`, `is now`, `was
 * set to`, `has been changed to`, `will be`, `became`, `: is`) or, after what it is for, a sign
 * (`:`, `=`, `-`, `→`), then the value, quoted or not. Every repetition is bounded, so a match costs a
 * bounded amount of work per word that names a password.
 */
export const PROSE_PASSWORD = new RegExp(
  String.raw`(?<![\w@./\\-])((?:pass(?:word|phrase|code|wd)?|pwd?)(?:${FOR}(?:${VERB}|${SIGN}|${ARROW})|${VERB}|${ARROW}))(?:(["'\x60])([^\n"'\x60]{4,128})\2|([^\s"'\x60]{4,128}))`,
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

/** Replaces the passwords PROSE_PASSWORD finds; a bare value loses the punctuation that ends the sentence. */
export function redactProse(text: string, run: Run): string {
  if (!/pass|pw/i.test(text)) return text;
  return text.replace(PROSE_PASSWORD, (m, head: string, quote: string | undefined, quoted: string | undefined, bare: string | undefined) => {
    if (quote !== undefined && quoted !== undefined) {
      if (!isProsePassword(quoted, true)) return m;
      run.hit('password');
      return head + quote + marker('password') + quote;
    }
    const raw = bare as string;
    const value = raw.replace(/[.,;:!?)\]]+$/, '');
    if (!isProsePassword(value, false)) return m;
    run.hit('password');
    return head + marker('password') + raw.slice(value.length);
  });
}
