/**
 * The settings of the full-text index that live in the project's configuration, under
 * `context_engineering.relevance` in `bazinga/skills_config.json` — the keys the context-assembler
 * reads — so that a package is indexed alike whichever tool indexes it:
 *   artifact_index_bytes  how much of each artifact file is indexed;
 *   index_budget_ms       how long one call may spend indexing a backlog of older rows.
 * Read leniently: the assembler reports a malformed file; here a missing, unreadable or invalid
 * value means the default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readHead } from './artifacts.ts';
import { DEFAULT_ARTIFACT_INDEX_BYTES, DEFAULT_INDEX_BUDGET_MS, MAX_ARTIFACT_INDEX_BYTES } from './repo/searchIndex.ts';

/** A configuration file larger than this is not read here. */
const MAX_CONFIG_BYTES = 1_048_576;

export interface IndexSettings {
  artifactBytes: number;
  budgetMs: number;
}

const whole = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback);

export function indexSettings(projectRoot: string): IndexSettings {
  const defaults = { artifactBytes: DEFAULT_ARTIFACT_INDEX_BYTES, budgetMs: DEFAULT_INDEX_BUDGET_MS };
  const file = path.join(projectRoot, 'bazinga', 'skills_config.json');
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > MAX_CONFIG_BYTES) return defaults;
    const parsed = JSON.parse(readHead(file, MAX_CONFIG_BYTES)) as { context_engineering?: { relevance?: Record<string, unknown> } };
    const r = parsed.context_engineering?.relevance ?? {};
    const bytes = whole(r.artifact_index_bytes, defaults.artifactBytes);
    return { artifactBytes: bytes > MAX_ARTIFACT_INDEX_BYTES ? defaults.artifactBytes : bytes, budgetMs: whole(r.index_budget_ms, defaults.budgetMs) };
  } catch {
    return defaults;
  }
}
