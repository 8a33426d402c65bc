/**
 * Installs both skills into a BAZINGA project: `<project>/.claude/skills/{context-assembler,bazinga-db}`,
 * their references under `<project>/.claude/references/`, a runtime `package.json` in
 * `.claude/skills/` whose dependencies are installed there (the skills resolve them from their own
 * location), and `bazinga/skills_config.json` when the project has none.
 *
 * Usage: npm run install-skills -- <project-dir> [--dry-run] [--no-deps]
 *        node scripts/install.mjs <project-dir> [--dry-run] [--no-deps]
 *
 * Idempotent: a second run changes nothing. Files it would overwrite that it did not write itself
 * (for example the original tool's bazinga-db SKILL.md) are first copied to
 * `.claude/skills-backup/<timestamp>/`; the original's other files (scripts/bazinga_db.py) stay.
 * Files of an earlier install that are no longer shipped are removed. `--dry-run` prints the plan.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MANIFEST = '.claude/skills/.context-assembler-install.json';

interface Manifest {
  version: string;
  files: string[];
}

export type Action =
  | { kind: 'create' | 'update'; target: string; source: string; backup?: string }
  | { kind: 'unchanged'; target: string }
  | { kind: 'remove'; target: string }
  | { kind: 'write'; target: string; content: string; note: string };

/** The files of a folder to ship (relative, posix); a launcher's code cache (dist/.code-cache/) belongs to the machine that made it. */
function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath ?? d.path, d.name)).split(path.sep).join('/'))
    .filter((f) => !f.includes('.code-cache/'))
    .sort();
}

function readManifest(project: string): Manifest | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(project, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

function runtimePackageJson(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(BUNDLE, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    allowScripts?: Record<string, boolean>;
    engines?: Record<string, string>;
  };
  const runtime = {
    name: 'bazinga-skills-runtime',
    private: true,
    type: 'module',
    description: 'Runtime dependencies of the context-assembler and bazinga-db skills (written by the context-assembler installer).',
    engines: pkg.engines,
    // esbuild builds the bundles in the source repository; the installed skills only run them.
    dependencies: Object.fromEntries(Object.entries(pkg.dependencies).filter(([name]) => name !== 'esbuild')),
    allowScripts: pkg.allowScripts,
  };
  return JSON.stringify(runtime, null, 2) + '\n';
}

/** What installing into `project` would do, file by file. Reads only. */
export function planInstall(project: string, stamp: string): Action[] {
  const previous = new Set(readManifest(project)?.files ?? []);
  const actions: Action[] = [];
  const shipped: [string, string][] = [];
  for (const skill of ['context-assembler', 'bazinga-db']) {
    for (const f of listFiles(path.join(BUNDLE, 'skills', skill))) {
      shipped.push([path.join(BUNDLE, 'skills', skill, f), `.claude/skills/${skill}/${f}`]);
    }
  }
  for (const f of listFiles(path.join(BUNDLE, 'references'))) shipped.push([path.join(BUNDLE, 'references', f), `.claude/references/${f}`]);
  for (const [source, target] of shipped) {
    const dest = path.join(project, target);
    if (!fs.existsSync(dest)) actions.push({ kind: 'create', target, source });
    else if (fs.readFileSync(dest).equals(fs.readFileSync(source))) actions.push({ kind: 'unchanged', target });
    else if (previous.has(target)) actions.push({ kind: 'update', target, source });
    else actions.push({ kind: 'update', target, source, backup: `.claude/skills-backup/${stamp}/${target.slice('.claude/'.length)}` });
  }
  const targets = new Set(shipped.map(([, t]) => t));
  for (const old of [...previous].sort()) {
    // Only ever remove what this installer can have written, whatever the manifest says.
    const ours = /^\.claude\/(?:skills\/(?:context-assembler|bazinga-db)|references)\//.test(old) && !old.split(/[\\/]/).includes('..');
    if (ours && !targets.has(old) && fs.existsSync(path.join(project, old))) actions.push({ kind: 'remove', target: old });
  }
  const runtime = runtimePackageJson();
  const runtimePath = path.join(project, '.claude/skills/package.json');
  if (!fs.existsSync(runtimePath) || fs.readFileSync(runtimePath, 'utf8') !== runtime) {
    actions.push({ kind: 'write', target: '.claude/skills/package.json', content: runtime, note: 'runtime dependencies of the skills' });
  } else actions.push({ kind: 'unchanged', target: '.claude/skills/package.json' });
  if (!fs.existsSync(path.join(project, 'bazinga/skills_config.json'))) {
    actions.push({
      kind: 'write',
      target: 'bazinga/skills_config.json',
      content: fs.readFileSync(path.join(BUNDLE, 'bazinga/skills_config.json'), 'utf8'),
      note: 'default configuration (absent before)',
    });
  }
  const manifest: Manifest = { version: packageVersion(), files: [...targets].sort() };
  const manifestText = JSON.stringify(manifest, null, 2) + '\n';
  const manifestPath = path.join(project, MANIFEST);
  if (!fs.existsSync(manifestPath) || fs.readFileSync(manifestPath, 'utf8') !== manifestText) {
    actions.push({ kind: 'write', target: MANIFEST, content: manifestText, note: 'list of installed files' });
  }
  return actions;
}

function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(BUNDLE, 'package.json'), 'utf8')) as { version: string }).version;
}

function describe(a: Action): string {
  switch (a.kind) {
    case 'create':
      return `create     ${a.target}`;
    case 'update':
      return `update     ${a.target}${a.backup ? `  (previous file kept at ${a.backup})` : ''}`;
    case 'unchanged':
      return `unchanged  ${a.target}`;
    case 'remove':
      return `remove     ${a.target}  (no longer shipped)`;
    case 'write':
      return `write      ${a.target}  (${a.note})`;
  }
}

function apply(project: string, actions: readonly Action[]): void {
  for (const a of actions) {
    const dest = path.join(project, a.target);
    if (a.kind === 'unchanged') continue;
    if (a.kind === 'remove') {
      fs.rmSync(dest, { force: true });
      continue;
    }
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    if (a.kind === 'update' && a.backup) {
      const backup = path.join(project, a.backup);
      fs.mkdirSync(path.dirname(backup), { recursive: true });
      fs.copyFileSync(dest, backup);
    }
    // Write beside the target and rename, so an interrupted install never leaves a half-written file.
    const tmp = `${dest}.tmp-${process.pid}`;
    if (a.kind === 'write') fs.writeFileSync(tmp, a.content);
    else fs.copyFileSync(a.source, tmp);
    if (a.kind === 'write') fs.chmodSync(tmp, 0o644);
    else {
      // Keep mode and modification time: a launcher compares the bundle's time with its sources'.
      const st = fs.statSync(a.source);
      fs.chmodSync(tmp, st.mode & 0o777);
      fs.utimesSync(tmp, st.atime, st.mtime);
    }
    fs.renameSync(tmp, dest);
  }
}

// ------------------------------------------------------------------ today's BAZINGA flow: wiring

/** Which spawn flow the project's BAZINGA uses. */
export type Flow = 'prompt-builder' | 'skill';

/** The prompt builder today's BAZINGA runs before each spawn (bazinga-today: a params file, then this script). */
export const PROMPT_BUILDER = '.claude/skills/prompt-builder/scripts/prompt_builder.py';
const SETTINGS = '.claude/settings.json';
/** What --wire changed, so --unwire can put it back byte for byte. */
const WIRING = '.claude/skills/.context-assembler-wiring.json';
/** The command of the hook --wire registers (Claude Code sets CLAUDE_PROJECT_DIR for hooks). */
export const HOOK_COMMAND = 'node "$CLAUDE_PROJECT_DIR/.claude/skills/context-assembler/bin/context-assembler.cjs" prompt-hook';

export function detectFlow(project: string): Flow {
  return fs.existsSync(path.join(project, PROMPT_BUILDER)) ? 'prompt-builder' : 'skill';
}

interface HookEntry {
  matcher?: string;
  hooks?: { type?: string; command?: string; timeout?: number }[];
}
type Settings = Record<string, unknown> & { hooks?: Record<string, HookEntry[]> };

const OUR_ENTRY: HookEntry = { matcher: 'Bash', hooks: [{ type: 'command', command: HOOK_COMMAND, timeout: 60 }] };
const isOurs = (e: HookEntry | null) => e !== null && typeof e === 'object' && Array.isArray(e.hooks) && e.hooks.some((h) => h?.command === HOOK_COMMAND);

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

/** One file edit of the wiring: its path, the text before (undefined: absent) and after (undefined: removed). */
export interface Edit {
  target: string;
  before: string | undefined;
  after: string | undefined;
}

/** The edits --wire makes: the hook added to .claude/settings.json, the record of the original. Empty when wired already. */
export function planWire(project: string): Edit[] {
  const { text, value } = readSettings(project);
  const post = value.hooks?.PostToolUse ?? [];
  if (post.some(isOurs)) return [];
  const next: Settings = { ...value, hooks: { ...(value.hooks ?? {}), PostToolUse: [...post, OUR_ENTRY] } };
  const record = JSON.stringify({ settings: SETTINGS, existed: text !== undefined, original: text ?? null, entry: OUR_ENTRY }, null, 2) + '\n';
  return [
    { target: SETTINGS, before: text, after: JSON.stringify(next, null, 2) + '\n' },
    { target: WIRING, before: undefined, after: record },
  ];
}

/**
 * The edits --unwire makes: the hook taken out again. When nothing else in the file changed since
 * --wire, the original bytes come back (or the file goes, when there was none); otherwise only the
 * hook's entry is removed and the rest kept as it is now.
 */
export function planUnwire(project: string): { edits: Edit[]; exact: boolean } {
  const recordFile = path.join(project, WIRING);
  const record = fs.existsSync(recordFile) ? (JSON.parse(fs.readFileSync(recordFile, 'utf8')) as { existed: boolean; original: string | null }) : undefined;
  const { text, value } = readSettings(project);
  const post = value.hooks?.PostToolUse ?? [];
  if (!post.some(isOurs)) return { edits: record ? [{ target: WIRING, before: fs.readFileSync(recordFile, 'utf8'), after: undefined }] : [], exact: true };
  const kept = post.filter((e) => !isOurs(e));
  const hooks: Record<string, HookEntry[]> = { ...(value.hooks ?? {}) };
  if (kept.length > 0) hooks.PostToolUse = kept;
  else delete hooks.PostToolUse;
  const next: Settings = { ...value };
  if (Object.keys(hooks).length > 0) next.hooks = hooks;
  else delete next.hooks;
  const original = record ? (record.original === null ? {} : (JSON.parse(record.original) as unknown)) : undefined;
  const exact = record !== undefined && JSON.stringify(sortKeys(next)) === JSON.stringify(sortKeys(original));
  const after = exact ? (record.existed ? (record.original as string) : undefined) : JSON.stringify(next, null, 2) + '\n';
  const edits: Edit[] = [{ target: SETTINGS, before: text, after }];
  if (record) edits.push({ target: WIRING, before: fs.readFileSync(recordFile, 'utf8'), after: undefined });
  return { edits, exact };
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}

/**
 * Applies edits, each through a temporary file and a rename (or a removal). A settings file that
 * is a symbolic link is written where it points (the link stays a link), and a file keeps its mode
 * (settings can hold keys under `env`: a private file stays private).
 */
function applyEdits(project: string, edits: readonly Edit[]): void {
  for (const e of edits) {
    const link = path.join(project, e.target);
    if (e.after === undefined) {
      fs.rmSync(link, { force: true });
      continue;
    }
    const dest = fs.existsSync(link) ? fs.realpathSync(link) : link;
    const mode = fs.existsSync(dest) ? fs.statSync(dest).mode & 0o777 : 0o644;
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    const tmp = `${dest}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, e.after, { mode });
    fs.chmodSync(tmp, mode);
    fs.renameSync(tmp, dest);
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

const HELP = `Install the context-assembler and bazinga-db skills into a BAZINGA project.

Usage: npm run install-skills -- <project-dir> [--dry-run] [--no-deps] [--wire | --unwire]

  <project-dir>  the project's root (it gets .claude/skills/ and, when absent, bazinga/skills_config.json)
  --dry-run      print what would be done (with --wire / --unwire: the exact edit), change nothing
  --no-deps      do not install the runtime dependencies into .claude/skills/node_modules
  --wire         also for today's BAZINGA (a prompt builder writes each spawn's prompt): register a
                 PostToolUse hook in .claude/settings.json that puts this product's block in each
                 built prompt, in place of the builder's context section; idempotent
  --unwire       take that hook out again (the file comes back byte for byte when nothing else in it
                 changed since); installs nothing

The install says which flow the project uses; nothing outside .claude/skills/, .claude/references/
and bazinga/skills_config.json is changed without --wire.
`;

/** A reader that stops early (`| head`) closes the pipe: not an error; the install still completes. */
function ignoreEpipe(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EPIPE') throw err;
}

/** What the install says about the project's spawn flow. */
function flowLine(flow: Flow, wire: 'asked' | 'dry-run' | 'no', project: string): string {
  if (flow === 'skill') return `Flow: BAZINGA's phase templates call Skill(command: "context-assembler") (no ${PROMPT_BUILDER}): nothing to wire${wire === 'no' ? '' : ', nothing changed'}.\n`;
  const wired = fs.existsSync(path.join(project, WIRING));
  if (wire === 'dry-run' && !wired) return `Flow: today's BAZINGA (${PROMPT_BUILDER} builds each prompt): --wire would make the edit above.\n`;
  if (wire === 'asked' || wired) return `Flow: today's BAZINGA (${PROMPT_BUILDER} builds each prompt): wired.\n`;
  return `Flow: today's BAZINGA (${PROMPT_BUILDER} builds each prompt): its prompts do not reach this product yet. Run again with --wire (see the edit first with --wire --dry-run).\n`;
}

function unwire(project: string, dryRun: boolean): number {
  let plan: ReturnType<typeof planUnwire>;
  try {
    plan = planUnwire(project);
  } catch (err) {
    process.stderr.write(`Cannot unwire: ${(err as Error).message}\n`);
    return 1;
  }
  if (plan.edits.length === 0) {
    process.stdout.write('Not wired: nothing to change.\n');
    return 0;
  }
  for (const e of plan.edits) {
    process.stdout.write(`${dryRun ? 'Would ' : ''}${e.after === undefined ? 'remove' : 'write'} ${e.target}${e.target === SETTINGS && plan.exact ? ' (as it was before --wire)' : ''}:\n${showEdit(e)}`);
  }
  if (!plan.exact) process.stdout.write(`${SETTINGS} changed since --wire: only the hook's entry is taken out, the rest is kept as it is now.\n`);
  if (!dryRun) applyEdits(project, plan.edits);
  return 0;
}

export function main(argv: readonly string[]): number {
  process.stdout.off('error', ignoreEpipe).on('error', ignoreEpipe);
  const flags = new Set(argv.filter((a) => a.startsWith('-')));
  const positional = argv.filter((a) => !a.startsWith('-'));
  const unknown = [...flags].filter((f) => !['--dry-run', '--no-deps', '--wire', '--unwire', '--help', '-h'].includes(f));
  if (flags.has('--help') || flags.has('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  if (unknown.length > 0 || positional.length !== 1) {
    process.stderr.write(
      `${unknown.length > 0 ? `Unknown flag ${unknown.join(', ')}` : 'Expected exactly one <project-dir>'}.\n\n${HELP}`,
    );
    return 2;
  }
  const project = path.resolve(positional[0] as string);
  if (!fs.existsSync(project) || !fs.statSync(project).isDirectory()) {
    process.stderr.write(`Project directory not found: ${project}\n`);
    return 1;
  }
  const dryRun = flags.has('--dry-run');
  if (flags.has('--wire') && flags.has('--unwire')) {
    process.stderr.write(`--wire and --unwire exclude each other.\n\n${HELP}`);
    return 2;
  }
  if (flags.has('--unwire')) return unwire(project, dryRun);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const actions = planInstall(project, stamp);
  const changes = actions.filter((a) => a.kind !== 'unchanged');
  process.stdout.write(`${dryRun ? 'Would install' : 'Installing'} into ${project}: ${changes.length} change(s), ${actions.length - changes.length} file(s) unchanged\n`);
  for (const a of changes) process.stdout.write(`  ${dryRun ? 'would ' : ''}${describe(a)}\n`);
  const deps = !flags.has('--no-deps');
  const flow = detectFlow(project);
  let wiring: Edit[];
  try {
    wiring = flags.has('--wire') && flow === 'prompt-builder' ? planWire(project) : [];
  } catch (err) {
    process.stderr.write(`Cannot wire: ${(err as Error).message}\n`);
    return 1;
  }
  if (dryRun) {
    if (deps) process.stdout.write(`  would install runtime dependencies in .claude/skills/ when they do not load\n`);
    if (flags.has('--wire') && flow === 'prompt-builder') {
      if (wiring.length === 0) process.stdout.write('Wiring: already wired; nothing to change.\n');
      else for (const e of wiring) process.stdout.write(`Wiring: would ${e.before === undefined ? 'create' : 'edit'} ${e.target}:\n${showEdit(e)}`);
    }
    process.stdout.write(flowLine(flow, flags.has('--wire') ? 'dry-run' : 'no', project));
    return 0;
  }
  apply(project, actions);
  if (wiring.length > 0) {
    applyEdits(project, wiring);
    process.stdout.write(`Wired: ${SETTINGS} has a PostToolUse hook on Bash running the prompt hook after the prompt builder (undo: --unwire; original kept in ${WIRING}).\n`);
  } else if (flags.has('--wire') && flow === 'prompt-builder') process.stdout.write('Wiring: already wired; nothing changed.\n');
  process.stdout.write(flowLine(flow, flags.has('--wire') ? 'asked' : 'no', project));
  if (deps) {
    const r = spawnSync(process.execPath, [path.join(BUNDLE, 'hooks', 'bootstrap.mjs'), path.join(project, '.claude', 'skills')], {
      stdio: 'inherit',
    });
    if (r.status !== 0) return 1;
  }
  process.stdout.write(
    `Done. The orchestrator's command: node .claude/skills/context-assembler/bin/context-assembler.cjs --session <id> --agent <type> [--group <id>]\n`,
  );
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) process.exitCode = main(process.argv.slice(2));
