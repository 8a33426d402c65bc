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
import { applyRelevance, CONFIG as RELEVANCE_CONFIG, planRelevance } from '../hooks/relevance.mjs';
import { writeFileAtomically } from '../skills/bazinga-db/scripts/lib/index.ts';
import { applyEdits, detectFlow, isWired, planUnwire, planWire, PROMPT_BUILDER, SETTINGS, showEdit, WIRING, type Edit, type Flow } from './wiring.ts';

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
  // The documents (the README's screenshot stays behind).
  for (const f of listFiles(path.join(BUNDLE, 'references')).filter((name) => name.endsWith('.md'))) shipped.push([path.join(BUNDLE, 'references', f), `.claude/references/${f}`]);
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
    // Written beside the target and renamed (an interrupted install never leaves a half-written
    // file); its own files replaced, never written through a link. A copy keeps its source's mode
    // and modification time: a launcher compares the bundle's time with its sources'.
    if (a.kind === 'write') writeFileAtomically(dest, a.content, { mode: 0o644, replaceLink: true });
    else {
      const st = fs.statSync(a.source);
      writeFileAtomically(dest, fs.readFileSync(a.source), { mode: st.mode & 0o777, mtime: st.mtime, replaceLink: true });
    }
  }
}

const HELP = `Install the context-assembler and bazinga-db skills into a BAZINGA project.

Usage: npm run install-skills -- <project-dir> [--dry-run] [--no-deps] [--wire | --unwire]

  <project-dir>  the project's root (it gets .claude/skills/ and, when absent, bazinga/skills_config.json)
  --dry-run      print what would be done (with --wire / --unwire: the exact edit), change nothing
  --no-deps      do not install the runtime dependencies into .claude/skills/node_modules
  --wire         also for today's BAZINGA (a prompt builder writes each spawn's prompt) without the
                 plugin: register a PostToolUse hook in .claude/settings.json that puts this product's
                 block in each built prompt, in place of the builder's context section; idempotent
  --unwire       take that hook out again (the file comes back byte for byte when nothing else in it
                 changed since); installs nothing

The install says which flow the project uses and what to do next. Where bazinga/skills_config.json
carries BAZINGA's shipped "enable_fts5": false, it turns relevance on once (one line; the previous
file is kept beside it; set back to false, it is never changed again). Nothing else outside
.claude/skills/ and .claude/references/ is changed without --wire.
`;

/** A reader that stops early (`| head`) closes the pipe: not an error; the install still completes. */
function ignoreEpipe(err: NodeJS.ErrnoException): void {
  if (err.code !== 'EPIPE') throw err;
}

/** The install's last lines: what the project's flow needs next (wiring read back from settings.json). */
function nextStep(flow: Flow, project: string, dryRun: boolean, wireAsked: boolean): string {
  if (flow === 'skill') {
    return `Flow: BAZINGA's phase templates call Skill(command: "context-assembler") (no ${PROMPT_BUILDER}): nothing to wire.
Next: the orchestrator's command is node .claude/skills/context-assembler/bin/context-assembler.cjs --session <id> --agent <type> [--group <id>]; check with: npm run doctor -- --project-root "${project}"
`;
  }
  const head = `Flow: today's BAZINGA (${PROMPT_BUILDER} builds each prompt).`;
  if (dryRun) return `${head}\nNext: ${wireAsked ? 'run without --dry-run to make the edit above' : 'run without --dry-run, with --wire (or install the plugin, which serves these spawns by itself)'}.\n`;
  if (isWired(project)) return `${head} Wired: each built prompt gets the block in place of the builder's context section.\nNext: nothing; check with: npm run doctor -- --project-root "${project}"\n`;
  return `${head} Not wired: its prompts do not reach this product yet.\nNext: run again with --wire (see the edit first with --wire --dry-run), or install the plugin instead, which serves these spawns by itself.\n`;
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
  if (!plan.exact) process.stdout.write(`${SETTINGS} changed since --wire: only the hook is taken out, the rest is kept as it is now.\n`);
  if (dryRun) return 0;
  applyEdits(project, plan.edits);
  if (isWired(project, true)) {
    process.stderr.write(`${SETTINGS} still registers the prompt hook (changed while it was written?); run --unwire again.\n`);
    return 1;
  }
  process.stdout.write('Unwired.\n');
  return 0;
}

/** Turns relevance on where the project's config carries BAZINGA's shipped enable_fts5: false (once; relevance.mjs). */
function relevance(project: string, dryRun: boolean): void {
  const plan = planRelevance(project);
  if (plan.state === 'on') return;
  if (plan.state !== 'turn-on') {
    process.stdout.write(`${plan.line}\n`);
    return;
  }
  if (dryRun) {
    const before = fs.readFileSync(path.join(project, RELEVANCE_CONFIG), 'utf8');
    process.stdout.write(`Would turn relevance on:\n${showEdit({ target: RELEVANCE_CONFIG, before, after: plan.text })}`);
    return;
  }
  applyRelevance(project, plan);
  process.stdout.write(`${plan.line}\n`);
}

/**
 * Builds the project's search index outside the orchestrator's spawns: with a database and the
 * installed dependencies, the installed bazinga-db's `index-search --background` (a detached,
 * lowest-priority process; it says nothing and ends by itself).
 */
function indexInBackground(project: string, depsInstalled: boolean): void {
  if (!depsInstalled || !fs.existsSync(path.join(project, 'bazinga', 'bazinga.db'))) return;
  const launcher = path.join(project, '.claude', 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
  const r = spawnSync(process.execPath, [launcher, '--quiet', '--project-root', project, 'index-search', '--background'], { encoding: 'utf8', timeout: 30_000 });
  if (r.status === 0) process.stdout.write('Search index: being built in the background (bazinga-db index-search), so no spawn pays for it.\n');
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
  const wireAsked = flags.has('--wire') && flow === 'prompt-builder';
  let wiring: Edit[];
  try {
    wiring = wireAsked ? planWire(project) : [];
  } catch (err) {
    process.stderr.write(`Cannot wire: ${(err as Error).message}\n`);
    return 1;
  }
  if (dryRun) {
    if (deps) process.stdout.write(`  would install runtime dependencies in .claude/skills/ when they do not load\n`);
    if (wireAsked) {
      if (wiring.length === 0) process.stdout.write('Wiring: already wired; nothing to change.\n');
      else for (const e of wiring) process.stdout.write(`Wiring: would ${e.before === undefined ? 'create' : 'edit'} ${e.target}:\n${showEdit(e)}`);
    }
    relevance(project, true);
    process.stdout.write(nextStep(flow, project, true, wireAsked));
    return 0;
  }
  apply(project, actions);
  if (wiring.length > 0) {
    applyEdits(project, wiring);
    if (!isWired(project)) {
      process.stderr.write(`Not wired: ${SETTINGS} does not hold the hook after it was written (another program changed it meanwhile?); run --wire again.\n`);
      return 1;
    }
    process.stdout.write(`Wired: ${SETTINGS} has a PostToolUse hook on Bash that puts the block in each prompt the prompt builder writes (undo: --unwire; what it changed is recorded in ${WIRING}).\n`);
  } else if (wireAsked) process.stdout.write('Wiring: already wired; nothing changed.\n');
  relevance(project, false);
  if (deps) {
    const r = spawnSync(process.execPath, [path.join(BUNDLE, 'hooks', 'bootstrap.mjs'), path.join(project, '.claude', 'skills')], {
      stdio: 'inherit',
    });
    if (r.status !== 0) return 1;
  }
  indexInBackground(project, deps);
  process.stdout.write(`Done.\n${nextStep(flow, project, false, wireAsked)}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) process.exitCode = main(process.argv.slice(2));
