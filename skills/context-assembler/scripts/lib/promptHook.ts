/**
 * Today's BAZINGA spawn flow, reached through a Claude Code hook: the orchestrator writes a params
 * file for each spawn and runs the prompt-builder skill (one Bash command:
 * `python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file "<params>"`),
 * which writes the whole prompt to the params' `output_file` and prints one JSON object
 * (`{"success": true, "prompt_file": …}`). Registered as a PostToolUse hook on Bash (by
 * `install-skills --wire`), this runs right after that command and before the agent is spawned:
 * it assembles this product's block from the same params file (recording what it hands out, as
 * the orchestrator's own call would) and puts it in the prompt in place of the builder's own
 * context section (`## Context from Prior Work` up to the next `## ` heading), between markers,
 * so the agent sees one context section and a second run replaces the block instead of adding one.
 * The block made for a prompt is kept beside it (`.context-assembler/<prompt>.json`, with the hash
 * of the params file): a prompt rebuilt for the same spawn gets the same block, where a new
 * assembly would find the packages consumed at this iteration already and hand out fewer.
 *
 * It never blocks and never damages a prompt: any other Bash command, a failed build, a fallback
 * or disabled block, an unreadable prompt or any error leaves the prompt as the builder wrote it
 * (a warning on stderr), and the exit code is always 0. The prompt is rewritten whole through a
 * temporary file and a rename.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describeRefusal, readRegularFile, SPAWNED_AGENTS } from '../../../bazinga-db/scripts/lib/index.ts';
import { PARAMS_FILE_MAX_BYTES } from './params.ts';
import { runScript, type ScriptIo } from './shell.ts';

export const BLOCK_BEGIN = '<!-- context-assembler:begin -->';
export const BLOCK_END = '<!-- context-assembler:end -->';
/** The heading of the section the prompt builder writes from the same database. */
export const BUILDER_SECTION = '## Context from Prior Work';
/** The heading the builder writes right after its context section today; any other `## ` heading outside code ends it otherwise. */
const AFTER_SECTION = '## Skills Checklist';
/** Where the hook keeps the block it made for a prompt (beside it), so a rebuild of the same spawn gets the same block. */
const MADE_DIR = '.context-assembler';

/** The prompt builder's command, and its --params-file argument (quoted or not). */
const BUILDER_COMMAND = /prompt_builder\.py\b[\s\S]*?--params-file(?:=|\s+)(?:"([^"]+)"|'([^']+)'|([^\s;&|]+))/;

export interface HookIo {
  stdin: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stderr: (text: string) => void;
  now: () => Date;
}

/** What the hook did, for the caller's tests and its one line on stderr. */
export type HookOutcome =
  | { done: 'ignored'; why: string }
  | { done: 'left'; why: string; prompt?: string }
  | { done: 'replaced' | 'inserted' | 'renewed'; prompt: string };

/** Runs the hook on the JSON Claude Code passes on stdin; always exit 0. */
export function runPromptHook(io: HookIo): HookOutcome {
  let outcome: HookOutcome;
  try {
    outcome = handle(io);
  } catch (err) {
    outcome = { done: 'left', why: (err as Error).message };
  }
  if (outcome.done === 'left') io.stderr(`⚠ context-assembler: prompt left as the builder wrote it (${outcome.why})\n`);
  return outcome;
}

function handle(io: HookIo): HookOutcome {
  let input: { tool_name?: unknown; tool_input?: { command?: unknown }; tool_response?: unknown; cwd?: unknown };
  try {
    input = JSON.parse(io.stdin) as typeof input;
  } catch {
    return { done: 'ignored', why: 'stdin is not a hook event' };
  }
  const command = input.tool_input?.command;
  if (input.tool_name !== 'Bash' || typeof command !== 'string') return { done: 'ignored', why: 'not a Bash command' };
  const m = BUILDER_COMMAND.exec(command);
  if (!m) return { done: 'ignored', why: 'not the prompt builder' };
  const cwd = typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : io.cwd;
  const root = io.env.CLAUDE_PROJECT_DIR || cwd;
  const paramsFile = path.resolve(cwd, (m[1] ?? m[2] ?? m[3]) as string);

  const built = builderResult(input.tool_response);
  if (built === undefined) return { done: 'left', why: 'the prompt builder did not report success' };
  const prompt = path.resolve(cwd, built);
  const inside = path.relative(fs.realpathSync(root), fs.realpathSync(prompt));
  if (inside.startsWith('..') || path.isAbsolute(inside)) return { done: 'left', why: `${prompt} is outside the project`, prompt };
  const stat = fs.statSync(prompt);
  if (!stat.isFile()) return { done: 'left', why: `${prompt} is not a regular file`, prompt };
  // Checked and bounded as --params-file itself is (files.ts): a FIFO or a huge file never stalls the hook.
  const paramsRead = readRegularFile(paramsFile, PARAMS_FILE_MAX_BYTES);
  if (!paramsRead.ok) return { done: 'left', why: `${paramsFile} ${describeRefusal(paramsRead.refusal)}`, prompt };
  const paramsBytes = paramsRead.bytes;
  let params: { agent_type?: unknown; output_file?: unknown };
  try {
    params = JSON.parse(paramsBytes.toString('utf8')) as typeof params;
  } catch {
    return { done: 'left', why: `${paramsFile} is not JSON`, prompt };
  }
  // Spawns this product does not serve (the project manager's) keep the builder's prompt, silently.
  if (typeof params.agent_type !== 'string' || !(SPAWNED_AGENTS as readonly string[]).includes(params.agent_type.trim().toLowerCase())) {
    return { done: 'ignored', why: `agent type ${String(params.agent_type)} is not one this product assembles for` };
  }
  // One command may build several prompts: the block goes only into the one this params file is for.
  if (typeof params.output_file !== 'string' || path.resolve(cwd, params.output_file) !== prompt) {
    return { done: 'left', why: `${prompt} is not the output_file of ${paramsFile}`, prompt };
  }

  // A prompt rebuilt for the same spawn (the same params) gets the block made for it before: a new
  // assembly would find those packages consumed at this iteration and hand out fewer.
  const made = path.join(path.dirname(prompt), MADE_DIR, `${path.basename(prompt)}.json`);
  const paramsHash = createHash('sha256').update(paramsBytes).digest('hex');
  const earlier = readMade(made);
  const block = earlier?.params_sha256 === paramsHash ? earlier.block : assemble(io, paramsFile, root, cwd);
  if (typeof block !== 'string') return { ...block, prompt };
  if (earlier?.params_sha256 !== paramsHash) writeAtomically(made, JSON.stringify({ params_sha256: paramsHash, block }) + '\n', 0o644);
  const before = fs.readFileSync(prompt, 'utf8');
  const { text, done } = withBlock(before, block);
  writeAtomically(prompt, text, stat.mode & 0o777);
  return { done, prompt };
}

function readMade(file: string): { params_sha256: string; block: string } | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as { params_sha256?: unknown; block?: unknown };
    return typeof v.params_sha256 === 'string' && typeof v.block === 'string' ? { params_sha256: v.params_sha256, block: v.block } : undefined;
  } catch {
    return undefined;
  }
}

function writeAtomically(file: string, text: string, mode: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.context-assembler-${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, text, { mode });
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

/** The block for the params file (recording what it hands out), or why there is none to use. */
function assemble(io: HookIo, paramsFile: string, root: string, cwd: string): string | { done: 'left'; why: string } {
  let out = '';
  let err = '';
  const scriptIo: ScriptIo = {
    argv: ['--params-file', paramsFile, '--project-root', root],
    cwd,
    env: io.env,
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    readStdin: () => undefined,
    now: io.now,
  };
  const code = runScript({ name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' }, scriptIo);
  if (err.trim() !== '') io.stderr(err);
  if (code !== 0 || !out.startsWith('## Context for') || out.includes('**Fallback Mode**') || out.includes('context assembly is disabled')) {
    return { done: 'left', why: code !== 0 ? `assembly exited ${code}` : 'assembly gave no block (fallback or disabled)' };
  }
  return out;
}

/** The prompt file the builder reported, when it reported success (its JSON object is the last one on stdout). */
function builderResult(response: unknown): string | undefined {
  const stdout = typeof response === 'string' ? response : (response as { stdout?: unknown } | null)?.stdout;
  if (typeof stdout !== 'string') return undefined;
  for (const line of stdout.trim().split('\n').reverse()) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const r = JSON.parse(t) as { success?: unknown; prompt_file?: unknown };
      return r.success === true && typeof r.prompt_file === 'string' && r.prompt_file !== '' ? r.prompt_file : undefined;
    } catch {
      continue;
    }
  }
  return undefined;
}

/**
 * The prompt with the block in it: between the markers when they are there already (a second
 * run), else in place of the builder's context section, else before the prompt's first `## `
 * heading (the builder leaves its section out when it found nothing), else at the end.
 */
export function withBlock(prompt: string, block: string): { text: string; done: 'replaced' | 'inserted' | 'renewed' } {
  const marked = `${BLOCK_BEGIN}\n${block.trimEnd()}\n${BLOCK_END}\n`;
  const begin = prompt.indexOf(BLOCK_BEGIN);
  const end = begin === -1 ? -1 : prompt.indexOf(BLOCK_END, begin);
  if (begin !== -1 && end !== -1) {
    const after = prompt.slice(end + BLOCK_END.length).replace(/^\n/, '');
    return { text: prompt.slice(0, begin) + marked + after, done: 'renewed' };
  }
  const lines = prompt.split('\n');
  // Headings inside fenced code (a reasoning entry quoting markdown) are not the prompt's.
  let fenced = false;
  const heading = lines.map((l) => {
    if (/^\s*(```|~~~)/.test(l)) fenced = !fenced;
    return !fenced && /^## /.test(l);
  });
  const section = lines.findIndex((l, i) => heading[i] && l.trimEnd() === BUILDER_SECTION);
  if (section !== -1) {
    // Today's next section when it follows; else the next `## ` heading outside code; else the end.
    let next = lines.findIndex((l, i) => i > section && heading[i] && l.trimEnd() === AFTER_SECTION);
    if (next === -1) next = lines.findIndex((_l, i) => i > section && heading[i]);
    if (next === -1) next = lines.length;
    const text = [...lines.slice(0, section), ...marked.split('\n').slice(0, -1), '', ...lines.slice(next)].join('\n');
    return { text, done: 'replaced' };
  }
  const first = heading.indexOf(true);
  if (first === -1) return { text: `${prompt.replace(/\n*$/, '\n\n')}${marked}`, done: 'inserted' };
  return { text: [...lines.slice(0, first), ...marked.split('\n').slice(0, -1), '', ...lines.slice(first)].join('\n'), done: 'inserted' };
}
