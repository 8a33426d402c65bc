/**
 * The exit-code, stdout and stderr assertions of bazinga-db calls, shared by the in-process tables
 * and the real-process smoke tests so both modes are held to exactly the same contract.
 */
import { expect } from 'vitest';
import type { RunResult } from './helpers.ts';

/** Asserts a successful call (exit 0, one JSON document on stdout, nothing on stderr under --quiet); returns the document. */
export function ok(r: RunResult): any {
  expect(r.stderr, `stderr: ${r.stderr}`).toBe('');
  expect(r.code).toBe(0);
  expect(r.json).toBeDefined();
  return r.json;
}

/** Asserts a failure: exit code, empty stdout, and the compact JSON error line (optionally its message). */
export function fails(r: RunResult, exit: number, code: string, message?: string | RegExp): void {
  expect(r.code, `stdout: ${r.stdout} stderr: ${r.stderr}`).toBe(exit);
  expect(r.stdout).toBe('');
  expect(r.error).toBeDefined();
  expect(r.error.success).toBe(false);
  expect(r.error.code).toBe(code);
  if (typeof message === 'string') expect(r.error.error).toBe(message);
  else if (message) expect(r.error.error).toMatch(message);
}

/**
 * Asserts a clean failure (spec §2.1): nothing on stdout, exit 2 for USAGE and 1 otherwise, the last
 * stderr line a JSON error of that code whose message contains `text`, and no stack trace.
 */
export function expectCleanFailure(r: RunResult, code: string, text: string): void {
  expect(r.stdout).toBe('');
  expect(r.code).toBe(code === 'USAGE' ? 2 : 1);
  const lines = r.stderr.trimEnd().split('\n');
  const last = lines[lines.length - 1] ?? '';
  const parsed = JSON.parse(last) as Record<string, unknown>;
  expect(parsed).toMatchObject({ success: false, code });
  expect(typeof parsed.error).toBe('string');
  expect(parsed.error as string).toContain(text);
  expect(r.stderr).not.toMatch(/^\s{4}at /m);
  expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+:\d+/);
}
