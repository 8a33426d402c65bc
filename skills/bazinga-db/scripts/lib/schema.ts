/**
 * The v19 schema of the original BAZINGA tool and the additive `ca_*` extensions of this layer.
 *
 * The core DDL is the original's, column for column (types, defaults, CHECKs, indexes), so that a
 * file created here is indistinguishable in structure from one the original created, and either
 * tool can keep working on it. Extensions live only in tables named `ca_*`, are created with
 * IF NOT EXISTS, never touch the original's tables, and are versioned in `ca_meta`.
 */
import { SEARCH_TOKENIZER } from './searchText.ts';

/** The original's schema version this layer reads and creates. Never write a higher one. */
export const SCHEMA_VERSION = 19;
export const SCHEMA_VERSION_DESCRIPTION = 'Schema v19: SpecKit task ID tracking';

/** The nine tables the context commands need; a file without one of them is refused. */
export const CORE_TABLES = [
  'sessions',
  'orchestration_logs',
  'task_groups',
  'context_packages',
  'context_package_consumers',
  'consumption_scope',
  'error_patterns',
  'strategies',
  'schema_version',
] as const;

/** Every table and index of a fresh v19 database, in creation order. */
export const V19_DDL: readonly string[] = [
  `CREATE TABLE sessions (
  session_id TEXT PRIMARY KEY,
  start_time TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  end_time TIMESTAMP,
  mode TEXT CHECK(mode IN ('simple', 'parallel')),
  original_requirements TEXT,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) DEFAULT 'active',
  initial_branch TEXT DEFAULT 'main',
  metadata TEXT,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
  `CREATE TABLE orchestration_logs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  iteration INTEGER,
  agent_type TEXT NOT NULL,
  agent_id TEXT,
  content TEXT NOT NULL,
  log_type TEXT DEFAULT 'interaction' CHECK(log_type IN ('interaction', 'reasoning', 'event')),
  reasoning_phase TEXT CHECK(reasoning_phase IS NULL OR reasoning_phase IN ('understanding', 'approach', 'decisions', 'risks', 'blockers', 'pivot', 'completion')),
  confidence_level TEXT CHECK(confidence_level IS NULL OR confidence_level IN ('high', 'medium', 'low')),
  references_json TEXT,
  redacted INTEGER DEFAULT 0 CHECK(redacted IN (0, 1)),
  group_id TEXT,
  event_subtype TEXT,
  event_payload TEXT,
  idempotency_key TEXT,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_logs_session ON orchestration_logs(session_id, timestamp DESC)`,
  `CREATE INDEX idx_logs_agent_type ON orchestration_logs(session_id, agent_type)`,
  `CREATE INDEX idx_logs_reasoning ON orchestration_logs(session_id, log_type, reasoning_phase) WHERE log_type = 'reasoning'`,
  `CREATE INDEX idx_logs_group_reasoning ON orchestration_logs(session_id, group_id, log_type) WHERE log_type = 'reasoning'`,
  `CREATE INDEX idx_logs_events ON orchestration_logs(session_id, log_type, event_subtype) WHERE log_type = 'event'`,
  `CREATE UNIQUE INDEX idx_logs_idempotency ON orchestration_logs(session_id, event_subtype, group_id, idempotency_key) WHERE idempotency_key IS NOT NULL AND log_type = 'event'`,
  `CREATE TABLE task_groups (
  id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT CHECK(status IN ('pending', 'in_progress', 'completed', 'failed', 'approved_pending_merge', 'merging')) DEFAULT 'pending',
  assigned_to TEXT,
  revision_count INTEGER DEFAULT 0,
  last_review_status TEXT CHECK(last_review_status IN ('APPROVED', 'CHANGES_REQUESTED', NULL)),
  feature_branch TEXT,
  merge_status TEXT CHECK(merge_status IN ('pending', 'in_progress', 'merged', 'conflict', 'test_failure', NULL)),
  complexity INTEGER CHECK(complexity BETWEEN 1 AND 10),
  initial_tier TEXT CHECK(initial_tier IN ('Developer', 'Senior Software Engineer')) DEFAULT 'Developer',
  context_references TEXT,
  specializations TEXT,
  item_count INTEGER DEFAULT 1,
  security_sensitive INTEGER DEFAULT 0,
  qa_attempts INTEGER DEFAULT 0,
  tl_review_attempts INTEGER DEFAULT 0,
  component_path TEXT,
  review_iteration INTEGER DEFAULT 1 CHECK(review_iteration >= 1),
  no_progress_count INTEGER DEFAULT 0 CHECK(no_progress_count >= 0),
  blocking_issues_count INTEGER DEFAULT 0 CHECK(blocking_issues_count >= 0),
  speckit_task_ids TEXT,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (id, session_id),
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_taskgroups_session ON task_groups(session_id, status)`,
  `CREATE TABLE context_packages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  group_id TEXT,
  package_type TEXT NOT NULL CHECK(package_type IN ('research', 'failures', 'decisions', 'handoff', 'investigation')),
  file_path TEXT NOT NULL,
  producer_agent TEXT NOT NULL,
  priority TEXT NOT NULL DEFAULT 'medium' CHECK(priority IN ('low', 'medium', 'high', 'critical')),
  summary TEXT NOT NULL,
  size_bytes INTEGER,
  version INTEGER DEFAULT 1,
  supersedes_id INTEGER,
  scope TEXT DEFAULT 'group' CHECK(scope IN ('group', 'global')),
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE,
  FOREIGN KEY (supersedes_id) REFERENCES context_packages(id))`,
  `CREATE INDEX idx_cp_session ON context_packages(session_id)`,
  `CREATE INDEX idx_cp_group ON context_packages(group_id)`,
  `CREATE INDEX idx_cp_type ON context_packages(package_type)`,
  `CREATE INDEX idx_cp_priority ON context_packages(priority)`,
  `CREATE INDEX idx_cp_scope ON context_packages(scope)`,
  `CREATE INDEX idx_cp_created ON context_packages(created_at)`,
  `CREATE INDEX idx_packages_priority_ranking ON context_packages(session_id, priority, created_at DESC)`,
  `CREATE TABLE context_package_consumers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  package_id INTEGER NOT NULL,
  agent_type TEXT NOT NULL,
  consumed_at TIMESTAMP,
  iteration INTEGER DEFAULT 1,
  FOREIGN KEY (package_id) REFERENCES context_packages(id) ON DELETE CASCADE,
  UNIQUE(package_id, agent_type, iteration))`,
  `CREATE INDEX idx_cpc_package ON context_package_consumers(package_id)`,
  `CREATE INDEX idx_cpc_agent ON context_package_consumers(agent_type)`,
  `CREATE INDEX idx_cpc_pending ON context_package_consumers(consumed_at) WHERE consumed_at IS NULL`,
  `CREATE TABLE consumption_scope (
  scope_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  group_id TEXT NOT NULL,
  agent_type TEXT NOT NULL CHECK(agent_type IN ('developer', 'qa_expert', 'tech_lead', 'senior_software_engineer', 'investigator')),
  iteration INTEGER NOT NULL CHECK(iteration >= 0),
  package_id INTEGER NOT NULL,
  consumed_at TEXT DEFAULT (datetime('now')),
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE,
  FOREIGN KEY (package_id) REFERENCES context_packages(id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_consumption_session ON consumption_scope(session_id, group_id, agent_type)`,
  `CREATE UNIQUE INDEX idx_consumption_unique ON consumption_scope(session_id, group_id, agent_type, iteration, package_id)`,
  `CREATE TABLE error_patterns (
  pattern_hash TEXT NOT NULL,
  project_id TEXT NOT NULL,
  signature_json TEXT NOT NULL,
  solution TEXT NOT NULL,
  confidence REAL DEFAULT 0.5 CHECK(confidence >= 0.0 AND confidence <= 1.0),
  occurrences INTEGER DEFAULT 1 CHECK(occurrences >= 1),
  lang TEXT,
  last_seen TEXT DEFAULT (datetime('now')),
  created_at TEXT DEFAULT (datetime('now')),
  ttl_days INTEGER DEFAULT 90 CHECK(ttl_days > 0),
  PRIMARY KEY (pattern_hash, project_id))`,
  `CREATE INDEX idx_patterns_project ON error_patterns(project_id, lang)`,
  `CREATE INDEX idx_patterns_ttl ON error_patterns(last_seen, ttl_days)`,
  `CREATE TABLE strategies (
  strategy_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  insight TEXT NOT NULL,
  helpfulness INTEGER DEFAULT 0 CHECK(helpfulness >= 0),
  lang TEXT,
  framework TEXT,
  last_seen TEXT DEFAULT (datetime('now')),
  created_at TEXT DEFAULT (datetime('now')))`,
  `CREATE INDEX idx_strategies_project ON strategies(project_id, framework)`,
  `CREATE INDEX idx_strategies_topic ON strategies(topic)`,
  `CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  description TEXT)`,
  `CREATE TABLE state_snapshots (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  group_id TEXT NOT NULL DEFAULT 'global',
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  state_type TEXT CHECK(state_type IN ('pm', 'orchestrator', 'group_status', 'investigation')),
  state_data TEXT NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE UNIQUE INDEX idx_state_unique ON state_snapshots(session_id, state_type, group_id)`,
  `CREATE INDEX idx_state_session_type_group ON state_snapshots(session_id, state_type, group_id, timestamp DESC)`,
  `CREATE TABLE token_usage (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  agent_type TEXT NOT NULL,
  agent_id TEXT,
  tokens_estimated INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_tokens_session ON token_usage(session_id, agent_type)`,
  `CREATE TABLE skill_outputs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  skill_name TEXT NOT NULL,
  output_data TEXT NOT NULL,
  agent_type TEXT,
  group_id TEXT,
  iteration INTEGER DEFAULT 1,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_skill_session ON skill_outputs(session_id, skill_name, timestamp DESC)`,
  `CREATE INDEX idx_skill_agent_group ON skill_outputs(session_id, skill_name, agent_type, group_id, iteration)`,
  `CREATE UNIQUE INDEX idx_skill_unique_iteration ON skill_outputs(session_id, skill_name, agent_type, group_id, iteration)`,
  `CREATE INDEX idx_skill_latest ON skill_outputs(session_id, skill_name, agent_type, group_id, iteration DESC)`,
  `CREATE TABLE development_plans (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT UNIQUE NOT NULL,
  original_prompt TEXT NOT NULL,
  plan_text TEXT NOT NULL,
  phases TEXT NOT NULL,
  current_phase INTEGER,
  total_phases INTEGER NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  metadata TEXT,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE INDEX idx_devplans_session ON development_plans(session_id)`,
  `CREATE TABLE success_criteria (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  criterion TEXT NOT NULL,
  status TEXT CHECK(status IN ('pending', 'met', 'blocked', 'failed')) DEFAULT 'pending',
  actual TEXT,
  evidence TEXT,
  required_for_completion BOOLEAN DEFAULT 1,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  FOREIGN KEY (session_id) REFERENCES sessions(session_id) ON DELETE CASCADE)`,
  `CREATE UNIQUE INDEX idx_unique_criterion ON success_criteria(session_id, criterion)`,
  `CREATE INDEX idx_criteria_session_status ON success_criteria(session_id, status)`,
  `CREATE TABLE workflow_transitions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  current_agent TEXT NOT NULL,
  response_status TEXT NOT NULL,
  next_agent TEXT,
  action TEXT NOT NULL,
  include_context TEXT,
  escalation_check INTEGER DEFAULT 0,
  model_override TEXT,
  fallback_agent TEXT,
  bypass_qa INTEGER DEFAULT 0,
  max_parallel INTEGER,
  then_action TEXT,
  UNIQUE(current_agent, response_status))`,
  `CREATE INDEX idx_wt_agent ON workflow_transitions(current_agent)`,
  `CREATE TABLE agent_markers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_type TEXT NOT NULL UNIQUE,
  required_markers TEXT NOT NULL,
  workflow_markers TEXT)`,
  `CREATE TABLE workflow_special_rules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  rule_name TEXT NOT NULL UNIQUE,
  description TEXT,
  config TEXT NOT NULL)`
];

/**
 * v3: the full-text index behind relevance (skills/context-assembler/references/relevance.md). Derived data, filled from the
 * original tables by repo/searchIndex.ts (watermarks in ca_meta); no triggers on the original's
 * tables. Queries are confined to a session or project by joining the source rows; id columns
 * are carried, not searched.
 */
export const SEARCH_TABLES = ['ca_fts_packages', 'ca_fts_reasoning', 'ca_fts_patterns', 'ca_fts_strategies'] as const;

/**
 * Packages and reasoning are many and their text is in the original tables already: their index
 * holds terms only (contentless, rowid = the source row's id). Patterns and strategies are few
 * and keyed by text ids, which the index carries.
 */
const SEARCH_COLUMNS: Record<(typeof SEARCH_TABLES)[number], string> = {
  ca_fts_packages: "summary, artifact, path, content = ''",
  ca_fts_reasoning: "content, refs, content = ''",
  ca_fts_patterns: 'signature, solution, pattern_hash UNINDEXED, project_id UNINDEXED',
  ca_fts_strategies: 'topic, insight, strategy_id UNINDEXED, project_id UNINDEXED',
};

/** The DDL of the search tables with a given FTS5 tokenizer (the evaluation compares tokenizers). */
export function searchDdl(tokenizer: string): string[] {
  return [
    ...SEARCH_TABLES.map(
      (t) => `CREATE VIRTUAL TABLE IF NOT EXISTS ${t} USING fts5(${SEARCH_COLUMNS[t]}, tokenize = '${tokenizer.replace(/'/g, "''")}')`,
    ),
    // How many indexed packages / reasoning entries hold each token: what a query term costs (FTS5
    // reads a term's whole document list) and how little it says. Kept by the indexer; FTS5's own
    // fts5vocab would have to read those lists to count them.
    `CREATE TABLE IF NOT EXISTS ca_term_df (
  source TEXT NOT NULL CHECK(source IN ('packages', 'reasoning')),
  term TEXT NOT NULL,
  docs INTEGER NOT NULL CHECK(docs >= 0),
  PRIMARY KEY (source, term)) WITHOUT ROWID`,
    // The paths each package's artifact text names (scope matching reads them, not the files).
    `CREATE TABLE IF NOT EXISTS ca_package_paths (
  package_id INTEGER PRIMARY KEY REFERENCES context_packages(id) ON DELETE CASCADE,
  paths TEXT NOT NULL)`,
  ];
}

const SEARCH_DDL = searchDdl(SEARCH_TOKENIZER);

/** Version of this layer's own extension objects, stored in `ca_meta` under `ca_schema`. */
export const CA_SCHEMA_VERSION = 16;

/**
 * v7: columns ca_memories gained after its first definition (a file a v6 writer made has the table
 * without them): added by the next writer, with these definitions (constants, never input).
 */
export const MEMORY_ADDED_COLUMNS: readonly (readonly [string, string])[] = [
  ['sources', "TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(sources))"],
  ['source_hash', 'TEXT'],
];

/**
 * v6: project memory (repo/memories.ts): decisions, issues, state and learnings that outlive a
 * session, per project, with lifecycle times, access counts and supersession links. Source data,
 * not derived: written by save-memory and summarise-session only. Its full-text index holds a copy
 * of each memory's title and text (rowid = the memory's id).
 */
export const MEMORY_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ca_memories (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK(type IN ('decision', 'issue', 'state', 'learning')),
  title TEXT NOT NULL CHECK(length(title) BETWEEN 1 AND 100),
  content TEXT NOT NULL CHECK(json_valid(content)),
  tags TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(tags)),
  importance INTEGER NOT NULL CHECK(importance BETWEEN 1 AND 10),
  text_hash TEXT NOT NULL,
  source_session TEXT,
  source_group TEXT,
  source_agent TEXT,
  source_ref TEXT,
  sources TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(sources)),
  source_hash TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT,
  archived_at TEXT,
  last_accessed_at TEXT,
  access_count INTEGER NOT NULL DEFAULT 0 CHECK(access_count >= 0),
  parent_id INTEGER REFERENCES ca_memories(id) ON DELETE SET NULL,
  superseded_by INTEGER REFERENCES ca_memories(id) ON DELETE SET NULL)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_memories_project ON ca_memories(project_id, type, archived_at, created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_memories_hash ON ca_memories(project_id, type, text_hash)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_memories_source ON ca_memories(project_id, source_ref) WHERE source_ref IS NOT NULL`,
  `CREATE VIRTUAL TABLE IF NOT EXISTS ca_fts_memories USING fts5(title, body, tokenize = '${SEARCH_TOKENIZER}')`,
];

/**
 * v9: the assembly record (repo/assemblies.ts): one row per recording assembly (written in the
 * same transaction as its consumption), per prompt the prompt hook served, and per fallback of a
 * recording call (best effort): what the spawn was given, what was left out and why, the budget
 * and what it cost. Source data of this product's own (the report reads it); never read by
 * BAZINGA's tools. Every text in `detail` went through the redaction engine first.
 */
export const ASSEMBLY_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ca_assemblies (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at TEXT NOT NULL,
  session_id TEXT NOT NULL,
  group_id TEXT,
  agent_type TEXT NOT NULL,
  iteration INTEGER NOT NULL CHECK(iteration >= 0),
  source TEXT NOT NULL CHECK(source IN ('assemble', 'consume', 'prompt-hook')),
  outcome TEXT NOT NULL CHECK(outcome IN ('recorded', 'unrecorded', 'nothing-delivered', 'skipped-zone', 'fallback', 'left')),
  reason TEXT,
  purpose TEXT,
  zone TEXT,
  usage_pct REAL,
  budget INTEGER,
  used_tokens INTEGER,
  overrun INTEGER NOT NULL DEFAULT 0 CHECK(overrun >= 0),
  prompt_tokens INTEGER,
  duration_ms REAL NOT NULL,
  version TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '{}' CHECK(json_valid(detail)),
  settled INTEGER NOT NULL DEFAULT 0 CHECK(settled IN (0, 1)),
  request_key TEXT)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_assemblies_session ON ca_assemblies(session_id, id)`,
  // v13: a request's key (the launcher makes one per request it sends the warm assembler): one
  // record per request, whichever of the server's run and the caller's own counts.
  `CREATE UNIQUE INDEX IF NOT EXISTS ca_idx_assemblies_key ON ca_assemblies(request_key) WHERE request_key IS NOT NULL`,
];

/** Columns ca_assemblies gained after its first definition (v9: settled by v10, request_key by v13), with these definitions (constants). */
export const ASSEMBLY_ADDED_COLUMNS: readonly (readonly [string, string])[] = [
  ['settled', 'INTEGER NOT NULL DEFAULT 0 CHECK(settled IN (0, 1))'],
  ['request_key', 'TEXT'],
];

/**
 * v11: columns ca_captures gained after the definition an earlier v10 build made (every text of a
 * decided failure), and the column by which a ca_outcomes of the earlier shape (a row per verdict)
 * is known: that table is derived from the records, so it is made again and they are settled anew.
 */
export const CAPTURE_ADDED_COLUMNS: readonly (readonly [string, string])[] = [['refs', "TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(refs))"]];
export const OUTCOMES_SHAPE_COLUMN = 'day';

/**
 * v10: the verdicts that followed what spawns were shown (ca_outcomes, settled from the assembly
 * record: repo/outcomes.ts), and what the capture learnt from a group's retries (repo/captures.ts): one row per failure it
 * decided (a failures package, or the review feedback a retry spawn was given), with how the retry
 * ended, the fault of the pattern it created or moved (fault_hash: v12, see FAULT_DDL; an earlier
 * build named it pattern_hash and kept a re-keyed hash there) and where its solution came from.
 * The unique key makes the capture idempotent.
 */
export const CAPTURE_DDL: readonly string[] = [
  // Records whose verdict is not known yet (repo/outcomes.ts settleVerdicts reads them).
  `CREATE INDEX IF NOT EXISTS ca_idx_assemblies_unsettled ON ca_assemblies(id) WHERE settled = 0`,
  // The verdicts that followed the showing of each item, once known (repo/outcomes.ts), counted per
  // project, kind, item, session and UTC day: what outcome feedback reads, by item, or by session
  // for packages and reasoning. A handful of rows per item however often it was shown.
  `CREATE TABLE IF NOT EXISTS ca_outcomes (
  project_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  item_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  day TEXT NOT NULL,
  helped INTEGER NOT NULL DEFAULT 0 CHECK(helped >= 0),
  hurt INTEGER NOT NULL DEFAULT 0 CHECK(hurt >= 0),
  PRIMARY KEY (project_id, kind, item_id, session_id, day)) WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS ca_idx_outcomes_session ON ca_outcomes(session_id, kind)`,
  `CREATE TABLE IF NOT EXISTS ca_captures (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  group_id TEXT NOT NULL,
  failure_ref TEXT NOT NULL,
  refs TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(refs)),
  fail_iteration INTEGER,
  outcome TEXT NOT NULL CHECK(outcome IN ('passed', 'failed')),
  fault_hash TEXT NOT NULL,
  operation TEXT NOT NULL CHECK(operation IN ('created', 'raised', 'lowered', 'no-solution', 'unknown-failed')),
  solution_ref TEXT,
  created_at TEXT NOT NULL,
  UNIQUE(session_id, group_id, failure_ref))`,
];

/**
 * v12: one fault, one key, in this layer's own table. BAZINGA's rows keep the key the original
 * computes (pattern_hash over type, message pattern and hints: one row per file and position a
 * message names); ca_pattern_faults gives each row (project_id, pattern_hash) its fault
 * (hashing.ts faultKeyOf: patternSignature of its stored type and message, hashed) and the tool it
 * was recognised as. The assembler shows the rows of one fault as one pattern (patternFaults.ts);
 * this layer's own references to a pattern (ca_outcomes item ids, ca_captures.fault_hash, the ids
 * in ca_assemblies.detail) are fault keys, which keep naming it when another row of the fault is
 * written. Derived data: a row no writer keyed yet is keyed on read (patternFaults.ts).
 * `ca_idx_patterns_shown_all` and `ca_idx_strategies_shown_all` serve a session read as one project:
 * the few patterns and strategies it shows are read in the order shown, not sorted from all.
 */
export const FAULT_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ca_pattern_faults (
  project_id TEXT NOT NULL,
  pattern_hash TEXT NOT NULL,
  fault_hash TEXT NOT NULL,
  tool TEXT NOT NULL,
  PRIMARY KEY (project_id, pattern_hash)) WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS ca_idx_pattern_faults_fault ON ca_pattern_faults(fault_hash, project_id)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_patterns_shown_all
  ON error_patterns(ROUND(confidence, 2) DESC, occurrences DESC, last_seen DESC, pattern_hash, project_id)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_strategies_shown_all ON strategies(helpfulness DESC, last_seen DESC)`,
  // v16: what this layer learnt of a pattern row (the capture: a fix seen to pass again, or a fault
  // come back), kept beside the row instead of in it, so the rows stay as their writer left them
  // and BAZINGA's own builder prints what it printed before (repo/patternLearning.ts).
  // row_created_at: the row it learnt of (a row deleted and saved again is another row, which has learnt nothing).
  `CREATE TABLE IF NOT EXISTS ca_pattern_learning (
  project_id TEXT NOT NULL,
  pattern_hash TEXT NOT NULL,
  row_created_at TEXT,
  confidence_delta REAL NOT NULL DEFAULT 0,
  occurrences_delta INTEGER NOT NULL DEFAULT 0 CHECK(occurrences_delta >= 0),
  last_seen TEXT,
  PRIMARY KEY (project_id, pattern_hash)) WITHOUT ROWID`,
];

/** The extension objects, idempotent. */
export const CA_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ca_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at TEXT DEFAULT (datetime('now')))`,
  // v2: token counts of rendered text, keyed by a hash of the exact text, so that assembling the
  // same packages again needs no tokenizer. Derived data: deleting the table only costs a recount.
  `CREATE TABLE IF NOT EXISTS ca_token_counts (
  text_hash TEXT PRIMARY KEY,
  tokens INTEGER NOT NULL CHECK(tokens >= 0),
  created_at TEXT DEFAULT (datetime('now'))) WITHOUT ROWID`,
  // v8: texts the redaction engine leaves unchanged, keyed by a hash of the engine's version, the
  // policy and the text (redact.ts settledKey), so that emitting a stored text again needs no
  // engine. Derived data: deleting the table only costs redacting again.
  `CREATE TABLE IF NOT EXISTS ca_redaction_settled (
  text_hash TEXT PRIMARY KEY,
  created_at TEXT DEFAULT (datetime('now'))) WITHOUT ROWID`,
  // v2: indexes that serve the assembler's reads. Named ca_* (additive, droppable); they only add
  // orderings the original's indexes lack.
  // Newest eligible packages of one (group, priority, type) bucket, and of the session-wide ones.
  // Both also serve the count of a request's designated packages without touching the table.
  `CREATE INDEX IF NOT EXISTS ca_idx_cp_group_bucket
  ON context_packages(session_id, group_id, priority, package_type, created_at DESC, id DESC) WHERE supersedes_id IS NULL`,
  // The prompt builder's error patterns: the most confident of every project (repo/builderSection.ts).
  `CREATE INDEX IF NOT EXISTS ca_idx_patterns_confidence ON error_patterns(confidence DESC, occurrences DESC)`,
  `CREATE INDEX IF NOT EXISTS ca_idx_cp_scope_bucket
  ON context_packages(session_id, scope, priority, package_type, created_at DESC, id DESC, group_id) WHERE supersedes_id IS NULL`,
  // "Did this agent consume this package at this iteration?" by package, not by session.
  `CREATE INDEX IF NOT EXISTS ca_idx_consumption_package
  ON consumption_scope(package_id, agent_type, iteration)`,
  // Consumer rows already consumed, by agent and iteration (few, next to the many pending ones).
  `CREATE INDEX IF NOT EXISTS ca_idx_cpc_consumed
  ON context_package_consumers(agent_type, iteration) WHERE consumed_at IS NOT NULL`,
  // The most recent reasoning of one producer in one group.
  `CREATE INDEX IF NOT EXISTS ca_idx_logs_producer_recent
  ON orchestration_logs(session_id, group_id, agent_type, timestamp DESC, id DESC) WHERE log_type = 'reasoning'`,
  // v5: a project's error patterns in the order a block shows them, so that the few shown are read
  // without sorting every pattern of the project.
  `CREATE INDEX IF NOT EXISTS ca_idx_patterns_shown
  ON error_patterns(project_id, ROUND(confidence, 2) DESC, occurrences DESC, last_seen DESC, pattern_hash)`,
  ...SEARCH_DDL,
  ...MEMORY_DDL,
  ...ASSEMBLY_DDL,
  ...CAPTURE_DDL,
  ...FAULT_DDL,
];

/** Every object CA_DDL creates, to tell a complete extension set from one an outside tool pruned. */
export const CA_OBJECTS = [
  'ca_meta',
  'ca_token_counts',
  'ca_redaction_settled',
  'ca_idx_cp_group_bucket',
  'ca_idx_cp_scope_bucket',
  'ca_idx_patterns_confidence',
  'ca_idx_consumption_package',
  'ca_idx_cpc_consumed',
  'ca_idx_logs_producer_recent',
  'ca_idx_patterns_shown',
  ...SEARCH_TABLES,
  'ca_term_df',
  'ca_package_paths',
  'ca_memories',
  'ca_idx_memories_project',
  'ca_idx_memories_hash',
  'ca_idx_memories_source',
  'ca_fts_memories',
  'ca_assemblies',
  'ca_idx_assemblies_session',
  'ca_idx_assemblies_key',
  'ca_captures',
  'ca_idx_assemblies_unsettled',
  'ca_outcomes',
  'ca_idx_outcomes_session',
  'ca_pattern_faults',
  'ca_idx_pattern_faults_fault',
  'ca_idx_patterns_shown_all',
  'ca_idx_strategies_shown_all',
  'ca_pattern_learning',
] as const;
