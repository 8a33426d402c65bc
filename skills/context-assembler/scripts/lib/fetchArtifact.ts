/** fetch.ts behind the shell: find the package, check its path, read, redact, shorten. */
import fs from 'node:fs';
import { BazingaError, findPackage, invalid, locateArtifact, markRunComplete, notFound, parseInteger, printError, usage } from '../../../bazinga-db/scripts/lib/index.ts';
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

/** Resolves the artifact path and refuses anything outside <root>/bazinga/artifacts/ (after symlinks). */
export function resolveArtifact(projectRoot: string, filePath: string): string {
  const where = locateArtifact(projectRoot, filePath);
  switch (where.kind) {
    case 'file':
      return where.path;
    case 'missing':
      throw notFound(`artifact file not found: ${filePath}`);
    case 'outside':
      throw new BazingaError('REFUSED', `refused: ${filePath} resolves outside bazinga/artifacts/`);
    case 'not-file':
      throw new BazingaError('REFUSED', `not a regular file: ${filePath}`);
  }
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
    const file = resolveArtifact(env.projectRoot, pkg.file_path);
    const content = made.deps.redact(fs.readFileSync(file, 'utf8'));
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
