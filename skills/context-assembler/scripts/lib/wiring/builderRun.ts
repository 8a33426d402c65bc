/**
 * What a Bash command of the prompt builder did, read from the Claude Code PostToolUse event:
 * which params file it was given and which prompt it wrote. Pure.
 *
 * The builder (`python3 .claude/skills/prompt-builder/scripts/prompt_builder.py --params-file P`)
 * prints its result on stdout as one JSON document, pretty-printed over several lines
 * (`{"success": true, "prompt_file": "<absolute path>", …, "budget": {…}}`; on failure `success`
 * false, `prompt_file` null, `error` a message), and on stderr `[INFO]`/`WARNING:` lines, a
 * `[PROMPT_METADATA]` block of key=value lines and `PROMPT_FILE=<absolute path>`. Claude Code's
 * Bash tool hands a hook both streams merged in `tool_response.stdout` (its `stderr` empty; seen
 * with client 2.1.197): the JSON document comes after the metadata lines there.
 */

/** The builder's script, as the orchestrator runs it. */
const BUILDER_SCRIPT = /prompt_builder\.py\b/g;
/** Its --params-file argument (quoted or not). */
const PARAMS_ARG = /--params-file(?:=|\s+)(?:"([^"]+)"|'([^']+)'|([^\s;&|]+))/;

export type BuilderRun =
  | { kind: 'not-builder' }
  /** `effectiveBudget`: the token budget the builder kept the prompt within (its JSON's budget.effective_budget), when it said. */
  | { kind: 'built'; paramsFile: string; promptFile: string; effectiveBudget?: number }
  | { kind: 'left'; why: string };

/** Reads the event's command and response; `left` says why the prompt (if any) must stay as the builder wrote it. */
export function readBuilderRun(command: string, response: unknown): BuilderRun {
  const runs = command.match(BUILDER_SCRIPT)?.length ?? 0;
  if (runs === 0) return { kind: 'not-builder' };
  const params = PARAMS_ARG.exec(command);
  // Without --params-file the builder prints the prompt itself (its manual mode): no file to improve.
  if (params === null) return { kind: 'not-builder' };
  if (runs > 1) return { kind: 'left', why: `the command runs the prompt builder ${runs} times; each prompt is left as built` };
  const paramsFile = (params[1] ?? params[2] ?? params[3]) as string;
  const { stdout, stderr } = streams(response);
  const reported = resultOf(stdout);
  if (reported.kind === 'failed') return { kind: 'left', why: `the prompt builder reported failure${reported.error ? `: ${reported.error}` : ''}` };
  const announced = [...new Set([...`${stdout}\n${stderr}`.matchAll(/^PROMPT_FILE=(.+?)\r?$/gm)].map((m) => m[1] as string))];
  if (announced.length > 1) return { kind: 'left', why: `the prompt builder announced ${announced.length} prompt files` };
  const fromStdout = reported.kind === 'succeeded' ? reported.promptFile : undefined;
  const fromStderr = announced[0];
  if (fromStdout !== undefined && fromStderr !== undefined && fromStdout !== fromStderr) {
    return { kind: 'left', why: `the prompt builder named two prompt files (${fromStdout}, ${fromStderr})` };
  }
  const promptFile = fromStdout ?? fromStderr;
  if (promptFile === undefined) return { kind: 'left', why: 'the prompt builder reported no prompt file (no JSON result with success, no PROMPT_FILE= line)' };
  const effectiveBudget = reported.kind === 'succeeded' ? reported.effectiveBudget : undefined;
  return { kind: 'built', paramsFile, promptFile, ...(effectiveBudget === undefined ? {} : { effectiveBudget }) };
}

function streams(response: unknown): { stdout: string; stderr: string } {
  if (typeof response === 'string') return { stdout: response, stderr: '' };
  if (response === null || typeof response !== 'object') return { stdout: '', stderr: '' };
  const r = response as { stdout?: unknown; stderr?: unknown };
  return { stdout: typeof r.stdout === 'string' ? r.stdout : '', stderr: typeof r.stderr === 'string' ? r.stderr : '' };
}

type Reported = { kind: 'succeeded'; promptFile: string; effectiveBudget?: number } | { kind: 'failed'; error: string } | { kind: 'none' };

/** Lines of stdout looked at for the result: the builder's JSON is about 15 lines, after a few of metadata. */
const RESULT_LINES = 400;

/**
 * The builder's JSON result: one JSON object in stdout, in any layout, alone or after other lines
 * (the merged stderr). The last object found wins; lines that are not part of it are ignored.
 */
function resultOf(stdout: string): Reported {
  const lines = stdout.split('\n').slice(-RESULT_LINES);
  let found: Reported = { kind: 'none' };
  for (let start = 0; start < lines.length; start++) {
    if (!(lines[start] as string).trimStart().startsWith('{')) continue;
    for (let end = start; end < lines.length; end++) {
      if (!(lines[end] as string).trimEnd().endsWith('}')) continue;
      const value = parseObject(lines.slice(start, end + 1).join('\n'));
      if (value === undefined || !('success' in value)) continue;
      found = reported(value);
      start = end;
      break;
    }
  }
  return found;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function reported(r: { success?: unknown; prompt_file?: unknown; error?: unknown; budget?: unknown }): Reported {
  if (r.success === false) return { kind: 'failed', error: typeof r.error === 'string' ? r.error : '' };
  if (r.success === true && typeof r.prompt_file === 'string' && r.prompt_file !== '') {
    const budget = (r.budget as { effective_budget?: unknown } | null | undefined)?.effective_budget;
    return { kind: 'succeeded', promptFile: r.prompt_file, ...(typeof budget === 'number' && Number.isFinite(budget) && budget > 0 ? { effectiveBudget: budget } : {}) };
  }
  if (r.success === true) return { kind: 'failed', error: 'success without a prompt_file' };
  return { kind: 'none' };
}
