#!/usr/bin/env node
// First-run bootstrap of the bundle's dependencies, for the SessionStart hook.
//
// Usage: node hooks/bootstrap.mjs [BUNDLE_ROOT]     (default: the folder above this file)
//
// Quiet and quick when the dependencies already load (one child process, no output). Otherwise
// runs `npm ci --omit=dev` in the bundle root, bounded in time (CONTEXT_ASSEMBLER_BOOTSTRAP_TIMEOUT_MS,
// default 300000), under a lock folder so concurrent sessions do not install twice. It never fails
// the session: it always exits 0, and when the install fails it prints the command to run by hand.
// Plain JavaScript with no dependencies: it has to run before any are installed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const timeoutMs = Number(process.env.CONTEXT_ASSEMBLER_BOOTSTRAP_TIMEOUT_MS ?? 300000);
const lockDir = path.join(root, '.bootstrap-lock');
const LOCK_STALE_MS = 15 * 60 * 1000;
const byHand = `cd "${root}" && npm ci --omit=dev`;

/** True when every runtime dependency resolves from the bundle root and the native module loads. */
function dependenciesLoad() {
  const probe = [
    "require('better-sqlite3')(':memory:').close()",
    "require.resolve('tsx/esm/api')",
    "require.resolve('js-tiktoken/lite')",
  ].join(';');
  const r = spawnSync(process.execPath, ['-e', probe], { cwd: root, stdio: 'ignore', timeout: 30000 });
  return r.status === 0;
}

function say(line) {
  process.stdout.write(`context-assembler: ${line}\n`);
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

function main() {
  if (dependenciesLoad()) return;
  if (!takeLock()) {
    say('dependencies are being installed by another session; they will be ready shortly.');
    return;
  }
  const started = Date.now();
  try {
    const lock = fs.existsSync(path.join(root, 'package-lock.json'));
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const args = [lock ? 'ci' : 'install', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error'];
    const r = spawnSync(npm, args, { cwd: root, encoding: 'utf8', timeout: timeoutMs });
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (r.status === 0 && dependenciesLoad()) {
      say(`installed dependencies in ${seconds} s.`);
      return;
    }
    const why = r.error ? r.error.message : (r.stderr || '').trim().split('\n').slice(-3).join(' ') || `npm exited ${r.status}`;
    say(`could not install dependencies (${why}). Until then context assembly falls back to an empty block. Run by hand: ${byHand}`);
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  say(`bootstrap failed (${err instanceof Error ? err.message : String(err)}). Run by hand: ${byHand}`);
}
process.exitCode = 0;
