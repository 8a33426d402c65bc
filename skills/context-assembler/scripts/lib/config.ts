/**
 * Configuration: `bazinga/skills_config.json`, key `context_engineering`. Every limit, share and
 * weight the assembler uses lives here with its default; references/configuration.md says why
 * each has the value it has. A missing file or key means the defaults; a malformed one is an
 * error naming the file and the key (never silently ignored).
 */
import {
  BazingaError,
  DEFAULT_ARTIFACT_INDEX_BYTES,
  DEFAULT_FILE_LIMITS,
  DEFAULT_INDEX_BUDGET_MS,
  DEFAULT_MEMORY_SETTINGS,
  DEFAULT_REASONING_CONTENT_CHARS,
  jsonErrorAt,
  MAX_ARTIFACT_INDEX_BYTES,
  type RedactionMode,
  type RedactionPolicy,
} from '../../../bazinga-db/scripts/lib/index.ts';
import type { ReasoningLevel } from './contract.ts';
import { PURPOSES, type Purpose } from './core/tiers.ts';

export { ZONES, type Zone } from './vocabulary.ts';
import { ZONES, type Zone } from './vocabulary.ts';

/** A table by model name: `default` answers for a model no other key names (parseConfig keeps it). */
export type ModelTable = { default: number } & Record<string, number>;

export interface Config {
  enable_context_assembler: boolean;
  enable_fts5: boolean;
  /** Packages per agent type; `unknown` for an agent not listed. */
  retrieval_limits: { unknown: number } & Record<string, number>;
  redaction_mode: RedactionMode;
  redaction_allowlist: string[];
  token_safety_margin: number;
  model_context_windows: ModelTable;
  token_factor: ModelTable;
  /** Share of the remaining window per agent type; `other` for an agent not listed. */
  context_budget_share: { other: number } & Record<string, number>;
  zone_thresholds: { emergency: number; wrap_up: number; conservative: number; soft_warning: number };
  /** Summary length per zone that shows packages (Wrap-up and Emergency show none). */
  summary_caps: Record<'Normal' | 'Soft_Warning' | 'Conservative', number>;
  ranking: {
    weights: { priority: number; same_group: number; type_affinity: number; recency: number; relevance: number; scope: number };
    priority_weights: Record<string, number>;
    recency_half_life_hours: number;
    type_affinity: Record<string, Record<string, number>>;
  };
  reasoning: {
    level_budgets: Record<ReasoningLevel, number>;
    relevant_producers: Record<string, string[]>;
    max_per_producer: number;
    max_total: number;
    content_chars: number;
    /** An entry's standing when there is a query: recency (same half-life as packages), relevance, scope. */
    weights: { recency: number; relevance: number; scope: number };
  };
  error_patterns: { min_confidence: number; max: number; solution_chars: number };
  strategies: { max: number; insight_chars: number };
  relevance: {
    /** Bytes of each artifact file that go into the full-text index. */
    artifact_index_bytes: number;
    /** Milliseconds one call may spend indexing a backlog of older rows (the rest waits for later calls). */
    index_budget_ms: number;
    /** Best full-text hits read per request before the exactness check asks for more. */
    candidates: number;
    /** Terms of the task text that are asked for; the rest is ignored. */
    max_query_terms: number;
    /** Most postings (documents per term, summed) a query may ask for; the most common terms go first. */
    max_postings: number;
    /** BM25 weight of each indexed field of a package. */
    column_weights: { summary: number; artifact: number; path: number };
    /** Newest reasoning entries per producer considered besides the full-text hits. */
    reasoning_window: number;
  };
  /** Project memory (bazinga-db's memory commands read these keys too). */
  memory: {
    /** A memory's standing in search-memories and for a spawn: text relevance, importance / 10, recency 1/(1 + days/30), access min(count/10, 1). */
    search_weights: { text: number; importance: number; recency: number; access: number };
    /** Two memories of a type at least this alike are one (save-memory merges the second into the first). */
    dedup_similarity: number;
    /** rehydrate's token budget without --max-tokens (and the session-start hook's). */
    rehydrate_max_tokens: number;
    /** Share of a block's budget its `### Project Memory` section may use at most (0: no section). */
    block_share: number;
    /** Memories a block shows at most (0: no section). */
    block_max: number;
  };
  /** Purpose-driven tiers (core/tiers.ts): each agent's default purpose and each purpose's budget split. */
  purposes: {
    /** The purpose of a spawn that names none, by agent (every iteration of a spawn has its agent's purpose). */
    by_agent: Record<string, Purpose>;
    /** Percent of the block's budget per tier [Tier 1, Tier 2, Tier 3], summing to 100. */
    splits: Record<Purpose, [number, number, number]>;
  };
  /** Caps of the files a user points the tools at (a larger file is refused, never read past the cap). */
  file_limits: {
    /** bazinga-db `save-reasoning --content-file` (bazinga-db reads it from bazinga/skills_config.json). */
    content_file_bytes: number;
    /** The artifact `fetch` prints. */
    artifact_bytes: number;
  };
}

export const DEFAULT_CONFIG: Config = {
  enable_context_assembler: true,
  enable_fts5: true,
  retrieval_limits: {
    developer: 3,
    senior_software_engineer: 5,
    qa_expert: 5,
    tech_lead: 5,
    investigator: 5,
    requirements_engineer: 5,
    unknown: 3,
  },
  redaction_mode: 'both',
  redaction_allowlist: [],
  token_safety_margin: 0.15,
  model_context_windows: { haiku: 200000, sonnet: 200000, opus: 200000, default: 200000 },
  token_factor: { default: DEFAULT_MEMORY_SETTINGS.tokenFactor },
  context_budget_share: {
    developer: 0.2,
    senior_software_engineer: 0.25,
    qa_expert: 0.3,
    tech_lead: 0.4,
    investigator: 0.35,
    requirements_engineer: 0.3,
    other: 0.2,
  },
  zone_thresholds: { emergency: 95, wrap_up: 85, conservative: 75, soft_warning: 60 },
  summary_caps: { Normal: 400, Soft_Warning: 200, Conservative: 100 },
  ranking: {
    weights: { priority: 4, same_group: 2, type_affinity: 1.5, recency: 1, relevance: 12, scope: 3 },
    priority_weights: { critical: 4, high: 3, medium: 2, low: 1 },
    recency_half_life_hours: 72,
    type_affinity: {
      failures: { developer: 1, senior_software_engineer: 1, investigator: 0.75, qa_expert: 0.5, tech_lead: 0.25, requirements_engineer: 0 },
      research: { developer: 1, senior_software_engineer: 0.75, requirements_engineer: 0.75, investigator: 0.5, qa_expert: 0.25, tech_lead: 0.25 },
      decisions: { tech_lead: 1, senior_software_engineer: 0.75, developer: 0.5, qa_expert: 0.5, investigator: 0.5, requirements_engineer: 0.5 },
      handoff: { qa_expert: 1, tech_lead: 1, senior_software_engineer: 0.5, investigator: 0.5, developer: 0.25, requirements_engineer: 0.25 },
      investigation: { investigator: 1, senior_software_engineer: 1, developer: 0.75, tech_lead: 0.5, qa_expert: 0.25, requirements_engineer: 0.25 },
    },
  },
  reasoning: {
    level_budgets: { minimal: 400, medium: 800, full: 1200 },
    relevant_producers: {
      qa_expert: ['developer', 'senior_software_engineer'],
      tech_lead: ['developer', 'senior_software_engineer', 'qa_expert'],
      senior_software_engineer: ['developer'],
      investigator: ['developer', 'senior_software_engineer', 'qa_expert'],
      developer: ['developer', 'qa_expert', 'tech_lead'],
      requirements_engineer: ['developer', 'tech_lead'],
    },
    max_per_producer: 2,
    max_total: 5,
    content_chars: DEFAULT_REASONING_CONTENT_CHARS,
    weights: { recency: 1, relevance: 2, scope: 1 },
  },
  error_patterns: { min_confidence: 0.7, max: 3, solution_chars: 300 },
  strategies: { max: 3, insight_chars: 300 },
  relevance: {
    artifact_index_bytes: DEFAULT_ARTIFACT_INDEX_BYTES,
    index_budget_ms: DEFAULT_INDEX_BUDGET_MS,
    candidates: 160,
    max_query_terms: 32,
    max_postings: 1000,
    column_weights: { summary: 1, artifact: 0.5, path: 0.5 },
    reasoning_window: 10,
  },
  // bazinga-db reads these keys too: one default each, its own (settings.ts).
  memory: {
    search_weights: { ...DEFAULT_MEMORY_SETTINGS.searchWeights },
    dedup_similarity: DEFAULT_MEMORY_SETTINGS.dedupSimilarity,
    rehydrate_max_tokens: DEFAULT_MEMORY_SETTINGS.rehydrateMaxTokens,
    block_share: 0.1,
    block_max: 3,
  },
  purposes: {
    by_agent: {
      developer: 'implementation',
      senior_software_engineer: 'implementation',
      qa_expert: 'review',
      tech_lead: 'review',
      investigator: 'design',
      requirements_engineer: 'design',
    },
    splits: {
      design: [50, 30, 20],
      implementation: [60, 25, 15],
      review: [55, 30, 15],
      handoff: [70, 20, 10],
      subagent: [65, 25, 10],
    },
  },
  file_limits: { content_file_bytes: DEFAULT_FILE_LIMITS.content_file_bytes, artifact_bytes: DEFAULT_FILE_LIMITS.artifact_bytes },
};

/**
 * A broken config file: CONFIG, naming the file and the key (`context_engineering.<key>`). A
 * problem of the whole file ends with the path (`config file not valid JSON at line 1, column 1:
 * /etc/passwd`): every printed text is redacted, and a path whose last name reads like a secret's
 * key (`…/passwd: …`) would hide the words after it.
 */
export function configError(file: string, key: string, problem: string): BazingaError {
  const message = key ? `${file}: context_engineering.${key}: ${problem}` : `config file ${problem}: ${file}`;
  return new BazingaError('CONFIG', message, { file, key });
}

type Shape = 'purpose' | 'split' | 'boolean' | 'number' | 'nonnegative' | 'fraction' | 'unit' | 'positive' | 'count' | 'positive-int' | 'index-bytes' | 'string[]' | 'regex[]' | 'mode' | Shape[] | { [k: string]: Shape } | `map:${string}`;

/** What each key must look like; `map:<shape>` is an object of arbitrary keys with values of that shape. */
const SCHEMA: { [k: string]: Shape } = {
  enable_context_assembler: 'boolean',
  enable_fts5: 'boolean',
  retrieval_limits: 'map:count',
  redaction_mode: 'mode',
  redaction_allowlist: 'regex[]',
  token_safety_margin: 'fraction',
  model_context_windows: 'map:positive',
  token_factor: 'map:positive',
  context_budget_share: 'map:fraction',
  zone_thresholds: { emergency: 'number', wrap_up: 'number', conservative: 'number', soft_warning: 'number' },
  summary_caps: { Normal: 'count', Soft_Warning: 'count', Conservative: 'count' },
  ranking: {
    // recency must not be negative: the database returns the newest packages of each bucket first.
    weights: { priority: 'number', same_group: 'number', type_affinity: 'number', recency: 'nonnegative', relevance: 'nonnegative', scope: 'nonnegative' },
    priority_weights: 'map:number',
    recency_half_life_hours: 'positive',
    type_affinity: 'map:map:unit',
  },
  reasoning: {
    level_budgets: 'map:count',
    relevant_producers: 'map:string[]',
    max_per_producer: 'count',
    max_total: 'count',
    content_chars: 'count',
    weights: { recency: 'nonnegative', relevance: 'nonnegative', scope: 'nonnegative' },
  },
  error_patterns: { min_confidence: 'unit', max: 'count', solution_chars: 'count' },
  strategies: { max: 'count', insight_chars: 'count' },
  relevance: {
    artifact_index_bytes: 'index-bytes',
    index_budget_ms: 'count',
    candidates: 'positive-int',
    max_query_terms: 'positive-int',
    max_postings: 'positive-int',
    column_weights: { summary: 'nonnegative', artifact: 'nonnegative', path: 'nonnegative' },
    reasoning_window: 'count',
  },
  memory: {
    search_weights: { text: 'nonnegative', importance: 'nonnegative', recency: 'nonnegative', access: 'nonnegative' },
    dedup_similarity: 'unit',
    rehydrate_max_tokens: 'positive-int',
    block_share: 'fraction',
    block_max: 'count',
  },
  purposes: {
    by_agent: 'map:purpose',
    splits: { design: 'split', implementation: 'split', review: 'split', handoff: 'split', subagent: 'split' },
  },
  file_limits: { content_file_bytes: 'positive-int', artifact_bytes: 'positive-int' },
};

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? `"${v}"` : `${typeof v} ${JSON.stringify(v)}`;
}

function check(shape: Shape, value: unknown, key: string, file: string, warn: (m: string) => void): void {
  const fail = (expected: string) => {
    throw configError(file, key, `expected ${expected}, got ${describe(value)}`);
  };
  if (typeof shape === 'string' && shape.startsWith('map:')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('an object');
    for (const [k, v] of Object.entries(value as object)) check(shape.slice(4) as Shape, v, `${key}.${k}`, file, warn);
    return;
  }
  switch (shape) {
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail('a number');
      return;
    case 'nonnegative':
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) fail('a number ≥ 0');
      return;
    case 'fraction':
      if (typeof value !== 'number' || !(value >= 0 && value < 1)) fail('a number from 0 up to (not including) 1');
      return;
    case 'unit':
      if (typeof value !== 'number' || !(value >= 0 && value <= 1)) fail('a number from 0 to 1');
      return;
    case 'positive':
      if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) fail('a positive number');
      return;
    case 'count':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail('a non-negative integer');
      return;
    case 'index-bytes':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_ARTIFACT_INDEX_BYTES) {
        fail(`an integer from 0 to ${MAX_ARTIFACT_INDEX_BYTES}`);
      }
      return;
    case 'positive-int':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) fail('a positive integer');
      return;
    case 'string[]':
      if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) fail('an array of strings');
      return;
    case 'regex[]':
      if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) fail('an array of regular expressions (strings)');
      (value as string[]).forEach((src, i) => {
        try {
          new RegExp(src);
        } catch (err) {
          throw configError(file, `${key}[${i}]`, `invalid regular expression: ${(err as Error).message}`);
        }
      });
      return;
    case 'purpose':
      if (!(PURPOSES as readonly unknown[]).includes(value)) fail(`one of ${PURPOSES.map((p) => `"${p}"`).join(', ')}`);
      return;
    case 'split': {
      const ok = Array.isArray(value) && value.length === 3 && value.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0);
      if (!ok) fail('[tier1, tier2, tier3]: three numbers ≥ 0 (percent)');
      const sum = (value as number[]).reduce((a, b) => a + b, 0);
      if (Math.abs(sum - 100) > 1e-9) throw configError(file, key, `the three percentages must add up to 100, got ${sum}`);
      return;
    }
    case 'mode':
      if (value !== 'pattern_only' && value !== 'entropy' && value !== 'both') fail('one of "pattern_only", "entropy", "both"');
      return;
  }
  if (Array.isArray(shape)) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('an object');
  for (const [k, v] of Object.entries(value as object)) {
    // Own keys only: `constructor` or `__proto__` in a config names no key (it would find Object's).
    const sub = Object.hasOwn(shape as object, k) ? (shape as { [k: string]: Shape })[k] : undefined;
    if (sub === undefined) warn(`${file}: unknown key context_engineering.${key ? `${key}.` : ''}${k} (ignored)`);
    else check(sub, v, key ? `${key}.${k}` : k, file, warn);
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Deep merge of plain objects; arrays and scalars from `over` replace those of `base`. */
function merge<T>(base: T, over: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    // A `__proto__` key (reported as unknown) must not become the merged object's prototype.
    if (k === '__proto__') continue;
    out[k] = merge(Object.hasOwn(base as object, k) ? (base as Record<string, unknown>)[k] : undefined, v);
  }
  return out as T;
}

/**
 * Validates the parsed text of a config file and merges it over the defaults. `text` undefined
 * means the file does not exist (defaults). Pure: the caller reads the file.
 */
export function parseConfig(text: string | undefined, file: string, warn: (m: string) => void = () => {}): Config {
  if (text === undefined) return DEFAULT_CONFIG;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Where, never what: the file may be anything (`--config /etc/passwd`), and its bytes are not ours to print.
    throw configError(file, '', `not valid JSON${jsonErrorAt(text)}`);
  }
  if (!isPlainObject(parsed)) throw configError(file, '', `expected a JSON object, got ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`}`);
  const section = parsed.context_engineering;
  if (section === undefined) return DEFAULT_CONFIG;
  check(SCHEMA, section, '', file, warn);
  const config = merge(DEFAULT_CONFIG, section);
  const t = config.zone_thresholds;
  if (!(t.soft_warning < t.conservative && t.conservative < t.wrap_up && t.wrap_up < t.emergency)) {
    throw configError(file, 'zone_thresholds', 'must rise: soft_warning < conservative < wrap_up < emergency');
  }
  return config;
}

/** The purpose of a request: its --purpose, else its agent's (purposes.by_agent), else subagent. */
export function purposeOf(config: Config, agent: string, explicit: Purpose | null | undefined): Purpose {
  return explicit ?? config.purposes.by_agent[agent] ?? 'subagent';
}

/** The purpose's budget split as fractions, Tier 1 first. */
export function splitOf(config: Config, purpose: Purpose): [number, number, number] {
  const [a, b, c] = config.purposes.splits[purpose];
  return [a / 100, b / 100, c / 100];
}

/** The entry of `table` whose key is the longest one contained in `model` (case-insensitive), else `default`. */
export function lookupByModel(table: ModelTable, model: string): number {
  const m = model.toLowerCase();
  const key = Object.keys(table)
    .filter((k) => k !== 'default' && m.includes(k.toLowerCase()))
    .sort((a, b) => b.length - a.length || (a < b ? -1 : 1))[0];
  return (key === undefined ? undefined : table[key]) ?? table.default;
}

/** The redaction policy a configuration asks for (its regexes were checked by parseConfig). */
export function redactionPolicyOf(config: Config): RedactionPolicy {
  // One object per config: a redaction memo keys on the policy object, so the items and the printed document share it.
  let policy = policies.get(config);
  if (policy === undefined) {
    policy = { mode: config.redaction_mode, allowlist: config.redaction_allowlist.map((src) => new RegExp(src, 'g')) };
    policies.set(config, policy);
  }
  return policy;
}
const policies = new WeakMap<Config, RedactionPolicy>();
