/**
 * Reading the file a write command's `--content-file` names: one containment rule for every
 * content file (save-reasoning, save-memory).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BazingaError, invalid } from './errors.ts';
import { describeRefusal, isInsideAny, readRegularFile, realDir } from './files.ts';
import { contentFileBytes } from './settings.ts';

/**
 * The text of a `--content-file` (save-reasoning's, save-memory's: one rule for every content file). The path, resolved against the working directory
 * and then through its symlinks, must lie inside the project root or the system's temp folder
 * (os.tmpdir(), and /tmp, where agents write their notes), else REFUSED naming the rule; it must be
 * a regular file of at most `file_limits.content_file_bytes` (files.ts: never blocks, never reads
 * past the cap), else VALIDATION naming the path, what it is and the cap.
 */
export function readContentFile(given: string, cwd: string, projectRoot: string): string {
  const file = path.resolve(cwd, given);
  // `<file> is …` in parentheses, never `<file>: …`: a path ending in `passwd:` reads as a password to the redaction engine.
  const problem = (what: string) => invalid(`Could not read content file '${given}' (${file} ${what})`);
  const roots = [...new Set([projectRoot, os.tmpdir(), '/tmp'].map(realDir).filter((d): d is string => d !== undefined))];
  const outside = (shown: string) =>
    new BazingaError('REFUSED', `--content-file ${shown} lies outside the project root and the temp folder; --content-file reads only from inside ${roots.join(', ')} (symlinks resolved)`);
  // A path outside by its name (an alias of the project through a link is fine) whose real path is
  // not inside either, or that does not exist, gets the same answer: it never tells whether a file
  // exists outside.
  const named = [...new Set([...roots, path.resolve(projectRoot), path.resolve(os.tmpdir()), '/tmp'])];
  if (!isInsideAny(file, named)) {
    let aliased = false;
    try {
      aliased = isInsideAny(fs.realpathSync(file), roots);
    } catch {
      // missing or unreadable: refused like any path outside
    }
    if (!aliased) throw outside(file);
  }
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw problem(code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be resolved: ${code}`);
  }
  if (!isInsideAny(real, roots)) throw outside(`${file}${real === file ? '' : ` resolves to ${real}, which`}`);
  const cap = contentFileBytes(projectRoot);
  const project = realDir(projectRoot);
  // Checked again on what was opened (a folder swapped for a link after the check above is caught),
  // and in the temp folder, which anyone can write, a file with other hard links is refused: a link
  // there to a file outside would pass the rule.
  const read = readRegularFile(real, cap, (opened, st) => {
    if (!isInsideAny(opened, roots)) return `resolves to ${opened} once opened, outside ${roots.join(', ')}; --content-file reads only from inside them`;
    if (st.nlink > 1 && !(project !== undefined && isInsideAny(opened, [project]))) {
      return `has ${st.nlink} hard links; in the temp folder only a file with one is read (a link there could name a file outside)`;
    }
    return undefined;
  });
  if (read.ok) return read.bytes.toString('utf8');
  if (read.refusal.reason === 'refused') throw new BazingaError('REFUSED', `--content-file ${file} ${read.refusal.why}`);
  const raise = read.refusal.reason === 'too-large' ? '; context_engineering.file_limits.content_file_bytes in bazinga/skills_config.json raises it' : '';
  throw problem(`${describeRefusal(read.refusal)}${raise}`);
}
