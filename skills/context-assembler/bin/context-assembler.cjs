#!/usr/bin/env node
// Launcher for the context-assembler scripts; works from any working directory (see
// ../../bazinga-db/bin/launch.cjs: prebuilt bundle when fresh, else the TypeScript source via tsx).
//
//   context-assembler.cjs [flags]              → assemble (the orchestrator's one command)
//   context-assembler.cjs <step> [flags]       → <step>: zone rank pack reasoning consume assemble fetch doctor
//
// When a dependency is missing, assembly still never blocks: the fallback block (the same text as
// renderFallback in scripts/lib/core/render.ts) goes to stdout and the fix to stderr, exit 0;
// fetch and doctor exit 1.
'use strict';
const path = require('node:path');
const { launch } = require('../../bazinga-db/bin/launch.cjs');

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

const skillDir = path.resolve(__dirname, '..');
launch(skillDir, script, (missing, install) => {
  process.stderr.write(`⚠ context-assembler: dependencies are missing (${missing}); install the dependencies: ${install}\n`);
  if (script === 'fetch' || script === 'doctor') process.exit(1);
  const args = process.argv.slice(2);
  const agent = flagValue(args, '--agent') || 'agent';
  process.stdout.write(
    flagValue(args, '--format') === 'json'
      ? JSON.stringify({ fallback: true, agent, error: 'dependencies are missing' }, null, 2) + '\n'
      : `## Context for ${agent}\n\n:warning: Context assembly encountered an error. Proceeding with minimal context.\n\n**Fallback Mode**: Task and specialization context only. Context packages unavailable.\n`,
  );
  process.exit(0);
}).catch((err) => {
  // As an uncaught error of the script itself: its stack on stderr, exit 1.
  process.nextTick(() => {
    throw err;
  });
});
