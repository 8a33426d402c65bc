#!/usr/bin/env node
// Bootstrap of the plugin's dependencies and bundles, for the SessionStart hook.
//
// Usage: node hooks/bootstrap.mjs [BUNDLE_ROOT]     (default: the folder above this file)
//
// Claude Code installs a plugin by copying it and running `npm ci --ignore-scripts` in the copy:
// node_modules is there, but better-sqlite3's native part was never compiled and no bundle was
// built. This hook finds which state the copy is in and repairs it:
//   - everything loads and the bundles are fresh: nothing to do (one probe process, no output);
//   - no node_modules (or a dependency missing): `npm ci --omit=dev` (compiles better-sqlite3);
//   - node_modules there, better-sqlite3's native part not built or built for another Node:
//     `npm rebuild better-sqlite3` (it compiles: 1-3 minutes);
//   - then, when a bundle is missing or older than its sources: `node scripts/build.mjs`.
// While npm works it prints a progress line on stderr every PROGRESS_MS; the outcome is one line
// on stdout. It runs under a lock folder so concurrent sessions do not repair twice, bounded in
// time (CONTEXT_ASSEMBLER_BOOTSTRAP_TIMEOUT_MS, default 300000 per step), and never fails the
// session: it always exits 0, and when a step fails it prints the command to run by hand.
// In a session (CLAUDE_PROJECT_DIR set), it also turns relevance on once in a BAZINGA project whose
// config carries BAZINGA's shipped enable_fts5: false (relevance.mjs), and, in the client's cached
// copy of the plugin, removes what only development needs (the devDependencies the client's
// `npm ci` installed, test/ and bench/), so the copy holds what runs.
// In a BAZINGA project with a database it then starts `bazinga-db index-search` as a detached,
// low-priority process, so the search index is built outside the orchestrator's spawns.
// Plain JavaScript with no dependencies: it has to run before any are installed.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyRelevance, planRelevance } from './relevance.mjs';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write('Usage: node hooks/bootstrap.mjs [BUNDLE_ROOT]\nInstalls or repairs the dependencies (npm ci --omit=dev, or npm rebuild better-sqlite3) and builds the bundles; always exits 0.\n');
  process.exit(0);
}
// Per npm or build step; two steps and the probes stay within hooks.json's 900 s.
const timeoutMs = Number(process.env.CONTEXT_ASSEMBLER_BOOTSTRAP_TIMEOUT_MS ?? 360000);
const PROGRESS_MS = Number(process.env.CONTEXT_ASSEMBLER_BOOTSTRAP_PROGRESS_MS ?? 20000);
const lockDir = path.join(root, '.bootstrap-lock');
const LOCK_STALE_MS = 15 * 60 * 1000;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const installArgs = [fs.existsSync(path.join(root, 'package-lock.json')) ? 'ci' : 'install', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * What the copy needs: 'ok', 'install' (a dependency does not resolve), 'rebuild' (better-sqlite3
 * resolves but its native part does not load), judged by one probe process in the bundle root.
 */
function dependencyState() {
  const probe = [
    "for (const m of ['better-sqlite3', 'tsx/esm/api', 'js-tiktoken/lite']) try { require.resolve(m) } catch { process.exit(3) }",
    "try { require('better-sqlite3')(':memory:').close() } catch { process.exit(4) }",
  ].join(';');
  const r = spawnSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore', timeout: 30000 });
  // A probe that did not finish (a machine under load) proves nothing: no npm run on its account.
  return r.status === 0 ? 'ok' : r.status === 4 ? 'rebuild' : r.status === 3 ? 'install' : 'unknown';
}

/**
 * The folder holding both skills: <root>/skills in the plugin (and this repository), <root>
 * itself for a project's .claude/skills (where install-skills runs this hook).
 */
const skillsDir = fs.existsSync(path.join(root, 'skills', 'context-assembler')) ? path.join(root, 'skills') : root;
/** Only the plugin (and this repository) can build bundles; an install ships them built. */
const buildScript = path.join(root, 'scripts', 'build.mjs');

/** True when every bundle the launchers run is at least as new as its sources (the launchers' own test). */
function bundlesFresh() {
  try {
    const { bundlesFresh: fresh } = createRequire(import.meta.url)(path.join(skillsDir, 'bazinga-db', 'bin', 'launch.cjs'));
    return ['context-assembler', 'bazinga-db'].every((skill) => fresh(path.join(skillsDir, skill)));
  } catch {
    return false;
  }
}

/**
 * Where the user sees what the hook says. Claude Code (CLAUDE_CODE_ENTRYPOINT set) reads a hook's
 * JSON: the outcome goes out once, at the end, as `systemMessage` (the user's) and as
 * `additionalContext` (the model's, as plain lines were before); the start with its estimate and
 * the progress lines go to stderr as they happen, which the client streams to a `--output-format
 * stream-json` reader (hook_progress) as they come. Run by hand or by install-skills, the lines are
 * plain stdout as always.
 */
const underClient = process.env.CLAUDE_CODE_ENTRYPOINT !== undefined;
const said = [];
function say(line) {
  if (underClient) said.push(line);
  else process.stdout.write(`context-assembler: ${line}\n`);
}
function progress(line) {
  process.stderr.write(`context-assembler: ${line}\n`);
}
/** The hook's answer to Claude Code: what it said, to the user and to the model (nothing when it said nothing). */
function answerClient() {
  if (!underClient || said.length === 0) return;
  const text = said.map((l) => `context-assembler: ${l}`).join('\n');
  process.stdout.write(`${JSON.stringify({ systemMessage: text, hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: text } })}\n`);
}

function takeLock() {
  try {
    fs.mkdirSync(lockDir);
    return true;
  } catch {
    try {
      if (Date.now() - fs.statSync(lockDir).mtimeMs > LOCK_STALE_MS) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        fs.mkdirSync(lockDir);
        return true;
      }
    } catch {
      // Another process holds or just took the lock.
    }
    return false;
  }
}

/** Runs a command in the bundle root with a progress line every PROGRESS_MS; resolves to { ok, why, seconds }. */
function step(label, command, args) {
  const started = Date.now();
  return new Promise((resolve) => {
    let stderr = '';
    let child;
    try {
      child = spawn(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      resolve({ ok: false, why: err.message, seconds: 0 });
      return;
    }
    const seconds = () => Math.round((Date.now() - started) / 1000);
    const ticker = setInterval(() => progress(`${label}: ${seconds()} s so far`), PROGRESS_MS);
    const killer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.stderr.on('data', (d) => (stderr = (stderr + d.toString()).slice(-4000)));
    const done = (ok, why) => {
      clearInterval(ticker);
      clearTimeout(killer);
      resolve({ ok, why, seconds: seconds() });
    };
    child.on('error', (err) => done(false, err.message));
    child.on('close', (code, signal) => done(code === 0, signal ? `stopped after ${Math.round(timeoutMs / 1000)} s` : why(stderr) || `exited ${code}`));
  });
}

/**
 * The informative part of npm's stderr: node-gyp's own error when it compiled (the first
 * `gyp ERR! stack Error:` line, e.g. headers it could not download), else the last lines that are
 * not npm's notices, and where npm left its log.
 */
function why(stderr) {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const gyp = lines.find((l) => /gyp ERR! stack Error:/.test(l));
  const log = lines.find((l) => /A complete log of this run can be found in/.test(l))?.replace(/^npm (?:error|ERR!) /, '');
  const told = gyp ?? lines.filter((l) => !/^npm (?:notice|warn)\b/.test(l) && !/A complete log of this run/.test(l)).slice(-2).join(' ');
  return [told, log].filter(Boolean).join('; ');
}

/**
 * The client's cached copy of the plugin (~/.claude/plugins/cache/<marketplace>/<plugin>/<version>),
 * never a checkout the plugin runs from (a local marketplace runs the plugin in place).
 */
const cachedCopy = root.split(path.sep).join('/').includes('/plugins/cache/') && !fs.existsSync(path.join(root, '.git'));
/** What only development needs, in the copy: removed once everything that runs is in place. */
const DEV_ONLY = ['test', 'bench'];

/** Removes the devDependencies (npm prune --omit=dev) and the development folders from a cached copy. */
async function trimCachedCopy(done) {
  const dev = Object.keys(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).devDependencies ?? {});
  const present = dev.filter((name) => fs.existsSync(path.join(root, 'node_modules', name)));
  const folders = DEV_ONLY.filter((d) => fs.existsSync(path.join(root, d)));
  if (present.length === 0 && folders.length === 0) return;
  if (present.length > 0) {
    const r = await step('removing development packages', npm, ['prune', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']);
    if (!r.ok || dependencyState() !== 'ok') {
      say(`could not remove the development packages (${r.why}); the copy still works. By hand: cd "${root}" && npm prune --omit=dev`);
      return;
    }
  }
  for (const d of folders) fs.rmSync(path.join(root, d), { recursive: true, force: true });
  done.push(`removed what only development needs (${[...(present.length > 0 ? [`${present.length} dev packages`] : []), ...folders.map((f) => `${f}/`)].join(', ')})`);
}

/** Turns relevance on in the session's project when its config carries BAZINGA's shipped enable_fts5: false (once). */
function relevanceOn() {
  const project = process.env.CLAUDE_PROJECT_DIR;
  if (!project || process.argv[2] !== undefined) return;
  try {
    const plan = planRelevance(project);
    if (plan.state !== 'turn-on') return;
    applyRelevance(project, plan);
    say(plan.line);
  } catch (err) {
    say(`relevance not turned on (${err instanceof Error ? err.message : String(err)}); set context_engineering.enable_fts5 to true in bazinga/skills_config.json`);
  }
}

async function main() {
  relevanceOn();
  const deps = dependencyState();
  if (deps === 'unknown') {
    say('the dependency check did not finish in 30 s (a busy machine?); nothing was changed, the next session checks again.');
    return deps;
  }
  const bundles = !fs.existsSync(buildScript) || bundlesFresh();
  const trim = cachedCopy && DEV_ONLY.some((d) => fs.existsSync(path.join(root, d)));
  if (deps === 'ok' && bundles && !trim) return deps;
  if (!takeLock()) {
    say('the dependencies are being set up by another session; they will be ready shortly.');
    return 'busy';
  }
  try {
    const done = [];
    if (deps !== 'ok') {
      const rebuild = deps === 'rebuild';
      const args = rebuild ? ['rebuild', 'better-sqlite3', '--no-audit', '--no-fund', '--loglevel=error'] : installArgs;
      const byHand = `cd "${root}" && npm ${args.slice(0, 2).join(' ')}`;
      progress(
        rebuild
          ? "setting up on first use: better-sqlite3's native part is not built (the plugin was installed without install scripts): compiling it, usually 1-3 minutes; until it is done, BAZINGA's prompts stay as its builder writes them"
          : "setting up on first use: installing the dependencies (npm ci; better-sqlite3 compiles, usually 1-3 minutes); until it is done, BAZINGA's prompts stay as its builder writes them",
      );
      const r = await step(rebuild ? 'compiling better-sqlite3' : 'installing the dependencies', npm, args);
      if (!r.ok || dependencyState() !== 'ok') {
        const what = rebuild ? "could not build better-sqlite3's native part" : 'could not install dependencies';
        say(`${what} (${r.why}). Until then context assembly falls back to an empty block. Run by hand: ${byHand}`);
        return 'failed';
      }
      done.push(`${rebuild ? 'built better-sqlite3' : 'installed dependencies'} in ${r.seconds} s`);
    }
    if (fs.existsSync(buildScript) && !bundlesFresh()) {
      const r = await step('building the bundles', process.execPath, [buildScript]);
      // Without bundles the launchers run the sources through tsx: slower, but working.
      if (!r.ok || !bundlesFresh()) say(`could not build the bundles (${r.why}); the scripts run from their sources meanwhile. Run by hand: cd "${root}" && node scripts/build.mjs`);
      else done.push(`built the bundles in ${r.seconds} s`);
    }
    if (cachedCopy && bundlesFresh()) await trimCachedCopy(done);
    if (done.length > 0) say(`${done.join('; ')}. Ready: BAZINGA's spawns get their blocks from now on.`);
    return 'ok';
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * Builds the session's search index outside the spawns: in a BAZINGA project with a database, once
 * the dependencies are in place, `bazinga-db index-search` starts as a detached process at the
 * lowest priority (the schema step and every row not yet indexed, in short transactions), so no
 * spawn of the orchestrator pays for it. It ends by itself; a second one finds the first running.
 */
function indexInBackground(project) {
  if (!fs.existsSync(path.join(project, 'bazinga', 'bazinga.db'))) return;
  const child = spawn(process.execPath, [path.join(root, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'), '--quiet', '--project-root', project, 'index-search'], {
    cwd: project,
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => {});
  try {
    if (child.pid !== undefined) os.setPriority(child.pid, 19);
  } catch {
    // runs at the default priority
  }
  child.unref();
}

/**
 * Starts the warm assembler (`context-assembler serve`), so that each of the orchestrator's calls
 * costs a Node start and a round trip instead of loading and warming the assembler: in a BAZINGA
 * project where assembly is on, once the dependencies and the bundles are in place, detached. It
 * stops by itself after an hour without a call (after a rebuild of the bundles it is not asked any
 * more); a second one finds the first running.
 */
function serveInBackground(project) {
  if (process.env.CONTEXT_ASSEMBLER_NO_SERVER === '1' || !bundlesFresh() || !assemblyEnabled(project)) return;
  const { startServer } = createRequire(import.meta.url)(path.join(root, 'skills', 'bazinga-db', 'bin', 'warmServer.cjs'));
  startServer(path.join(root, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'), project);
}

/** Whether the project's config leaves context assembly on (`context_engineering.enable_context_assembler`, default true). */
function assemblyEnabled(project) {
  try {
    return JSON.parse(fs.readFileSync(path.join(project, 'bazinga', 'skills_config.json'), 'utf8'))?.context_engineering?.enable_context_assembler !== false;
  } catch {
    return true; // no or unreadable config: the defaults, assembly on
  }
}

try {
  // 'ok' when the dependencies were in place, or were put in place now.
  const deps = await main();
  // In a BAZINGA project of this session, once the dependencies are in place.
  const project = process.env.CLAUDE_PROJECT_DIR;
  if (project && process.argv[2] === undefined && fs.existsSync(path.join(project, 'bazinga')) && deps === 'ok') {
    indexInBackground(project);
    serveInBackground(project);
  }
} catch (err) {
  say(`bootstrap failed (${err instanceof Error ? err.message : String(err)}). Run by hand: cd "${root}" && npm ${installArgs.slice(0, 2).join(' ')}`);
}
answerClient();
process.exitCode = 0;
