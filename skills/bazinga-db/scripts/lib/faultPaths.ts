/**
 * The paths in a fault's text, each replaced by its stem (its last component without extension),
 * in time linear in the text: what one global regular expression of a directory path (two or more
 * segments, POSIX or Windows, absolute or relative) and a bare file name of a known extension
 * finds, leftmost first, without trying the expression again at every character of a long run
 * (faultSignature.ts normaliseFaultText uses it). Pure.
 */

/** The extensions a bare file name is known by (`notification.service.ts`, `conftest.py`). */
const EXTENSION = String.raw`(?:[cm]?[jt]sx?|py|json|node|d\.ts|vue|svelte|rs|go|java|rb|php|cs|c|cc|cpp|h|hpp)`;
/** A path of two or more segments, POSIX or Windows, absolute or relative (`src/a.ts`, `C:\x\y`, `~/p/q`). */
export const DIR_PATH = String.raw`(?:[A-Za-z]:)?(?:[.~]{0,2}[\\/])?(?:[\w@.+-]+[\\/])+[\w@.+-]+`;
/** One segment with a known extension (`app.ts`). */
export const FILE_NAME = String.raw`\b[\w@+-]+\.${EXTENSION}\b`;

/** A path's last component without its extension(s): `src/a/notification.service.ts` → `notification.service`. */
function stem(path: string): string {
  const last = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
  return last.replace(/(\.d)?\.(?:[cm]?[jt]sx?|py|json|node|vue|svelte|rs|go|java|rb|php|cs|c|cc|cpp|h|hpp)$/, '');
}

const DIR_PATH_AT = new RegExp(DIR_PATH, 'y');
const FILE_NAME_AT = new RegExp(FILE_NAME, 'y');

/** A character of a path segment (`[\w@.+-]`), of a bare file name's name (`[\w@+-]`), of a word (`\w`). */
const isNameChar = (c: number) => isWordChar(c) || c === 0x2e || isFileSign(c);
const isFileNameChar = (c: number) => isWordChar(c) || isFileSign(c);
const isFileSign = (c: number) => c === 0x40 || c === 0x2b || c === 0x2d;
const isWordChar = (c: number) => isLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x5f;
const isLetter = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isSlash = (c: number) => c === 0x2f || c === 0x5c;
const isDotOrTilde = (c: number) => c === 0x2e || c === 0x7e;

/** Where the run of characters passing `test` that starts at `from` ends. */
function runEnd(text: string, from: number, test: (c: number) => boolean): number {
  let end = from;
  while (end < text.length && test(text.charCodeAt(end))) end++;
  return end;
}

/**
 * Whether DIR_PATH could match at a position of `text`, told from the characters there before the
 * expression is run: a drive (`C:`) or not, then a prefix (`~/`, `../`, `/`) or not, then a first
 * segment that a slash ends and a name character follows. What follows a run of name characters
 * is looked up once per run (the last run looked at is kept).
 */
class DirPathStarts {
  private runStart = -1;
  private runEnd = -1;
  private slashAfter = false;

  constructor(private readonly text: string) {}

  at(at: number): boolean {
    const c = this.text.charCodeAt(at);
    if (isLetter(c) && this.text.charCodeAt(at + 1) === 0x3a && this.afterDrive(at + 2)) return true;
    return this.afterDrive(at);
  }

  private afterDrive(at: number): boolean {
    const text = this.text;
    const c = text.charCodeAt(at);
    if (isSlash(c)) return this.segmentAt(at + 1);
    if (isDotOrTilde(c)) {
      const next = text.charCodeAt(at + 1);
      if (isSlash(next) && this.segmentAt(at + 2)) return true;
      if (isDotOrTilde(next) && isSlash(text.charCodeAt(at + 2)) && this.segmentAt(at + 3)) return true;
    }
    return this.segmentAt(at);
  }

  /** Whether a segment starts at `at`, a slash ends it and a name character follows. */
  private segmentAt(at: number): boolean {
    if (!isNameChar(this.text.charCodeAt(at))) return false;
    if (at < this.runStart || at >= this.runEnd) {
      this.runStart = at;
      this.runEnd = runEnd(this.text, at, isNameChar);
      this.slashAfter = isSlash(this.text.charCodeAt(this.runEnd)) && isNameChar(this.text.charCodeAt(this.runEnd + 1));
    }
    return this.slashAfter;
  }
}

/**
 * `text` with every path (DIR_PATH, else FILE_NAME, leftmost first, as one global regular
 * expression of the two would find them) replaced by its stem, in time linear in the text. A
 * regular expression tries each alternative again at every character of a long run of name
 * characters (`a-b-c-…`, a hash, a run of digits), each try scanning the rest of the run: quadratic.
 * Here a try that fails tells about the rest of its run, so the rest is not tried:
 *
 * - a directory path that does not start at a name character does not start at the next one of the
 *   same run either (what would follow its first segment is what followed the earlier one's), so
 *   it is looked for once per run (and at drive letters, `C:`);
 * - a file name reaches to the end of its run of `[\w@+-]` whichever word boundary of the run it
 *   starts at, so it is there at every boundary of the run or at none: looked for at the first.
 *
 * Both runs start again after a match, where the expression would go on. The expressions are run
 * only where the characters around say they may match (a slash, a dot), so plain prose costs one
 * pass.
 */
function replacePathsIn(text: string): string {
  const dirPathStarts = new DirPathStarts(text);
  let out = '';
  let copied = 0;
  // A directory path was looked for in the current run of name characters and none began there.
  let dirTried = false;
  // A file name was looked for at a word boundary of the current run of `[\w@+-]`.
  let fileTried = false;
  for (let at = 0; at < text.length; at++) {
    const c = text.charCodeAt(at);
    const name = isNameChar(c);
    if (!name) dirTried = false;
    if (!isFileNameChar(c)) fileTried = false;
    let found: string | undefined;
    const drive = isLetter(c) && text.charCodeAt(at + 1) === 0x3a;
    if ((!dirTried || drive) && (name || isSlash(c) || c === 0x7e)) {
      if (dirPathStarts.at(at)) {
        DIR_PATH_AT.lastIndex = at;
        found = DIR_PATH_AT.exec(text)?.[0];
      }
      if (found === undefined && name) dirTried = true;
    }
    if (found === undefined && !fileTried && isFileNameChar(c) && isWordChar(c) !== isWordChar(text.charCodeAt(at - 1))) {
      fileTried = true;
      if (text.charCodeAt(runEnd(text, at, isFileNameChar)) === 0x2e) {
        FILE_NAME_AT.lastIndex = at;
        found = FILE_NAME_AT.exec(text)?.[0];
      }
    }
    if (found === undefined) continue;
    out += text.slice(copied, at) + stem(found);
    copied = at + found.length;
    at = copied - 1;
    dirTried = false;
    fileTried = false;
  }
  return out + text.slice(copied);
}

/** A character a path can hold (of DIR_PATH or FILE_NAME): no path reaches across any other. */
const PATH_CHAR = String.raw`[\w@.+\-:~\\/]`;
/**
 * A run of path characters that may hold a path: one with a slash between two name characters
 * (every directory path has one after its first segment) or a known extension after a dot
 * (`(?<!…)`: from the start of the run only, so a run without either is scanned once).
 */
const MAY_HOLD_PATH = new RegExp(String.raw`(?<!${PATH_CHAR})${PATH_CHAR}*?(?:[\w@.+-][\\/][\w@.+-]|\.${EXTENSION}\b)${PATH_CHAR}*`, 'g');

/** `text` with every path replaced by its stem (replacePathsIn), looked for only in the runs of path characters that may hold one. */
export function replacePaths(text: string): string {
  return text.replace(MAY_HOLD_PATH, replacePathsIn);
}
