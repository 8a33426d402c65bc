/**
 * A context package's artifact file: where it is, whether it may be read, and its first bytes.
 * One rule for everything that opens an artifact (the search index, `fetch`): the file must
 * resolve, symlinks followed, to a regular file strictly inside `<root>/bazinga/artifacts/`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isStrictlyInside } from './paths.ts';

export type ArtifactLocation =
  | { kind: 'file'; path: string }
  | { kind: 'missing' }
  | { kind: 'outside' }
  | { kind: 'not-file' };

/** `<root>/bazinga/artifacts` with its symlinks resolved, or undefined when it does not exist. */
export function artifactsDir(projectRoot: string): string | undefined {
  try {
    return fs.realpathSync(path.join(projectRoot, 'bazinga', 'artifacts'));
  } catch {
    return undefined;
  }
}

/**
 * Where the package's `file_path` (relative to the project root) really is, and whether it may be
 * read. `dir` is `artifactsDir(projectRoot)`, for callers that look up many files.
 */
export function locateArtifact(projectRoot: string, filePath: string, dir = artifactsDir(projectRoot)): ArtifactLocation {
  if (dir === undefined) return { kind: 'missing' };
  const candidate = path.resolve(projectRoot, filePath);
  // Checked without an exception first: indexing asks about many files that were never written.
  if (!fs.existsSync(candidate)) return { kind: 'missing' };
  let real: string;
  try {
    real = fs.realpathSync(candidate);
  } catch {
    return { kind: 'missing' };
  }
  if (!isStrictlyInside(real, dir)) return { kind: 'outside' };
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
  } catch {
    return { kind: 'missing' };
  }
  return st.isFile() ? { kind: 'file', path: real } : { kind: 'not-file' };
}

/**
 * The first `maxBytes` bytes of a regular file as UTF-8 (a character cut by the bound is dropped).
 * Opened without blocking and checked again on the open descriptor, so a file swapped for a FIFO
 * between the check and the open cannot hang the caller.
 */
export function readHead(file: string, maxBytes: number): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return '';
    // No larger than the file: a small file costs a small buffer whatever the bound.
    const buf = Buffer.alloc(Math.min(maxBytes, st.size));
    let filled = 0;
    while (filled < buf.length) {
      const n = fs.readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) break;
      filled += n;
    }
    let end = filled;
    if (end === buf.length) {
      // Step back over a multi-byte character the bound split.
      let lead = end - 1;
      while (lead > 0 && lead > end - 4 && ((buf[lead] as number) & 0xc0) === 0x80) lead--;
      const b = buf[lead] as number;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (lead + need > end) end = lead;
    }
    return buf.subarray(0, end).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The artifact's first `maxBytes` bytes, or '' when it is missing, unreadable or not allowed. */
export function artifactHead(projectRoot: string, filePath: string, maxBytes: number, dir = artifactsDir(projectRoot)): string {
  if (maxBytes <= 0) return '';
  const where = locateArtifact(projectRoot, filePath, dir);
  if (where.kind !== 'file') return '';
  try {
    return readHead(where.path, maxBytes);
  } catch {
    return '';
  }
}
