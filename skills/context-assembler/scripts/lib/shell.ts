/**
 * The shell every context-assembler script shares: parse flags → read the piped document (if
 * any) → load config → open the database → run the steps → print. Invalid parameters exit 2 with
 * a JSON error on stderr. Anything else that goes wrong (no database, a locked or corrupt file, a
 * broken config) never blocks the orchestrator: a warning on stderr, the fallback block on stdout,
 * exit 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// The driver, handed over at load (useDriver below): every script through this shell needs it, so
// a missing package stops it here, where the launcher names the fix.
import Database from 'better-sqlite3';
import {
  BazingaError,
  findTokenCount,
  groupRevisionCount,
  isSettledText,
  invalid,
  captureBeforeSpawn,
  indexerRunning,
  markRunComplete,
  monotonicMs,
  openDatabase,
  printError,
  readConfigFile,
  redactText,
  resolvePaths,
  saveSettledTexts,
  saveTokenCounts,
  settledKey,
  storedText,
  writeTransaction,
  type DB,
  type SettledTexts,
  type TextRedaction,
  useDriver,
} from '../../../bazinga-db/scripts/lib/index.ts';
import { DEFAULT_CONFIG, lookupByModel, parseConfig, redactionPolicyOf, type Config } from './config.ts';
import { guardIo } from './print.ts';
import { STEPS, validateDoc, type AssemblyDoc, type AssemblyRequest, type PipedDoc, type Step } from './contract.ts';
import { upgradeDoc } from './upgrade.ts';
import { renderDisabled, renderFallback, renderMarkdown, shellWord } from './core/render.ts';
import {
  COMMON_FLAGS,
  REQUEST_FLAGS,
  formatFromFlags,
  parseFlags,
  requestFromFlags,
  withParamsFile,
  type OutputFormat,
  type ParsedFlags,
} from './params.ts';
import { advance, zoneStep, type Deps } from './pipeline.ts';
import { assemblyRecord, fallbackRecord, settleDelivery, writeRecord, writeRecordAlone, type Delivery } from './record.ts';
import { sayNoServerOnce } from './noServer.ts';
import { makeTokenCounter, tokenizerLoaded, type TokenCountCache } from './tokens.ts';

useDriver(Database);

export interface ScriptIo {
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The piped input, or undefined when stdin is a terminal (or not to be read). */
  readStdin: () => string | undefined;
  now: () => Date;
  /** Handed the final document before it is printed (the prompt hook asks whether the block shows anything). */
  document?: (doc: AssemblyDoc) => void;
  /**
   * The run is the assembly of a spawn that records its delivery afterwards (the prompt hook's dry
   * run, recorded by consume --ids once the block is placed): it learns first, as a recording run
   * does (learnBeforeSpawn).
   */
  learns?: boolean;
  /**
   * The run brings the search index up to date (the rows written since the last call) though it
   * records nothing: the prompt hook assembles with --dry-run and records with consume --ids once
   * the prompt holds the block, so its assembly is the spawn's one writer of the index.
   */
  indexes?: boolean;
  /** Told why, when the run prints the fallback block (the prompt hook keeps that on record). */
  fellBack?: (reason: string) => void;
  /** The request's key and this run's part in it, for a request the launcher sent the warm assembler (record.ts Delivery). */
  delivery?: Delivery;
  /**
   * The warm assembler's run: the most its connection waits for locks in all, and the most it
   * spends indexing a backlog (warmServer.cjs serverTimes), so that its answer, a fallback
   * included, reaches a caller that waits only so long.
   */
  limits?: RunLimits;
  /** Why no warm assembler can run here, when the launcher found none can: said once a day per project (noServer.ts). */
  noServer?: string;
}

/** What a run of the warm assembler may spend waiting for locks and indexing (ScriptIo.limits). */
export interface RunLimits {
  busyBudgetMs: number;
  indexBudgetMs: number;
}

export interface ScriptSpec {
  name: string;
  step: Step;
  defaultFormat: OutputFormat;
  /** Whether a predecessor's document may arrive on stdin. */
  readsStdin: boolean;
  summary: string;
}

/** Busy handling for the assembler: short, so a locked database falls back well within 2 s. */
const BUSY_TIMEOUT_MS = 300;
const RETRY_BACKOFF_MS = [100];

export const COMMON_HELP = `Request (when no document is piped in):
  --session ID              BAZINGA session id (required)
  --group ID                task group; empty or "global" = session-wide (default)
  --agent TYPE              developer | senior_software_engineer | qa_expert | tech_lead |
                            investigator | requirements_engineer (required)
  --model NAME              haiku | sonnet | opus | a full model id (default sonnet)
  --current-tokens N        tokens the orchestrator has used so far (default 0)
  --iteration N             retry number, 0 for the first attempt (default 0)
  --limit N                 packages to retrieve, 1-50 (default: retrieval_limits in config)
  --include-reasoning B     true | false (default: on for handoff recipients and retries)
  --reasoning-level L       minimal | medium (default) | full: the reasoning budget in tokens,
                            from reasoning.level_budgets in config (${Object.values(DEFAULT_CONFIG.reasoning.level_budgets).join(' / ')} by default)
  --now ISO-8601            clock for recency and TTLs (default: now); fixes the output
  --task TEXT               what the agent is about to do: ranks packages, reasoning and strategies
                            by relevance (default: the task group's name, component path,
                            specializations and the session's requirements; on a retry also the
                            group's latest failures summary)
  --error TEXT              the error the agent just hit: error patterns ranked by relevance to it
  --scope PATHS             comma-separated paths (src/auth,src/api): items under them score higher
                            (default: the task group's component path)
  --lang L, --framework F   prefer strategies and patterns of this language / framework
  --purpose P               design | implementation | review | handoff | subagent: the tiers' budget
                            split and what is essential (default: the agent's, purposes.by_agent in
                            config: developer and senior → implementation, qa and tech_lead →
                            review, investigator and requirements_engineer → design); handoff
                            prints Position, Pending work, Active decisions, Key learnings and
                            Verification commands
  --params-file FILE        the params file today's BAZINGA orchestrator writes for a spawn
                            (bazinga/prompts/<session>/params_<agent>_<group>.json): session_id,
                            agent_type, group_id, model, task_title + task_requirements (the task),
                            qa_feedback + tl_feedback (the error); other keys are ignored, a flag
                            given wins, and without --iteration the group's revision_count is used
                            (at least 1 when the file holds feedback: a retry)
Options:
  --format markdown|json    output format
  --explain                 add each package's score components and where the query matched (json)
  --dry-run                 do not record consumption
  --more IDS                this spawn asks for more: the packages it was given (comma-separated
                            ids) are left out, nothing else; the command the block's "+N more"
                            line names (without it, what an earlier spawn was given is shown
                            again: every spawn is a fresh agent)
  --db PATH                 database (default <project root>/bazinga/bazinga.db)
  --project-root DIR        project root (default: $CLAUDE_PROJECT_DIR or the nearest folder with .claude/ and bazinga/)
  --config PATH             config file (default <project root>/bazinga/skills_config.json)
  --help                    this text`;

function helpFor(spec: ScriptSpec): string {
  const piped = spec.readsStdin
    ? `\nWith a previous step's JSON on stdin (and no request flags) it continues from that document; with\nrequest flags it runs the earlier steps itself and does not read stdin.\n`
    : '\n';
  return `${spec.name}: ${spec.summary}\n\nUsage: tsx ${spec.name} [flags]${spec.readsStdin ? ' [< previous-step.json]' : ''}\n${piped}\n${COMMON_HELP}\n\nExit: 0 (also when assembly fails: fallback block + warning on stderr), 2 for invalid parameters.\n`;
}

/** A bad flag or piped document: USAGE or VALIDATION, printed as the one error line, exit 2. */
const isParamError = (err: unknown): err is BazingaError => err instanceof BazingaError && (err.code === 'USAGE' || err.code === 'VALIDATION');

/** Where a run starts: a request from flags, a previous step's document, or a previous fallback. */
type Start =
  | { kind: 'request'; request: AssemblyRequest }
  | { kind: 'doc'; doc: PipedDoc }
  | { kind: 'fallback'; agent: string }
  | { kind: 'disabled'; agent: string };

/**
 * Reads and validates the piped document. A step given request flags (--session, --agent, …) starts
 * from them and does not read stdin at all: a caller whose stdin is an open pipe that never closes
 * (a process runner, an agent's shell) would otherwise wait forever.
 */
function pipedStart(io: ScriptIo, flags: ParsedFlags): Start | undefined {
  if (REQUEST_FLAGS.some((f) => flags.values.has(f))) return undefined;
  const text = io.readStdin();
  if (text === undefined || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(`stdin: not JSON from a previous step (${(err as Error).message})`);
  }
  if (value && typeof value === 'object' && (value as { fallback?: unknown }).fallback === true) {
    return { kind: 'fallback', agent: String((value as { agent?: unknown }).agent ?? 'agent') };
  }
  if (value && typeof value === 'object' && (value as { disabled?: unknown }).disabled === true) {
    return { kind: 'disabled', agent: String((value as { agent?: unknown }).agent ?? 'agent') };
  }
  return { kind: 'doc', doc: validateDoc(value, 'stdin') };
}

/** The document with its request's texts replaced by their redacted forms. */
function redactedRequest(doc: AssemblyDoc, redacted: (r: AssemblyRequest) => Pick<AssemblyRequest, 'task' | 'error' | 'scope'>): AssemblyDoc {
  return { ...doc, request: { ...doc.request, ...redacted(doc.request) } };
}

/** The disabled block (or document); a step receiving one passes it on. */
function disabled(io: ScriptIo, format: OutputFormat, agent: string): number {
  io.stdout(format === 'markdown' ? renderDisabled(agent) : JSON.stringify({ disabled: true, agent }, null, 2) + '\n');
  return 0;
}

function output(io: ScriptIo, format: OutputFormat, doc: AssemblyDoc, printJson: (value: unknown) => void, loadedBefore: boolean): void {
  io.document?.(doc);
  if (format === 'markdown') io.stdout(renderMarkdown(doc));
  else printJson(withCounting(doc, loadedBefore));
}

/**
 * From the pack step on, the document says whether this run (or an earlier step's) loaded the rank
 * table: `loadedBefore` is whether it was loaded when the run began (in the warm assembler, by an
 * earlier request, which this one did not pay for).
 */
function withCounting(doc: AssemblyDoc, loadedBefore: boolean): AssemblyDoc {
  if (STEPS.indexOf(doc.step) < STEPS.indexOf('pack')) return doc;
  return { ...doc, counting: { tokenizer_loaded: (doc.counting?.tokenizer_loaded ?? false) || (tokenizerLoaded() && !loadedBefore), exact: doc.counting?.exact ?? true } };
}

function fallback(io: ScriptIo, format: OutputFormat, agent: string, reason: string): number {
  io.fellBack?.(reason);
  io.stderr(`⚠ context-assembler: ${reason}; printing the fallback block\n`);
  io.stdout(format === 'markdown' ? renderFallback(agent) : JSON.stringify({ fallback: true, agent, error: reason }, null, 2) + '\n');
  return 0;
}

export interface Environment {
  config: Config;
  configPath: string;
  dbPath: string;
  projectRoot: string;
  /** How an agent runs this skill's launcher (the `+N more` line's command): $CONTEXT_ASSEMBLER_LAUNCHER, else found from this module (launcherCommand). */
  launcher?: string;
}

/** Finds the project, its database and its config (throws on any failure; callers fall back). */
export function loadEnvironment(flags: ParsedFlags, io: Pick<ScriptIo, 'cwd' | 'env' | 'stderr'>): Environment {
  const paths = resolvePaths({ db: flags.values.get('--db'), projectRoot: flags.values.get('--project-root'), cwd: io.cwd, env: io.env });
  const configFlag = flags.values.get('--config');
  const configPath = configFlag ? path.resolve(io.cwd, configFlag) : path.join(paths.projectRoot, 'bazinga', 'skills_config.json');
  let text: string | undefined;
  try {
    // A FIFO, device or directory is a CONFIG error at once (reading a FIFO would wait forever).
    text = readConfigFile(configPath);
  } catch (err) {
    if (err instanceof BazingaError) throw err;
    throw new Error(`cannot read config ${configPath}: ${(err as Error).message}`);
  }
  if (text === undefined && configFlag) throw new Error(`cannot read config ${configPath}: no such file`);
  const config = parseConfig(text, configPath, (m) => io.stderr(`⚠ ${m}\n`));
  const launcher = io.env.CONTEXT_ASSEMBLER_LAUNCHER?.trim() || launcherCommand(paths.projectRoot);
  return { config, configPath, dbPath: paths.dbPath, projectRoot: paths.projectRoot, ...(launcher ? { launcher } : {}) };
}

/** The environment with its indexing budget cut to `limits` (a run of the warm assembler); as it is without. */
function withLimits(env: Environment, limits: RunLimits | undefined): Environment {
  if (limits === undefined || env.config.relevance.index_budget_ms <= limits.indexBudgetMs) return env;
  return { ...env, config: { ...env.config, relevance: { ...env.config.relevance, index_budget_ms: limits.indexBudgetMs } } };
}

/**
 * Builds the dependencies of the steps for one process run. A run that records consumption
 * (`writes`) or brings the index up to date (`indexes`: the prompt hook's dry run) opens the
 * database read-write; any other run (zone, rank, pack, reasoning, a dry run, fetch) opens it
 * read-only and changes nothing in it: no WAL switch, no `ca_*` objects, no index catch-up, no
 * cached counts (what is not indexed ranks without relevance, said in one line). A recording run
 * whose file, folder or mount is read-only runs as a dry run and says so in one line. Token counts go through the database's count cache when the database can be opened
 * (best effort: a step that needs no database still works without it), and so does what the
 * redaction engine is known to leave unchanged (`settled`, for the script's redactionMemo: a text
 * an earlier run found settled is not redacted again, once the database is open); `close` saves a
 * writer's new counts and settled texts and closes the database. `redactString` redacts each item
 * (the script's redactionMemo from guardIo, shared with the door).
 */
export function makeDeps(
  env: Environment,
  model: string,
  flags: ParsedFlags,
  warn: (m: string) => void,
  redactString: TextRedaction = redactText,
  options: { writes?: boolean; indexes?: boolean; busyBudgetMs?: number } = {},
): { deps: Deps; close: () => void; settled: SettledTexts } {
  const dryRunFlag = flags.bools.has('--dry-run');
  const writes = (options.writes ?? false) && !dryRunFlag;
  // Opened read-write: to record, or only to bring the search index (and the count cache) up to date.
  const writer = writes || (options.indexes ?? false);
  // Each wait for a lock short, and the run's whole wait bounded: a locked database falls back well
  // within 2 s (the warm assembler's runs: within what their caller waits).
  const BUSY_BUDGET_MS = Math.min(1500, options.busyBudgetMs ?? 1500);
  let readOnlyHere = false;
  let db: DB | undefined;
  const openDb = () =>
    (db ??= openDatabase({
      dbPath: env.dbPath,
      create: false,
      busyTimeoutMs: Math.min(BUSY_TIMEOUT_MS, BUSY_BUDGET_MS),
      busyBudgetMs: BUSY_BUDGET_MS,
      retryBackoffMs: RETRY_BACKOFF_MS,
      readOnly: !writer,
      derived: true,
      onMigrated: migrated(warn),
      onReadOnly: () => {
        if (!readOnlyHere && writes) warn('context-assembler: the database is read-only here; consumption not recorded');
        readOnlyHere = true;
      },
    }));
  const fresh = new Map<string, number>();
  let cacheUsable = true;
  const cache: TokenCountCache = {
    get: (hash) => {
      if (fresh.has(hash) || !cacheUsable) return fresh.get(hash);
      try {
        return findTokenCount(openDb(), hash);
      } catch {
        cacheUsable = false;
        return undefined;
      }
    },
    put: (hash, tokens) => fresh.set(hash, tokens),
  };
  const settledNow = new Set<string>();
  let settledUsable = true;
  const settled: SettledTexts = {
    // Asked only once the database is open: printing an error about opening it opens nothing.
    has: (text, policy) => {
      if (db === undefined || !settledUsable) return false;
      try {
        return isSettledText(db, settledKey(text, policy));
      } catch {
        settledUsable = false;
        return false;
      }
    },
    add: (text, policy) => {
      if (writer) settledNow.add(settledKey(text, policy));
    },
  };
  const policy = redactionPolicyOf(env.config);
  const deps: Deps = {
    config: env.config,
    counter: makeTokenCounter(lookupByModel(env.config.token_factor, model), cache),
    // A stored value that is no text (a BLOB another tool wrote) is redacted and shown as its text.
    redact: (text) => redactString(storedText(text), policy),
    db: openDb,
    projectRoot: env.projectRoot,
    explain: flags.bools.has('--explain'),
    ...(env.launcher !== undefined ? { launcher: env.launcher } : {}),
    // A writer learns whether it can write when it opens the database (read-only: a dry run).
    get dryRun() {
      if (!writes) return dryRunFlag;
      try {
        openDb();
      } catch {
        // The step that needs the database reports why it cannot be opened.
      }
      return readOnlyHere;
    },
    warn,
  };
  const close = () => {
    if (!db) return;
    if ((fresh.size > 0 || settledNow.size > 0) && writer && !readOnlyHere) {
      try {
        const conn = db;
        writeTransaction(conn, () => {
          if (cacheUsable) saveTokenCounts(conn, fresh);
          if (settledUsable) saveSettledTexts(conn, settledNow);
        });
      } catch {
        // Only a cache: the next run counts these texts again.
      }
    }
    db.close();
  };
  return { deps, close, settled };
}

/**
 * How long a record written in a connection of its own (a fallback, a run that recorded no
 * consumption) waits for a lock, at most twice in all: it is never worth making a spawn wait.
 */
const RECORD_ALONE_BUSY_MS = 50;

/**
 * How long the learning before a spawn waits for a lock, at most twice: never worth making a spawn
 * wait (an index build holding the lock); what it could not write is written at a later spawn.
 */
const LEARN_BUSY_MS = 50;

/** The one line a migration of bazinga-db's says, as the assembler's other warnings say theirs (its own mark dropped: warn adds one). */
const migrated = (warn: (m: string) => void) => (line: string) => warn(`context-assembler: ${line.replace(/^[✓⚠] /, '')}`);

/**
 * Settles what the session's reviews now say and learns from its retries (bazinga-db capture.ts
 * captureBeforeSpawn), in a connection of its own that waits for a lock only briefly: a busy
 * database, or an index build under way, skips it silently (a later spawn learns it); any other
 * failure is one warning line; never fails the spawn.
 */
export function learnBeforeSpawn(env: Environment, spawn: { session: string; group: string; now: string }, warn: (m: string) => void): void {
  const { dbPath } = env;
  // While the index is built (index-search holds the write lock in turns), a later spawn learns instead.
  if (indexerRunning(dbPath) !== undefined) return;
  let db: DB | undefined;
  try {
    db = openDatabase({ dbPath, create: false, busyTimeoutMs: LEARN_BUSY_MS, busyBudgetMs: LEARN_BUSY_MS * 2, derived: true, onMigrated: migrated(warn) });
    captureBeforeSpawn(db, { sessionId: spawn.session, groupId: spawn.group, projectRoot: env.projectRoot, now: spawn.now, capture: env.config.error_patterns.capture });
  } catch (err) {
    if (!(err instanceof BazingaError && err.code === 'BUSY')) warn(`context-assembler: learning from the session's retries and reviews skipped (${(err as Error).message})`);
  } finally {
    try {
      db?.close();
    } catch {
      // nothing to keep
    }
  }
}

/**
 * Runs one step script (or assemble, with step 'consume'); returns the exit code. `extend` may
 * change the run's dependencies once they are made (the outcome evaluation gives its own verdict
 * source: test/outcomes/simulate.ts); the scripts pass none.
 */
export function runScript(spec: ScriptSpec, rawIo: ScriptIo, extend?: (deps: Deps) => void): number {
  const started = monotonicMs();
  const tokenizerBefore = tokenizerLoaded();
  const guarded = guardIo(rawIo);
  const io = guarded.io;
  let flags: ParsedFlags;
  let format: OutputFormat;
  let start: Start;
  // With --params-file and no --iteration: the task group's revision count, read once the database is open.
  let iterationFromGroup = false;
  let retry = false;
  try {
    flags = parseFlags(io.argv, COMMON_FLAGS);
    if (flags.bools.has('--help')) {
      io.stdout(helpFor(spec));
      return 0;
    }
    format = formatFromFlags(flags, spec.defaultFormat);
    const fromParams = withParamsFile(flags, io.cwd);
    iterationFromGroup = fromParams.iterationFromGroup;
    retry = fromParams.retry;
    start = (spec.readsStdin ? pipedStart(io, flags) : undefined) ?? { kind: 'request', request: requestFromFlags(fromParams.flags, io.now) };
  } catch (err) {
    if (isParamError(err)) return printError(io.stderr, err, { exit: 2 });
    throw err;
  }
  if (start.kind === 'fallback') return fallback(io, format, start.agent, 'the previous step fell back');
  if (start.kind === 'disabled') return disabled(io, format, start.agent);
  const request = start.kind === 'doc' ? start.doc.request : start.request;
  const warn = (m: string) => io.stderr(`⚠ ${m}\n`);
  let close = () => {};
  // A recording run (assemble, or consume continuing a piped document) leaves its assembly record.
  const recording = spec.step === 'consume' && !flags.bools.has('--dry-run');
  const source = spec.name === 'assemble.ts' ? 'assemble' : 'consume';
  let env: Environment | undefined;
  // Whether this run wrote its record already (then a later failure is not recorded a second time).
  let recorded = false;
  try {
    env = withLimits(loadEnvironment(flags, io), io.limits);
    if (io.noServer !== undefined) sayNoServerOnce(env.projectRoot, io.noServer, io.stderr, io.now());
    guarded.setPolicy(redactionPolicyOf(env.config));
    if (!env.config.enable_context_assembler) return disabled(io, format, request.agent);
    const made = makeDeps(env, request.model, flags, warn, guarded.redactString, {
      writes: spec.step === 'consume',
      indexes: io.indexes === true,
      ...(io.limits ? { busyBudgetMs: io.limits.busyBudgetMs } : {}),
    });
    close = made.close;
    if (recording) {
      const recordOf = (doc: AssemblyDoc) => assemblyRecord(doc, { source, durationMs: monotonicMs() - started });
      const dbPath = env.dbPath;
      const delivery = io.delivery;
      made.deps.record = (db, doc) => void (recorded = writeRecord(db, recordOf(doc), delivery) || recorded);
      made.deps.recordAlone = (doc) => void (recorded = writeRecordAlone(dbPath, recordOf(doc), RECORD_ALONE_BUSY_MS, delivery) || recorded);
      if (delivery !== undefined) made.deps.settle = (db, delivering) => settleDelivery(db, delivery, delivering);
      const loaded = env; // a const for the closure (TypeScript does not narrow the let env inside it)
      made.deps.learn = (r) => learnBeforeSpawn(loaded, r, warn);
    }
    if (io.learns === true && !recording) learnBeforeSpawn(env, request, warn);
    extend?.(made.deps);
    guarded.redactString.useSettled(made.settled);
    // The agent's own texts are echoed in the document: redacted like everything else emitted.
    const redactText = (t: string | null) => (t === null ? null : made.deps.redact(t));
    const redactedTexts = (r: AssemblyRequest) => ({ task: redactText(r.task), error: redactText(r.error), scope: redactText(r.scope) });
    const first =
      start.kind === 'doc'
        ? // A piped document, read into this version's shape (upgrade.ts). Its request's texts are
          // redacted here, at the edge, as a request from flags is: the search trusts them to be (a
          // hand-written document can hold anything).
          redactedRequest(upgradeDoc(start.doc, env.config), redactedTexts)
        : zoneStep(
            {
              ...start.request,
              iteration: iterationFromGroup ? Math.max(groupRevisionCount(made.deps.db(), request.group, request.session) ?? 0, retry ? 1 : 0) : request.iteration,
              ...redactedTexts(start.request),
            },
            env.config,
          );
    output(io, format, advance(first, spec.step, made.deps), guarded.printJson, tokenizerBefore);
    markRunComplete();
    return 0;
  } catch (err) {
    const message = (err as Error).message;
    try {
      close();
    } catch {
      // Closing cannot change what was printed.
    }
    close = () => {};
    // Best effort and quick (seed 001: the warning is logged to the session): a database that cannot
    // be opened or is locked, often why the call fell back, keeps no record.
    if (recording && env !== undefined && !recorded) writeRecordAlone(env.dbPath, fallbackRecord(request, message, { source, durationMs: monotonicMs() - started }), RECORD_ALONE_BUSY_MS, io.delivery);
    return fallback(io, format, request.agent, message);
  } finally {
    try {
      close();
    } catch {
      // Closing cannot change what was printed.
    }
  }
}

/**
 * How an agent in the project runs this skill's launcher: `node <path>`, the path relative to the
 * project root when the skill lives inside it (an installed project's `.claude/skills/`), else
 * absolute (a plugin's copy). Found from this module's own file, from source and from the bundle:
 * the nearest folder above it with `bin/context-assembler.cjs`. Undefined when there is none.
 */
function launcherCommand(projectRoot: string | null): string | undefined {
  if (launcherFile === null) return undefined;
  const rel = projectRoot === null ? '' : path.relative(projectRoot, launcherFile);
  const shown = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : launcherFile;
  return `node ${shellWord(shown)}`;
}

const launcherFile: string | null = (() => {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'bin', 'context-assembler.cjs');
    if (fs.existsSync(file)) return file;
    if (path.dirname(dir) === dir) return null;
  }
})();
