/**
 * Every runnable script of scripts/ and bench/ honours --help: usage on stdout, exit 0, and none of
 * its work done. Each runs as a real process with a temporary folder of its own as TMPDIR (which
 * must stay empty but for tsx's cache) and the files its work would create or change watched; a script that started
 * its work instead would outlive the spawn timeout (the failure signal), or leave a trace.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.ts';

/** Far below what any of these takes when it does its work; a hang guard, not a timing assertion. */
const TIMEOUT_MS = 10_000;
const TSX = ['--import', 'tsx'];

const rows = [
  { script: 'scripts/demo.ts', node: TSX, watch: [] as string[] },
  { script: 'scripts/install.mjs', node: [], watch: [] },
  { script: 'scripts/build.mjs', node: [], watch: ['skills/context-assembler/dist/inputs.json', 'skills/bazinga-db/dist/inputs.json', 'skills/bazinga-db/dist/cl100k_base.ranks'] },
  { script: 'scripts/redaction-rules.ts', node: TSX, watch: [] },
  { script: 'bench/run.ts', node: TSX, watch: ['bench/results.json', 'bench/out', 'bench/out/run', 'bench/out/current'] },
  { script: 'bench/generate.ts', node: TSX, watch: ['bench/out', 'bench/out/db-1k-s42-g3'] },
  { script: 'bench/plans.ts', node: TSX, watch: [] },
  { script: 'bench/redaction.ts', node: TSX, watch: [] },
  { script: 'bench/signature.ts', node: TSX, watch: [] },
  { script: 'bench/hook.ts', node: TSX, watch: [] },
  { script: 'test/relevance/eval.ts', node: TSX, watch: [] },
];

/** What a watched path looks like: absent, or its kind, size and modification time. */
function state(rel: string): string {
  try {
    const st = fs.statSync(path.join(REPO_ROOT, rel));
    return `${st.isDirectory() ? 'dir' : 'file'} ${st.size} ${st.mtimeMs}`;
  } catch {
    return 'absent';
  }
}

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-help-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('--help on each script: usage, exit 0, no work', () => {
  it.each(rows)('$script --help', ({ script, node, watch }) => {
    const own = fs.mkdtempSync(path.join(tmp, 'run-'));
    const before = watch.map(state);
    const r = spawnSync(process.execPath, [...node, path.join(REPO_ROOT, script), '--help'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TMPDIR: own, TMP: own, TEMP: own },
      encoding: 'utf8',
      timeout: TIMEOUT_MS,
    });
    expect(r.error, `${script} --help did not return within ${TIMEOUT_MS} ms: it is doing its work`).toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: /m);
    // tsx keeps its compile cache there (tsx-<uid>): the loader's, not the script's.
    expect(fs.readdirSync(own).filter((f) => !/^tsx-\d+$/.test(f)), 'files created in TMPDIR').toEqual([]);
    expect(watch.map(state), 'watched files changed').toEqual(before);
  });
});
