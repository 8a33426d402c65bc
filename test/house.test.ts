/**
 * The house: no import cycle among the skills' TypeScript modules (type-only imports count: a reader
 * still holds both files in mind), and the assembler's pure core (scripts/lib/core/, with config.ts
 * and contract.ts it reads) reaches nothing that opens or queries a database: no module that
 * imports the SQLite driver, and none of bazinga-db's repositories or its connection modules.
 * Read from the sources' own import statements.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SKILLS = path.resolve(import.meta.dirname, '..', 'skills');

/** Every TypeScript source under skills/ (built bundles and installed packages left out). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'dist' && e.name !== 'node_modules') out.push(...sources(p));
    } else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out.sort();
}

/** Static imports and re-exports (`import … from`, `export … from`, `import '…'`) and dynamic `import('…')`. */
const SPECIFIERS = [/(?:^|\n)\s*(?:import|export)\s[^'"`;]*?from\s+['"]([^'"]+)['"]/g, /(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g, /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g];

interface Module {
  local: string[];
  packages: string[];
}

function graphOf(files: readonly string[]): Map<string, Module> {
  const graph = new Map<string, Module>();
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const local = new Set<string>();
    const packages = new Set<string>();
    for (const re of SPECIFIERS) {
      for (const m of text.matchAll(re)) {
        const spec = m[1] as string;
        if (spec.startsWith('.')) local.add(path.resolve(path.dirname(f), spec));
        else packages.add(spec);
      }
    }
    graph.set(f, { local: [...local], packages: [...packages] });
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan). */
function cyclesOf(graph: Map<string, Module>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.local ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.map((f) => path.relative(SKILLS, f)).sort());
    }
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return out;
}

/** A module that opens or queries a database: it imports the driver, or it is one of bazinga-db's repositories or connection modules. */
const reachesDatabase = (file: string, m: Module) =>
  m.packages.includes('better-sqlite3') || /bazinga-db\/scripts\/lib\/(repo\/|(db|driver|statements|migrate|reader)\.ts$)/.test(file.split(path.sep).join('/'));

/** The first database module `start` reaches, as the chain of imports that gets there; null when none. */
function pathToDatabase(graph: Map<string, Module>, start: string): string[] | null {
  const parent = new Map<string, string>();
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    const m = graph.get(v) as Module;
    if (reachesDatabase(v, m)) {
      const chain = [v];
      for (let p = parent.get(v); p !== undefined; p = parent.get(p)) chain.unshift(p);
      return chain.map((f) => path.relative(SKILLS, f));
    }
    for (const w of m.local) {
      if (graph.has(w) && !seen.has(w)) {
        seen.add(w);
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return null;
}

describe('the house', () => {
  const files = sources(SKILLS);
  const graph = graphOf(files);

  it('reads the modules it judges (the skills hold more than a hundred, importing each other)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect([...graph.values()].reduce((n, m) => n + m.local.length, 0)).toBeGreaterThan(300);
  });

  it('has no import cycle among the skills\' modules, type-only imports included', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  const core = files.filter((f) => /context-assembler\/scripts\/lib\/(core\/[^/]+|config|contract)\.ts$/.test(f.split(path.sep).join('/')));

  it('the core is the modules it should be', () => {
    expect(core.length).toBeGreaterThanOrEqual(16);
  });

  it.each(core.map((f) => [path.relative(SKILLS, f), f]))('%s reaches no database module', (_, file) => {
    expect(pathToDatabase(graph, file)).toBeNull();
  });

  it('the check finds a chain where there is one', () => {
    const pipeline = files.find((f) => f.endsWith(path.join('context-assembler', 'scripts', 'lib', 'pipeline.ts'))) as string;
    expect(pathToDatabase(graph, pipeline)?.at(-1)).toMatch(/bazinga-db/);
    const cyclic = new Map<string, Module>([
      ['/a.ts', { local: ['/b.ts'], packages: [] }],
      ['/b.ts', { local: ['/a.ts'], packages: [] }],
    ]);
    expect(cyclesOf(cyclic)).toHaveLength(1);
  });
});
