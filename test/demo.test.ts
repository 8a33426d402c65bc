/**
 * `npm run demo` as a newcomer runs it (a real process): it says what its words mean, prints no
 * warning a newcomer can do nothing about, and the figures the README states about the demo's
 * session are the ones it prints.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.ts';

let out = '';
let err = '';
let code: number | null = null;

beforeAll(() => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 240_000 });
  out = r.stdout;
  err = r.stderr;
  code = r.status;
}, 250_000);

/** The value cell of each success metric the demo prints (its report's first section), up to the first space-separated figure. */
function printedMetrics(text: string): string[] {
  return ['Iterations per group', 'Prompt sizes', 'Context hits', 'QA failure recurrence'].map((name) => {
    const row = text.split('\n').find((l) => l.startsWith(`| ${name} |`));
    const cell = row?.split('|')[2]?.trim() ?? '';
    return cell.startsWith('not computable') ? 'not computable' : (/^[\d.]+(?: %)?/.exec(cell)?.[0] ?? cell);
  });
}

describe('npm run demo', () => {
  it('runs to the end, says what a session, group, iteration, package and zone are, and prints no warning', () => {
    expect(code, err).toBe(0);
    expect(err).toBe('');
    for (const word of ['A session is', 'task groups', 'iteration', 'A context package is', 'The zone says']) expect(out).toContain(word);
    // Nine blocks, none followed by a line from the assembler's stderr.
    expect(out.match(/^════ /gm)?.length).toBeGreaterThanOrEqual(9);
    expect(out).not.toMatch(/⚠ context-assembler/);
    expect(out).not.toMatch(/^\(exit \d+\)/m);
  });

  it("prints the metrics the README states for the demo's session", () => {
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const stated = /The demo's session after its recorded spawns:\s+([^.]+(?:\.\d+[^.]*)?)\./.exec(readme);
    expect(stated, 'the README states the demo session\'s metrics').not.toBeNull();
    const figures = (stated?.[1] ?? '').split(',').map((f) => f.trim().replace(/\s+/g, ' '));
    expect(printedMetrics(out)).toEqual(figures);
  });
});
