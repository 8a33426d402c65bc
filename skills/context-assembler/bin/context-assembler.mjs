#!/usr/bin/env node
// Launcher for the context-assembler scripts that works from any working directory: it loads tsx
// from the bundle's own node_modules (resolved relative to this file, not the caller's cwd).
//
//   context-assembler.mjs [flags]              → assemble.ts (the orchestrator's one command)
//   context-assembler.mjs <step> [flags]       → <step>.ts: zone rank pack reasoning consume assemble fetch doctor
//
// When the dependencies are not installed yet, assembly still never blocks: the fallback block
// (the same text as renderFallback in scripts/lib/core/render.ts) goes to stdout, the fix to stderr.
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

let tsx;
try {
  tsx = await import('tsx/esm/api');
} catch (err) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const fix = `install the dependencies: cd "${root}" && npm ci --omit=dev (or node hooks/bootstrap.mjs)`;
  process.stderr.write(`⚠ context-assembler: dependencies are missing (${err.code ?? err.message}); ${fix}\n`);
  if (script === 'fetch' || script === 'doctor') process.exit(1);
  const args = process.argv.slice(2);
  const at = args.indexOf('--agent');
  const agent = (at !== -1 && args[at + 1]) || 'agent';
  const json = args.includes('json') && args.some((a) => a === '--format' || a === '--format=json');
  process.stdout.write(
    json
      ? JSON.stringify({ fallback: true, agent, error: 'dependencies are missing' }, null, 2) + '\n'
      : `## Context for ${agent}\n\n:warning: Context assembly encountered an error. Proceeding with minimal context.\n\n**Fallback Mode**: Task and specialization context only. Context packages unavailable.\n`,
  );
  process.exit(0);
}
tsx.register();
await import(`../scripts/${script}.ts`);
