#!/usr/bin/env -S npx tsx
/**
 * serve.ts: the warm assembler: one process that answers the orchestrator's `assemble` calls and
 * the prompt hook's (today's BAZINGA flow; see ../../bazinga-db/bin/warmServer.cjs), so that a call
 * costs a Node start and a round trip
 *
 * Usage:  context-assembler serve [--idle-ms N]       (the plugin's SessionStart hook starts it)
 * Output: one line when it stops (why); nothing while it serves
 * Exit:   0; 2 for invalid parameters
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BazingaError, printError, usage, withdrawYieldRequests } from '../../bazinga-db/scripts/lib/index.ts';
import { ASSEMBLE } from './lib/main.ts';
import { runScript } from './lib/shell.ts';
import { runPromptHook } from './lib/wiring/promptHook.ts';
// @ts-expect-error plain JavaScript shared with the launchers
import warm from '../../bazinga-db/bin/warmServer.cjs';

const HELP = `serve: the warm assembler: answers the orchestrator's assemble calls and the prompt hook from one process

Usage: context-assembler serve [--idle-ms N]

  --idle-ms N   stop after N ms without a request (default 3600000: an hour)

One server per user and build of the bundles, on a Unix socket in $XDG_RUNTIME_DIR/context-assembler/
(else <tmpdir>/context-assembler-<uid>/), a folder only that user can enter; where that folder is
someone else's, a link or open to others, in ~/.cache/context-assembler/run/ instead. The launchers
of assemble and prompt-hook use it when it greets, and run in their own process otherwise; one that
gives no answer within 1 s is stopped and the call runs in its own process, its record taking
the place of whatever the server recorded. The SessionStart hook
starts it; a prompt hook that finds none starts one once it placed a block itself. It stops when
idle or on SIGTERM; after a rebuild of the bundles it is no longer asked (another build, another socket) and
idles out. CONTEXT_ASSEMBLER_NO_SERVER=1 keeps a call from using it. It needs the prebuilt bundles.
The hooks start it as node --max-semi-space-size=1 <launcher> serve (a smaller peak memory at the
same speed); started by hand without that flag it serves the same, with a larger heap.
`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  fs.writeSync(1, HELP);
  process.exit(0);
}
let idleMs = 3_600_000;
for (let i = 0; i < args.length; i++) {
  const a = args[i] as string;
  const value = a === '--idle-ms' ? args[++i] : a.startsWith('--idle-ms=') ? a.slice('--idle-ms='.length) : undefined;
  if (value !== undefined && /^[1-9]\d{0,9}$/.test(value)) idleMs = Number(value);
  else {
    process.exit(
      printError(
        (line) => fs.writeSync(2, line),
        usage(`${a.startsWith('--idle-ms') ? `--idle-ms must be a positive integer (milliseconds), got '${value ?? ''}'` : `unknown argument '${a}'`}; usage: context-assembler serve [--idle-ms N]`),
      ),
    );
  }
}

// The bundle the orchestrator's calls run, beside this one's (built together, from the same sources).
const here = path.dirname(fileURLToPath(import.meta.url));
const bundle = path.join(here, 'assemble.cjs');
if (path.basename(here) !== 'dist' || !fs.existsSync(bundle)) {
  fs.writeSync(1, JSON.stringify({ success: true, stopped: 'no prebuilt bundle (npm run build makes them)' }) + '\n');
  process.exit(0);
}

/** The warm assembler's limits of one run under the caller's env (warmServer.cjs serverTimes), so that its caller gets the answer in time. */
const limitsOf = (env: NodeJS.ProcessEnv) => (warm.serverTimes as (e: NodeJS.ProcessEnv) => { runLimits: { busyBudgetMs: number; indexBudgetMs: number; promptLockWaitMs: number } })(env).runLimits;

(warm.serve as (b: string, h: (r: unknown) => unknown, o: { idleMs: number; log: (m: string) => void }) => Promise<string>)(
  bundle,
  (request) => {
    const r = request as { script?: unknown; argv?: unknown; cwd?: unknown; env?: unknown; stdin?: unknown; key?: unknown };
    if (!Array.isArray(r.argv) || !r.argv.every((a) => typeof a === 'string') || typeof r.cwd !== 'string' || typeof r.env !== 'object' || r.env === null) return undefined;
    // Recorded under the caller's key: a caller that gets no answer in time runs the request itself and takes this run's place.
    if (typeof r.key !== 'string' || r.key === '') return undefined;
    const delivery = { key: r.key, supersedes: false };
    const argv = r.argv as string[];
    const env = r.env as NodeJS.ProcessEnv;
    const limits = limitsOf(env);
    let stdout = '';
    let stderr = '';
    try {
      if (r.script === 'prompt-hook') {
        // Its help, and an event that was not sent, are the caller's to handle.
        if (typeof r.stdin !== 'string' || argv.includes('--help') || argv.includes('-h')) return undefined;
        const outcome = runPromptHook({ stdin: r.stdin, env, cwd: r.cwd, stderr: (t) => (stderr += t), now: () => new Date(), plugin: argv.includes('--plugin'), delivery, limits });
        // Another hook works on the prompt: the caller waits for it in its own process.
        if (outcome.done === 'declined') return undefined;
        return { code: 0, stdout, stderr };
      }
      if (r.script !== undefined && r.script !== 'assemble') return undefined;
      const code = runScript(ASSEMBLE, {
        argv,
        cwd: r.cwd,
        env,
        stdout: (t) => (stdout += t),
        stderr: (t) => (stderr += t),
        readStdin: () => undefined,
        now: () => new Date(),
        delivery,
        limits: { busyBudgetMs: limits.busyBudgetMs, indexBudgetMs: limits.indexBudgetMs },
      });
      return { code, stdout, stderr };
    } finally {
      withdrawYieldRequests();
    }
  },
  { idleMs, log: (m) => fs.writeSync(2, `context-assembler serve: ${m}\n`) },
).then(
  (why) => {
    fs.writeSync(1, JSON.stringify({ success: true, stopped: why }) + '\n');
    process.exit(0);
  },
  (err: Error) => {
    process.exit(printError((line) => fs.writeSync(2, line), new BazingaError('DB_ERROR', `the warm assembler could not serve: ${err.message}`)));
  },
);
