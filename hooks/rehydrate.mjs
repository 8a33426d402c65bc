#!/usr/bin/env node
/**
 * SessionStart hook: prints the project memory a new session should start with (bazinga-db
 * `rehydrate --latest-project --markdown`), for a project that has a BAZINGA database with
 * memories. Claude Code adds a SessionStart hook's stdout to the session's context and caps it at
 * 10,000 characters: the block is kept under that, cut at a line when it would pass it. Silent
 * when there is nothing to say (no database, no memories, the plugin not built yet); never fails
 * the session (every problem is one line on stderr, exit 0).
 *
 * Usage: node hooks/rehydrate.mjs   (the hook's JSON on stdin is not needed; the project is
 * $CLAUDE_PROJECT_DIR, else the working directory)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Claude Code's limit on what a hook may add to the context. */
export const HOOK_OUTPUT_LIMIT = 10_000;
const SPAWN_TIMEOUT_MS = 20_000;

const here = path.dirname(fileURLToPath(import.meta.url));
const pluginRoot = process.env.CLAUDE_PLUGIN_ROOT || path.dirname(here);

/** `text` within `limit` characters: cut after the last whole line that fits, with a line saying so. */
export function withinLimit(text, limit = HOOK_OUTPUT_LIMIT) {
  if (text.length <= limit) return text;
  const note = '\n_(cut at the 10,000-character limit of a session-start hook: run `bazinga-db rehydrate --latest-project --markdown` for the rest)_\n';
  const room = limit - note.length;
  const cut = text.lastIndexOf('\n', room);
  return text.slice(0, cut > 0 ? cut : room) + note;
}

/** What the block may hold: the limit less room for the closing note withinLimit would add. */
const MAX_CHARS = HOOK_OUTPUT_LIMIT - 200;

function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write('Usage: node hooks/rehydrate.mjs\nPrints the project memory block for $CLAUDE_PROJECT_DIR (SessionStart hook); silent when there is none.\n');
    return;
  }
  const project = process.env.CLAUDE_PROJECT_DIR || process.cwd();
  if (!fs.existsSync(path.join(project, 'bazinga', 'bazinga.db'))) return;
  const launcher = path.join(pluginRoot, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
  if (!fs.existsSync(path.join(pluginRoot, 'skills', 'bazinga-db', 'dist', 'bazinga-db.cjs'))) return; // not built yet (bootstrap builds it)
  const run = (globals, extra) =>
    spawnSync(process.execPath, [launcher, '--quiet', ...globals, '--project-root', project, 'rehydrate', '--latest-project', '--markdown', '--max-chars', String(MAX_CHARS), ...extra], {
      encoding: 'utf8',
      timeout: SPAWN_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  // A read first: it never writes (a database no writer of this version opened stays as it is),
  // never waits for a writer, and says whether there is anything at all.
  const read = run([], ['--dry-run']);
  if (read.status !== 0) {
    const last = (read.stderr ?? '').trim().split('\n').pop() || (read.error ? read.error.message : `exit ${read.status}`);
    if (/"code":"NOT_FOUND"/.test(last)) return; // no database yet, an empty file: nothing to say
    process.stderr.write(`context-assembler: project memory not loaded (${last.slice(0, 300)})\n`);
    return;
  }
  if ((read.stdout ?? '').trim() === '') return;
  // Then the same block again, counting the accesses of what it shows; when the database cannot be
  // written now (locked for more than a second, read-only), the block read above is printed.
  const counted = run(['--busy-timeout', '1000'], []);
  const text = counted.status === 0 && (counted.stdout ?? '').trim() !== '' ? counted.stdout : read.stdout;
  process.stdout.write(withinLimit(text));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`context-assembler: project memory not loaded (${err instanceof Error ? err.message : String(err)})\n`);
  }
  process.exitCode = 0;
}
