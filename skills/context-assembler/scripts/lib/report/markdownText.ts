/**
 * A stored text as markdown that shows exactly that text and nothing else, wherever the report puts
 * it: a table cell, a heading, a list item, a paragraph. Every text the report shows passes here
 * (ids, times, agent types, summaries, reasons, query terms, paths), so no stored text can end its
 * line, add a heading or a cell, open a link or an image, or carry HTML. Only the report's own
 * markup is markup. Display only: the stored data and the JSON report are unchanged.
 *
 * What is done, in one pass (linear in the text):
 *   - a line break (CR, LF, CRLF, U+2028, U+2029) becomes a space: the text stays on its line, so
 *     it never starts one (no heading, list, quote, table row, HTML block or link definition);
 *   - a backslash-escape (CommonMark: any ASCII punctuation) for every character that means
 *     something in a line: `\` (so a stored backslash never escapes the report's own `|`), `|`
 *     (a table cell), `` ` `` (code), `*` and `~` (emphasis, strikethrough), `[` and `]` (links,
 *     images, footnotes), `#` (a heading's closing sequence), `&` (an HTML entity), `$` (math), `@`
 *     (an e-mail autolink);
 *   - `<` unless a space, a tab, a digit or `=` follows (what follows it then cannot be a tag, a
 *     comment or an autolink: `< 80 %` stays as written);
 *   - `_` unless it stands between two letters or digits (only there it cannot emphasise:
 *     `qa_expert` stays as written);
 *   - `:` before `/` and `.` after `www` (the bare `https://…` and `www.…` autolinks of GitHub's
 *     markdown).
 * Checked against cmark-gfm (GitHub's, with its table, autolink, strikethrough and tagfilter
 * extensions) and markdown-it (HTML and linkify on). What escapes cannot change, as in any text a
 * renderer shows: GitHub still links a bare e-mail address (`a@b.example`, as `mailto:`), and a
 * renderer that links bare domain names (markdown-it's linkify) links `b.example`; neither loads
 * anything.
 */

/** Every character that may need an escape, and the line breaks (one match per CRLF). */
const SPECIAL = /\r\n|[\r\n\u2028\u2029\\|`*~[\]#&$@<_:.]/g;
/** Characters escaped wherever they stand. */
const ALWAYS = new Set(['\\', '|', '`', '*', '~', '[', ']', '#', '&', '$', '@']);
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Whether `c` is a letter or a digit (ASCII decided without a regular expression). */
function isWordChar(c: string | undefined): boolean {
  if (c === undefined) return false;
  if (c < '\u0080') return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  return WORD_CHAR.test(c);
}

/** `text` escaped for any inline place of a markdown document (see the file's comment). */
export function markdownText(text: string): string {
  return text.replace(SPECIAL, (c: string, at: number) => {
    if (ALWAYS.has(c)) return `\\${c}`;
    const next = text[at + 1];
    switch (c) {
      case '<':
        return next === ' ' || next === '\t' || next === '=' || (next !== undefined && next >= '0' && next <= '9') ? c : '\\<';
      case '_':
        return isWordChar(text[at - 1]) && isWordChar(next) ? c : '\\_';
      case ':':
        return next === '/' ? '\\:' : c;
      case '.':
        return at >= 3 && text.slice(at - 3, at).toLowerCase() === 'www' ? '\\.' : c;
      default:
        // A line break: CR, LF, CRLF, U+2028, U+2029.
        return ' ';
    }
  });
}
