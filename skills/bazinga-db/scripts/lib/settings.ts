/**
 * The settings bazinga-db takes from the project's configuration, `bazinga/skills_config.json`,
 * section `context_engineering` — the keys the context-assembler reads — so that a text is
 * indexed and redacted alike whichever tool writes it:
 *   relevance.artifact_index_bytes  how much of each artifact file is indexed;
 *   relevance.index_budget_ms       how long one call may spend indexing a backlog of older rows;
 *   redaction_mode                  pattern_only | entropy | both, at ingest as at emit;
 *   redaction_allowlist             regexes whose matches are stored and printed as written;
 *   reasoning.content_chars         how much of a reasoning entry a block shows (its count is stored);
 *   file_limits.content_file_bytes  the cap of `save-reasoning --content-file`;
 *   memory.*                        project memory: search weights, dedup similarity, rehydrate budget.
 * Read leniently: the assembler reports a malformed file; here a missing, unreadable or invalid
 * value means the default (an allowlist entry that is not a valid regex is skipped). A path that is
 * not a regular file (a FIFO, a device, a directory), or a file over MAX_CONFIG_BYTES, is the one
 * exception: a CONFIG error, as in the assembler (readConfigFile), never a wait for a writer that
 * does not come nor a read without end.
 */
import path from 'node:path';
import { BazingaError } from './errors.ts';
import { describeRefusal, readRegularFile } from './files.ts';
import { DEFAULT_POLICY, REDACTION_MODES, type RedactionMode, type RedactionPolicy } from './redact.ts';
import { DEFAULT_REASONING_CONTENT_CHARS } from './shown.ts';
import { DEFAULT_SEARCH_WEIGHTS, type SearchWeights } from './memory.ts';
import { DEFAULT_ARTIFACT_INDEX_BYTES, DEFAULT_INDEX_BUDGET_MS, MAX_ARTIFACT_INDEX_BYTES, MAX_INDEX_BUDGET_MS } from './searchLimits.ts';

/** A configuration file larger than this is refused (CONFIG): the shipped one is 3 KB. */
export const MAX_CONFIG_BYTES = 1_048_576;

/** Default caps of the files a user may point the tools at; `context_engineering.file_limits` raises them. */
export const DEFAULT_FILE_LIMITS = {
  /** `save-reasoning --content-file`: one agent's reasoning is a few kilobytes. */
  content_file_bytes: 1_048_576,
  /** An artifact `fetch` prints whole (redacted): research notes, failure reports, logs. */
  artifact_bytes: 8_388_608,
} as const;

export interface IndexSettings {
  artifactBytes: number;
  budgetMs: number;
}

const whole = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback);

/**
 * The text of a configuration file, or undefined when there is none (ENOENT). Anything but a
 * regular file (symlinks followed) is a CONFIG error naming the file and what it is: reading a
 * FIFO would wait for a writer forever. So is a file over MAX_CONFIG_BYTES (`<file>: is N bytes,
 * over the cap of 1048576 bytes`). Checked before opening (a device is never opened) and again on
 * the descriptor, opened without blocking, and read to at most the cap + 1 byte (files.ts). A
 * file that cannot be read for another reason (permissions) is an Error naming it.
 */
export function readConfigFile(file: string): string | undefined {
  const read = readRegularFile(file, MAX_CONFIG_BYTES);
  if (read.ok) return read.bytes.toString('utf8');
  const { refusal } = read;
  if (refusal.reason === 'missing') return undefined;
  if (refusal.reason === 'unreadable') throw new Error(`${file}: ${describeRefusal(refusal)}`);
  throw new BazingaError('CONFIG', `${file}: ${describeRefusal(refusal)}`, { file, key: '' });
}

/**
 * The `context_engineering` section, or {} when there is none or it cannot be read or parsed.
 * Throws CONFIG when the path is not a regular file or is over the cap (see readConfigFile).
 */
function configSection(projectRoot: string): Record<string, unknown> {
  const file = path.join(projectRoot, 'bazinga', 'skills_config.json');
  let text: string | undefined;
  try {
    text = readConfigFile(file);
  } catch (err) {
    if (err instanceof BazingaError) throw err;
    return {};
  }
  if (text === undefined) return {};
  try {
    const parsed = JSON.parse(text) as { context_engineering?: unknown };
    const section = parsed?.context_engineering;
    return section !== null && typeof section === 'object' && !Array.isArray(section) ? (section as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The cap of `save-reasoning --content-file`: `context_engineering.file_limits.content_file_bytes`
 * (a positive integer), else DEFAULT_FILE_LIMITS.content_file_bytes.
 */
export function contentFileBytes(projectRoot: string): number {
  const limits = configSection(projectRoot).file_limits;
  const l = limits !== null && typeof limits === 'object' ? (limits as Record<string, unknown>) : {};
  const cap = whole(l.content_file_bytes, DEFAULT_FILE_LIMITS.content_file_bytes);
  return cap > 0 ? cap : DEFAULT_FILE_LIMITS.content_file_bytes;
}

export function indexSettings(projectRoot: string): IndexSettings {
  const defaults = { artifactBytes: DEFAULT_ARTIFACT_INDEX_BYTES, budgetMs: DEFAULT_INDEX_BUDGET_MS };
  const relevance = configSection(projectRoot).relevance;
  const r = relevance !== null && typeof relevance === 'object' ? (relevance as Record<string, unknown>) : {};
  const bytes = whole(r.artifact_index_bytes, defaults.artifactBytes);
  const budget = whole(r.index_budget_ms, defaults.budgetMs);
  return { artifactBytes: bytes > MAX_ARTIFACT_INDEX_BYTES ? defaults.artifactBytes : bytes, budgetMs: Math.min(budget, MAX_INDEX_BUDGET_MS) };
}

/** Whether the project has relevance on (`context_engineering.enable_fts5`, true unless set false). */
export function relevanceEnabled(projectRoot: string): boolean {
  return configSection(projectRoot).enable_fts5 !== false;
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

/** Project memory's settings (`context_engineering.memory`), as bazinga-db's memory commands read them. */
export interface MemorySettings {
  searchWeights: SearchWeights;
  /** Two memories of a type at least this alike (0–1) are one: the second merges into the first. */
  dedupSimilarity: number;
  /** The token budget of `rehydrate` when --max-tokens is not given (and of the session-start hook). */
  rehydrateMaxTokens: number;
  /** cl100k counts are multiplied by this (context_engineering.token_factor.default, as the assembler counts). */
  tokenFactor: number;
}

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = { searchWeights: DEFAULT_SEARCH_WEIGHTS, dedupSimilarity: 0.85, rehydrateMaxTokens: 2000, tokenFactor: 1.2 };

/** `context_engineering.memory`, each value checked leniently (a bad one means its default; the assembler names it). */
export function memorySettings(projectRoot: string): MemorySettings {
  const section = configSection(projectRoot);
  const memory = section.memory;
  const factors = section.token_factor !== null && typeof section.token_factor === 'object' ? (section.token_factor as Record<string, unknown>) : {};
  const m = memory !== null && typeof memory === 'object' ? (memory as Record<string, unknown>) : {};
  const unit = (v: unknown, fallback: number) => (typeof v === 'number' && v >= 0 && v <= 1 ? v : fallback);
  const weight = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback);
  const w = m.search_weights !== null && typeof m.search_weights === 'object' ? (m.search_weights as Record<string, unknown>) : {};
  const d = DEFAULT_MEMORY_SETTINGS;
  const tokens = whole(m.rehydrate_max_tokens, d.rehydrateMaxTokens);
  return {
    searchWeights: {
      text: weight(w.text, d.searchWeights.text),
      importance: weight(w.importance, d.searchWeights.importance),
      recency: weight(w.recency, d.searchWeights.recency),
      access: weight(w.access, d.searchWeights.access),
    },
    dedupSimilarity: unit(m.dedup_similarity, d.dedupSimilarity),
    rehydrateMaxTokens: tokens > 0 ? tokens : d.rehydrateMaxTokens,
    tokenFactor: typeof factors.default === 'number' && factors.default > 0 && Number.isFinite(factors.default) ? factors.default : d.tokenFactor,
  };
}
