/** fetch.ts behind the shell: find the package, check its path, read, redact, shorten. */
import path from 'node:path';
import {
  BazingaError,
  describeRefusal,
  findPackage,
  invalid,
  isInsideAny,
  locateArtifact,
  markRunComplete,
  notFound,
  parseInteger,
  printError,
  readRegularFile,
  realDir,
  usage,
} from '../../../bazinga-db/scripts/lib/index.ts';
import { lookupByModel, redactionPolicyOf } from './config.ts';
import { guardIo } from './print.ts';
import { excerpt } from './core/excerpt.ts';
import { makeTokenCounter } from './tokens.ts';
import { DEFAULT_MODEL, parseFlags } from './params.ts';
import { loadEnvironment, makeDeps, type ScriptIo } from './shell.ts';

const FLAGS = {
  '--max-tokens': 'string',
  '--format': 'string',
  '--db': 'string',
  '--project-root': 'string',
  '--config': 'string',
  '--help': 'bool',
} as const;

const HELP = `fetch.ts: print a context package's artifact (redacted, optionally shortened)

Usage: tsx fetch.ts <package_id> [--max-tokens N] [--format text|json] [--db PATH] [--project-root DIR] [--config PATH]

  --max-tokens N   keep about 30% of N tokens from the beginning and 20% from the end, mark the middle
  --format F       text (default) or json
`;

/** The stored `file_path` as a message shows it: relative to the project root where it lies inside. */
function shownPath(projectRoot: string, filePath: string): string {
  if (!path.isAbsolute(filePath)) return filePath;
  const rel = path.relative(projectRoot, filePath);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? filePath : rel.split(path.sep).join('/');
}

/**
 * The artifact's real path when fetch may serve it: a regular file whose real path lies inside
 * `<root>/bazinga/artifacts/`, itself resolving inside the project root (symlinks of the file, the
 * folder and its parents resolved). A missing folder or file is NOT_FOUND naming the path relative
 * to the project root; anything else is REFUSED naming the rule.
 */
export function resolveArtifact(projectRoot: string, filePath: string): string {
  const where = locateArtifact(projectRoot, filePath);
  const shown = shownPath(projectRoot, filePath);
  switch (where.kind) {
    case 'file':
      return where.path;
    case 'missing':
      throw notFound(`artifact file not found: ${shown}${where.folder ? ' (the project has no bazinga/artifacts/ folder)' : ''}`);
    case 'outside':
      throw new BazingaError(
        'REFUSED',
        where.folder
          ? `refused: bazinga/artifacts resolves to ${where.real}, outside the project root, so ${shown} is not served; fetch serves only files inside the project root`
          : `refused: ${shown} resolves to ${where.real}, outside bazinga/artifacts/; fetch serves only files inside it`,
      );
    case 'not-file':
      throw new BazingaError('REFUSED', `refused: ${shown} is ${where.what}, not a regular file`);
  }
}

/**
 * The artifact's text: at most `cap` bytes (`file_limits.artifact_bytes`), read without blocking
 * and never past the cap (files.ts); a file gone or swapped since it was located is named as such.
 */
export function readArtifact(projectRoot: string, filePath: string, cap: number): string {
  const file = resolveArtifact(projectRoot, filePath);
  // Checked again on what was opened: a folder swapped for a link after resolveArtifact looked is caught.
  const artifacts = realDir(path.join(projectRoot, 'bazinga', 'artifacts'));
  const read = readRegularFile(file, cap, (opened) =>
    artifacts !== undefined && isInsideAny(opened, [artifacts]) ? undefined : `resolves to ${opened} once opened, outside bazinga/artifacts/; fetch serves only files inside it`,
  );
  if (read.ok) return read.bytes.toString('utf8');
  const shown = shownPath(projectRoot, filePath);
  if (read.refusal.reason === 'missing') throw notFound(`artifact file not found: ${shown}`);
  const raise = read.refusal.reason === 'too-large' ? ' (context_engineering.file_limits.artifact_bytes raises it)' : '';
  throw new BazingaError('REFUSED', `refused: ${shown} ${describeRefusal(read.refusal)}${raise}`);
}

export function runFetch(rawIo: ScriptIo): number {
  const guarded = guardIo(rawIo);
  const io = guarded.io;
  let id: number;
  let maxTokens: number | null;
  let format: 'text' | 'json';
  let flags;
  try {
    flags = parseFlags(io.argv, FLAGS, 1);
    if (flags.bools.has('--help')) {
      io.stdout(HELP);
      return 0;
    }
    const idText = flags.positionals[0];
    if (idText === undefined) throw usage('fetch.ts requires <package_id>');
    id = parseInteger('package_id', idText, 1);
    const maxText = flags.values.get('--max-tokens');
    maxTokens = maxText === undefined ? null : parseInteger('--max-tokens', maxText, 1);
    const f = flags.values.get('--format') ?? 'text';
    if (f !== 'text' && f !== 'json') throw invalid(`--format must be one of text, json, got '${f}'`);
    format = f;
  } catch (err) {
    return printError(io.stderr, err, { exit: 2 });
  }
  let close = () => {};
  try {
    const env = loadEnvironment(flags, io);
    guarded.setPolicy(redactionPolicyOf(env.config));
    const made = makeDeps(env, DEFAULT_MODEL, flags, (m) => io.stderr(`⚠ ${m}\n`), guarded.redactString);
    close = made.close;
    const pkg = findPackage(made.deps.db(), id);
    if (!pkg) throw notFound(`Context package not found: ${id}`);
    const content = made.deps.redact(readArtifact(env.projectRoot, pkg.file_path, env.config.file_limits.artifact_bytes));
    // Artifact lines are counted directly: caching them would fill the count cache with one-off text.
    const counter = makeTokenCounter(lookupByModel(env.config.token_factor, DEFAULT_MODEL));
    const result = maxTokens === null ? { text: content, truncated: false, omitted_lines: 0 } : excerpt(content, maxTokens, counter);
    if (format === 'text') io.stdout(result.text.endsWith('\n') ? result.text : result.text + '\n');
    else {
      io.stdout(
        JSON.stringify(
          {
            id,
            file_path: pkg.file_path,
            content: result.text,
            truncated: result.truncated,
            omitted_lines: result.omitted_lines,
            tokens: counter.count(result.text),
          },
          null,
          2,
        ) + '\n',
      );
    }
    markRunComplete();
    return 0;
  } catch (err) {
    return printError(io.stderr, err, { exit: 1 });
  } finally {
    close();
  }
}
