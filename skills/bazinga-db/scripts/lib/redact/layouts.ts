/** The file layouts the key = value scanner reads: lines and their starts, config documents, YAML values below their key, Markdown table rows, INI lines. Part of the redaction engine (../redact.ts). */
import { type ValueSpan, PLAIN_VALUES, readValue } from './values.ts';

/**
 * Where the line holding a position starts, for positions asked in increasing order (the scanner's
 * keys): a cursor over the newlines, so a long line costs its length once, not once per key on it.
 */
const NOT_YET = -2;

export class LineStarts {
  private start = 0;
  /** The line break ending the line that starts at `start` (-1: none), or NOT_YET before the first question. */
  private next = NOT_YET;
  constructor(private readonly text: string) {}
  of(at: number): number {
    if (at < this.start) return this.text.lastIndexOf('\n', at - 1) + 1; // asked out of order: not on the scanner's path
    if (this.next === NOT_YET) this.next = this.text.indexOf('\n');
    while (this.next !== -1 && this.next < at) {
      this.start = this.next + 1;
      this.next = this.text.indexOf('\n', this.start);
    }
    return this.start;
  }
  /** Where the line holding `at` ends (its newline, or the text's end); `at` on the line last asked about is free. */
  endOf(at: number): number {
    if (this.next === NOT_YET) this.next = this.text.indexOf('\n');
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
