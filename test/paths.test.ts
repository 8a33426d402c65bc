/**
 * resolveLikePython follows Python's non-strict Path.resolve(): symlinks are followed as they are
 * met, so `..` after a symlinked directory leaves from the link's target (spec bazinga-db §4.3.1).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveLikePython } from '../skills/bazinga-db/scripts/lib/paths.ts';
import { makeProject } from './helpers.ts';
import { bazingaDbIn as cli } from './inProcess.ts';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ca-paths-')));
fs.mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
fs.mkdirSync(path.join(root, 'elsewhere', 'deep'), { recursive: true });
fs.symlinkSync(path.join(root, 'elsewhere', 'deep'), path.join(root, 'a', 'link'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('resolveLikePython', () => {
  it.each([
    { name: 'plain relative path', p: 'a/b/x.md', want: 'a/b/x.md' },
    { name: '.. inside real folders', p: 'a/b/../x.md', want: 'a/x.md' },
    { name: '.. after a symlinked folder leaves from its target', p: 'a/link/../x.md', want: 'elsewhere/x.md' },
    { name: 'a file under a symlinked folder', p: 'a/link/x.md', want: 'elsewhere/deep/x.md' },
    { name: 'missing parts are kept, and .. steps back out of them', p: 'a/missing/../b/x.md', want: 'a/b/x.md' },
    { name: 'absolute path', p: path.join(root, 'a', 'link', 'y.md'), want: 'elsewhere/deep/y.md' },
  ])('$name', ({ p, want }) => {
    expect(resolveLikePython(p, root)).toBe(path.join(root, want));
  });
});

describe('save-context-package refuses a path that leaves through a symlink and ..', () => {
  const project = makeProject('ca-paths-cli-');
  afterAll(() => project.cleanup());
  it('bazinga/artifacts/S/link/../x.md with link → outside is refused (VALIDATION)', () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-paths-out-'));
    try {
      fs.mkdirSync(path.join(outside, 'sub'));
      fs.writeFileSync(path.join(outside, 'x.md'), 'x');
      fs.mkdirSync(path.join(project.root, 'bazinga', 'artifacts', 'S'), { recursive: true });
      fs.symlinkSync(path.join(outside, 'sub'), path.join(project.root, 'bazinga', 'artifacts', 'S', 'link'));
      expect(cli(project, ['create-session', 'S', 'simple', 'req']).code).toBe(0);
      const r = cli(project, ['save-context-package', 'S', 'global', 'research', 'bazinga/artifacts/S/link/../x.md', 'developer', '["developer"]', 'high', 's']);
      expect(r.code).toBe(1);
      expect(r.error.code).toBe('VALIDATION');
      expect(r.error.error).toBe('Invalid file_path: must be within bazinga/artifacts/S. Got: bazinga/artifacts/S/link/../x.md');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
