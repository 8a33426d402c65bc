/**
 * A context package's artifact file: where it is, whether it may be read, and its first bytes.
 * One rule for everything that opens an artifact (the search index, `fetch`): the file must
 * resolve, symlinks followed, to a regular file strictly inside `<root>/bazinga/artifacts/`, and
 * that folder must itself resolve strictly inside the project root (symlinks of the folder and of
 * its parents resolved too): an artifacts folder linked to /etc serves nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { kindOf, openRegularFile, readUpTo, realDir } from './files.ts';
import { isStrictlyInside } from './paths.ts';

export type ArtifactLocation =
  | { kind: 'file'; path: string }
  /** `folder`: the artifacts folder itself is missing. */
  | { kind: 'missing'; folder: boolean }
  /** `real`: where the file (or, with `folder`, the artifacts folder) resolves to. */
  | { kind: 'outside'; real: string; folder: boolean }
  /** `what`: `a FIFO`, `a directory`, … */
  | { kind: 'not-file'; what: string };

type ArtifactsFolder = { kind: 'ok'; real: string } | { kind: 'missing' } | { kind: 'outside'; real: string };

/** `<root>/bazinga/artifacts` resolved, and whether it lies inside the resolved project root. */
function artifactsFolder(projectRoot: string): ArtifactsFolder {
  const real = realDir(path.join(projectRoot, 'bazinga', 'artifacts'));
  const root = realDir(projectRoot);
  if (real === undefined || root === undefined) return { kind: 'missing' };
  return isStrictlyInside(real, root) ? { kind: 'ok', real } : { kind: 'outside', real };
}

/**
 * `<root>/bazinga/artifacts` with its symlinks resolved, or undefined when it does not exist or
 * resolves outside the project root (nothing in it may be read then).
 */
export function artifactsDir(projectRoot: string): string | undefined {
  const folder = artifactsFolder(projectRoot);
  return folder.kind === 'ok' ? folder.real : undefined;
}

/**
 * Where the package's `file_path` (relative to the project root) really is, and whether it may be
 * read. `dir` is `artifactsDir(projectRoot)`, for callers that look up many files; without it the
 * artifacts folder is looked at here, and a folder that is missing or resolves outside the project
 * says so (`folder: true`).
 */
export function locateArtifact(projectRoot: string, filePath: string, dir?: string): ArtifactLocation {
  if (dir === undefined) {
    const folder = artifactsFolder(projectRoot);
    if (folder.kind === 'missing') return { kind: 'missing', folder: true };
    if (folder.kind === 'outside') return { kind: 'outside', real: folder.real, folder: true };
    dir = folder.real;
  }
  const candidate = path.resolve(projectRoot, filePath);
  // Checked without an exception first: indexing asks about many files that were never written.
  if (!fs.existsSync(candidate)) return { kind: 'missing', folder: false };
  let real: string;
  try {
    real = fs.realpathSync(candidate);
  } catch {
    return { kind: 'missing', folder: false };
  }
  if (!isStrictlyInside(real, dir)) return { kind: 'outside', real, folder: false };
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
  } catch {
    return { kind: 'missing', folder: false };
  }
  return st.isFile() ? { kind: 'file', path: real } : { kind: 'not-file', what: kindOf(st) };
}

/**
 * The first `maxBytes` bytes of a regular file as UTF-8 (a character cut by the bound is dropped),
 * '' for anything else. Opened without blocking and checked again on the open descriptor
 * (files.ts), so a file swapped for a FIFO between the check and the open cannot hang the caller.
 */
export function readHead(file: string, maxBytes: number): string {
  const opened = openRegularFile(file);
  if (!opened.ok) return '';
  try {
    // No larger than the file: a small file costs a small buffer whatever the bound.
    const want = Math.min(maxBytes, opened.size);
    const buf = readUpTo(opened.fd, want, opened.size);
    let end = buf.length;
    if (end === want && end > 0) {
      // Step back over a multi-byte character the bound split.
      let lead = end - 1;
      while (lead > 0 && lead > end - 4 && ((buf[lead] as number) & 0xc0) === 0x80) lead--;
      const b = buf[lead] as number;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (lead + need > end) end = lead;
    }
    return buf.subarray(0, end).toString('utf8');
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** The artifact's first `maxBytes` bytes, or '' when it is missing, unreadable or not allowed. */
export function artifactHead(projectRoot: string, filePath: string, maxBytes: number, dir?: string): string {
  if (maxBytes <= 0) return '';
  const where = locateArtifact(projectRoot, filePath, dir);
  if (where.kind !== 'file') return '';
  try {
    return readHead(where.path, maxBytes);
  } catch {
    return '';
  }
}

/**
 * The last `maxBytes` bytes of a regular file as UTF-8 (a character the bound split at the start
 * is dropped), '' for anything else; opened as readHead opens it.
 */
export function readTail(file: string, maxBytes: number): string {
  const opened = openRegularFile(file);
  if (!opened.ok) return '';
  try {
    const want = Math.min(maxBytes, opened.size);
    const buf = Buffer.alloc(want);
    let filled = 0;
    while (filled < want) {
      const n = fs.readSync(opened.fd, buf, filled, want - filled, opened.size - want + filled);
      if (n === 0) break;
      filled += n;
    }
    let start = 0;
    // Step over continuation bytes of a character that began before the bound.
    if (want < opened.size) while (start < filled && start < 3 && ((buf[start] as number) & 0xc0) === 0x80) start++;
    return buf.subarray(start, filled).toString('utf8');
  } finally {
    fs.closeSync(opened.fd);
  }
}

/**
 * The artifact's last `maxBytes` bytes and whether the file holds more before them (`cut`), or ''
 * when it is missing, unreadable or not allowed.
 */
export function artifactTail(projectRoot: string, filePath: string, maxBytes: number): { text: string; cut: boolean } {
  if (maxBytes <= 0) return { text: '', cut: false };
  const where = locateArtifact(projectRoot, filePath);
  if (where.kind !== 'file') return { text: '', cut: false };
  try {
    const size = fs.statSync(where.path).size;
    return { text: readTail(where.path, maxBytes), cut: size > maxBytes };
  } catch {
    return { text: '', cut: false };
  }
}
