/**
 * The query plans of one assembly: every read statement one in-process recorded assembly runs
 * (qa_expert, iteration 1), each with its EXPLAIN QUERY PLAN. `repo` is a checkout of this
 * project (this one, or another release's worktree such as bench/out/prev-1d77bd1), so plans
 * before and after a change can be put side by side on the same database. It writes to the
 * database (consumption, caches): point it at a copy.
 *
 * Usage: npx tsx bench/plans.ts <repo> <project root> <session> <group>
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type Database from 'better-sqlite3';

const USAGE = 'Usage: npx tsx bench/plans.ts <repo> <project root> <session> <group>\n';
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  process.stdout.write(`bench/plans: every read statement of one assembly with its query plan (it writes: use a copy)\n\n${USAGE}`);
  process.exit(0);
}
const [repo, root, session, group] = process.argv.slice(2);
if (!repo || !root || !session || !group) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const lib = (p: string) => import(pathToFileURL(path.join(path.resolve(repo), 'skills/context-assembler/scripts/lib', p)).href);
const { parseFlags, COMMON_FLAGS, requestFromFlags } = await lib('params.ts');
const { loadEnvironment, makeDeps } = await lib('shell.ts');
const { advance, zoneStep } = await lib('pipeline.ts');
const flags = parseFlags(['--project-root', root, '--session', session, '--group', group, '--agent', 'qa_expert', '--iteration', '1'], COMMON_FLAGS);
const env = loadEnvironment(flags, { cwd: root, env: {}, stderr: () => {} });
const made = makeDeps(env, 'sonnet', flags, () => {});
const db = made.deps.db() as Database.Database;
const seen = new Map<string, unknown[]>();
const prepare = db.prepare.bind(db);
// Record each statement with the parameters it first ran with.
db.prepare = ((sql: string) => {
  const st = prepare(sql) as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const m of ['get', 'all', 'iterate', 'run']) {
    const run = (st[m] as (...args: unknown[]) => unknown).bind(st);
    st[m] = (...args: unknown[]) => {
      if (!seen.has(sql)) seen.set(sql, args);
      return run(...args);
    };
  }
  return st;
}) as unknown as typeof db.prepare;
advance(zoneStep(requestFromFlags(flags, () => new Date()), env.config), 'consume', made.deps);
for (const [sql, args] of seen) {
  if (!/^\s*(WITH|SELECT)/i.test(sql)) continue;
  const plan = prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as [])) as { detail: string }[];
  process.stdout.write(`\n${sql.replace(/\s+/g, ' ').slice(0, 160)}\n${plan.map((p) => `    ${p.detail}\n`).join('')}`);
}
made.close();
