#!/usr/bin/env -S npx tsx
/**
 * doctor.ts: checks that the bundle can run here and says what to fix: Node version, the native
 * better-sqlite3 module (ABI), FTS5, the project root and database (found, writable, schema
 * version), the config file, and the tokenizer (load time). Reads only; never changes the database.
 *
 * Usage:  tsx doctor.ts [--db PATH] [--project-root DIR] [--config PATH] [--format table|json]
 * Output: a table (default) or {ok, checks: [{check, status, detail, fix}]}
 * Exit:   0 when nothing failed (warnings allowed), 1 when a check failed, 2 for invalid flags.
 */
import { runDoctor } from './lib/doctor.ts';
import { exitQuietlyOnEpipe } from './lib/stdio.ts';

exitQuietlyOnEpipe();
process.exitCode = await runDoctor(process.argv.slice(2), {
  cwd: process.cwd(),
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
});
