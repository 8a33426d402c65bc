/**
 * The watchdog of a child run (skills/bazinga-db/scripts/lib/relaunch.ts): a thread that ends its
 * process when the bound and a grace have passed or when its parent is gone, even while the main
 * thread never returns to JavaScript (as inside a SQLite statement; here a busy loop stands for it).
 * Real processes: the point is what happens to one.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-relaunch-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const RELAUNCH = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'scripts', 'lib', 'relaunch.ts');

/** A script that starts the watchdog with `boundMs`, says it did, and then never yields. */
function busyChild(boundMs: number): string {
  const file = path.join(dir, `busy-${boundMs}.mts`);
  fs.writeFileSync(file, `import { watchOver } from ${JSON.stringify(RELAUNCH)};\nwatchOver(${boundMs});\nprocess.stdout.write('watching\\n');\nfor (;;) {}\n`);
  return file;
}

const alive = (pid: number): boolean => {
  try {
    // A zombie is dead: only its parent has not collected it yet.
    return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim().startsWith('Z');
  } catch {
    return false;
  }
};

describe('a child run ends itself', () => {
  it('when its bound and the grace have passed, though its main thread never yields', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', busyChild(300)], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout).toBe('watching\n');
    expect(r.signal).toBe('SIGKILL');
    // Killed by its own watchdog, not by this test's 30 s timeout.
    expect(r.error).toBeUndefined();
  });

  it('when its parent is gone (killed on its own, the child adopted)', async () => {
    // The parent starts the child and prints its pid; the child watches with a bound far away.
    const parentScript = path.join(dir, 'parent.cjs');
    fs.writeFileSync(
      parentScript,
      `const c = require('node:child_process').spawn(process.execPath, ['--import', 'tsx', ${JSON.stringify(busyChild(600_000))}], { stdio: ['ignore', 'pipe', 'ignore'], cwd: ${JSON.stringify(REPO_ROOT)} });
       c.stdout.once('data', () => process.stdout.write(c.pid + '\\n'));
       setInterval(() => {}, 1000);`,
    );
    const parent = spawn(process.execPath, [parentScript], { stdio: ['ignore', 'pipe', 'ignore'] });
    const child = await new Promise<number>((resolve) => parent.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
    expect(alive(child)).toBe(true);
    parent.kill('SIGKILL');
    let gone = false;
    for (const end = Date.now() + 15_000; Date.now() < end && !gone; ) {
      await new Promise((r) => setTimeout(r, 100));
      gone = !alive(child);
    }
    if (!gone) process.kill(child, 'SIGKILL');
    expect(gone).toBe(true);
  });
});
