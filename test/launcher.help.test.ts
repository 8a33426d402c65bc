/**
 * `help`, `--help` and `-h` on the context-assembler launcher list every step and subcommand with
 * one line each and exit 0, as `bazinga-db help` lists its commands; `<step> --help` is still the
 * step's own help; an unknown step is still a USAGE error. Real processes through the bin launchers.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.ts';

const ASSEMBLER = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const BAZINGA_DB = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
/** The steps and subcommands the launcher runs (the list). */
const STEPS = ['zone', 'rank', 'pack', 'reasoning', 'consume', 'assemble', 'fetch', 'doctor'];

function run(bin: string, args: readonly string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 15_000 /* hang guard only */ });
  expect(r.error).toBeUndefined();
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('context-assembler help', () => {
  it('the steps the launcher accepts (its unknown-step error lists them) are exactly those the help lists', () => {
    const accepted = (JSON.parse(run(ASSEMBLER, ['hepl']).stderr.trim()).error as string).replace(/^.*Steps: /, '').split(', ');
    const listed = run(ASSEMBLER, ['help']).stdout.split('\n').flatMap((l) => /^ {2}([a-z-]+)\s+\S/.exec(l)?.[1] ?? []);
    expect(accepted).toEqual(listed);
    for (const step of STEPS) expect(listed, step).toContain(step);
  });

  it.each(['help', '--help', '-h'])('%s: exit 0, nothing on stderr, a Usage line, every step and help on a line of its own', (arg) => {
    const r = run(ASSEMBLER, [arg]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Usage: context-assembler /m);
    for (const step of [...STEPS, 'help']) {
      const lines = r.stdout.split('\n').filter((l) => new RegExp(`^  ${step}\\s+\\S`).test(l));
      expect(lines, step).toHaveLength(1);
    }
  });

  it('the same text whichever way it is asked for', () => {
    const texts = ['help', '--help', '-h'].map((a) => run(ASSEMBLER, [a]).stdout);
    expect(new Set(texts).size).toBe(1);
  });

  it("<step> --help is still the step's own help (assemble: the request flags)", () => {
    const r = run(ASSEMBLER, ['assemble', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^assemble\.ts: /);
    expect(r.stdout).toContain('--session ID');
    const doctor = run(ASSEMBLER, ['doctor', '--help']);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/Usage: doctor/);
  });

  it('an unknown step: exit 2, the USAGE line naming the steps and help', () => {
    const r = run(ASSEMBLER, ['hepl']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const err = JSON.parse(r.stderr.trim());
    expect(err).toMatchObject({ success: false, code: 'USAGE' });
    expect(err.error).toContain("Unknown step 'hepl'");
    for (const step of STEPS) expect(err.error).toContain(step);
    expect(err.error).toContain('help');
  });
});

describe('bazinga-db help (kept consistent: help, --help and -h, exit 0, a Usage line)', () => {
  it.each(['help', '--help', '-h'])('%s', (arg) => {
    const r = run(BAZINGA_DB, [arg]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Usage: /m);
    expect(r.stdout).toMatch(/^ {2}help$/m);
  });
});
