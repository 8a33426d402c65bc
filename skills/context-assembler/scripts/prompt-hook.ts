#!/usr/bin/env -S npx tsx
/**
 * prompt-hook.ts: for today's BAZINGA flow, puts the context block in the prompt the prompt builder just wrote
 *
 * Usage:  tsx prompt-hook.ts [--plugin] < hook-event.json   (a Claude Code PostToolUse hook on Bash,
 *         registered by the plugin's hooks/hooks.json or by `install-skills --wire`)
 * Input:  the hook's JSON on stdin (tool_name, tool_input.command, tool_response.stdout/stderr, cwd)
 * Output: nothing on stdout; one warning line on stderr when the prompt was left as it was
 * Exit:   always 0 (a hook never blocks the orchestrator)
 */
import path from 'node:path';
import { runPromptHook } from './lib/wiring/promptHook.ts';
import { readPipedStdin } from './lib/stdio.ts';
import { handedOver } from './lib/handedOver.ts';
// @ts-expect-error plain JavaScript shared with the launchers
import warm from '../../bazinga-db/bin/warmServer.cjs';

/**
 * Starts the warm assembler (`context-assembler serve`, detached) when the launcher found none for
 * this build: so that the session's next spawns are served by it (the plugin's SessionStart hook
 * starts one too; a project wired by install-skills has no such hook, and a server idles out after
 * an hour). Only from the launcher (which looked), never with CONTEXT_ASSEMBLER_NO_SERVER=1.
 */
function startWarmAssembler(cwd: string): void {
  const launcher = process.argv[1];
  if (process.env.CONTEXT_ASSEMBLER_NO_SERVER === '1' || (globalThis as Record<symbol, unknown>)[Symbol.for('context-assembler.server')] !== 'absent') return;
  if (launcher === undefined || path.basename(launcher) !== 'context-assembler.cjs') return;
  (warm.startServer as (launcher: string, cwd: string) => void)(launcher, cwd);
}

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(`prompt-hook.ts: for today's BAZINGA flow, after the prompt builder wrote a spawn's prompt,
assembles this product's block from the same params file and puts it in the prompt in place of the
builder's "## Context from Prior Work" section (up to the builder's next component), between
<!-- context-assembler:begin --> and <!-- context-assembler:end -->; every other byte stays.

Usage: tsx prompt-hook.ts [--plugin] < hook-event.json
Input: a Claude Code PostToolUse event on stdin; any command but one prompt_builder.py --params-file
       run is ignored. The builder's result is read from its stdout (one JSON document, any layout)
       or its PROMPT_FILE= line on stderr.
  --plugin  run as the plugin's hook: nothing happens outside a project with the prompt builder, or
            where the project's own wiring (install-skills --wire) serves the spawns
Exit:  always 0; a prompt it could not improve is left as the builder wrote it (a warning on stderr).
`);
} else {
  let stdin: string | undefined;
  try {
    stdin = readPipedStdin() ?? '';
  } catch (err) {
    // An event over the stdin cap is no prompt builder's: said once, the prompt untouched, exit 0.
    process.stderr.write(`⚠ context-assembler: hook event not read (${(err as Error).message})\n`);
  }
  const plugin = process.argv.includes('--plugin');
  if (stdin !== undefined) {
    const outcome = runPromptHook({ stdin, env: process.env, cwd: process.cwd(), stderr: (t) => process.stderr.write(t), now: () => new Date(), plugin, ...handedOver() });
    // A spawn this product served: the next ones are the warm assembler's.
    if (outcome.done === 'replaced' || outcome.done === 'inserted' || outcome.done === 'renewed') startWarmAssembler(process.cwd());
  }
}
process.exitCode = 0;
