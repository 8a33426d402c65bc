/**
 * The rank file the build writes next to bazinga-db's bundle (dist/cl100k_base.ranks): the same
 * table as js-tiktoken's, refused when it was made from another js-tiktoken or is damaged, and what
 * a counting process loads (real processes: the bundle and the source).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeRanks, encodeRanks, RANKS_FILE } from '../skills/bazinga-db/scripts/lib/tokens.ts';
import { REPO_ROOT } from './helpers.ts';

const encoded = encodeRanks();
const bytesOfSource = (() => {
  const header = JSON.parse(encoded.toString('utf8', encoded.indexOf(10) + 1, encoded.indexOf(10, encoded.indexOf(10) + 1))) as { source_bytes: number };
  return header.source_bytes;
})();

describe('the rank file', () => {
  it('decodes to the table js-tiktoken holds: 100,256 keys, ranks in order, the same pattern', () => {
    const table = decodeRanks(encoded, () => bytesOfSource);
    expect(table).toBeDefined();
    expect(table?.ranks.size).toBe(100256);
    expect(table?.ranks.get('hello')).toBe(15339);
    expect(table?.ranks.get(' world')).toBe(1917);
    expect(table?.from).toBe('rank file');
    // Every rank from 0 to size - 1 appears once.
    const seen = new Set(table?.ranks.values());
    expect(seen.size).toBe(100256);
    expect(Math.max(...seen)).toBe(100255);
  });

  it.each([
    { name: 'made from another js-tiktoken (its rank module has another size)', buf: encoded, bytes: bytesOfSource + 1 },
    { name: 'another format', buf: Buffer.concat([Buffer.from('not-ranks\n'), encoded.subarray(16)]), bytes: bytesOfSource },
    { name: 'cut short', buf: encoded.subarray(0, encoded.length - 100), bytes: bytesOfSource },
  ])('is refused when $name', ({ buf, bytes }) => {
    expect(decodeRanks(buf, () => bytes)).toBeUndefined();
  });

  it('is built next to bazinga-db\'s bundle and is what a counting process loads; without it, js-tiktoken\'s table', () => {
    const file = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'dist', RANKS_FILE);
    expect(fs.readFileSync(file).equals(encoded)).toBe(true);
    const tokens = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'scripts', 'lib', 'tokens.ts');
    const probe = `const m = await import(${JSON.stringify(tokens)}); console.log(JSON.stringify([m.countCl100k('hello world, again'), m.tokenizerSource()]));`;
    const run = () => spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(run().stdout)).toEqual([4, 'rank file']);
    const aside = `${file}.aside-${process.pid}`;
    fs.renameSync(file, aside);
    try {
      expect(JSON.parse(run().stdout)).toEqual([4, 'js-tiktoken']);
    } finally {
      fs.renameSync(aside, file);
    }
  });
});
