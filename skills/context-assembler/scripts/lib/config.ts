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
  DEFAULT_POLICY,
  DEFAULT_REASONING_CONTENT_CHARS,
  jsonErrorAt,
  MAX_ARTIFACT_INDEX_BYTES,
  type RedactionMode,
  type RedactionPolicy,
} from '../../../bazinga-db/scripts/lib/pure.ts';
import type { ReasoningLevel } from './vocabulary.ts';
import { PURPOSES, type Purpose } from './core/tiers.ts';
import { STANDING_CHOICES, type StandingChoice, type StandingRules } from './vocabulary.ts';

export { ZONES, type Zone } from './vocabulary.ts';

/** A standing's choice by agent: `default` answers for an agent no other key names. */
export type StandingTable = { default: StandingChoice } & Record<string, StandingChoice>;

/** A table by model name: `default` answers for a model no other key names (parseConfig keeps it). */
export type ModelTable = { default: number } & Record<string, number>;

type Shape = 'purpose' | 'split' | 'boolean' | 'number' | 'nonnegative' | 'fraction' | 'unit' | 'positive' | 'count' | 'positive-int' | 'index-bytes' | 'string[]' | 'regex[]' | 'mode' | 'standing' | `map:${string}`;

/** One configurable key: what its value must look like (`map:<shape>`: an object of any keys with values of that shape) and its default. */
class Key<T> {
  constructor(
    readonly shape: Shape,
    readonly value: T,
  ) {}
}
const key = <T>(shape: Shape, value: T): Key<T> => new Key(shape, value);

type Declaration = { readonly [k: string]: Key<unknown> | Declaration };
type ValuesOf<D> = { -readonly [K in keyof D]: D[K] extends Key<infer T> ? T : ValuesOf<D[K]> };
type ShapesOf = { [k: string]: Shape | ShapesOf };

/**
 * Every key of `context_engineering`, declared once: its shape and its default. The Config type,
 * DEFAULT_CONFIG and the checks parseConfig runs all come from this tree.
 */
const DECLARED = {
  enable_context_assembler: key('boolean', true),
  enable_fts5: key('boolean', true),
  /** Packages per agent type; `unknown` for an agent not listed. */
  retrieval_limits: key<{ unknown: number } & Record<string, number>>('map:count', {
    developer: 3,
    senior_software_engineer: 5,
    qa_expert: 5,
    tech_lead: 5,
    investigator: 5,
    requirements_engineer: 5,
    unknown: 3,
  }),
  redaction_mode: key<RedactionMode>('mode', DEFAULT_POLICY.mode),
  redaction_allowlist: key<string[]>('regex[]', []),
  token_safety_margin: key('fraction', 0.15),
  model_context_windows: key<ModelTable>('map:positive', { haiku: 200000, sonnet: 200000, opus: 200000, default: 200000 }),
  token_factor: key<ModelTable>('map:positive', { default: DEFAULT_MEMORY_SETTINGS.tokenFactor }),
  /** Share of the remaining window per agent type; `other` for an agent not listed. */
  context_budget_share: key<{ other: number } & Record<string, number>>('map:fraction', {
    developer: 0.2,
    senior_software_engineer: 0.25,
    qa_expert: 0.3,
    tech_lead: 0.4,
    investigator: 0.35,
    requirements_engineer: 0.3,
    other: 0.2,
  }),
  zone_thresholds: { emergency: key('number', 95), wrap_up: key('number', 85), conservative: key('number', 75), soft_warning: key('number', 60) },
  /** Summary length per zone that shows packages (Wrap-up and Emergency show none). */
  summary_caps: { Normal: key('count', 400), Soft_Warning: key('count', 200), Conservative: key('count', 100) },
  ranking: {
    // recency must not be negative: the database returns the newest packages of each bucket first.
    weights: {
      priority: key('number', 4),
      same_group: key('number', 2),
      type_affinity: key('number', 1.5),
      recency: key('nonnegative', 1),
      relevance: key('nonnegative', 100),
      scope: key('nonnegative', 3),
      /** With a query: times the paths signal in [0, 1]: the query terms found in a package's artifact file path and the paths its artifact names (the code it is about), each weighed by its rarity there. */
      paths: key('nonnegative', 25),
      /** With a query: added to a package that matches it (relevance at least match_threshold) or falls under the scope; with the other weights' range (at most 30.5 without it, plus the paths term), one that does neither ranks below every one that does unless the task names its paths. */
      match: key('nonnegative', 30),
      /** Added to a package whose consumer list names the agent: above an otherwise equal one by a whole recency range, never above a higher priority (4 a level); a package naming other agents still shows. */
      designated: key('nonnegative', 1),
    },
    /** The relevance (of the request's best match, 1) from which a package counts as matching the task. */
    match_threshold: key('unit', 0.1),
    priority_weights: key<Record<string, number>>('map:number', { critical: 4, high: 3, medium: 2, low: 1 }),
    recency_half_life_hours: key('positive', 72),
    type_affinity: key<Record<string, Record<string, number>>>('map:map:unit', {
      failures: { developer: 1, senior_software_engineer: 1, investigator: 0.75, qa_expert: 0.5, tech_lead: 0.25, requirements_engineer: 0 },
      research: { developer: 1, senior_software_engineer: 0.75, requirements_engineer: 0.75, investigator: 0.5, qa_expert: 0.25, tech_lead: 0.25 },
      decisions: { tech_lead: 1, senior_software_engineer: 0.75, developer: 0.5, qa_expert: 0.5, investigator: 0.5, requirements_engineer: 0.5 },
      handoff: { qa_expert: 1, tech_lead: 1, senior_software_engineer: 0.5, investigator: 0.5, developer: 0.25, requirements_engineer: 0.25 },
      investigation: { investigator: 1, senior_software_engineer: 1, developer: 0.75, tech_lead: 0.5, qa_expert: 0.25, requirements_engineer: 0.25 },
    }),
  },
  reasoning: {
    level_budgets: key<Record<ReasoningLevel, number>>('map:count', { minimal: 400, medium: 800, full: 1200 }),
    relevant_producers: key<Record<string, string[]>>('map:string[]', {
      qa_expert: ['developer', 'senior_software_engineer'],
      tech_lead: ['developer', 'senior_software_engineer', 'qa_expert'],
      senior_software_engineer: ['developer'],
      investigator: ['developer', 'senior_software_engineer', 'qa_expert'],
      developer: ['developer', 'qa_expert', 'tech_lead'],
      requirements_engineer: ['developer', 'tech_lead'],
    }),
    max_per_producer: key('count', 2),
    max_total: key('count', 5),
    content_chars: key('count', DEFAULT_REASONING_CONTENT_CHARS),
    /** An entry's standing when there is a query: recency (same half-life as packages), relevance, scope. */
    weights: { recency: key('nonnegative', 1), relevance: key('nonnegative', 2), scope: key('nonnegative', 1) },
  },
  error_patterns: {
    min_confidence: key('unit', 0.7),
    max: key('count', 3),
    solution_chars: key('count', 300),
    /** Learn patterns from the session's retries before each recording spawn (bazinga-db capture.ts); off: only `capture-outcomes` does. */
    capture: key('boolean', true),
  },
  strategies: { max: key('count', 3), insight_chars: key('count', 300) },
  relevance: {
    /** Bytes of each artifact file that go into the full-text index. */
    artifact_index_bytes: key('index-bytes', DEFAULT_ARTIFACT_INDEX_BYTES),
    /** Milliseconds one call may spend indexing a backlog of older rows (the rest waits for later calls). */
    index_budget_ms: key('count', DEFAULT_INDEX_BUDGET_MS),
    /** Best full-text hits read per request before the exactness check asks for more. */
    candidates: key('positive-int', 160),
    /** Terms of the task text that are asked for; the rest is ignored. */
    max_query_terms: key('positive-int', 32),
    /** Most postings (documents per term, summed) a query may ask for; the most common terms go first. */
    max_postings: key('positive-int', 1000),
    /** BM25 weight of each indexed field of a package. */
    column_weights: { summary: key('nonnegative', 1), artifact: key('nonnegative', 0.5), path: key('nonnegative', 0.5) },
    /** Newest reasoning entries per producer considered besides the full-text hits. */
    reasoning_window: key('count', 10),
  },
  /** Project memory (bazinga-db's memory commands read these keys too, with the same defaults: settings.ts). */
  memory: {
    /** A memory's standing in search-memories and for a spawn: text relevance, importance / 10, recency 1/(1 + days/30), access min(count/10, 1). */
    search_weights: {
      text: key('nonnegative', DEFAULT_MEMORY_SETTINGS.searchWeights.text),
      importance: key('nonnegative', DEFAULT_MEMORY_SETTINGS.searchWeights.importance),
      recency: key('nonnegative', DEFAULT_MEMORY_SETTINGS.searchWeights.recency),
      access: key('nonnegative', DEFAULT_MEMORY_SETTINGS.searchWeights.access),
    },
    /** Two memories of a type at least this alike are one (save-memory merges the second into the first). */
    dedup_similarity: key('unit', DEFAULT_MEMORY_SETTINGS.dedupSimilarity),
    /** rehydrate's token budget without --max-tokens (and the session-start hook's). */
    rehydrate_max_tokens: key('positive-int', DEFAULT_MEMORY_SETTINGS.rehydrateMaxTokens),
    /** Share of a block's budget its `### Project Memory` section may use at most (0: no section). */
    block_share: key('fraction', 0.1),
    /** Memories a block shows at most (0: no section). */
    block_max: key('count', 3),
  },
  /**
   * Outcome feedback (core/outcomes.ts): counts of the verdicts that followed the spawns an item was
   * shown to (approved: helped; sent back: hurt), per project, each fading with its age; every
   * kind's ranking adds its weight × (helped − hurt) / (helped + hurt + prior).
   */
  outcome_feedback: {
    /** Off: no item's rank depends on what followed it (verdicts are still settled as spawns record: turned on again, it finds them). */
    enabled: key('boolean', true),
    /** Days after which a verdict counts half. */
    half_life_days: key('positive', 30),
    /** Verdicts an item is presumed to have had either way: one bad verdict moves the term to −1/(1 + prior). */
    prior: key('positive', 2),
    /** The term's weight in each kind's standing (its own scale: a package's score, a reasoning entry's, the others' relevance). */
    weights: {
      package: key('nonnegative', 10),
      reasoning: key('nonnegative', 1),
      error_pattern: key('nonnegative', 0.3),
      strategy: key('nonnegative', 0.3),
      memory: key('nonnegative', 0.3),
    },
  },
  /** Purpose-driven tiers (core/tiers.ts): each agent's default purpose and each purpose's budget split. */
  purposes: {
    /** The purpose of a spawn that names none, by agent (every iteration of a spawn has its agent's purpose). */
    by_agent: key<Record<string, Purpose>>('map:purpose', {
      developer: 'implementation',
      senior_software_engineer: 'implementation',
      qa_expert: 'review',
      tech_lead: 'review',
      investigator: 'design',
      requirements_engineer: 'design',
    }),
    /** Items Tier 1 holds at most; past it (or past Tier 1's share of the split) an essential item competes as Tier 2. */
    tier1_max_items: key('positive-int', 4),
    /** Percent of the block's budget per tier [Tier 1, Tier 2, Tier 3], summing to 100 (Tier 1's is also its bound). */
    splits: {
      design: key<[number, number, number]>('split', [50, 30, 20]),
      implementation: key<[number, number, number]>('split', [60, 25, 15]),
      review: key<[number, number, number]>('split', [55, 30, 15]),
      handoff: key<[number, number, number]>('split', [70, 20, 10]),
      subagent: key<[number, number, number]>('split', [65, 25, 10]),
    },
  },
  /**
   * Provenance and standing of what a block shows (core/standing.ts): the compact marks, and per
   * agent (`default` for an agent not named) what a block does with a claim a later review failed
   * (`contradicted`) and with what no review has passed yet (`unreviewed`): `shown` in place,
   * `ranked` after the rest of its section, `left_out`. Every item shown is marked with its standing.
   */
  provenance: {
    show: key('boolean', true),
    contradicted: key<StandingTable>('map:standing', { default: 'ranked' }),
    unreviewed: key<StandingTable>('map:standing', { default: 'shown' }),
  },
  /** Caps of the files a user points the tools at (a larger file is refused, never read past the cap). */
  file_limits: {
    /** bazinga-db `save-reasoning --content-file` (bazinga-db reads it from bazinga/skills_config.json). */
    content_file_bytes: key('positive-int', DEFAULT_FILE_LIMITS.content_file_bytes),
    /** The artifact `fetch` prints. */
    artifact_bytes: key('positive-int', DEFAULT_FILE_LIMITS.artifact_bytes),
  },
} satisfies Declaration;

export type Config = ValuesOf<typeof DECLARED>;

function valuesOf(d: Declaration): unknown {
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v instanceof Key ? structuredClone(v.value) : valuesOf(v)]));
}

function shapesOf(d: Declaration): ShapesOf {
  return Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v instanceof Key ? v.shape : shapesOf(v)]));
}

export const DEFAULT_CONFIG = valuesOf(DECLARED) as Config;

/** What each key must look like. */
const SCHEMA = shapesOf(DECLARED);

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

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? `"${v}"` : `${typeof v} ${JSON.stringify(v)}`;
}

function check(shape: Shape | ShapesOf, value: unknown, key: string, file: string, warn: (m: string) => void): void {
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
    case 'standing':
      if (!(STANDING_CHOICES as readonly unknown[]).includes(value)) fail(`one of ${STANDING_CHOICES.map((c) => `"${c}"`).join(', ')}`);
      return;
    case 'mode':
      if (value !== 'pattern_only' && value !== 'entropy' && value !== 'both') fail('one of "pattern_only", "entropy", "both"');
      return;
  }
  if (typeof shape === 'string') return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('an object');
  for (const [k, v] of Object.entries(value as object)) {
    // Own keys only: `constructor` or `__proto__` in a config names no key (it would find Object's).
    const sub = Object.hasOwn(shape, k) ? shape[k] : undefined;
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

/** What this agent's blocks do with contradicted and unreviewed items (config `provenance`). */
export function standingRulesOf(config: Config, agent: string): StandingRules {
  const p = config.provenance;
  return { contradicted: p.contradicted[agent] ?? p.contradicted.default, unreviewed: p.unreviewed[agent] ?? p.unreviewed.default };
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
