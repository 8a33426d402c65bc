/**
 * The one atomic file write (skills/bazinga-db/bin/writeFile.cjs), which the prompt hook, the
 * wiring, the installer, the relevance switch and the launchers' code cache all use.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomically } from '../skills/bazinga-db/scripts/lib/index.ts';

let dir: string;
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});
const fresh = () => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-write-')));
const leftovers = () => fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));

describe('writeFileAtomically', () => {
  it('a new file: the bytes, mode 0644 unless given', () => {
    fresh();
    writeFileAtomically(path.join(dir, 'a'), 'one');
    writeFileAtomically(path.join(dir, 'b'), Buffer.from([0xe9, 0]), { mode: 0o600 });
    expect(fs.readFileSync(path.join(dir, 'a'), 'utf8')).toBe('one');
    expect(fs.statSync(path.join(dir, 'a')).mode & 0o777).toBe(0o644);
    expect([...fs.readFileSync(path.join(dir, 'b'))]).toEqual([0xe9, 0]);
    expect(fs.statSync(path.join(dir, 'b')).mode & 0o777).toBe(0o600);
    expect(leftovers()).toEqual([]);
  });

  it("an existing file keeps its mode; mtime is set when given", () => {
    fresh();
    const f = path.join(dir, 'f');
    fs.writeFileSync(f, 'old', { mode: 0o640 });
    fs.chmodSync(f, 0o640);
    const when = new Date('2025-01-02T03:04:05Z');
    writeFileAtomically(f, 'new', { mtime: when });
    expect(fs.readFileSync(f, 'utf8')).toBe('new');
    expect(fs.statSync(f).mode & 0o777).toBe(0o640);
    expect(fs.statSync(f).mtime.getTime()).toBe(when.getTime());
  });

  it('a link is written where it points (the link stays); with replaceLink it is replaced by a file', () => {
    fresh();
    const target = path.join(dir, 'target');
    const link = path.join(dir, 'link');
    fs.writeFileSync(target, 'old');
    fs.symlinkSync(target, link);
    writeFileAtomically(link, 'through');
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('through');
    writeFileAtomically(link, 'replaced', { replaceLink: true });
    expect(fs.lstatSync(link).isFile()).toBe(true);
    expect(fs.readFileSync(target, 'utf8')).toBe('through');
    expect(fs.readFileSync(link, 'utf8')).toBe('replaced');
  });

  it('a file or link already at the temporary name is never followed, nor removed: the write fails, the target and the other file stay', () => {
    fresh();
    const f = path.join(dir, 'f');
    const elsewhere = path.join(dir, 'elsewhere');
    fs.writeFileSync(f, 'kept');
    fs.writeFileSync(elsewhere, 'untouched');
    // The name's random part made known, so that a link can stand at the name the write picks.
    vi.spyOn(crypto, 'randomBytes').mockImplementation(((n: number) => Buffer.alloc(n, 0xab)) as typeof crypto.randomBytes);
    const planted = path.join(dir, '.bazinga-write-abababababababab.tmp');
    fs.symlinkSync(elsewhere, planted);
    expect(() => writeFileAtomically(f, 'new')).toThrow(/EEXIST/);
    expect(fs.readFileSync(f, 'utf8')).toBe('kept');
    expect(fs.readFileSync(elsewhere, 'utf8')).toBe('untouched');
    expect(fs.lstatSync(planted).isSymbolicLink()).toBe(true);
  });

  // A file system takes names of up to 255 bytes (NAME_MAX): the temporary name must not grow with the target's.
  it.each([
    { name: '250 bytes of ASCII', file: 'r'.repeat(245) + '.json' },
    { name: '255 bytes of ASCII (the longest a file system takes)', file: 'r'.repeat(250) + '.json' },
    { name: '250 bytes of two-byte characters', file: 'é'.repeat(125) },
  ])('a target whose name is $name is written, nothing left behind', ({ file }) => {
    fresh();
    const f = path.join(dir, file);
    writeFileAtomically(f, 'first');
    writeFileAtomically(f, 'second');
    expect(fs.readdirSync(dir)).toEqual([file]);
    expect(fs.readFileSync(f, 'utf8')).toBe('second');
  });

  it('a folder that cannot be written: the error, nothing left behind', () => {
    fresh();
    const f = path.join(dir, 'missing-folder', 'f');
    expect(() => writeFileAtomically(f, 'x')).toThrow(/ENOENT/);
    expect(leftovers()).toEqual([]);
  });
});
