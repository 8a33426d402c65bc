/**
 * Where the project and its database are. The project root is found, first match wins, from
 * `--project-root`, the directory above `--db`'s folder, `BAZINGA_ROOT`, `CLAUDE_PROJECT_DIR`,
 * and finally by walking up from the working directory to a folder holding both `.claude/` and
 * `bazinga/`. Nothing here changes the process's working directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BazingaError } from './errors.ts';

export interface PathOptions {
  db?: string | undefined;
  projectRoot?: string | undefined;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface ResolvedPaths {
  projectRoot: string;
  detectionSource: string;
  dbPath: string;
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

const hasBazingaDir = (dir: string) => isDir(path.join(dir, 'bazinga'));

const NO_ROOT_MESSAGE =
  'Could not detect BAZINGA project root. Ensure you are in a directory with both .claude/ and bazinga/ folders, or set BAZINGA_ROOT environment variable, or pass --project-root flag.';

/** Finds the project root, or undefined when no source gives one (an invalid override throws). */
function findProjectRoot(opts: PathOptions): { root: string; source: string } | undefined {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (opts.projectRoot !== undefined) {
    const dir = path.resolve(cwd, opts.projectRoot);
    if (!hasBazingaDir(dir)) {
      throw new BazingaError(
        'NO_PROJECT_ROOT',
        `Override path '${opts.projectRoot}' is not a valid BAZINGA project root: missing bazinga/`,
      );
    }
    return { root: dir, source: 'explicit override' };
  }
  if (opts.db !== undefined) {
    return { root: path.dirname(path.dirname(path.resolve(cwd, opts.db))), source: 'database path' };
  }
  for (const [name, label] of [
    ['BAZINGA_ROOT', 'BAZINGA_ROOT environment variable'],
    ['CLAUDE_PROJECT_DIR', 'CLAUDE_PROJECT_DIR environment variable'],
  ] as const) {
    const value = env[name];
    if (value && hasBazingaDir(path.resolve(cwd, value))) return { root: path.resolve(cwd, value), source: label };
  }
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (hasBazingaDir(dir) && isDir(path.join(dir, '.claude'))) return { root: dir, source: 'current working directory' };
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Resolves root and database path, or throws NO_PROJECT_ROOT. */
export function resolvePaths(opts: PathOptions): ResolvedPaths {
  const found = findProjectRoot(opts);
  if (!found) throw new BazingaError('NO_PROJECT_ROOT', NO_ROOT_MESSAGE);
  const cwd = opts.cwd ?? process.cwd();
  const dbPath = opts.db !== undefined ? path.resolve(cwd, opts.db) : path.join(found.root, 'bazinga', 'bazinga.db');
  return { projectRoot: found.root, detectionSource: found.source, dbPath };
}

/**
 * Resolves a path the way Python's non-strict `Path.resolve()` does: symlinks are followed for the
 * parts that exist, missing parts are appended, and `.`/`..` are applied as they come.
 */
export function resolveLikePython(p: string, base: string): string {
  // Joined, not normalised: `..` must apply after the symlinks before it are followed, as Python does
  // (`S/link/../x` is the parent of the link's target, not `S/x`).
  const raw = path.isAbsolute(p) ? p : `${path.resolve(base)}${path.sep}${p}`;
  const parts = raw.split(/[\\/]+/).filter((s) => s !== '');
  let current = path.parse(raw).root;
  for (const part of parts) {
    if (part === '.') continue;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    try {
      current = fs.realpathSync(next);
    } catch {
      // Missing: kept as written (Python's non-strict resolve), and `..` may step back out of it.
      current = next;
    }
  }
  return current;
}

/** True when `child` is strictly inside `parent` (both absolute, resolved). */
export function isStrictlyInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
