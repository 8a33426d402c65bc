/**
 * Every path the product is given is checked before it is read:
 * regular files only, checked without blocking, a cap per kind, a bounded read, and errors that
 * name the path, what it is and the cap — never the file's content. `save-reasoning
 * --content-file` reads only inside the project root or the temp folder; `fetch` serves only
 * files whose real path lies inside the project's artifacts folder, itself inside the project
 * root. Real FIFOs (mkfifo), /dev/zero, directories and oversized files on copies of the v19
 * fixture, through the bin launchers as real processes. The only timing bound is each process's
 * spawn timeout, the failure signal of a hang.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BazingaError,
  DEFAULT_FILE_LIMITS,
  MAX_CONFIG_BYTES,
  jsonErrorLocation,
  readConfigFile,
  readRegularFile,
} from '../skills/bazinga-db/scripts/lib/index.ts';
import { artifactHead } from '../skills/bazinga-db/scripts/lib/artifacts.ts';
import { parseConfig } from '../skills/context-assembler/scripts/lib/config.ts';
import { redactText } from '../skills/bazinga-db/scripts/lib/redact.ts';
import { STDIN_MAX_BYTES } from '../skills/context-assembler/scripts/lib/stdio.ts';
import { REPO_ROOT, S1, copyFixture, envWithoutRootHints, type Project } from './helpers.ts';

const ASSEMBLER = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
const BAZINGA_DB = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
/** A hang shows as a killed process: far above a normal run. */
const HANG_GUARD_MS = 15_000;
const FALLBACK_START = '## Context for developer\n\n:warning: Context assembly encountered an error.';
/** Bytes of /etc/passwd that must never be printed. */
const PASSWD_BYTES = /root:|:0:0:|\/bin\/(?:ba)?sh/;

const ENV = envWithoutRootHints();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The last stderr line, parsed, when it is the one-line JSON error. */
  error: { success: false; error: string; code: string } | undefined;
}

function run(bin: string, args: readonly string[], cwd: string, stdin: string | number = ''): Run {
  const opts = { cwd, env: ENV, encoding: 'utf8' as const, timeout: HANG_GUARD_MS };
  const r =
    typeof stdin === 'number'
      ? spawnSync(process.execPath, [bin, ...args], { ...opts, stdio: [stdin, 'pipe', 'pipe'] })
      : spawnSync(process.execPath, [bin, ...args], { ...opts, input: stdin });
  // ETIMEDOUT: the process was still waiting (or reading) when the guard killed it.
  expect(r.error, `${path.basename(bin)} ${args.join(' ')} hung`).toBeUndefined();
  const last = r.stderr.trimEnd().split('\n').pop() ?? '';
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, error: last.startsWith('{') ? JSON.parse(last) : undefined };
}

/** The one-line error of references/errors.md: the last stderr line, nothing on stdout. */
function expectErrorLine(r: Run, exit: number, code: string): string {
  expect(r.code).toBe(exit);
  expect(r.stdout).toBe('');
  expect(r.error).toMatchObject({ success: false, code });
  expect(Object.keys(r.error as object).sort()).toEqual(['code', 'error', 'success']);
  return (r.error as { error: string }).error;
}

const mkfifo = (file: string) => execFileSync('mkfifo', [file]);
/** A sparse file of `bytes` bytes (nothing written but its last byte). */
function bigFile(file: string, bytes: number): void {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, 'x', bytes - 1);
  fs.closeSync(fd);
}

const assembleArgs = (p: Project) => ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--dry-run'];

describe('jsonErrorLocation: line and column, never the bytes', () => {
  it.each([
    { name: 'not JSON at all (/etc/passwd)', text: 'root:x:0:0:root:/root:/bin/bash\n', at: { line: 1, column: 1 } },
    { name: 'an unfinished object', text: '{"context_engineering": {', at: { line: 1, column: 26 } },
    { name: 'a bad literal on line 3', text: '{\n  "a": 1,\n  "b": tru\n}', at: { line: 3, column: 11 } },
    { name: 'a trailing comma', text: '{"a": [1, 2,]}', at: { line: 1, column: 13 } },
    { name: 'text after the value', text: '{} x', at: { line: 1, column: 4 } },
    { name: 'a control character in a string', text: '["a\tb"]', at: { line: 1, column: 4 } },
    { name: 'a bad escape', text: '["\\x"]', at: { line: 1, column: 4 } },
    { name: 'a number without digits after the point', text: '[1.]', at: { line: 1, column: 4 } },
    { name: 'a byte order mark', text: '\uFEFF{}', at: { line: 1, column: 1 } },
  ])('$name', ({ text, at }) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(jsonErrorLocation(text)).toEqual(at);
  });

  it('valid JSON has no error location', () => {
    for (const text of ['{}', '[1, -2.5e3, "a\\u00e9", true, false, null, {"k": []}]', ' "x" ']) expect(jsonErrorLocation(text)).toBeUndefined();
  });

  it('parseConfig of /etc/passwd-like text names the file, line and column, and quotes nothing', () => {
    let caught: unknown;
    try {
      parseConfig('root:x:0:0:root:/root:/bin/bash\n', '/etc/passwd');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BazingaError);
    expect((caught as BazingaError).code).toBe('CONFIG');
    expect((caught as BazingaError).message).toBe('config file not valid JSON at line 1, column 1: /etc/passwd');
    expect(redactText((caught as BazingaError).message)).toBe((caught as BazingaError).message);
    expect(() => parseConfig('"root:x:0:0"', '/c.json')).toThrow(/^config file expected a JSON object, got a string: \/c\.json$/);
  });

  it('file_limits: positive integers, checked like every key', () => {
    expect(() => parseConfig('{"context_engineering": {"file_limits": {"artifact_bytes": 0}}}', '/c.json')).toThrow(
      '/c.json: context_engineering.file_limits.artifact_bytes: expected a positive integer, got number 0',
    );
    expect(parseConfig('{"context_engineering": {"file_limits": {"artifact_bytes": 100}}}', '/c.json').file_limits).toEqual({
      content_file_bytes: DEFAULT_FILE_LIMITS.content_file_bytes,
      artifact_bytes: 100,
    });
  });
});

describe.skipIf(process.platform === 'win32')('readRegularFile and readConfigFile: what they refuse, at once', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-files-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a regular file within the cap: its bytes; at the cap exactly too', () => {
    const file = path.join(dir, 'ok.txt');
    fs.writeFileSync(file, 'x'.repeat(10));
    expect(readRegularFile(file, 10)).toEqual({ ok: true, bytes: Buffer.from('x'.repeat(10)) });
  });

  it.each([
    { name: 'a FIFO', make: (f: string) => mkfifo(f), refusal: { reason: 'not-file', what: 'a FIFO' } },
    { name: 'a directory', make: (f: string) => fs.mkdirSync(f), refusal: { reason: 'not-file', what: 'a directory' } },
    { name: 'a symlink to a FIFO', make: (f: string) => (mkfifo(`${f}.target`), fs.symlinkSync(`${f}.target`, f)), refusal: { reason: 'not-file', what: 'a FIFO' } },
    { name: 'a file one byte over the cap', make: (f: string) => fs.writeFileSync(f, 'x'.repeat(11)), refusal: { reason: 'too-large', size: 11, cap: 10 } },
    { name: 'nothing', make: () => {}, refusal: { reason: 'missing' } },
  ])('$name', ({ name, make, refusal }) => {
    const file = path.join(dir, name.replace(/ /g, '-'));
    make(file);
    expect(readRegularFile(file, 10)).toEqual({ ok: false, refusal });
  });

  it('/dev/zero: a character device, never opened', () => {
    expect(readRegularFile('/dev/zero', 10)).toEqual({ ok: false, refusal: { reason: 'not-file', what: 'a character device' } });
  });

  it('readConfigFile: a file over MAX_CONFIG_BYTES is CONFIG naming the file, its size and the cap', () => {
    const file = path.join(dir, 'big.json');
    bigFile(file, MAX_CONFIG_BYTES + 1);
    expect(() => readConfigFile(file)).toThrow(`${file}: is ${MAX_CONFIG_BYTES + 1} bytes, over the cap of ${MAX_CONFIG_BYTES} bytes`);
    try {
      readConfigFile(file);
    } catch (err) {
      expect((err as BazingaError).code).toBe('CONFIG');
      expect((err as BazingaError).extra).toEqual({ file, key: '' });
    }
  });
});

describe.skipIf(process.platform === 'win32')('the config path (bazinga/skills_config.json, --config)', () => {
  let p: Project;
  beforeAll(() => {
    p = copyFixture('ca-files-config-');
  });
  afterAll(() => p.cleanup());

  it('assemble --config /dev/zero: the fallback block at once, exit 0, "a character device" named', () => {
    const r = run(ASSEMBLER, [...assembleArgs(p), '--config', '/dev/zero'], p.root);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(FALLBACK_START)).toBe(true);
    expect(r.stderr).toBe('⚠ context-assembler: /dev/zero: is a character device, not a regular file; printing the fallback block\n');
  });

  it('assemble --config /etc/passwd: the fallback with line and column; neither stderr nor the fallback JSON quotes the file', () => {
    for (const format of ['markdown', 'json']) {
      const r = run(ASSEMBLER, [...assembleArgs(p), '--config', '/etc/passwd', '--format', format], p.root);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('⚠ context-assembler: config file not valid JSON at line 1, column 1: /etc/passwd; printing the fallback block\n');
      expect(r.stderr).not.toMatch(PASSWD_BYTES);
      expect(r.stdout).not.toMatch(PASSWD_BYTES);
      if (format === 'json') expect(JSON.parse(r.stdout)).toMatchObject({ fallback: true, agent: 'developer' });
    }
  });

  it('an oversized bazinga/skills_config.json: assemble falls back naming size and cap; a bazinga-db write is CONFIG, exit 1', () => {
    const config = path.join(p.root, 'bazinga', 'skills_config.json');
    bigFile(config, MAX_CONFIG_BYTES + 5);
    try {
      const what = `${config}: is ${MAX_CONFIG_BYTES + 5} bytes, over the cap of ${MAX_CONFIG_BYTES} bytes`;
      const r = run(ASSEMBLER, assembleArgs(p), p.root);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith(FALLBACK_START)).toBe(true);
      expect(r.stderr).toBe(`⚠ context-assembler: ${what}; printing the fallback block\n`);
      const write = run(BAZINGA_DB, ['--project-root', p.root, 'save-reasoning', S1, 'AUTH', 'developer', 'understanding', 'x'], p.root);
      expect(write.code).toBe(1);
      expect(write.error).toMatchObject({ success: false, code: 'CONFIG', error: what });
    } finally {
      fs.rmSync(config, { force: true });
    }
  });
});

describe.skipIf(process.platform === 'win32')('save-reasoning --content-file', () => {
  let p: Project;
  let tmp: string;
  const save = (file: string) =>
    run(BAZINGA_DB, ['--project-root', p.root, 'save-reasoning', S1, 'AUTH', 'developer', 'understanding', '--content-file', file], p.root);
  const countReasoning = () => JSON.parse(run(BAZINGA_DB, ['--project-root', p.root, 'get-reasoning', S1, '--limit', '1000'], p.root).stdout).length;
  beforeAll(() => {
    p = copyFixture('ca-files-content-');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-files-tmp-'));
  });
  afterAll(() => {
    p.cleanup();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a hard link in the temp folder to a file outside is refused; a hard-linked file inside the project is read', () => {
    // The outside file sits beside the repository (the same file system as the temp folder here).
    const outside = fs.mkdtempSync(path.join(REPO_ROOT, '.ca-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for the database\n');
      const link = path.join(tmp, 'innocent.md');
      try {
        fs.linkSync(path.join(outside, 'secret.txt'), link);
      } catch (err) {
        // Another file system for the temp folder: no hard link can cross it, nothing to refuse.
        expect((err as NodeJS.ErrnoException).code).toBe('EXDEV');
        return;
      }
      const before = countReasoning();
      const r = save(link);
      expect(r.code).toBe(1);
      expect(r.error).toMatchObject({ code: 'REFUSED' });
      expect(r.error?.error).toContain('has 2 hard links; in the temp folder only a file with one is read');
      expect(countReasoning()).toBe(before);
      fs.writeFileSync(path.join(p.root, 'notes.md'), 'linked notes inside the project\n');
      fs.linkSync(path.join(p.root, 'notes.md'), path.join(p.root, 'notes-copy.md'));
      expect(save(path.join(p.root, 'notes-copy.md')).code).toBe(0);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('/etc/passwd: REFUSED naming the rule, exit 1, nothing stored, nothing quoted', () => {
    const before = countReasoning();
    const message = expectErrorLine(save('/etc/passwd'), 1, 'REFUSED');
    expect(message).toContain('lies outside the project root and the temp folder; --content-file reads only from inside');
    expect(message).not.toMatch(PASSWD_BYTES);
    expect(countReasoning()).toBe(before);
  });

  it('a symlink in the temp folder to /etc/passwd: resolved first, REFUSED', () => {
    const link = path.join(tmp, 'notes.md');
    fs.symlinkSync('/etc/passwd', link);
    expect(expectErrorLine(save(link), 1, 'REFUSED')).toContain(`resolves to /etc/passwd, which lies outside`);
  });

  it('a file in the temp folder (as agents write /tmp/reasoning_understanding.md) and one in the project: stored', () => {
    const inTmp = path.join(tmp, 'reasoning_understanding.md');
    fs.writeFileSync(inTmp, 'Read the login flow first');
    const a = save(inTmp);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ success: true, content_length: 25 });
    fs.writeFileSync(path.join(p.root, 'notes.md'), 'Then the refresh path');
    expect(save('notes.md').code).toBe(0);
  });

  it.each([
    { name: 'a FIFO', make: (f: string) => mkfifo(f), what: 'is a FIFO, not a regular file' },
    { name: 'a directory', make: (f: string) => fs.mkdirSync(f), what: 'is a directory, not a regular file' },
  ])('$name in the project: VALIDATION at once, naming it', ({ name, make, what }) => {
    const file = path.join(p.root, name.replace(/ /g, '-'));
    make(file);
    expect(expectErrorLine(save(file), 1, 'VALIDATION')).toBe(`Could not read content file '${file}' (${file} ${what})`);
  });

  it('over the cap (file_limits.content_file_bytes, from bazinga/skills_config.json): VALIDATION naming size, cap and key', () => {
    const config = path.join(p.root, 'bazinga', 'skills_config.json');
    fs.writeFileSync(config, JSON.stringify({ context_engineering: { file_limits: { content_file_bytes: 100 } } }));
    try {
      const file = path.join(tmp, 'long.md');
      fs.writeFileSync(file, 'y'.repeat(101));
      expect(expectErrorLine(save(file), 1, 'VALIDATION')).toBe(
        `Could not read content file '${file}' (${file} is 101 bytes, over the cap of 100 bytes; context_engineering.file_limits.content_file_bytes in bazinga/skills_config.json raises it)`,
      );
      fs.writeFileSync(file, 'y'.repeat(100));
      expect(save(file).code).toBe(0);
    } finally {
      fs.rmSync(config, { force: true });
    }
  });

  it('the default cap is DEFAULT_FILE_LIMITS.content_file_bytes', () => {
    const file = path.join(tmp, 'huge.md');
    bigFile(file, DEFAULT_FILE_LIMITS.content_file_bytes + 1);
    expect(expectErrorLine(save(file), 1, 'VALIDATION')).toContain(`over the cap of ${DEFAULT_FILE_LIMITS.content_file_bytes} bytes`);
  });
});

describe.skipIf(process.platform === 'win32')('--params-file and stdin', () => {
  let p: Project;
  beforeAll(() => {
    p = copyFixture('ca-files-params-');
  });
  afterAll(() => p.cleanup());

  it.each([
    { name: 'a FIFO', make: (f: string) => mkfifo(f), what: 'is a FIFO, not a regular file' },
    { name: 'a file over 1 MB', make: (f: string) => bigFile(f, 1_000_001), what: 'is 1000001 bytes, over the cap of 1000000 bytes' },
  ])('--params-file naming $name: exit 2 at once, naming it and the cap', ({ name, make, what }) => {
    const file = path.join(p.root, `params-${name.replace(/ /g, '-')}.json`);
    make(file);
    const r = run(ASSEMBLER, ['--project-root', p.root, '--params-file', file, '--dry-run'], p.root);
    expect(expectErrorLine(r, 2, 'VALIDATION')).toBe(`--params-file ${file}: ${what}`);
  });

  it('--params-file /dev/zero: a character device, exit 2; not JSON: line and column, never the bytes', () => {
    const zero = run(ASSEMBLER, ['--project-root', p.root, '--params-file', '/dev/zero'], p.root);
    expect(expectErrorLine(zero, 2, 'VALIDATION')).toBe('--params-file /dev/zero: is a character device, not a regular file');
    const file = path.join(p.root, 'not-params.json');
    fs.copyFileSync('/etc/passwd', file);
    const bad = run(ASSEMBLER, ['--project-root', p.root, '--params-file', file], p.root);
    expect(expectErrorLine(bad, 2, 'VALIDATION')).toBe(`--params-file ${file}: not valid JSON at line 1, column 1`);
  });

  it('stdin of /dev/zero: read to the cap and no further, exit 2 naming the cap', () => {
    const fd = fs.openSync('/dev/zero', 'r');
    try {
      const r = run(ASSEMBLER, ['rank', '--project-root', p.root], p.root, fd);
      expect(expectErrorLine(r, 2, 'VALIDATION')).toBe(
        `stdin: more than ${STDIN_MAX_BYTES} bytes (a character device), over the cap of ${STDIN_MAX_BYTES} bytes for a piped document`,
      );
    } finally {
      fs.closeSync(fd);
    }
  });

  it('stdin from a file over the cap: refused on its size; the prompt hook says so and exits 0', () => {
    const file = path.join(p.root, 'big-stdin.json');
    bigFile(file, STDIN_MAX_BYTES + 1);
    const fd = fs.openSync(file, 'r');
    try {
      const r = run(ASSEMBLER, ['pack', '--project-root', p.root], p.root, fd);
      expect(expectErrorLine(r, 2, 'VALIDATION')).toBe(`stdin: a file of ${STDIN_MAX_BYTES + 1} bytes, over the cap of ${STDIN_MAX_BYTES} bytes for a piped document`);
      const hook = run(ASSEMBLER, ['prompt-hook'], p.root, fd);
      expect(hook.code).toBe(0);
      expect(hook.stdout).toBe('');
      expect(hook.stderr).toContain('⚠ context-assembler: hook event not read (stdin: a file of');
    } finally {
      fs.closeSync(fd);
    }
  });
});

describe.skipIf(process.platform === 'win32')('fetch: containment, missing files, caps', () => {
  let p: Project;
  const artifacts = () => path.join(p.root, 'bazinga', 'artifacts');
  const fetch = (id: number) => run(ASSEMBLER, ['fetch', String(id), '--project-root', p.root], p.root);
  beforeEach(() => {
    p = copyFixture('ca-files-fetch-');
  });
  afterEach(() => p.cleanup());

  /** Points package `id` at `filePath` (a row an older tool or a hand edit could have written). */
  function setPath(id: number, filePath: string): void {
    const r = spawnSync(
      process.execPath,
      ['-e', `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.prepare('UPDATE context_packages SET file_path=? WHERE id=?').run(process.argv[2], Number(process.argv[3]));d.close()`, p.dbPath, filePath, String(id)],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
  }

  it('bazinga/artifacts a symlink to /etc, package path bazinga/artifacts/passwd: REFUSED, exit 1, nothing printed; the index reads nothing there', () => {
    fs.renameSync(artifacts(), `${artifacts()}.real`);
    fs.symlinkSync('/etc', artifacts());
    setPath(2, 'bazinga/artifacts/passwd');
    const message = expectErrorLine(fetch(2), 1, 'REFUSED');
    expect(message).toBe('refused: bazinga/artifacts resolves to /etc, outside the project root, so bazinga/artifacts/passwd is not served; fetch serves only files inside the project root');
    expect(artifactHead(p.root, 'bazinga/artifacts/passwd', 4096)).toBe('');
  });

  it('a parent of the artifacts folder (bazinga/) linked outside the project: REFUSED too', () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-files-outside-'));
    try {
      fs.renameSync(path.join(p.root, 'bazinga'), path.join(outside, 'bazinga'));
      fs.symlinkSync(path.join(outside, 'bazinga'), path.join(p.root, 'bazinga'));
      expect(expectErrorLine(fetch(1), 1, 'REFUSED')).toBe(
        `refused: bazinga/artifacts resolves to ${fs.realpathSync(path.join(outside, 'bazinga', 'artifacts'))}, outside the project root, so bazinga/artifacts/${S1}/research_group_AUTH.md is not served; fetch serves only files inside the project root`,
      );
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('no artifacts folder: NOT_FOUND naming the path relative to the project root (never DB_ERROR or ENOENT)', () => {
    fs.rmSync(artifacts(), { recursive: true });
    const message = expectErrorLine(fetch(1), 1, 'NOT_FOUND');
    expect(message).toBe(`artifact file not found: bazinga/artifacts/${S1}/research_group_AUTH.md (the project has no bazinga/artifacts/ folder)`);
  });

  it('a missing file, stored relative or absolute: NOT_FOUND with the path relative to the project root', () => {
    fs.rmSync(path.join(artifacts(), S1, 'research_group_AUTH.md'));
    expect(expectErrorLine(fetch(1), 1, 'NOT_FOUND')).toBe(`artifact file not found: bazinga/artifacts/${S1}/research_group_AUTH.md`);
    setPath(1, path.join(p.root, 'bazinga', 'artifacts', S1, 'gone.md'));
    expect(expectErrorLine(fetch(1), 1, 'NOT_FOUND')).toBe(`artifact file not found: bazinga/artifacts/${S1}/gone.md`);
  });

  it('an artifact that is a FIFO: REFUSED at once, naming what it is', () => {
    const file = path.join(artifacts(), S1, 'research_group_AUTH.md');
    fs.rmSync(file);
    mkfifo(file);
    expect(expectErrorLine(fetch(1), 1, 'REFUSED')).toBe(`refused: bazinga/artifacts/${S1}/research_group_AUTH.md is a FIFO, not a regular file`);
  });

  it('an artifact over file_limits.artifact_bytes: REFUSED naming size, cap and key; within it: printed', () => {
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { file_limits: { artifact_bytes: 64 } } }));
    const file = path.join(artifacts(), S1, 'research_group_AUTH.md');
    fs.writeFileSync(file, 'z'.repeat(65));
    expect(expectErrorLine(fetch(1), 1, 'REFUSED')).toBe(
      `refused: bazinga/artifacts/${S1}/research_group_AUTH.md is 65 bytes, over the cap of 64 bytes (context_engineering.file_limits.artifact_bytes raises it)`,
    );
    fs.writeFileSync(file, 'z'.repeat(64));
    const ok = fetch(1);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toBe(`${'z'.repeat(64)}\n`);
  });
});

describe('the rule is checked on what was opened', () => {
  it('openedPath names the file behind a descriptor opened through a linked folder, and a refusing check stops the read', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-files-opened-'));
    try {
      fs.mkdirSync(path.join(dir, 'real'));
      fs.writeFileSync(path.join(dir, 'real', 'a.md'), 'text\n');
      fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
      let seen = '';
      const read = readRegularFile(path.join(dir, 'link', 'a.md'), 100, (opened) => {
        seen = opened;
        return opened.includes(`${path.sep}link${path.sep}`) ? undefined : 'is not where it was asked for';
      });
      expect(seen).toBe(fs.realpathSync(path.join(dir, 'real', 'a.md')));
      expect(read).toEqual({ ok: false, refusal: { reason: 'refused', why: 'is not where it was asked for' } });
      expect(readRegularFile(path.join(dir, 'link', 'a.md'), 100, () => undefined)).toEqual({ ok: true, bytes: Buffer.from('text\n') });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
