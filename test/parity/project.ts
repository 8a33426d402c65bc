/**
 * The projects the parity runs work in, and Claude Code's part in a spawn:
 *   - layoutFromCheckout: a BAZINGA project laid out from a checkout of BAZINGA as `bazinga init`
 *     lays it out (src/bazinga_cli/__init__.py, BazingaSetup): agent definitions into
 *     `.claude/agents/`, every skill but skill-creator into `.claude/skills/` (SKILL.md, its
 *     folders, the scripts at its root), `templates/` into `bazinga/templates/`, the three config
 *     files and `bazinga/config/*.json` (the checkout's `bazinga/config` links to `workflow/`) and
 *     `bazinga/schemas/` into `bazinga/`, `.claude/templates/`. The code stays the checkout's: it
 *     is copied into a temporary project, never into this repository;
 *   - installProduct: this product installed and wired as the repository's tests do
 *     (`install-skills --no-deps`, node_modules linked, then `--wire`);
 *   - runBuilder / runBash: the orchestrator's Bash call of the prompt builder, the way Claude
 *     Code's Bash tool runs it (both streams into one), and then every PostToolUse hook on Bash the
 *     project's settings register, the way Claude Code runs them (the `if` rule, /bin/sh, the event
 *     on stdin, CLAUDE_PROJECT_DIR).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers.ts';

export const BUILDER = '.claude/skills/prompt-builder/scripts/prompt_builder.py';
export const buildCommand = (params: string, builder = BUILDER) => `python3 ${builder} --params-file "${params}"`;

/** What a checkout must hold for a parity run; the first one missing (said as a reader can act on it), or undefined. */
export function missingFromCheckout(checkout: string): string | undefined {
  for (const rel of [path.join('.claude', 'skills', 'prompt-builder', 'scripts', 'prompt_builder.py'), path.join('.claude', 'skills', 'bazinga-db', 'scripts', 'bazinga_db.py'), 'agents']) {
    if (!fs.existsSync(path.join(checkout, rel))) return rel;
  }
  // A session's start seeds bazinga/config/*.json (init_session.py fails without them); the repository links that folder to workflow/.
  if (![path.join('bazinga', 'config'), 'workflow'].some((d) => fs.existsSync(path.join(checkout, d, 'transitions.json')))) {
    return `workflow/transitions.json (bazinga/config links to workflow/: git -C ${checkout} checkout HEAD -- workflow)`;
  }
  return undefined;
}

const copyFiles = (from: string, to: string, keep: (name: string) => boolean) => {
  if (!fs.existsSync(from)) return;
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    if (e.isFile() && keep(e.name)) fs.copyFileSync(path.join(from, e.name), path.join(to, e.name));
  }
};

/** Lays out at `root` what `bazinga init` installs from `checkout` (see the header). */
export function layoutFromCheckout(checkout: string, root: string): void {
  copyFiles(path.join(checkout, 'agents'), path.join(root, '.claude', 'agents'), (n) => n.endsWith('.md'));
  const skills = path.join(checkout, '.claude', 'skills');
  for (const e of fs.readdirSync(skills, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name === 'skill-creator') continue;
    const from = path.join(skills, e.name);
    const to = path.join(root, '.claude', 'skills', e.name);
    fs.mkdirSync(to, { recursive: true });
    for (const item of fs.readdirSync(from, { withFileTypes: true })) {
      if (item.isDirectory()) fs.cpSync(path.join(from, item.name), path.join(to, item.name), { recursive: true });
      else if (item.name === 'SKILL.md' || /\.(py|sh|txt)$/.test(item.name) || (item.name.endsWith('.md') && item.name !== 'README.md')) fs.copyFileSync(path.join(from, item.name), path.join(to, item.name));
    }
  }
  const templates = path.join(checkout, 'templates');
  if (fs.existsSync(templates)) fs.cpSync(templates, path.join(root, 'bazinga', 'templates'), { recursive: true });
  copyFiles(path.join(checkout, 'bazinga'), path.join(root, 'bazinga'), (n) => ['model_selection.json', 'challenge_levels.json', 'skills_config.json'].includes(n));
  // bazinga/config is a link to ../workflow in the repository (a wheel packs workflow/ there).
  const config = [path.join(checkout, 'bazinga', 'config'), path.join(checkout, 'workflow')].find((d) => fs.existsSync(d));
  if (config) copyFiles(config, path.join(root, 'bazinga', 'config'), (n) => n.endsWith('.json'));
  copyFiles(path.join(checkout, 'bazinga', 'schemas'), path.join(root, 'bazinga', 'schemas'), (n) => n.endsWith('.json'));
  copyFiles(path.join(checkout, '.claude', 'templates'), path.join(root, '.claude', 'templates'), () => true);
  fs.mkdirSync(path.join(root, 'bazinga', 'artifacts'), { recursive: true });
}

/** Installs this product into the project and wires its prompt hook (install-skills, as test/wiring.test.ts does). */
export function installProduct(root: string): void {
  const install = (...args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'install.mjs'), root, ...args, '--no-deps'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`install-skills ${args.join(' ')} exited ${r.status}: ${r.stderr.trim().slice(0, 400)}`);
  };
  install();
  const modules = path.join(root, '.claude', 'skills', 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), modules, 'dir');
  install('--wire');
}

export interface BashRun {
  code: number | null;
  /** What the Bash tool returns: both streams, merged. */
  output: string;
  hooks: { code: number | null; stderr: string }[];
}

/** Whether a hook's `if` rule (permission-rule syntax, `*` any text) lets it run for this Bash command. */
function ifMatches(rule: string | undefined, command: string): boolean {
  if (rule === undefined) return true;
  const m = /^Bash\((.*)\)$/.exec(rule);
  if (!m) return false;
  return new RegExp(`^${(m[1] as string).split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(command);
}

type Settings = { hooks?: { PostToolUse?: { matcher?: string; hooks: { command: string; if?: string }[] }[] } };

/**
 * One Bash call of the orchestrator as Claude Code makes it: the command through /bin/sh with both
 * streams into one; then, with `hooks`, each PostToolUse hook on Bash of the project's settings,
 * its command through /bin/sh with the event on stdin (`beforeHooks` runs in between).
 */
export function runBash(root: string, command: string, opts: { env: NodeJS.ProcessEnv; hooks: boolean; beforeHooks?: () => void }): BashRun {
  const r = spawnSync('/bin/sh', ['-c', `${command} 2>&1`], { cwd: root, env: opts.env, encoding: 'utf8' });
  const run: BashRun = { code: r.status, output: r.stdout, hooks: [] };
  if (!opts.hooks) return run;
  opts.beforeHooks?.();
  const event = {
    session_id: 'parity', hook_event_name: 'PostToolUse', cwd: root, tool_name: 'Bash',
    tool_input: { command, description: 'Build the agent prompt' },
    tool_response: { stdout: r.stdout.replace(/\n$/, ''), stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
  };
  const file = path.join(root, '.claude', 'settings.json');
  const settings: Settings = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Settings) : {};
  for (const entry of settings.hooks?.PostToolUse ?? []) {
    if (entry.matcher !== undefined && !new RegExp(`^(?:${entry.matcher})$`).test('Bash')) continue;
    for (const h of entry.hooks) {
      if (!ifMatches(h.if, command)) continue;
      const hr = spawnSync('/bin/sh', ['-c', h.command], { cwd: root, input: JSON.stringify(event) + '\n', encoding: 'utf8', env: { ...opts.env, CLAUDE_PROJECT_DIR: root } });
      run.hooks.push({ code: hr.status, stderr: hr.stderr });
    }
  }
  return run;
}

/** The builder's JSON result in its merged output: the last top-level object (`json.dumps(…, indent=2)`) with a `success` key. */
export function builderResult(output: string): { success?: boolean; tokens_estimate?: number; error?: string | null; budget?: { effective_budget?: number } } {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i] !== '{') continue;
    const j = lines.indexOf('}', i);
    if (j < 0) continue;
    try {
      const v = JSON.parse(lines.slice(i, j + 1).join('\n')) as Record<string, unknown>;
      if ('success' in v) return v;
    } catch {
      // not the result
    }
  }
  return {};
}
