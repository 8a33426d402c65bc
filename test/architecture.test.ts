/**
 * The rules of the layout that no compiler checks: context-assembler reaches bazinga-db only
 * through its library surface (index.ts), and both skills print failures through printError.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'dist' && e.name !== 'node_modules') out.push(...sources(rel));
    } else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

describe('layout', () => {
  it('context-assembler imports bazinga-db only through scripts/lib/index.ts', () => {
    const deep = sources('skills/context-assembler').flatMap((file) =>
      [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?:from|import\()\s*'([^']*bazinga-db\/scripts\/[^']*)'/g)]
        .map((m) => m[1] as string)
        .filter((spec) => !spec.endsWith('bazinga-db/scripts/lib/index.ts'))
        .map((spec) => `${file}: ${spec}`),
    );
    expect(deep).toEqual([]);
  });

  it('no script builds its own {"success":false} error line', () => {
    const handBuilt = [...sources('skills/context-assembler'), ...sources('skills/bazinga-db')].filter((file) =>
      /success:\s*false/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')) && !file.endsWith(path.join('lib', 'errors.ts')),
    );
    expect(handBuilt).toEqual([]);
  });
});
