/**
 * Writing a file the product makes for a person (a report) so that no symbolic link can carry it
 * out of the project. One rule for every such file:
 *   1. The path is taken as given: made absolute against the working directory, `.` and `..`
 *      applied to its text (a `..` never steps back out of a link).
 *   2. No link that lies inside the project is followed: every folder between the project root
 *      and the file must be a real folder (a missing one is made), whether the path is the
 *      product's default or one the user named.
 *   3. A link that lies outside the project is followed: the project root's own parents, and the
 *      folders of a path the user named (they named each of them). Its target is walked by the same
 *      rule, so a link out there that leads into the project meets rule 2 there.
 *   4. The file itself is never followed: a link there is refused, wherever it lies (the user names
 *      the link's target instead); so is a directory, FIFO or device at that name.
 *   5. The bytes go to a new temporary file in that folder (a short unpredictable name of its own,
 *      not made from the file's, so any file name the file system takes fits; made exclusively,
 *      never through a link), checked by what the kernel says was opened before a byte is written,
 *      then renamed over the file: a reader sees the old file or the new one, and a folder swapped
 *      for a link after the checks is caught (the empty temporary file is removed, nothing else is
 *      made).
 * A refusal is a REFUSED error naming the path and what is wrong, raised before anything is made; a
 * path with a name longer than a file system takes (NAME_MAX, 255 bytes) is a VALIDATION error
 * naming it, raised before anything is made too.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { BazingaError } from './errors.ts';
import { kindOf, openedPath } from './files.ts';
import { isStrictlyInside } from './paths.ts';

export interface ProjectWriteOptions {
  /** The project root: no link at or below its real path is followed. */
  projectRoot: string;
  /** The new file's permission bits (default 0o644). */
  mode?: number;
  /** What is written, for the message: `report` gives `report not written: …`. */
  what?: string;
}

/**
 * Writes `data` to `file` (absolute, or relative to the process's working directory) by the rule
 * above; throws REFUSED when a link or a non-folder stands in the way, or the file is a link or not
 * a regular file.
 */
export function writeFileInProject(file: string, data: string | Uint8Array, opts: ProjectWriteOptions): void {
  const target = path.resolve(file);
  const what = opts.what ?? 'file';
  checkNameLengths(target, what);
  const realRoot = fs.realpathSync(opts.projectRoot);
  const folder = realFolderOf(path.dirname(target), realRoot, what);
  const name = path.basename(target);
  const existing = lstatOrUndefined(path.join(folder, name));
  if (existing?.isSymbolicLink()) throw refused(what, target, 'is a symbolic link, and a file is never written through one (name the file it points to instead)');
  if (existing !== undefined && !existing.isFile()) throw refused(what, target, `is ${kindOf(existing)}, not a regular file`);
  replaceFileInFolder(folder, name, data, { mode: opts.mode ?? 0o644, shown: target, what });
}

/** The longest file or folder name, in bytes, that Linux and macOS file systems take (NAME_MAX). */
const NAME_MAX_BYTES = 255;

/**
 * Throws VALIDATION naming `target` when one of its names (the file's, or a folder's on the way) is
 * longer than NAME_MAX_BYTES in UTF-8: the system would refuse it (ENAMETOOLONG) part way.
 */
function checkNameLengths(target: string, what: string): void {
  const names = target.split(path.sep).filter((n) => n !== '');
  for (const [i, name] of names.entries()) {
    const bytes = Buffer.byteLength(name, 'utf8');
    if (bytes <= NAME_MAX_BYTES) continue;
    const which = i === names.length - 1 ? 'its file name' : `the folder name '${name}'`;
    throw new BazingaError('VALIDATION', `${what} not written: ${target}: ${which} is ${bytes} bytes, and a name may have at most ${NAME_MAX_BYTES}`);
  }
}

/**
 * The temporary file's name: a fixed prefix and 16 random hex digits (27 characters whatever the
 * file's name), so that any name the file itself may have leaves room for it in the same folder.
 */
const temporaryName = () => `.bazinga-write-${randomBytes(8).toString('hex')}.tmp`;

/** The most links followed on the way to one folder (as the kernel's own limit, ELOOP). */
const MAX_LINKS = 40;

/**
 * The real path of the folder `dir` (absolute, normalised), resolved one name at a time from the
 * file system's root as the kernel would, but by the rule: a link whose folder is the real root or
 * below it is refused; a link outside it is followed by reading it, its target's names walked by
 * the same rule (a link out there that leads into the project meets the rule there); a missing
 * folder the path names is made; a missing one a link leads to, or anything that is no folder,
 * is refused. A message names a folder by the path as given (and, when a link on the way made it
 * another, its resolved path in parentheses), one a link's target adds by its resolved path.
 */
function realFolderOf(dir: string, realRoot: string, what: string): string {
  const names = (p: string, given: boolean) => p.split(path.sep).filter((n) => n !== '' && n !== '.').map((name) => ({ name, given }));
  const pending = names(dir, true);
  let real = path.parse(dir).root;
  let typed = real;
  let links = 0;
  for (let step = pending.shift(); step !== undefined; step = pending.shift()) {
    if (step.name === '..') {
      // Only a link's target holds one here (the path given was normalised): `real` holds no link.
      real = path.dirname(real);
      continue;
    }
    const next = path.join(real, step.name);
    if (step.given) typed = path.join(typed, step.name);
    const shown = !step.given ? next : typed === next ? typed : `${typed} (${next})`;
    const found = lstatOrUndefined(next);
    if (found === undefined && !step.given) throw refused(what, shown, 'does not exist (a symbolic link leads there)');
    const st = found ?? makeFolder(next, shown, what);
    if (st.isSymbolicLink()) {
      if (real === realRoot || isStrictlyInside(real, realRoot)) {
        throw refused(what, shown, `is a symbolic link inside the project ${realRoot}, and no link there is followed`);
      }
      if (++links > MAX_LINKS) throw refused(what, shown, `leads through more than ${MAX_LINKS} symbolic links`);
      const target = fs.readlinkSync(next);
      if (path.isAbsolute(target)) real = path.parse(target).root;
      pending.unshift(...names(target, false));
      continue;
    }
    if (!st.isDirectory()) throw refused(what, shown, `is ${st.isFile() ? 'a file' : kindOf(st)}, not a folder`);
    real = next;
  }
  return real;
}

/** Makes the missing folder `next` (never through a link: mkdir makes no link's target) and returns what stands there then. */
function makeFolder(next: string, typed: string, what: string): fs.Stats {
  try {
    fs.mkdirSync(next);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw refused(what, typed, `cannot be made (${(err as NodeJS.ErrnoException).code ?? 'EIO'})`);
  }
  return fs.lstatSync(next);
}

/**
 * Writes `data` as `name` in the folder whose real path is `realFolder` (step 5 of the rule): a
 * temporary file made exclusively there, checked to be where it was meant to be before a byte is
 * written (a folder on the way swapped for a link since `realFolder` was found puts it elsewhere:
 * it is removed and REFUSED thrown), then renamed over `name` (a rename replaces a name, it never
 * follows a link). `shown` is the path named in a message.
 */
export function replaceFileInFolder(realFolder: string, name: string, data: string | Uint8Array, opts: { mode: number; shown: string; what: string }): void {
  const temporary = path.join(realFolder, temporaryName());
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);
  const fd = fs.openSync(temporary, flags, opts.mode);
  let made = temporary;
  try {
    made = openedPath(fd, temporary);
    if (path.dirname(made) !== realFolder) {
      throw refused(opts.what, opts.shown, `changed while it was written: its folder ${realFolder} now leads to ${path.dirname(made)}`);
    }
    fs.fchmodSync(fd, opts.mode);
    fs.writeFileSync(fd, data);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(made, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(temporary, path.join(realFolder, name));
  } catch (err) {
    fs.rmSync(temporary, { force: true });
    throw err;
  }
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw err;
  }
}

const refused = (what: string, shown: string, why: string) => new BazingaError('REFUSED', `${what} not written: ${shown} ${why}`);
