/**
 * The rules of the layout that no compiler checks: context-assembler reaches bazinga-db only
 * through its library surface (index.ts, or pure.ts for code that must not reach a database), both
 * skills print failures through printError, no import circle (type-only imports count: a reader
 * still holds both files in mind), and a pure core (core/, config.ts, contract.ts) that reaches no
 * database module through anything it imports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../skills/bazinga-db/scripts/lib/index.ts';

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
  it('context-assembler imports bazinga-db only through scripts/lib/index.ts (or pure.ts)', () => {
    const deep = sources('skills/context-assembler').flatMap((file) =>
      [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?:from|import\()\s*'([^']*bazinga-db\/scripts\/[^']*)'/g)]
        .map((m) => m[1] as string)
        .filter((spec) => !spec.endsWith('bazinga-db/scripts/lib/index.ts') && !spec.endsWith('bazinga-db/scripts/lib/pure.ts'))
        .map((spec) => `${file}: ${spec}`),
    );
    expect(deep).toEqual([]);
  });

  it('the bench imports bazinga-db only through scripts/lib/index.ts', () => {
    const deep = sources('bench')
      .filter((f) => !f.startsWith(path.join('bench', 'out') + path.sep))
      .flatMap((file) =>
        [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(/(?:from|import\()\s*'([^']*bazinga-db\/scripts\/[^']*)'/g)]
          .map((m) => m[1] as string)
          .filter((spec) => !spec.endsWith('bazinga-db/scripts/lib/index.ts'))
          .map((spec) => `${file}: ${spec}`),
      );
    expect(deep).toEqual([]);
  });

  it('the plain-JavaScript launchers, which run before anything is compiled, write the one error envelope ({success:false, error, code} with a known code)', () => {
    const plain = ['skills/bazinga-db/bin', 'skills/context-assembler/bin', 'hooks', 'scripts'].flatMap((dir) =>
      fs.readdirSync(path.join(ROOT, dir)).filter((n) => /\.(?:c|m)?js$/.test(n)).map((n) => path.join(dir, n)),
    );
    expect(plain.length).toBeGreaterThan(4);
    const envelopes = plain.flatMap((file) => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      return [...text.matchAll(/success:\s*false[^\n]*/g)].map((m) => ({ file, line: m[0] }));
    });
    // Both launchers build one (a missing dependency, an unknown step): nowhere else.
    expect([...new Set(envelopes.map((e) => e.file))].sort()).toEqual(['skills/bazinga-db/bin/bazinga-db.cjs', 'skills/context-assembler/bin/context-assembler.cjs']);
    for (const { file, line } of envelopes) {
      const m = /^success:\s*false,\s*error(?::.*?)?,\s*code:\s*'([A-Z_]+)'\s*\}/.exec(line);
      expect(m, `${file}: ${line}`).not.toBeNull();
      expect(ERROR_CODES as readonly string[], `${file}: ${line}`).toContain(m?.[1]);
    }
  });

  it('no script builds its own {"success":false} error line', () => {
    const handBuilt = [...sources('skills/context-assembler'), ...sources('skills/bazinga-db')].filter((file) =>
      /success:\s*false/.test(fs.readFileSync(path.join(ROOT, file), 'utf8')) && !file.endsWith(path.join('lib', 'errors.ts')),
    );
    expect(handBuilt).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The import graph: no circle, and a pure core
// ---------------------------------------------------------------------------------------------

/** The local imports of a module, type-only ones included (`import … from`, `export … from`, `import '…'`, `import('…')`), as repository paths. */
export function moduleImports(file: string, text: string): string[] {
  const specs = [
    ...text.matchAll(/^(?:import|export)\s[^'";]*?from\s+'(\.[^']+\.(?:ts|mts|mjs))'/gm),
    ...text.matchAll(/^import\s+'(\.[^']+\.(?:ts|mts|mjs))'/gm),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+\.(?:ts|mts|mjs))'\s*\)/g),
  ].map((m) => path.normalize(path.join(path.dirname(file), m[1] as string)));
  return [...new Set(specs)];
}

/** A module that opens or queries a database: bazinga-db's connection, statement and consumption modules, its CLI, its repositories, or one importing the driver. */
const isDatabaseModule = (file: string, text: string) =>
  /bazinga-db\/scripts\/lib\/(?:repo\/|(?:db|driver|statements|migrate|reader|consume|cli)\.ts$)/.test(file.split(path.sep).join('/')) || /from\s+'better-sqlite3'/.test(text);

/** The chain of imports by which `start` reaches a database module (shortest first found), or null. */
export function databaseChain(graph: ReadonlyMap<string, readonly string[]>, isDatabase: (file: string) => boolean, start: string): string[] | null {
  const parent = new Map<string, string>();
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    if (isDatabase(v)) {
      const chain = [v];
      for (let p = parent.get(v); p !== undefined; p = parent.get(p)) chain.unshift(p);
      return chain;
    }
    for (const w of graph.get(v) ?? []) {
      if (graph.has(w) && !seen.has(w)) {
        seen.add(w);
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return null;
}

/** Every circle of a graph (its strongly connected components of more than one module, or a module importing itself), each sorted. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); ; w = stack.pop()) {
      onStack.delete(w as string);
      component.push(w as string);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The names of the bazinga-db surface (index.ts) that open or query a database: re-exported from db.ts, statements.ts, repo/ or consume.ts. */
function databaseNames(): Set<string> {
  const index = fs.readFileSync(path.join(ROOT, 'skills/bazinga-db/scripts/lib/index.ts'), 'utf8');
  const names = new Set<string>();
  for (const m of index.matchAll(/export\s*\{([^}]*)\}\s*from\s*'\.\/(db|statements|consume|repo\/[^']+)\.ts'/g)) {
    for (const part of (m[1] as string).split(',')) {
      const name = part.trim().replace(/^type\s+/, '');
      if (name !== '' && !/^type\s/.test(part.trim())) names.add(name);
    }
  }
  return names;
}

/** What a core module takes that touches a database or the outside: a module by its path, or a database name from the bazinga-db surface. */
export function coreViolations(file: string, text: string, dbNames: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^'"]*?)from\s+'([^']+)'/gm)) {
    if (m[1]) continue;
    const spec = m[3] as string;
    if (/(?:^|\/)(?:db|statements|cli|consume)\.ts$|\/repo\/|^better-sqlite3$|^node:(?:fs|child_process|sqlite)$|(?:shell|pipeline|search|main)\.ts$/.test(spec)) out.push(`${file}: imports ${spec}`);
    if (spec.endsWith('bazinga-db/scripts/lib/index.ts')) {
      for (const part of (m[2] as string).replace(/[{}]/g, '').split(',')) {
        const name = part.trim().split(/\s+as\s+/)[0] as string;
        if (dbNames.has(name)) out.push(`${file}: imports ${name} (a database function) from the bazinga-db surface`);
      }
    }
  }
  return out;
}

describe('the import graph', () => {
  // bench/out/ is the bench's own output (an earlier release's worktree among it), not this code.
  const files = [...sources('skills/context-assembler'), ...sources('skills/bazinga-db'), ...sources('scripts'), ...sources('bench').filter((f) => !f.startsWith(path.join('bench', 'out') + path.sep))];
  const texts = new Map(files.map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')] as const));
  const graph = new Map(files.map((f) => [f, moduleImports(f, texts.get(f) as string)] as const));

  it('reads the modules it judges (more than a hundred, importing each other, type-only imports too)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect([...graph.values()].reduce((n, deps) => n + deps.length, 0)).toBeGreaterThan(300);
    // A type-only import is an edge: contract.ts takes types from core/tiers.ts.
    expect(graph.get(path.join('skills', 'context-assembler', 'scripts', 'lib', 'contract.ts'))).toContain(path.join('skills', 'context-assembler', 'scripts', 'lib', 'core', 'tiers.ts'));
  });

  it('has no circle, type-only imports included', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  const pure = [...sources('skills/context-assembler/scripts/lib/core'), ...['config.ts', 'contract.ts'].map((f) => path.join('skills', 'context-assembler', 'scripts', 'lib', f))];
  const isDatabase = (f: string) => isDatabaseModule(f, texts.get(f) ?? '');

  it.each(pure.map((f) => [f]))('%s reaches no database module through anything it imports', (file) => {
    expect(databaseChain(graph, isDatabase, file)).toBeNull();
  });

  it('the reach check finds the chain where there is one (pipeline.ts reaches the repositories)', () => {
    const chain = databaseChain(graph, isDatabase, path.join('skills', 'context-assembler', 'scripts', 'lib', 'pipeline.ts'));
    expect(chain?.at(-1)).toMatch(/bazinga-db/);
    const through = new Map([
      ['core/a.ts', ['lib/index.ts']],
      ['lib/index.ts', ['lib/pure.ts', 'lib/repo/x.ts']],
      ['lib/pure.ts', []],
      ['lib/repo/x.ts', []],
    ]);
    expect(databaseChain(through, (f) => f.includes('/repo/'), 'core/a.ts')).toEqual(['core/a.ts', 'lib/index.ts', 'lib/repo/x.ts']);
  });

  it('the circle check finds a circle (db.ts → repo → db.ts, as it was) and a module importing itself', () => {
    const circle = new Map([
      ['lib/db.ts', ['lib/repo/searchIndex.ts', 'lib/errors.ts']],
      ['lib/repo/searchIndex.ts', ['lib/repo/contextPackages.ts']],
      ['lib/repo/contextPackages.ts', ['lib/db.ts']],
      ['lib/errors.ts', []],
      ['lib/self.ts', ['lib/self.ts']],
    ]);
    expect(importCycles(circle)).toEqual([['lib/db.ts', 'lib/repo/contextPackages.ts', 'lib/repo/searchIndex.ts'], ['lib/self.ts']]);
  });

  it('core/ imports no database module, no file system and no shell, directly or through the bazinga-db surface', () => {
    const names = databaseNames();
    expect(names.has('openDatabase')).toBe(true);
    const core = sources('skills/context-assembler/scripts/lib/core');
    expect(core.length).toBeGreaterThan(5);
    expect(core.flatMap((f) => coreViolations(f, fs.readFileSync(path.join(ROOT, f), 'utf8'), names))).toEqual([]);
  });

  it('the core check catches a core module that opens a database or reads a file', () => {
    const names = databaseNames();
    const text = [
      "import { openDatabase, shorten } from '../../../../bazinga-db/scripts/lib/index.ts';",
      "import fs from 'node:fs';",
      "import { stmt } from '../../../../bazinga-db/scripts/lib/statements.ts';",
      "import type { DB } from '../../../../bazinga-db/scripts/lib/index.ts';",
    ].join('\n');
    expect(coreViolations('core/x.ts', text, names)).toEqual([
      'core/x.ts: imports openDatabase (a database function) from the bazinga-db surface',
      'core/x.ts: imports node:fs',
      'core/x.ts: imports ../../../../bazinga-db/scripts/lib/statements.ts',
    ]);
  });
});
