/**
 * The rank file the build writes next to bazinga-db's bundle (dist/cl100k_base.ranks): the same
 * table as js-tiktoken's, refused when it was made from another js-tiktoken or is damaged anywhere,
 * and what a counting process loads. The load is checked on a copy of the counter in a temporary
 * tree inside the repository (so js-tiktoken resolves), never by moving the shared file.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeRanks, encodeRanks, RANKS_FILE } from '../skills/bazinga-db/scripts/lib/tokens.ts';
import { REPO_ROOT } from './helpers.ts';

const encoded = encodeRanks();
const headerEnd = encoded.indexOf(10, encoded.indexOf(10) + 1);
const header = JSON.parse(encoded.toString('utf8', encoded.indexOf(10) + 1, headerEnd)) as { origin: { version: string; bytes: number } };
const origin = () => header.origin;
/** The file with one byte of its body changed (keys or lengths), the header kept. */
const flipped = (offset: number, delta: number) => {
  const copy = Buffer.from(encoded);
  copy[headerEnd + 1 + offset] = ((copy[headerEnd + 1 + offset] as number) + delta) & 255;
  return copy;
};

describe('the rank file', () => {
  it('decodes to the table js-tiktoken holds: 100,256 keys, ranks in order', () => {
    const table = decodeRanks(encoded, origin);
    expect(table?.ranks.size).toBe(100256);
    expect(table?.ranks.get('hello')).toBe(15339);
    expect(table?.ranks.get(' world')).toBe(1917);
    expect(table?.from).toBe('rank file');
    const seen = new Set(table?.ranks.values());
    expect(seen.size).toBe(100256);
    expect(Math.max(...seen)).toBe(100255);
  });

  it.each([
    { name: 'made from another js-tiktoken version', buf: encoded, from: { ...header.origin, version: '0.0.1' } },
    { name: 'made from another rank module (size)', buf: encoded, from: { ...header.origin, bytes: header.origin.bytes + 1 } },
    { name: 'another format', buf: Buffer.concat([Buffer.from('not-ranks\n'), encoded.subarray(16)]), from: header.origin },
    { name: 'cut short', buf: encoded.subarray(0, encoded.length - 100), from: header.origin },
    { name: 'two lengths moved by one (the keys still add up)', buf: (() => { const c = flipped(279, 1); c[headerEnd + 1 + 280] = ((c[headerEnd + 1 + 280] as number) - 1) & 255; return c; })(), from: header.origin },
    { name: 'one byte of a key changed', buf: flipped(100256 + 5000, 1), from: header.origin },
  ])('is refused when $name', ({ buf, from }) => {
    expect(decodeRanks(buf, () => from)).toBeUndefined();
  });
});

describe('what a counting process loads (real processes)', () => {
  const tree = fs.mkdtempSync(path.join(REPO_ROOT, 'test', '.ranks-'));
  afterAll(() => fs.rmSync(tree, { recursive: true, force: true }));
  const lib = path.join(tree, 'skills', 'bazinga-db', 'scripts', 'lib');
  fs.mkdirSync(lib, { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, 'skills', 'bazinga-db', 'scripts', 'lib', 'tokens.ts'), path.join(lib, 'tokens.ts'));
  const dist = path.join(tree, 'skills', 'bazinga-db', 'dist');
  const probe = `const m = await import(${JSON.stringify(path.join(lib, 'tokens.ts'))}); console.log(JSON.stringify([m.countCl100k('hello world, again'), m.tokenizerSource()]));`;
  const run = () => JSON.parse(spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout);

  it('the build\'s rank file next to the bundle when it is there and sound, else js-tiktoken\'s table: the same counts', () => {
    expect(run()).toEqual([4, 'js-tiktoken']);
    fs.mkdirSync(dist, { recursive: true });
    fs.writeFileSync(path.join(dist, RANKS_FILE), encoded);
    expect(run()).toEqual([4, 'rank file']);
    fs.writeFileSync(path.join(dist, RANKS_FILE), flipped(100256 + 5000, 1));
    expect(run()).toEqual([4, 'js-tiktoken']);
  });

  it('the build writes it next to bazinga-db\'s bundle', () => {
    expect(fs.readFileSync(path.join(REPO_ROOT, 'skills', 'bazinga-db', 'dist', RANKS_FILE)).equals(encoded)).toBe(true);
  });
});
