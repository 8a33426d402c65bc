#!/usr/bin/env node
// Launcher for the context-assembler scripts that works from any working directory: it loads tsx
// from the bundle's own node_modules (resolved relative to this file, not the caller's cwd).
//
//   context-assembler.mjs [flags]              → assemble.ts (the orchestrator's one command)
//   context-assembler.mjs <step> [flags]       → <step>.ts: zone rank pack reasoning consume assemble fetch doctor
//
// When the dependencies are not installed yet, assembly still never blocks: the fallback block
// (the same text as renderFallback in scripts/lib/core/render.ts) goes to stdout, the fix to stderr.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const STEPS = new Set(['zone', 'rank', 'pack', 'reasoning', 'consume', 'assemble', 'fetch', 'doctor']);
const first = process.argv[2];
let script = 'assemble';
if (first !== undefined && !first.startsWith('-')) {
  if (!STEPS.has(first)) {
    process.stderr.write(
      JSON.stringify({ success: false, error: `Unknown step '${first}'. Steps: ${[...STEPS].join(', ')}`, code: 'USAGE' }) + '\n',
    );
    process.exit(2);
  }
  script = first;
  process.argv.splice(2, 1);
}

/** The value of `--name V` or `--name=V` in the arguments, if given. */
function flagValue(args, name) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name) return args[i + 1];
    if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
  }
  return undefined;
}

/** Prints the fallback block (or the fix alone for fetch/doctor) and exits; never returns. */
function fallback(err) {
  // Where the dependencies belong: .claude/skills/ of an installed project (the installer writes its
  // runtime package.json there), else the bundle (plugin) root three levels up.
  const bin = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(bin, '..', '..'), path.resolve(bin, '..', '..', '..')];
  const root = candidates.find((dir) => fs.existsSync(path.join(dir, 'package.json'))) ?? candidates[1];
  const lock = fs.existsSync(path.join(root, 'package-lock.json'));
  const bootstrap = fs.existsSync(path.join(root, 'hooks', 'bootstrap.mjs')) ? ' (or node hooks/bootstrap.mjs)' : '';
  const fix = `install the dependencies: cd "${root}" && npm ${lock ? 'ci' : 'install'} --omit=dev${bootstrap}`;
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(err.message ?? '')?.[1];
  process.stderr.write(`⚠ context-assembler: dependencies are missing (${err.code ?? err.message}${missing ? `: ${missing}` : ''}); ${fix}\n`);
  if (script === 'fetch' || script === 'doctor') process.exit(1);
  const args = process.argv.slice(2);
  const agent = flagValue(args, '--agent') || 'agent';
  const json = flagValue(args, '--format') === 'json';
  process.stdout.write(
    json
      ? JSON.stringify({ fallback: true, agent, error: 'dependencies are missing' }, null, 2) + '\n'
      : `## Context for ${agent}\n\n:warning: Context assembly encountered an error. Proceeding with minimal context.\n\n**Fallback Mode**: Task and specialization context only. Context packages unavailable.\n`,
  );
  process.exit(0);
}

let tsx;
try {
  tsx = await import('tsx/esm/api');
} catch (err) {
  fallback(err);
}
tsx.register();
try {
  await import(`../scripts/${script}.ts`);
} catch (err) {
  // A runtime dependency (better-sqlite3, js-tiktoken, yaml) that does not resolve fails the import
  // before any script code runs; anything else is the script's own error.
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/Cannot find package/.test(err.message ?? '')) throw err;
  fallback(err);
}
