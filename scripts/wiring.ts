/**
 * Wiring for today's BAZINGA flow (a prompt builder writes each spawn's prompt): `install-skills
 * --wire` registers the prompt hook in the project's `.claude/settings.json`, `--unwire` takes it out.
 *
 * What --wire wrote is recorded (`.claude/skills/.context-assembler-wiring.json`, as private as the
 * settings file: it holds the file's earlier text): --unwire gives back the original bytes whenever
 * the file still holds what --wire wrote, whatever shape it had (`{}`, `{"hooks": {}}`, an empty
 * `PostToolUse`, no file at all); when something else changed meanwhile, only the hook goes. Each
 * edit is written through a temporary file and a rename (a symbolic link is written where it
 * points), and the result is read back from `settings.json`, never assumed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomically } from '../skills/bazinga-db/scripts/lib/index.ts';
import { BUILDER_IF, isWiredHookCommand, PROMPT_BUILDER, WIRED_HOOK_COMMAND } from '../skills/context-assembler/scripts/lib/wiring/hookCommand.ts';

export { PROMPT_BUILDER };

/** Which spawn flow the project's BAZINGA uses. */
export type Flow = 'prompt-builder' | 'skill';

export const SETTINGS = '.claude/settings.json';
/** What --wire changed, so --unwire can put it back byte for byte. */
export const WIRING = '.claude/skills/.context-assembler-wiring.json';

export function detectFlow(project: string): Flow {
  return fs.existsSync(path.join(project, PROMPT_BUILDER)) ? 'prompt-builder' : 'skill';
}

interface HookCommand {
  type?: string;
  if?: string;
  command?: string;
  timeout?: number;
}
interface HookEntry {
  matcher?: string;
  hooks?: HookCommand[];
}
type Settings = Record<string, unknown> & { hooks?: Record<string, HookEntry[]> };

const OUR_HOOK: HookCommand = { type: 'command', if: BUILDER_IF, command: WIRED_HOOK_COMMAND, timeout: 60 };
const OUR_ENTRY: HookEntry = { matcher: 'Bash', hooks: [OUR_HOOK] };
const isOurHook = (h: HookCommand | null) => h !== null && typeof h === 'object' && isWiredHookCommand(h.command);
const hasOurHook = (e: HookEntry | null) => e !== null && typeof e === 'object' && Array.isArray(e.hooks) && e.hooks.some(isOurHook);
const isCurrent = (e: HookEntry | null) => hasOurHook(e) && (e as HookEntry).hooks!.some((h) => h?.command === WIRED_HOOK_COMMAND && h.if === BUILDER_IF);

/** The project's settings (undefined when absent); an unreadable or invalid file stops the wiring, changing nothing. */
function readSettings(project: string): { text: string | undefined; value: Settings } {
  const file = path.join(project, SETTINGS);
  if (!fs.existsSync(file)) return { text: undefined, value: {} };
  if (!fs.statSync(file).isFile()) throw new Error(`${file} is not a regular file`);
  const text = fs.readFileSync(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not valid JSON (${(err as Error).message}); fix it, then run again`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${file} must hold a JSON object`);
  const hooks = (value as Settings).hooks;
  if (hooks !== undefined && (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks))) throw new Error(`${file}: "hooks" must be an object`);
  if (hooks?.PostToolUse !== undefined && !Array.isArray(hooks.PostToolUse)) throw new Error(`${file}: "hooks.PostToolUse" must be an array`);
  return { text, value: value as Settings };
}

/** Whether `.claude/settings.json` registers this version's prompt hook (`any`: or an earlier version's), read from the file itself. */
export function isWired(project: string, any = false): boolean {
  try {
    return (readSettings(project).value.hooks?.PostToolUse ?? []).some(any ? hasOurHook : isCurrent);
  } catch {
    return false;
  }
}

/** What --wire recorded. */
interface WiringRecord {
  settings: string;
  existed: boolean;
  /** The settings file before the first --wire (null: there was none). */
  original: string | null;
  /** The text --wire wrote (absent in a record of an earlier version). */
  written?: string;
}

function readRecord(project: string): { text: string; record: WiringRecord } | undefined {
  const file = path.join(project, WIRING);
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  try {
    const record = JSON.parse(text) as WiringRecord;
    if (typeof record.existed !== 'boolean' || (record.original !== null && typeof record.original !== 'string')) throw new Error('fields');
    return { text, record };
  } catch {
    throw new Error(`${file} is not a wiring record (not written by --wire?); move it away, then run again`);
  }
}

/** One file edit of the wiring: its path, the text before (undefined: absent) and after (undefined: removed), and its mode. */
export interface Edit {
  target: string;
  before: string | undefined;
  after: string | undefined;
  /** The mode the file is written with (the record: as private as the settings file). */
  mode?: number;
}

function settingsMode(project: string): number {
  try {
    return fs.statSync(path.join(project, SETTINGS)).mode & 0o777;
  } catch {
    return 0o644;
  }
}

/**
 * The edits --wire makes: this version's hook added to `.claude/settings.json` (or an earlier
 * version's replaced), and the record. Empty when wired already.
 */
export function planWire(project: string): Edit[] {
  const { text, value } = readSettings(project);
  const post = value.hooks?.PostToolUse ?? [];
  if (post.some(isCurrent)) return [];
  const upgraded = post.some(hasOurHook);
  const entries = upgraded
    ? post.map((e) => (hasOurHook(e) ? { ...e, hooks: (e.hooks ?? []).map((h) => (isOurHook(h) ? OUR_HOOK : h)) } : e))
    : [...post, OUR_ENTRY];
  const after = JSON.stringify({ ...value, hooks: { ...(value.hooks ?? {}), PostToolUse: entries } }, null, 2) + '\n';
  const earlier = readRecord(project);
  // An upgrade keeps the first --wire's original: --unwire gives back what was there before any.
  const record: WiringRecord = earlier
    ? { ...earlier.record, written: after }
    : { settings: SETTINGS, existed: text !== undefined, original: text ?? null, written: after };
  const mode = settingsMode(project);
  return [
    { target: SETTINGS, before: text, after, mode },
    { target: WIRING, before: earlier?.text, after: JSON.stringify(record, null, 2) + '\n', mode: mode & 0o666 },
  ];
}

/**
 * The edits --unwire makes. When the settings file still holds what --wire wrote, the original
 * bytes come back (or the file goes, when there was none): `exact`. Otherwise only the hook is
 * taken out and the rest kept as it is now, with the containers the original had (an empty
 * `PostToolUse` or `hooks` stays when the original had one).
 */
export function planUnwire(project: string): { edits: Edit[]; exact: boolean } {
  const earlier = readRecord(project);
  const { text, value } = readSettings(project);
  const dropRecord: Edit[] = earlier ? [{ target: WIRING, before: earlier.text, after: undefined }] : [];
  const post = value.hooks?.PostToolUse ?? [];
  if (!post.some(hasOurHook)) return { edits: dropRecord, exact: true };
  const mode = settingsMode(project);
  if (earlier && earlier.record.written !== undefined && text === earlier.record.written) {
    return { edits: [{ target: SETTINGS, before: text, after: earlier.record.existed ? (earlier.record.original as string) : undefined, mode }, ...dropRecord], exact: true };
  }
  const original = originalShape(earlier?.record);
  const kept = post
    .map((e) => (hasOurHook(e) ? { ...e, hooks: (e.hooks ?? []).filter((h) => !isOurHook(h)) } : e))
    .filter((e) => !(Array.isArray(e.hooks) && e.hooks.length === 0));
  const hooks: Record<string, HookEntry[]> = { ...(value.hooks ?? {}) };
  if (kept.length > 0 || original.postToolUse) hooks.PostToolUse = kept;
  else delete hooks.PostToolUse;
  const next: Settings = { ...value, hooks };
  if (Object.keys(hooks).length === 0 && !original.hooks) delete next.hooks;
  const after = JSON.stringify(next, null, 2) + '\n';
  // No record (an earlier version's wiring without one): the same text as before --wire when only the hook changed.
  const exact = earlier?.record.original !== undefined && earlier.record.original !== null && JSON.stringify(JSON.parse(earlier.record.original)) === JSON.stringify(next);
  return { edits: [{ target: SETTINGS, before: text, after: exact ? (earlier!.record.original as string) : after, mode }, ...dropRecord], exact };
}

/** Which containers the settings had before --wire (unknown without a record: none). */
function originalShape(record: WiringRecord | undefined): { hooks: boolean; postToolUse: boolean } {
  if (!record || record.original === null) return { hooks: false, postToolUse: false };
  try {
    const v = JSON.parse(record.original) as Settings;
    return { hooks: v.hooks !== undefined, postToolUse: v.hooks?.PostToolUse !== undefined };
  } catch {
    return { hooks: false, postToolUse: false };
  }
}

/**
 * Applies edits, each through a temporary file and a rename (or a removal). A file that is a
 * symbolic link is written where it points (the link stays a link); a file keeps its mode.
 */
export function applyEdits(project: string, edits: readonly Edit[]): void {
  for (const e of edits) {
    const link = path.join(project, e.target);
    if (e.after === undefined) {
      fs.rmSync(link, { force: true });
      continue;
    }
    fs.mkdirSync(path.dirname(link), { recursive: true });
    writeFileAtomically(link, e.after, e.mode === undefined ? {} : { mode: e.mode });
  }
}

/** The edit as a diff: the lines before and after the part that changed, - and + for the rest. */
export function showEdit(e: Edit): string {
  const a = e.before === undefined ? [] : e.before.replace(/\n$/, '').split('\n');
  const b = e.after === undefined ? [] : e.after.replace(/\n$/, '').split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out = [`--- ${e.before === undefined ? '/dev/null' : e.target}`, `+++ ${e.after === undefined ? '/dev/null' : e.target}`];
  for (const l of a.slice(Math.max(0, head - 3), head)) out.push(`  ${l}`);
  for (const l of a.slice(head, a.length - tail)) out.push(`- ${l}`);
  for (const l of b.slice(head, b.length - tail)) out.push(`+ ${l}`);
  for (const l of a.slice(a.length - tail, a.length - tail + 3)) out.push(`  ${l}`);
  return out.join('\n') + '\n';
}
