#!/usr/bin/env -S npx tsx
/**
 * consume.ts: records what an agent was given, so a retry at the same iteration gets fresh context
 * and a retry at a higher iteration sees the packages again.
 *
 * Usage:  tsx consume.ts --ids 3,5 --agent developer --iteration 1 [--session S] [--dry-run]
 *         tsx reasoning.ts ... | tsx consume.ts [--dry-run] [--format json|markdown]
 * Input:  --ids (standalone), or the previous step's JSON document on stdin (continue a pipe; in
 *         Normal and Soft_Warning the delivered packages are marked)
 * Output: standalone: {success, agent, iteration, consumed, results}; in a pipe: the final
 *         assembly document (the same as assemble.ts --format json)
 * Exit:   0; 1 when a standalone id is unknown or not for this agent (nothing is written);
 *         2 for invalid parameters. In a pipe, failures never block (fallback, exit 0).
 */
import { consumeIds, consumeIdsRequest } from './lib/consumeIds.ts';
import { main } from './lib/main.ts';
import { exitQuietlyOnEpipe } from './lib/stdio.ts';
import { COMMON_FLAGS, parseFlags } from './lib/params.ts';
import { redactPrinted } from './lib/print.ts';
import { DEFAULT_POLICY, printError } from '../../bazinga-db/scripts/lib/index.ts';

const argv = process.argv.slice(2);
const standalone = argv.some((a) => a === '--ids' || a.startsWith('--ids='));
if (!standalone) {
  main({
    name: 'consume.ts',
    step: 'consume',
    defaultFormat: 'json',
    readsStdin: true,
    summary: 'marks the delivered packages consumed for (agent, iteration); standalone with --ids after a spawn',
  });
} else {
  exitQuietlyOnEpipe();
  const io = {
    argv,
    cwd: process.cwd(),
    env: process.env,
    stdout: (t: string) => process.stdout.write(t),
    stderr: (t: string) => process.stderr.write(t),
    readStdin: () => undefined,
    now: () => new Date(),
  };
  const printed = (line: string) => process.stderr.write(redactPrinted(line, DEFAULT_POLICY));
  let flags;
  let request;
  try {
    flags = parseFlags(argv, { ...COMMON_FLAGS, '--ids': 'string' });
    request = consumeIdsRequest(flags);
  } catch (err) {
    process.exitCode = printError(printed, err, { exit: 2 });
  }
  if (flags && request) {
    try {
      process.exitCode = consumeIds(request, flags, io);
    } catch (err) {
      process.exitCode = printError(printed, err, { exit: 1 });
    }
  }
}
