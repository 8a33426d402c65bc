#!/usr/bin/env node
// Launcher for the context-assembler scripts; works from any working directory (see
// ../../bazinga-db/bin/launch.cjs: prebuilt bundle when fresh, else the TypeScript source via tsx).
//
//   context-assembler.cjs [flags]              → assemble (the orchestrator's one command)
//   context-assembler.cjs <step> [flags]       → <step>: zone rank pack reasoning consume assemble fetch doctor prompt-hook serve report
//   context-assembler.cjs help | --help | -h   → the steps, one line each (`<step> --help`: its flags)
//
// When a dependency is missing, assembly still never blocks: the fallback block (the same text as
// renderFallback in scripts/lib/core/render.ts) goes to stdout and the fix to stderr, exit 0;
// fetch and doctor exit 1.
'use strict';
const path = require('node:path');
const { launch } = require('../../bazinga-db/bin/launch.cjs');

/** Every step and subcommand, with its line of the help (the same words as each script's own --help). */
const STEP_LINES = {
  zone: "zone and budgets: how full the orchestrator's window is, the tokens this agent's context may use",
  rank: 'eligible context packages ranked for the agent, plus error patterns and strategies',
  pack: 'packages redacted, truncated for the zone, counted and packed into the context budget',
  reasoning: "prior agents' reasoning for this recipient, within the reasoning level's token budget",
  consume: 'marks the delivered packages consumed for (agent, iteration); standalone with --ids after a spawn',
  assemble: 'every step in one process: the block the orchestrator pastes into the spawn prompt (the default)',
  fetch: "prints a context package's artifact file, redacted, optionally shortened (fetch <package_id>)",
  doctor: 'checks that context-assembler can run here: Node, better-sqlite3, the project, database and config',
  'prompt-hook': "today's BAZINGA flow: puts the block in the prompt the prompt builder wrote (a PostToolUse hook; install-skills --wire)",
  serve: "the warm assembler: answers assemble calls and the prompt hook from one process, each a Node start and a round trip (the SessionStart hook, or a prompt hook that finds none, starts it)",
  report: 'what each spawn was given, what it cost, whether context helped: markdown, JSON or one self-contained HTML file (reads only)',
};
const STEPS = new Set(Object.keys(STEP_LINES));
const HELP = `context-assembler: the context block for an agent spawn, or any step of its assembly

Usage: context-assembler [<step>] [flags]        (no step: assemble)
       context-assembler <step> --help           the flags of a step (assemble's: the request)

Steps:
${Object.entries({ ...STEP_LINES, help: 'this text' })
  .map(([name, line], _, all) => `  ${name.padEnd(Math.max(...all.map(([n]) => n.length)))}  ${line}`)
  .join('\n')}

Exit: assembly steps 0 (also when assembly fails: fallback block, warning on stderr), 2 for invalid
parameters; fetch and consume --ids 1 when what they name cannot be used; doctor 1 when a check failed.
`;
const first = process.argv[2];
let script = 'assemble';
if (first === 'help' || first === '--help' || first === '-h') {
  // Written synchronously: process.exit must not cut a piped write short.
  require('node:fs').writeSync(1, HELP);
  process.exit(0);
}
if (first !== undefined && !first.startsWith('-')) {
  if (!STEPS.has(first)) {
    process.stderr.write(
      JSON.stringify({ success: false, error: `Unknown step '${first}'. Steps: ${[...STEPS].join(', ')}, help`, code: 'USAGE' }) + '\n',
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

/** The fallback block (or document, its error `error`) of an assembly that could not run, with the reason on stderr; exit 0. */
function fallback(reason, error = reason) {
  process.stderr.write(`⚠ context-assembler: ${reason}\n`);
  const args = process.argv.slice(2);
  const agent = flagValue(args, '--agent') || 'agent';
  process.stdout.write(
    flagValue(args, '--format') === 'json'
      ? JSON.stringify({ fallback: true, agent, error }, null, 2) + '\n'
      : `## Context for ${agent}\n\n:warning: Context assembly encountered an error. Proceeding with minimal context.\n\n**Fallback Mode**: Task and specialization context only. Context packages unavailable.\n`,
  );
  process.exit(0);
}

const skillDir = path.resolve(__dirname, '..');
// The orchestrator's call and the prompt hook are answered by the warm assembler when one runs
// (serve); the hook's event is read here and sent along. A call the server took and did not answer
// in time runs here after all (launch.cjs).
const warm = { assemble: {}, 'prompt-hook': { stdin: true } }[script];
launch(skillDir, script, { warm }, (missing, install) => {
  const fix = `dependencies are missing (${missing}); install the dependencies: ${install}`;
  if (script === 'fetch' || script === 'doctor' || script === 'serve' || script === 'report') {
    process.stderr.write(`⚠ context-assembler: ${fix}\n`);
    process.exit(1);
  }
  // A hook leaves the prompt as the builder wrote it: nothing on stdout.
  if (script === 'prompt-hook') {
    process.stderr.write(`⚠ context-assembler: ${fix}\n`);
    process.exit(0);
  }
  fallback(fix, 'dependencies are missing');
}).catch((err) => {
  // As an uncaught error of the script itself: its stack on stderr, exit 1.
  process.nextTick(() => {
    throw err;
  });
});
