/**
 * The floor of an orchestrator call, as the bench measures it next to the call: what one call costs
 * without this product's own work. recordFloorTrace runs one orchestrator call of a release in this
 * process (the release's own runScript, on a scratch copy of the series' project) with every
 * statement better-sqlite3 executes recorded in order, with its parameters and, for a statement
 * read row by row, how many rows were taken; and the call's printed output. bench/floor-child.cjs
 * then replays that trace in a bare process: Node's start, better-sqlite3, the same statements,
 * the same output as a constant.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Release } from './relevance.ts';

export interface FloorTrace {
  statements: { sql: string; method: 'get' | 'all' | 'run' | 'iterate'; args: unknown[]; rows?: number }[];
  output: string;
}

// The better-sqlite3 the releases load (their node_modules link to this repository's).
const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare: (sql: string) => unknown } };

/** Records the statements and the output of one call of `release` (args: the orchestrator's flags). */
export async function recordFloorTrace(release: Release, project: string, args: readonly string[]): Promise<FloorTrace> {
  const shell = (await import(pathToFileURL(path.join(release.root, 'skills/context-assembler/scripts/lib/shell.ts')).href)) as {
    runScript: (spec: unknown, io: unknown) => number;
  };
  const statements: FloorTrace['statements'] = [];
  const original = Database.prototype.prepare;
  Database.prototype.prepare = function (this: unknown, sql: string) {
    const st = original.call(this, sql) as Record<string, (...a: unknown[]) => unknown>;
    for (const method of ['get', 'all', 'run', 'iterate'] as const) {
      const run = st[method] as (...a: unknown[]) => unknown;
      st[method] = function (this: unknown, ...a: unknown[]) {
        const entry: FloorTrace['statements'][number] = { sql, method, args: structuredClone(a) };
        statements.push(entry);
        const r = run.apply(this, a);
        if (method !== 'iterate') return r;
        entry.rows = 0;
        const it = r as IterableIterator<unknown>;
        return {
          [Symbol.iterator]() {
            return this;
          },
          next() {
            const n = it.next();
            if (!n.done) entry.rows = (entry.rows as number) + 1;
            return n;
          },
          return(v?: unknown) {
            return it.return ? it.return(v) : { done: true, value: v };
          },
        };
      };
    }
    return st;
  };
  let output = '';
  let errors = '';
  try {
    const code = shell.runScript(
      { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' },
      {
        argv: args,
        cwd: project,
        env: {},
        stdout: (t: string) => (output += t),
        stderr: (t: string) => (errors += t),
        readStdin: () => undefined,
        now: () => new Date(),
      },
    );
    if (code !== 0 || errors.includes('⚠')) throw new Error(`the recorded call failed (exit ${code}): ${errors.slice(0, 300)}`);
  } finally {
    Database.prototype.prepare = original;
  }
  return { statements, output };
}

/** Writes a trace where floor-child.cjs reads it. */
export function writeFloorTrace(trace: FloorTrace, file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(trace));
}
