/**
 * Reading a file the product was given (a configuration, a params file, a `--content-file`, an
 * artifact): one rule for every path, so that no input can make a command wait or read without end.
 *   1. stat, symlinks followed, before anything is opened: a FIFO, a device, a directory or a socket
 *      is refused on what it is and never opened (reading a FIFO waits for a writer that may never
 *      come; /dev/zero never ends);
 *   2. a regular file larger than its cap is refused on its size;
 *   3. opened with O_NONBLOCK and checked again on the descriptor, so an entry swapped in between
 *      (a FIFO) is refused too, without a wait;
 *   4. read to at most cap + 1 bytes: a file that grew past the cap meanwhile is refused as well.
 * What is refused is described by what it is and the cap, never by its content; a JSON syntax
 * error is likewise described by its line and column (`jsonErrorLocation`), never by its bytes.
 */
import fs from 'node:fs';
import { isStrictlyInside } from './paths.ts';

/** Why a path was not read. */
export type FileRefusal =
  | { reason: 'missing' }
  | { reason: 'not-file'; what: string }
  /** `size` is the size stat gave; null when the file grew past the cap while it was read. */
  | { reason: 'too-large'; size: number | null; cap: number }
  | { reason: 'unreadable'; code: string }
  /** What the caller's check (`accept`) said of the file actually opened. */
  | { reason: 'refused'; why: string };

export type FileRead = { ok: true; bytes: Buffer } | { ok: false; refusal: FileRefusal };

/** What a file system entry that is not a regular file is, for a message: `a FIFO`, `a directory`, … */
export function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/**
 * The refusal as the end of a message that starts with the path: `no such file`, `is a FIFO, not
 * a regular file`, `is 2000000 bytes, over the cap of 1048576 bytes`.
 */
export function describeRefusal(refusal: FileRefusal): string {
  switch (refusal.reason) {
    case 'missing':
      return 'no such file';
    case 'not-file':
      return `is ${refusal.what}, not a regular file`;
    case 'too-large':
      return refusal.size === null
        ? `holds more than ${refusal.cap} bytes, over the cap of ${refusal.cap} bytes`
        : `is ${refusal.size} bytes, over the cap of ${refusal.cap} bytes`;
    case 'unreadable':
      return `cannot be read (${refusal.code})`;
    case 'refused':
      return refusal.why;
  }
}

/**
 * The path of what `fd` has open, with every link resolved: the kernel's own answer where it gives
 * one (/proc/self/fd on Linux), else `file` resolved again. A check on this path cannot be fooled by
 * a folder swapped for a link between an earlier check and the open.
 */
export function openedPath(fd: number, file: string): string {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return fs.realpathSync(file);
  }
}

const errnoCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? 'EIO';
const isMissing = (code: string) => code === 'ENOENT' || code === 'ENOTDIR';

/**
 * Opens `file` for reading when it is a regular file (steps 1 and 3 above; no size check): the
 * descriptor and the size its fstat gave, or why not. The caller closes the descriptor.
 */
export function openRegularFile(file: string): { ok: true; fd: number; size: number } | { ok: false; refusal: FileRefusal } {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    const code = errnoCode(err);
    return { ok: false, refusal: isMissing(code) ? { reason: 'missing' } : { reason: 'unreadable', code } };
  }
  if (!st.isFile()) return { ok: false, refusal: { reason: 'not-file', what: kindOf(st) } };
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = errnoCode(err);
    return { ok: false, refusal: isMissing(code) ? { reason: 'missing' } : { reason: 'unreadable', code } };
  }
  const again = fs.fstatSync(fd);
  if (!again.isFile()) {
    fs.closeSync(fd);
    return { ok: false, refusal: { reason: 'not-file', what: kindOf(again) } };
  }
  return { ok: true, fd, size: again.size };
}

/** Reads from `fd` at its current position until end of file or `limit` bytes, whichever comes first. */
export function readUpTo(fd: number, limit: number, sizeHint = 0): Buffer {
  let buf = Buffer.alloc(Math.max(1, Math.min(limit, sizeHint + 1)));
  let filled = 0;
  while (filled < limit) {
    if (filled === buf.length) {
      const grown = Buffer.alloc(Math.min(limit, buf.length * 2));
      buf.copy(grown, 0, 0, filled);
      buf = grown;
    }
    const n = fs.readSync(fd, buf, filled, buf.length - filled, null);
    if (n === 0) break;
    filled += n;
  }
  return buf.subarray(0, filled);
}

/**
 * The bytes of `file` when it is a regular file of at most `cap` bytes (symlinks followed), else
 * why not. Never blocks, never reads more than `cap + 1` bytes.
 */
export function readRegularFile(file: string, cap: number, accept?: (opened: string, st: fs.Stats) => string | undefined): FileRead {
  const opened = openRegularFile(file);
  if (!opened.ok) return opened;
  try {
    // The caller's rule (containment, say) on what was actually opened, before a byte is read.
    const why = accept?.(openedPath(opened.fd, file), fs.fstatSync(opened.fd));
    if (why !== undefined) return { ok: false, refusal: { reason: 'refused', why } };
    if (opened.size > cap) return { ok: false, refusal: { reason: 'too-large', size: opened.size, cap } };
    const bytes = readUpTo(opened.fd, cap + 1, opened.size);
    if (bytes.length > cap) return { ok: false, refusal: { reason: 'too-large', size: null, cap } };
    return { ok: true, bytes };
  } catch (err) {
    return { ok: false, refusal: { reason: 'unreadable', code: errnoCode(err) } };
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** `dir` with its symlinks resolved, or undefined when it does not exist. */
export function realDir(dir: string): string | undefined {
  try {
    return fs.realpathSync(dir);
  } catch {
    return undefined;
  }
}

/** True when the resolved path `real` lies strictly inside one of `roots` (resolved too). */
export function isInsideAny(real: string, roots: readonly string[]): boolean {
  return roots.some((root) => isStrictlyInside(real, root));
}

/**
 * Where the first JSON syntax error of `text` is (1-based line and column, columns in UTF-16
 * units), for a message that must not quote the text; undefined when no error is found (the text
 * parses, or it nests deeper than this scanner follows).
 */
export function jsonErrorLocation(text: string): { line: number; column: number } | undefined {
  let offset: number;
  try {
    offset = jsonErrorOffset(text);
  } catch {
    return undefined;
  }
  if (offset < 0) return undefined;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** ` at line L, column C` for a text JSON.parse refused ('' when no location is found). */
export function jsonErrorAt(text: string): string {
  const at = jsonErrorLocation(text);
  return at === undefined ? '' : ` at line ${at.line}, column ${at.column}`;
}

/** The offset of the first character that makes `s` invalid JSON (its length when it ends too soon), or -1. */
function jsonErrorOffset(s: string): number {
  let i = 0;
  const stack: ('[' | '{')[] = [];
  const skipSpace = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t' || s[i] === '\n' || s[i] === '\r')) i++;
  };
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  /** Scans a string starting at the quote at i; returns the error offset or -1 (i after the closing quote). */
  const scanString = (): number => {
    i++;
    for (;;) {
      if (i >= s.length) return s.length;
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return -1;
      }
      if (c < 0x20) return i;
      if (c === 0x5c) {
        const e = s[i + 1];
        if (e === undefined) return s.length;
        if (e === 'u') {
          for (let k = 2; k < 6; k++) if (!/[0-9a-fA-F]/.test(s[i + k] ?? '')) return Math.min(i + k, s.length);
          i += 6;
        } else if ('"\\/bfnrt'.includes(e)) i += 2;
        else return i + 1;
        continue;
      }
      i++;
    }
  };
  const scanNumber = (): number => {
    if (s[i] === '-') i++;
    if (s[i] === '0') i++;
    else if (isDigit(s[i])) while (isDigit(s[i])) i++;
    else return i;
    if (s[i] === '.') {
      i++;
      if (!isDigit(s[i])) return i;
      while (isDigit(s[i])) i++;
    }
    if (s[i] === 'e' || s[i] === 'E') {
      i++;
      if (s[i] === '+' || s[i] === '-') i++;
      if (!isDigit(s[i])) return i;
      while (isDigit(s[i])) i++;
    }
    return -1;
  };
  type State = 'value' | 'value-or-close' | 'after' | 'key' | 'key-or-close';
  let state: State = 'value';
  for (;;) {
    skipSpace();
    if (state === 'after') {
      const top = stack[stack.length - 1];
      if (top === undefined) return i < s.length ? i : -1;
      if (s[i] === ',') {
        i++;
        state = top === '{' ? 'key' : 'value';
      } else if (s[i] === (top === '[' ? ']' : '}')) {
        i++;
        stack.pop();
      } else return i;
      continue;
    }
    if (state === 'key' || state === 'key-or-close') {
      if (state === 'key-or-close' && s[i] === '}') {
        i++;
        stack.pop();
        state = 'after';
        continue;
      }
      if (s[i] !== '"') return i;
      const bad = scanString();
      if (bad >= 0) return bad;
      skipSpace();
      if (s[i] !== ':') return i;
      i++;
      state = 'value';
      continue;
    }
    if (state === 'value-or-close' && s[i] === ']') {
      i++;
      stack.pop();
      state = 'after';
      continue;
    }
    const c = s[i];
    if (c === '{' || c === '[') {
      stack.push(c);
      i++;
      state = c === '{' ? 'key-or-close' : 'value-or-close';
      continue;
    }
    let bad: number;
    if (c === '"') bad = scanString();
    else if (c === '-' || isDigit(c)) bad = scanNumber();
    else {
      const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : undefined;
      if (word === undefined) return i;
      bad = -1;
      for (let k = 0; k < word.length; k++) {
        if (s[i + k] !== word[k]) {
          bad = Math.min(i + k, s.length);
          break;
        }
      }
      if (bad < 0) i += word.length;
    }
    if (bad >= 0) return bad;
    state = 'after';
  }
}
