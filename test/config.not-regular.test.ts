/**
 * A configuration path that is not a regular file (a FIFO, a directory, a character device) is a
 * CONFIG error at once, never a wait: reading a FIFO blocks until a writer comes, which made every
 * command hang. Real FIFOs (mkfifo) and directories on copies of the v19 fixture, real processes
 * through the bin launchers: the assembler prints the fallback block and names the file and what
 * it is (exit 0), fetch and bazinga-db writes exit 1 with the CONFIG line, a bazinga-db read prints
 * with the default redaction policy and says why, doctor fails its config row. The only timing
 * bound is each process's spawn timeout, the failure signal of a hang.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BazingaError, readConfigFile } from '../skills/bazinga-db/scripts/lib/index.ts';
import { REPO_ROOT, S1, copyFixture, type Project } from './helpers.ts';

const ASSEMBLER = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const BAZINGA_DB = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
/** A hang shows as a killed process: far above a normal run, far below the 30 s a hang used to take. */
const HANG_GUARD_MS = 15_000;
const NOW = '2025-12-02T12:00:00Z';
const FALLBACK_START = '## Context for developer\n\n:warning: Context assembly encountered an error.';

const ENV: NodeJS.ProcessEnv = { ...process.env };
delete ENV.CLAUDE_PROJECT_DIR;
delete ENV.BAZINGA_ROOT;

function run(bin: string, args: readonly string[], cwd: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, env: ENV, input: '', encoding: 'utf8', timeout: HANG_GUARD_MS });
  // ETIMEDOUT: the process was still waiting when the guard killed it.
  expect(r.error, `${path.basename(bin)} ${args.join(' ')} hung`).toBeUndefined();
  const last = r.stderr.trimEnd().split('\n').pop() ?? '';
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, error: last.startsWith('{') ? JSON.parse(last) : undefined };
}

const mkfifo = (file: string) => execFileSync('mkfifo', [file]);

describe.skipIf(process.platform === 'win32')('a config path that is not a regular file', () => {
  let p: Project;
  let config: string;
  let elsewhere: string;
  beforeAll(() => {
    p = copyFixture('ca-config-fifo-');
    config = path.join(p.root, 'bazinga', 'skills_config.json');
    elsewhere = path.join(p.root, 'other');
    fs.mkdirSync(elsewhere);
  });
  afterAll(() => p.cleanup());

  /** Puts `kind` at `file` (nothing there before). */
  const place = (kind: 'FIFO' | 'directory', file: string) => (kind === 'FIFO' ? mkfifo(file) : fs.mkdirSync(file));
  const clear = (file: string) => fs.rmSync(file, { recursive: true, force: true });

  it.each([
    { name: 'a FIFO at bazinga/skills_config.json', kind: 'FIFO' as const, what: 'a FIFO', viaFlag: false },
    { name: 'a directory at bazinga/skills_config.json', kind: 'directory' as const, what: 'a directory', viaFlag: false },
    { name: '--config naming a FIFO', kind: 'FIFO' as const, what: 'a FIFO', viaFlag: true },
    { name: '--config naming a directory', kind: 'directory' as const, what: 'a directory', viaFlag: true },
  ])('assemble, $name: the fallback block at once, exit 0, the file and what it is named', ({ kind, what, viaFlag }) => {
    const file = viaFlag ? path.join(elsewhere, 'config.json') : config;
    place(kind, file);
    try {
      const args = ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', NOW, '--dry-run'];
      const r = run(ASSEMBLER, viaFlag ? [...args, '--config', file] : args, p.root);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith(FALLBACK_START)).toBe(true);
      expect(r.stderr).toBe(`⚠ context-assembler: ${file}: is ${what}, not a regular file; printing the fallback block\n`);
    } finally {
      clear(file);
    }
  });

  it('assemble --config naming a character device (/dev/null): the same, never read', () => {
    const r = run(ASSEMBLER, ['--project-root', p.root, '--session', S1, '--agent', 'developer', '--config', '/dev/null', '--dry-run'], p.root);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(FALLBACK_START)).toBe(true);
    expect(r.stderr).toContain('/dev/null: is a character device, not a regular file');
  });

  describe('with a FIFO at bazinga/skills_config.json', () => {
    beforeAll(() => mkfifo(config));
    afterAll(() => clear(config));

    it('fetch: exit 1, the CONFIG line naming the file', () => {
      const r = run(ASSEMBLER, ['fetch', '1', '--project-root', p.root], p.root);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.error).toEqual({ success: false, error: `${config}: is a FIFO, not a regular file`, code: 'CONFIG', file: config, key: '' });
    });

    it('bazinga-db: a write exits 1 with CONFIG (nothing stored); a read prints with the default policy and says why', () => {
      const write = run(BAZINGA_DB, ['--project-root', p.root, 'save-reasoning', S1, 'AUTH', 'developer', 'understanding', 'Read the login flow'], p.root);
      expect(write.code).toBe(1);
      expect(write.stdout).toBe('');
      expect(write.error).toMatchObject({ success: false, code: 'CONFIG', file: config, error: `${config}: is a FIFO, not a regular file` });
      const read = run(BAZINGA_DB, ['--project-root', p.root, 'get-reasoning', S1, '--group_id', 'AUTH'], p.root);
      expect(read.code).toBe(0);
      expect(JSON.parse(read.stdout)).toBeDefined();
      expect(read.stderr).toContain(`⚠ ${config}: is a FIFO, not a regular file; printed with the default redaction policy`);
      expect(JSON.stringify(JSON.parse(read.stdout))).not.toContain('Read the login flow');
    });

    it('doctor: the config row fails naming the file, the secrets row is not checked, exit 1', () => {
      const r = run(ASSEMBLER, ['doctor', '--project-root', p.root, '--format', 'json'], p.root);
      expect(r.code).toBe(1);
      const doc = JSON.parse(r.stdout) as { ok: boolean; checks: { check: string; status: string; detail: string; fix: string }[] };
      const row = (name: string) => doc.checks.find((c) => c.check === name);
      expect(doc.ok).toBe(false);
      expect(row('config')).toMatchObject({ status: 'fail', detail: `${config}: is a FIFO, not a regular file` });
      expect(row('config')?.fix).toMatch(/regular file/);
      expect(row('secrets')?.status).toBe('warn');
      expect(doc.checks.filter((c) => c.status === 'fail').map((c) => c.check)).toEqual(['config']);
    });
  });
});

describe.skipIf(process.platform === 'win32')('readConfigFile (the one reader of a config file, both skills)', () => {
  let p: Project;
  beforeAll(() => {
    p = copyFixture('ca-config-read-');
  });
  afterAll(() => p.cleanup());

  it('a regular file: its text; a missing one: undefined; a symlink to a regular file: the target', () => {
    const file = path.join(p.root, 'bazinga', 'regular.json');
    fs.writeFileSync(file, '{"context_engineering": {}}');
    expect(readConfigFile(file)).toBe('{"context_engineering": {}}');
    expect(readConfigFile(path.join(p.root, 'bazinga', 'absent.json'))).toBeUndefined();
    const link = path.join(p.root, 'bazinga', 'link.json');
    fs.symlinkSync(file, link);
    expect(readConfigFile(link)).toBe('{"context_engineering": {}}');
  });

  it.each([
    { name: 'FIFO', make: (f: string) => mkfifo(f), what: 'a FIFO' },
    { name: 'directory', make: (f: string) => fs.mkdirSync(f), what: 'a directory' },
    { name: 'symlink to a FIFO', make: (f: string) => (mkfifo(`${f}.target`), fs.symlinkSync(`${f}.target`, f)), what: 'a FIFO' },
  ])('$name: CONFIG naming the file and what it is, with file and key', ({ name, make, what }) => {
    const file = path.join(p.root, 'bazinga', `${name.replace(/ /g, '-')}.json`);
    make(file);
    let caught: unknown;
    try {
      readConfigFile(file);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BazingaError);
    expect((caught as BazingaError).code).toBe('CONFIG');
    expect((caught as BazingaError).message).toBe(`${file}: is ${what}, not a regular file`);
    expect((caught as BazingaError).extra).toEqual({ file, key: '' });
  });
});
