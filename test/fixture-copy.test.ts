/**
 * The bundled fixture must stay a byte-identical copy of the one the project was specified
 * against (shared/fixtures/bazinga-v19, present beside the repository in development and CI).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR, REPO_ROOT } from './helpers.ts';

const SHARED = path.resolve(REPO_ROOT, '..', 'shared', 'fixtures', 'bazinga-v19');

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath ?? d.path, d.name)))
    .sort();
}

describe.skipIf(!fs.existsSync(SHARED))('bundled fixture', () => {
  it('has the same files as shared/fixtures/bazinga-v19, byte for byte', () => {
    const files = listFiles(SHARED);
    expect(listFiles(FIXTURE_DIR)).toEqual(files);
    for (const f of files) {
      expect(fs.readFileSync(path.join(FIXTURE_DIR, f)).equals(fs.readFileSync(path.join(SHARED, f))), f).toBe(true);
    }
  });
});
