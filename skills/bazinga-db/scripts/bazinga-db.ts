#!/usr/bin/env -S npx tsx
/**
 * bazinga-db: the command line over a BAZINGA SQLite database (context packages, consumption,
 * reasoning, error patterns, strategies, sessions, task groups).
 *
 * Usage:  tsx bazinga-db.ts [--db PATH] [--project-root DIR] [--quiet] [--busy-timeout MS] <command> [args]
 *         tsx bazinga-db.ts help
 * Output: one JSON document on stdout (exit 0); on failure nothing on stdout and a one-line JSON
 *         error `{"success":false,"error":…,"code":…}` as the last line of stderr (exit 2 for usage
 *         errors, 1 for the rest). Informational `✓`/`⚠` lines go to stderr unless --quiet.
 */
import fs from 'node:fs';
import { runCli } from './lib/cli.ts';
import { usage, printError } from './lib/errors.ts';
import { childArgv, isChild } from './lib/relaunch.ts';

// A reader that stops early (`| head`) closes the pipe; that is not an error of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
  throw err;
});

// Run again as a child of itself (relaunch.ts), the arguments come on stdin.
const argv = isChild(process.env) ? childArgv(fs.readFileSync(0, 'utf8')) : process.argv.slice(2);

process.exitCode = argv === undefined
  ? printError((t) => process.stderr.write(t), usage('started as a child process, but stdin held no JSON array of arguments'), { exit: 2 })
  : runCli(argv, {
  cwd: process.cwd(),
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
