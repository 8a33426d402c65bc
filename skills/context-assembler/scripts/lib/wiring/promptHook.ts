/**
 * Today's BAZINGA spawn flow, reached through a Claude Code PostToolUse hook on Bash (registered by
 * the plugin, or by `install-skills --wire`): right after the prompt builder wrote a spawn's prompt,
 * and before the agent is spawned, this assembles the product's block from the same params file
 * (recording what it hands out, as the orchestrator's own call would) and puts it in the prompt in
 * place of the builder's own context section, between markers. Every other byte of the prompt stays
 * as the builder wrote it (promptSection.ts).
 *
 * The block made for a prompt is kept beside it (`.context-assembler/<prompt>.json`) with the hash
 * of the params file and the database's state for that spawn (readSpawnState): a rebuild of the same
 * spawn gets the same block (a new assembly would find its packages consumed at this iteration); a
 * re-spawn with the same params after the database moved on (new packages, reasoning, a verdict)
 * gets a new assembly. One hook at a time works on a prompt (a lock file beside the kept block).
 *
 * Run by the warm assembler, an event carries the key its launcher made (record.ts Delivery): the
 * kept block names it, and the launcher's own run of the same event after the server gave no answer
 * keeps the server's block only when its delivery was recorded under that key (else it assembles
 * and records it itself). The server's run does not wait for another hook's lock on the prompt: it
 * leaves the event to the launcher's own process (outcome `declined`).
 *
 * It never blocks and never damages a prompt: any other Bash command, a failed build, an unknown
 * session, a fallback or disabled block, a path outside the project or through a symbolic link, or
 * any error leaves every file as the builder wrote it (one warning on stderr), and the exit code is
 * always 0. Files are replaced whole through a temporary file and a rename.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  describeRefusal,
  groupRevisionCount,
  findAssemblyByKey,
  isInsideAny,
  listQuotableTexts,
  monotonicMs,
  openReadOnly,
  readRegularFile,
  readSpawnState,
  redactText,
  resolvePaths,
  SPAWNED_AGENTS,
  writeFileAtomically,
  type SpawnState,
} from '../../../../bazinga-db/scripts/lib/index.ts';
import type { AssemblyDoc } from '../contract.ts';
import { consumeIds, consumeIdsRequest } from '../consumeIds.ts';
import { assemblyRecord, fallbackRecord, settleDelivery, writeRecord, writeRecordAlone, type Delivery } from '../record.ts';
import { COMMON_FLAGS, PARAMS_FILE_KEYS, PARAMS_FILE_MAX_BYTES, parseFlags } from '../params.ts';
import { runScript, type RunLimits, type ScriptIo } from '../shell.ts';
import { sayNoServerOnce } from '../noServer.ts';
import { readBuilderRun } from './builderRun.ts';
import { PROMPT_BUILDER, WIRED_HOOK_COMMAND } from './hookCommand.ts';
import { builderPackageCount, placeBlock, withBlock, type QuotedText } from './promptSection.ts';

/** How long the hook waits for a lock to write an assembly record of its own (twice that in all). */
const RECORD_BUSY_MS = 500;

/** Where the hook keeps the block it made for a prompt (beside it). */
const MADE_DIR = '.context-assembler';
/** A prompt is tens of kilobytes; past this the hook leaves it alone rather than hold it in memory. */
export const PROMPT_MAX_BYTES = 32 * 1024 * 1024;
/** How long a hook waits for another one working on the same prompt. */
const LOCK_WAIT_MS = 20_000;
/** A lock older than this was left by a hook that died. */
const LOCK_STALE_MS = 120_000;

export interface HookIo {
  stdin: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stderr: (text: string) => void;
  now: () => Date;
  /** Run as the plugin's hook: silent outside a project with the prompt builder, and where the project's own wiring serves it. */
  plugin?: boolean;
  /** The request's key and this run's part in it, for an event the launcher sent the warm assembler (record.ts Delivery). */
  delivery?: Delivery;
  /**
   * The warm assembler's run (warmServer.cjs serverTimes): its waits for the database's locks
   * and its indexing cut, and how long it waits for another hook's lock on the prompt before it
   * leaves the event to its caller's own process (outcome `declined`).
   */
  limits?: RunLimits & { promptLockWaitMs: number };
  /** Why no warm assembler can run here, when the launcher found none can: said once a day per project. */
  noServer?: string;
}

/** What the hook did, for tests and its one line on stderr. */
export type HookOutcome =
  | { done: 'ignored'; why: string }
  /** The warm assembler's run found another hook working on the prompt: its caller runs the hook in its own process. */
  | { done: 'declined'; why: string }
  | { done: 'left'; why: string; prompt?: string }
  | { done: 'replaced' | 'inserted' | 'renewed'; prompt: string; reused: boolean };

/** Runs the hook on the JSON Claude Code passes on stdin; always exit 0. */
export function runPromptHook(io: HookIo): HookOutcome {
  const started = monotonicMs();
  let outcome: HookOutcome;
  try {
    outcome = handle(io, started);
  } catch (err) {
    outcome = { done: 'left', why: (err as Error).message };
  }
  if (outcome.done === 'left') io.stderr(`⚠ context-assembler: prompt left as the builder wrote it (${outcome.why})\n`);
  return outcome;
}

interface Event {
  tool_name?: unknown;
  tool_input?: { command?: unknown } | null;
  tool_response?: unknown;
  cwd?: unknown;
}

function handle(io: HookIo, started: number): HookOutcome {
  let input: Event;
  try {
    input = JSON.parse(io.stdin) as Event;
  } catch {
    return { done: 'ignored', why: 'stdin is not a hook event' };
  }
  if (input === null || typeof input !== 'object') return { done: 'ignored', why: 'stdin is not a hook event' };
  const command = input.tool_input?.command;
  if (input.tool_name !== 'Bash' || typeof command !== 'string') return { done: 'ignored', why: 'not a Bash command' };
  const run = readBuilderRun(command, input.tool_response);
  if (run.kind === 'not-builder') return { done: 'ignored', why: 'not the prompt builder' };
  const cwd = typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : io.cwd;
  const root = path.resolve(cwd, io.env.CLAUDE_PROJECT_DIR || cwd);
  if (io.plugin) {
    if (!fs.existsSync(path.join(root, PROMPT_BUILDER))) return { done: 'ignored', why: `no ${PROMPT_BUILDER} in ${root}` };
    if (projectWiresHook(root)) return { done: 'ignored', why: "the project's own wiring (install-skills --wire) serves it" };
  }
  if (run.kind === 'left') return { done: 'left', why: run.why };
  const realRoot = fs.realpathSync(root);
  // The builder resolves both against the project root (it changes to it before it starts).
  const prompt = path.resolve(root, run.promptFile);
  const paramsFile = path.resolve(root, run.paramsFile);
  for (const [what, file] of [['the prompt', prompt], ['the params file', paramsFile]] as const) {
    const refusal = refuseOutside(file, realRoot);
    if (refusal) return { done: 'left', why: `${what} ${file} ${refusal}`, prompt };
  }

  const paramsRead = readRegularFile(paramsFile, PARAMS_FILE_MAX_BYTES);
  if (!paramsRead.ok) return { done: 'left', why: `${paramsFile} ${describeRefusal(paramsRead.refusal)}`, prompt };
  let params: Record<string, unknown>;
  try {
    params = JSON.parse(paramsRead.bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { done: 'left', why: `${paramsFile} is not JSON`, prompt };
  }
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return { done: 'left', why: `${paramsFile} does not hold a JSON object`, prompt };
  // Spawns this product does not serve (the project manager's) keep the builder's prompt, silently.
  const agent = typeof params.agent_type === 'string' ? params.agent_type.trim().toLowerCase() : '';
  if (!(SPAWNED_AGENTS as readonly string[]).includes(agent)) return { done: 'ignored', why: `agent type ${String(params.agent_type)} is not one this product assembles for` };
  // Compared as real paths: the builder reports its own (resolved) root, the hook may know it through a link.
  if (typeof params.output_file !== 'string' || realFile(path.resolve(root, params.output_file)) !== realFile(prompt)) {
    return { done: 'left', why: `${prompt} is not the output_file of ${paramsFile}`, prompt };
  }
  const session = typeof params.session_id === 'string' ? params.session_id.trim() : '';
  const group = typeof params.group_id === 'string' && params.group_id.trim() !== '' ? params.group_id.trim() : 'global';
  if (session === '') return { done: 'left', why: `${paramsFile} names no session_id`, prompt };

  const made = path.join(path.dirname(prompt), MADE_DIR);
  const madeRefusal = refuseMadeDir(made, realRoot);
  if (madeRefusal) return { done: 'left', why: madeRefusal, prompt };
  fs.mkdirSync(made, { recursive: true });
  if (io.noServer !== undefined) sayNoServerOnce(root, io.noServer, io.stderr, io.now());
  const lock = path.join(made, `${path.basename(prompt)}.lock`);
  const lockWaitMs = io.limits?.promptLockWaitMs ?? LOCK_WAIT_MS;
  const busy = (): HookOutcome =>
    io.limits !== undefined ? { done: 'declined', why: `another hook holds ${lock}` } : { done: 'left', why: `another hook held ${lock} for ${LOCK_WAIT_MS} ms`, prompt };
  return withLock(lock, lockWaitMs, busy, () =>
    serve(io, {
      root, prompt, paramsFile, paramsBytes: paramsRead.bytes, agent, session, group,
      record: path.join(made, `${path.basename(prompt)}.json`),
      effectiveBudget: run.effectiveBudget ?? BUILDER_EFFECTIVE_BUDGET,
      started,
      retry: PARAMS_FILE_KEYS.feedback.some((k) => typeof params[k] === 'string' && (params[k] as string).trim() !== ''),
    }),
  );
}

interface Spawn {
  root: string;
  prompt: string;
  paramsFile: string;
  paramsBytes: Buffer;
  agent: string;
  session: string;
  group: string;
  /** The kept block's file. */
  record: string;
  /** Tokens (by the builder's own estimate) the prompt must stay within. */
  effectiveBudget: number;
  /** When the hook started (monotonicMs): the assembly record's duration. */
  started: number;
  /** The params carry review feedback (a retry: the assembly serves iteration 1 at least). */
  retry: boolean;
}

/**
 * The builder's file-read budget when its result does not say (25000 tokens less its 8 % margin),
 * and its token estimate (characters ÷ 3.85, plus 2 %): a prompt past it is one the agent cannot
 * read whole, so the block never takes a prompt past the budget the builder kept it within.
 */
const BUILDER_EFFECTIVE_BUDGET = 23_000;
const builderTokens = (text: string) => Math.floor((Array.from(text).length / 3.85) * 1.02);

const realFile = (file: string) => {
  try {
    return path.join(fs.realpathSync(path.dirname(file)), path.basename(file));
  } catch {
    return file;
  }
};

/** The kept block of a prompt: for which params and database state it was made. */
interface Kept {
  params_sha256: string;
  state: string;
  block: string;
  /** Whether the block shows anything (an empty one never takes the place of the builder's prompt). */
  empty: boolean;
  /** How many packages it shows (none, where the builder's section showed some: the builder's stays). */
  packages: number;
  /** The key of the request whose run made it (an event sent to the warm assembler), if any. */
  key?: string;
}

function serve(io: HookIo, s: Spawn): HookOutcome {
  const { dbPath } = resolvePaths({ projectRoot: s.root, cwd: s.root, env: {} });
  let state: SpawnState;
  let quoted: QuotedText[];
  let revisions = 0;
  // Whether a run of this request recorded its delivery already (a request sent to the warm assembler).
  let keyRecorded = false;
  const db = openReadOnly(dbPath, Math.min(1000, io.limits?.busyBudgetMs ?? 1000));
  try {
    state = readSpawnState(db, s.session, s.group);
    quoted = state.sessionFound ? listQuotableTexts(db, s.session, s.group) : [];
    revisions = state.sessionFound ? (groupRevisionCount(db, s.group, s.session) ?? 0) : 0;
    keyRecorded = io.delivery !== undefined && findAssemblyByKey(db, io.delivery.key) !== undefined;
  } finally {
    db.close();
  }
  if (!state.sessionFound) return { done: 'left', why: `session '${s.session}' is not in ${dbPath}`, prompt: s.prompt };
  // The server's run of a request its caller ran itself (and recorded) changes nothing.
  if (keyRecorded && io.delivery?.supersedes === false) return { done: 'ignored', why: "the request was served by its caller's own process" };
  // A record of its own waits at most twice this.
  const recordBusyMs = io.limits === undefined ? RECORD_BUSY_MS : Math.min(RECORD_BUSY_MS, io.limits.busyBudgetMs / 2);
  const fingerprint = `${state.fingerprint}|config ${configStamp(s.root)}`;

  // Everything that can leave the prompt alone is decided before the assembly, which records what it hands out.
  const promptRead = readRegularFile(s.prompt, PROMPT_MAX_BYTES);
  if (!promptRead.ok) return { done: 'left', why: `${s.prompt} ${describeRefusal(promptRead.refusal)}`, prompt: s.prompt };
  const before = promptRead.bytes;
  try {
    fs.accessSync(s.prompt, fs.constants.W_OK);
    fs.accessSync(path.dirname(s.prompt), fs.constants.W_OK);
  } catch {
    return { done: 'left', why: `${s.prompt} cannot be replaced here (no write permission)`, prompt: s.prompt };
  }
  const earlier = readKept(s.record);
  const placement = placeBlock(before, { earlierBlocks: earlier ? [earlier.block] : [], quoted, agentOpening: agentOpening(s.root, s.agent) });
  if (placement.kind === 'unknown') return { done: 'left', why: placement.why, prompt: s.prompt };

  const paramsHash = createHash('sha256').update(s.paramsBytes).digest('hex');
  // A block the warm assembler made for this very request is kept only when its delivery was
  // recorded; otherwise this run (the caller's own, after the server gave no answer) makes and records it.
  const sameRequest = earlier?.key !== undefined && earlier.key === io.delivery?.key;
  const reused = earlier !== undefined && earlier.params_sha256 === paramsHash && earlier.state === fingerprint && (!sameRequest || keyRecorded);
  let kept: Kept;
  let made: Made | undefined;
  if (reused) kept = earlier;
  else {
    const assembled = assemble(io, s);
    if ('why' in assembled) {
      // A fallback of the hook's assembly is on record (the spawn goes with the builder's prompt).
      if (assembled.fellBack !== undefined) {
        // The iteration the assembly would have served: the group's revision count, at least 1 on a retry (review feedback in the params).
        const iteration = Math.max(revisions, s.retry ? 1 : 0);
        writeRecordAlone(dbPath, fallbackRecord({ now: io.now().toISOString(), session: s.session, group: s.group, agent: s.agent, iteration }, assembled.fellBack, { source: 'prompt-hook', durationMs: monotonicMs() - s.started }), recordBusyMs, io.delivery);
      }
      return { done: 'left', why: assembled.why, prompt: s.prompt };
    }
    made = assembled;
    kept = { params_sha256: paramsHash, state: fingerprint, block: made.block, empty: made.empty, packages: made.packages, ...(io.delivery ? { key: io.delivery.key } : {}) };
  }
  // A block that shows nothing never takes the place of what the builder wrote (nor goes first where
  // it wrote nothing); nor does one without packages where the builder's section lists some (an agent
  // no package names as a consumer, packages this agent was given at this iteration already).
  // A new assembly that is not placed is on record too: the spawn got the builder's prompt, and why.
  // (A block with nothing to show delivered nothing; one that could not be placed is left out.)
  const notPlaced = (outcome: HookOutcome & { why: string }, recorded: 'nothing-delivered' | 'left'): HookOutcome => {
    if (made !== undefined) writeRecordAlone(dbPath, assemblyRecord(made.doc, { source: 'prompt-hook', durationMs: monotonicMs() - s.started, outcome: recorded, reason: outcome.why, promptTokens: builderTokens(before.toString('utf8')) }), recordBusyMs, io.delivery);
    return outcome;
  };
  if (kept.empty && placement.kind !== 'renew') return notPlaced({ done: 'ignored', why: "the block has nothing to show: the builder's prompt stays as it is" }, 'nothing-delivered');
  if (kept.packages === 0 && builderPackageCount(before, placement) > 0) return notPlaced({ done: 'ignored', why: "the block shows no package where the builder's section lists some: the builder's prompt stays as it is" }, 'left');
  const after = withBlock(before, placement, kept.block);
  const tokens = builderTokens(after.toString('utf8'));
  if (tokens > s.effectiveBudget) {
    return notPlaced({ done: 'left', why: `with the block the prompt would be about ${tokens} tokens by the builder's estimate, past its file-read budget of ${s.effectiveBudget}`, prompt: s.prompt }, 'left');
  }
  if (!after.equals(before)) writeFileAtomically(s.prompt, after, { mode: fs.statSync(s.prompt).mode & 0o777 });
  if (made !== undefined) {
    // Kept only once placed: a block that was not is made again (from the same state) next time.
    writeFileAtomically(s.record, JSON.stringify(kept) + '\n', { mode: 0o600 });
    recordDelivery(io, s, made, dbPath, tokens, recordBusyMs);
  }
  return { done: placement.kind === 'replace' ? 'replaced' : placement.kind === 'renew' ? 'renewed' : 'inserted', prompt: s.prompt, reused };
}

/** The config file's size and modification time (a changed config makes a new assembly), or `none`. */
function configStamp(root: string): string {
  try {
    const st = fs.statSync(path.join(root, 'bazinga', 'skills_config.json'));
    return `${st.size}@${st.mtimeMs}`;
  } catch {
    return 'none';
  }
}

/** The block for the spawn (recording what it hands out), or why there is none to use. */
/** What one assembly for the spawn chose (not yet recorded). */
interface Made {
  block: string;
  empty: boolean;
  packages: number;
  /** The packages it delivers, and the iteration to record them at once the prompt holds the block. */
  delivered: number[];
  iteration: number;
  /** The assembly's document (a dry run's: recorded once the block is placed). */
  doc: AssemblyDoc;
}

/** The block for the spawn, chosen as a recording run would choose it but recording nothing yet; or why there is none to use. */
function assemble(io: HookIo, s: Spawn): Made | { why: string; fellBack?: string } {
  let out = '';
  let err = '';
  let doc: AssemblyDoc | undefined;
  let fellBack: string | undefined;
  const scriptIo: ScriptIo = {
    argv: ['--params-file', s.paramsFile, '--project-root', s.root, '--dry-run'],
    cwd: s.root,
    env: io.env,
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    readStdin: () => undefined,
    now: io.now,
    ...(io.limits ? { limits: { busyBudgetMs: io.limits.busyBudgetMs, indexBudgetMs: io.limits.indexBudgetMs } } : {}),
    document: (d) => (doc = d),
    // The spawn's one writer of the index (the rows written since the last spawn); it records nothing.
    indexes: true,
    // The spawn records its delivery once the block is placed: what the session's reviews and
    // retries now say is learnt before the block is chosen.
    learns: true,
    // Redacted here: the hook prints it on stderr past the script's own door.
    fellBack: (reason) => (fellBack = redactText(reason)),
  };
  const code = runScript({ name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' }, scriptIo);
  if (err.trim() !== '') io.stderr(err);
  if (code !== 0) return { why: `assembly exited ${code}` };
  if (fellBack !== undefined) return { why: `assembly fell back (${fellBack})`, fellBack };
  if (doc === undefined) return { why: 'assembly gave no block (context assembly disabled)' };
  const d = doc as AssemblyDoc;
  const shown = (d.packages?.length ?? 0) + (d.reasoning?.entries.length ?? 0) + (d.error_patterns?.length ?? 0) + (d.strategies?.length ?? 0) + (d.memories?.length ?? 0);
  const delivered = (d.packages ?? []).map((p) => p.id);
  return { block: out, empty: shown === 0, packages: delivered.length, delivered, iteration: d.request.iteration, doc: d };
}

/**
 * Records the delivery of a placed block: its packages consumed for the agent at the assembly's
 * iteration and its assembly record, in one transaction (consume --ids); a block without packages
 * only its record. A request sent to the warm assembler records under its key (record.ts
 * settleDelivery). A database that cannot be written leaves the block placed and says so.
 */
function recordDelivery(io: HookIo, s: Spawn, made: Made, dbPath: string, promptTokens: number, busyMs: number): void {
  // `consumed`: what this run recorded (not what another spawn recorded at this iteration first):
  // the record's `delivered`, which a later run of the same request takes back (settleDelivery).
  const record = (outcome: 'recorded' | 'unrecorded' | 'nothing-delivered', reason: string | null = null, consumed: number[] = []) =>
    assemblyRecord(
      { ...made.doc, consumption: outcome === 'recorded' ? 'recorded' : 'nothing-delivered', consumed },
      { source: 'prompt-hook', durationMs: monotonicMs() - s.started, promptTokens, outcome, reason },
    );
  const delivery = io.delivery;
  if (made.delivered.length === 0) {
    writeRecordAlone(dbPath, record('nothing-delivered'), busyMs, delivery);
    return;
  }
  let err = '';
  const flags = parseFlags(
    ['--project-root', s.root, '--session', s.session, '--agent', s.agent, '--iteration', String(made.iteration), '--ids', made.delivered.join(',')],
    { ...COMMON_FLAGS, '--ids': 'string' },
  );
  let code: number;
  try {
    code = consumeIds(
      consumeIdsRequest(flags),
      flags,
      { argv: [], cwd: s.root, env: io.env, stdout: () => {}, stderr: (t) => (err += t), readStdin: () => undefined, now: io.now, ...(io.limits ? { limits: io.limits } : {}) },
      // In the transaction that records the delivery.
      (db, recorded) => void writeRecord(db, record('recorded', null, recorded), delivery),
      // The hook's assembly learnt before it chose the block.
      false,
      delivery === undefined ? undefined : (db, ids) => settleDelivery(db, delivery, ids),
    );
  } catch (e) {
    // A database that could not be opened or written: the block is placed, its delivery not recorded.
    err += (e as Error).message;
    code = 1;
  }
  if (code !== 0) {
    writeRecordAlone(dbPath, record('unrecorded', err.trim()), busyMs, delivery);
    io.stderr(`⚠ context-assembler: the block is in the prompt, but its packages were not recorded as delivered (${err.trim()})\n`);
  }
}

/** The block the hook kept for `prompt` (beside it), if any: doctor's dry run recognises a served prompt by it. */
export function keptBlockOf(prompt: string): string | undefined {
  return readKept(path.join(path.dirname(prompt), MADE_DIR, `${path.basename(prompt)}.json`))?.block;
}

function readKept(file: string): Kept | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Kept>;
    if (typeof v.params_sha256 !== 'string' || typeof v.state !== 'string' || typeof v.block !== 'string') return undefined;
    return {
      params_sha256: v.params_sha256,
      state: v.state,
      block: v.block,
      empty: v.empty === true,
      packages: typeof v.packages === 'number' ? v.packages : 0,
      ...(typeof v.key === 'string' ? { key: v.key } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Why `file` may not be read or replaced: a symbolic link (replacing it would turn it into a
 * regular file, reading it would follow it anywhere), or a folder that resolves outside the project.
 */
function refuseOutside(file: string, realRoot: string): string | undefined {
  let dir: string;
  try {
    if (fs.lstatSync(file).isSymbolicLink()) return 'is a symbolic link';
    dir = fs.realpathSync(path.dirname(file));
  } catch {
    return 'does not exist';
  }
  return inside(dir, realRoot) ? undefined : `lies outside the project ${realRoot}`;
}

/** Why the kept-block folder may not be used (it is made when absent). */
function refuseMadeDir(dir: string, realRoot: string): string | undefined {
  try {
    const st = fs.lstatSync(dir);
    if (st.isSymbolicLink()) return `${dir} is a symbolic link`;
    if (!st.isDirectory()) return `${dir} is not a folder`;
    return inside(fs.realpathSync(dir), realRoot) ? undefined : `${dir} lies outside the project`;
  } catch {
    return undefined;
  }
}

const inside = (real: string, realRoot: string) => real === realRoot || isInsideAny(real, [realRoot]);

/** The first lines of the agent's definition file as the builder finds it (.claude/agents/, then agents/), when readable. */
export function agentOpening(root: string, agent: string): string | undefined {
  const names = agent === 'tech_lead' ? ['tech_lead.md', 'techlead.md'] : [`${agent}.md`];
  for (const dir of ['.claude/agents', 'agents']) {
    for (const name of names) {
      const read = readRegularFile(path.join(root, dir, name), 4 * 1024 * 1024);
      if (!read.ok) continue;
      const lines = read.bytes.toString('utf8').split('\n').slice(0, 3);
      return lines.length < 3 ? undefined : lines.join('\n');
    }
  }
  return undefined;
}

/** The hook commands the project's settings (`.claude/settings.json`, `settings.local.json`) register for PostToolUse. */
export function projectHookCommands(root: string): unknown[] {
  const commands: unknown[] = [];
  for (const name of ['settings.json', 'settings.local.json']) {
    try {
      const settings = JSON.parse(fs.readFileSync(path.join(root, '.claude', name), 'utf8')) as { hooks?: { PostToolUse?: unknown } };
      const entries = settings.hooks?.PostToolUse;
      if (!Array.isArray(entries)) continue;
      for (const e of entries) {
        const hooks = (e as { hooks?: unknown } | null)?.hooks;
        if (Array.isArray(hooks)) for (const h of hooks) commands.push((h as { command?: unknown } | null)?.command);
      }
    } catch {
      // absent or not JSON: nothing registered there
    }
  }
  return commands;
}

/**
 * Whether the project's settings register this version's wired prompt hook (then the plugin's steps
 * aside). An earlier version's wiring does not count: its hook cannot read today's builder.
 */
export function projectWiresHook(root: string): boolean {
  return projectHookCommands(root).includes(WIRED_HOOK_COMMAND);
}


/**
 * Runs `fn` holding `lock`: a file made exclusively, holding the holder's pid. A lock whose holder
 * is gone (no such process) or older than LOCK_STALE_MS is taken over. When another holds it past
 * `waitMs`, `busy()` is returned instead.
 */
function withLock<T>(lock: string, waitMs: number, busy: () => T, fn: () => T): T {
  const deadline = Date.now() + waitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      const fd = fs.openSync(lock, 'wx', 0o600);
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (lockIsStale(lock)) fs.rmSync(lock, { force: true });
      else if (Date.now() >= deadline) return busy();
      else Atomics.wait(pause, 0, 0, 25);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function lockIsStale(lock: string): boolean {
  try {
    if (Date.now() - fs.statSync(lock).mtimeMs > LOCK_STALE_MS) return true;
    const pid = Number(fs.readFileSync(lock, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false; // being written: not stale yet
    process.kill(pid, 0);
    // A zombie (killed, never reaped: a detached server whose new parent does not reap) holds nothing.
    return isZombie(pid);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Whether process `pid` is a zombie (Linux: its state in /proc/<pid>/stat is Z); false where that cannot be read. */
function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}
