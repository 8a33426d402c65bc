/**
 * The settings bazinga-db takes from the project's configuration, `bazinga/skills_config.json`,
 * section `context_engineering` — the keys the context-assembler reads — so that a text is
 * indexed and redacted alike whichever tool writes it:
 *   relevance.artifact_index_bytes  how much of each artifact file is indexed;
 *   relevance.index_budget_ms       how long one call may spend indexing a backlog of older rows;
 *   redaction_mode                  pattern_only | entropy | both, at ingest as at emit;
 *   redaction_allowlist             regexes whose matches are stored and printed as written;
 *   reasoning.content_chars         how much of a reasoning entry a block shows (its count is stored).
 * Read leniently: the assembler reports a malformed file; here a missing, unreadable or invalid
 * value means the default (an allowlist entry that is not a valid regex is skipped). A path that is
 * not a regular file (a FIFO, a device, a directory) is the one exception: a CONFIG error, as in
 * the assembler (readConfigFile), never a wait for a writer that does not come.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readHead } from './artifacts.ts';
import { BazingaError } from './errors.ts';
import { DEFAULT_POLICY, REDACTION_MODES, type RedactionMode, type RedactionPolicy } from './redact.ts';
import { DEFAULT_REASONING_CONTENT_CHARS } from './shown.ts';
import { DEFAULT_ARTIFACT_INDEX_BYTES, DEFAULT_INDEX_BUDGET_MS, MAX_ARTIFACT_INDEX_BYTES } from './repo/searchIndex.ts';

/** A configuration file larger than this is not read here. */
const MAX_CONFIG_BYTES = 1_048_576;

export interface IndexSettings {
  artifactBytes: number;
  budgetMs: number;
}

const whole = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback);

/** What a file system entry that is not a regular file is, for a message: `a FIFO`, `a directory`, … */
function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

/** CONFIG unless `st` is a regular file: the message names the file and what it is. */
function assertRegularConfig(file: string, st: fs.Stats): void {
  if (!st.isFile()) throw new BazingaError('CONFIG', `${file}: is ${kindOf(st)}, not a regular file`, { file, key: '' });
}

/**
 * The text of a configuration file, or undefined when there is none (ENOENT). Anything but a
 * regular file (symlinks followed) is a CONFIG error naming the file and what it is: reading a
 * FIFO would wait for a writer forever. Checked before opening (a device is never opened) and
 * again on the descriptor, opened without blocking, so a file swapped in between is caught too.
 * Other I/O errors are thrown as they come.
 */
export function readConfigFile(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  assertRegularConfig(file, st);
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    assertRegularConfig(file, fs.fstatSync(fd));
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The `context_engineering` section, or {} when there is none or it cannot be read. Throws CONFIG
 * when the path is not a regular file (see readConfigFile).
 */
function configSection(projectRoot: string): Record<string, unknown> {
  const file = path.join(projectRoot, 'bazinga', 'skills_config.json');
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return {};
  }
  assertRegularConfig(file, st);
  try {
    if (st.size > MAX_CONFIG_BYTES) return {};
    const parsed = JSON.parse(readHead(file, MAX_CONFIG_BYTES)) as { context_engineering?: unknown };
    const section = parsed?.context_engineering;
    return section !== null && typeof section === 'object' && !Array.isArray(section) ? (section as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function indexSettings(projectRoot: string): IndexSettings {
  const defaults = { artifactBytes: DEFAULT_ARTIFACT_INDEX_BYTES, budgetMs: DEFAULT_INDEX_BUDGET_MS };
  const relevance = configSection(projectRoot).relevance;
  const r = relevance !== null && typeof relevance === 'object' ? (relevance as Record<string, unknown>) : {};
  const bytes = whole(r.artifact_index_bytes, defaults.artifactBytes);
  return { artifactBytes: bytes > MAX_ARTIFACT_INDEX_BYTES ? defaults.artifactBytes : bytes, budgetMs: whole(r.index_budget_ms, defaults.budgetMs) };
}

/** Characters of a reasoning entry's content a block shows (the assembler's default when the file says nothing). */
export function reasoningContentChars(projectRoot: string): number {
  const reasoning = configSection(projectRoot).reasoning;
  const r = reasoning !== null && typeof reasoning === 'object' ? (reasoning as Record<string, unknown>) : {};
  return whole(r.content_chars, DEFAULT_REASONING_CONTENT_CHARS);
}

/** The redaction policy every write applies (the assembler's defaults when the file says nothing). */
export function redactionPolicy(projectRoot: string): RedactionPolicy {
  const section = configSection(projectRoot);
  const mode = REDACTION_MODES.includes(section.redaction_mode as RedactionMode) ? (section.redaction_mode as RedactionMode) : DEFAULT_POLICY.mode;
  const allowlist: RegExp[] = [];
  if (Array.isArray(section.redaction_allowlist)) {
    for (const source of section.redaction_allowlist) {
      if (typeof source !== 'string' || source === '') continue;
      try {
        allowlist.push(new RegExp(source, 'g'));
      } catch {
        // Not a regex: the assembler names it when it loads the file.
      }
    }
  }
  return mode === DEFAULT_POLICY.mode && allowlist.length === 0 ? DEFAULT_POLICY : { mode, allowlist };
}
