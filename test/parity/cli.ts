/**
 * cli.ts: does this product's bazinga-db answer as BAZINGA's own `bazinga_db.py` does, and does it
 * leave BAZINGA's rows as BAZINGA writes them?
 *
 * Usage:  npm run eval:cli -- <BAZINGA checkout> [--json] [--keep]
 * Input:  a checkout of BAZINGA holding .claude/skills/bazinga-db/scripts/bazinga_db.py; python3.
 * Output: stdout: a table a call (agree, a registered deviation, or differs) and the table checks;
 *         stderr: progress. Exit 0 when nothing differs outside the deviation register
 *         (skills/bazinga-db/references/bazinga-db.md, spec §1.3), 1 otherwise, 2 for usage.
 *
 * Two copies of the v19 fixture: the original writes one, this product the other, call by call (the
 * same arguments). A call agrees when both exit alike and print the same JSON document, times and
 * the original's informational `✓` line aside. Then, on this product's copy only, what a session of
 * today's flow adds: recording assemblies (one with the failure's text), a rebuild, a dry run and the
 * outcome capture. BAZINGA's tables must then hold exactly what the original's copy holds (this
 * product's own `ca_*` tables aside), and BAZINGA's own CLI must keep working on that copy: its
 * `update-error-confidence` finds the hash either tool returned, and a repeat save counts on one row.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { FIXTURE_DIR, REPO_ROOT } from '../helpers.ts';
import { layoutFromCheckout } from './project.ts';
import { BAZINGA_DB } from './writers.ts';

const HELP = `eval:cli: this product's bazinga-db beside BAZINGA's own bazinga_db.py, call by call, on the v19 fixture

Usage: npm run eval:cli -- <BAZINGA checkout> [--json] [--keep]

  <BAZINGA checkout>  a checkout of BAZINGA holding ${BAZINGA_DB}
  --json              one JSON document instead of the markdown report
  --keep              keep the two temporary projects (their paths on stderr)

Each call runs on two copies of the v19 fixture, through the original and through this product, and
agrees when both exit alike and print the same JSON (times aside). A difference the deviation register
names (for example F5: confidences rounded to 2 decimals) is listed with its id. Then this product
assembles, rebuilds and captures outcomes on its copy, and BAZINGA's tables are compared whole, and
BAZINGA's own CLI runs on that copy. Exit 0 when nothing differs outside the register, 1 otherwise.
`;

const S1 = 'bazinga_20251201_090000';
const NEW = 'bazinga_20260301_100000';
const MESSAGE = "TypeError: Cannot read properties of undefined (reading 'token') at src/auth/session.ts:42:7";

/** One call of both CLIs. `{hash}` and `{strategy}` stand for what that tool's earlier save returned. */
interface Call {
  args: string[];
  /** The registered deviation this call shows (spec §1.3), when the two are expected to differ. */
  deviation?: string;
}

const CALLS: readonly Call[] = [
  { args: ['get-session', S1] },
  { args: ['list-sessions'] },
  { args: ['get-task-groups', S1] },
  { args: ['get-task-groups', S1, 'in_progress'] },
  { args: ['get-context-packages', S1, 'AUTH', 'developer'] },
  { args: ['get-context-packages', S1, 'AUTH', 'qa_expert', '10'] },
  { args: ['get-context-packages', S1, 'CART', 'developer'] },
  { args: ['get-consumption', S1] },
  { args: ['get-reasoning', S1] },
  { args: ['get-reasoning', S1, '--group_id', 'AUTH', '--agent_type', 'developer'] },
  { args: ['get-error-patterns', 'acme-shop', '--min_confidence', '0.5'], deviation: 'F5' },
  { args: ['get-strategies', 'acme-shop'] },
  { args: ['get-strategies', 'acme-shop', '--topic', 'methodology'] },
  { args: ['query', 'SELECT project_id, COUNT(*) AS n FROM error_patterns GROUP BY project_id'] },
  { args: ['create-session', NEW, 'simple', 'Rotate refresh tokens on every use'] },
  { args: ['get-session', NEW] },
  { args: ['create-task-group', 'ROT', NEW, 'Refresh rotation', 'pending'] },
  { args: ['get-task-groups', NEW] },
  { args: ['update-session-status', NEW, 'active'] },
  { args: ['save-context-package', NEW, 'ROT', 'research', `bazinga/artifacts/${NEW}/research_ROT.md`, 'requirements_engineer', '["developer"]', 'high', 'Rotate the refresh token on every use; reuse revokes the family'] },
  { args: ['get-context-packages', NEW, 'ROT', 'developer'] },
  { args: ['save-consumption', NEW, 'ROT', 'developer', '1', '8'] },
  { args: ['get-consumption', NEW] },
  { args: ['update-context-references', 'ROT', NEW, '[8]'] },
  { args: ['save-reasoning', NEW, 'ROT', 'developer', 'understanding', 'Refresh tokens rotate; a reused one revokes its family', '--iteration', '1'] },
  { args: ['save-reasoning', NEW, 'ROT', 'developer', 'completion', 'Rotation done; reuse of a rotated token revokes the family', '--iteration', '1', '--confidence', 'high'] },
  { args: ['get-reasoning', NEW, '--group_id', 'ROT'], deviation: 'F10' },
  { args: ['save-error-pattern', 'acme-shop', 'TypeError', MESSAGE, 'Guard the session before reading its token', '--lang', 'typescript'] },
  { args: ['save-error-pattern', 'acme-shop', 'TypeError', MESSAGE, 'Guard the session before reading its token; return 401 when it is gone', '--lang', 'typescript'] },
  { args: ['update-error-confidence', '{hash}', 'acme-shop', 'success'] },
  { args: ['save-error-pattern', 'acme-shop', 'Error', "Cannot find module './config' at /app/src/api/client.ts line 12", 'Import config from src/config/index.ts'] },
  { args: ['get-error-patterns', 'acme-shop', '--min_confidence', '0.5'], deviation: 'F5' },
  { args: ['save-strategy', 'acme-shop', 'methodology', 'Write the failing rotation test before the code', '--lang', 'typescript'] },
  { args: ['save-strategy', 'acme-shop', 'methodology', 'Write the failing rotation test before the code', '--lang', 'typescript'] },
  { args: ['update-strategy-helpfulness', '{strategy}', '2'] },
  { args: ['get-strategies', 'acme-shop', '--lang', 'typescript'] },
  { args: ['update-error-confidence', '{hash}', 'acme-shop', 'failure'] },
  { args: ['cleanup-error-patterns', 'acme-shop'] },
  { args: ['get-error-patterns', 'acme-shop'] },
  { args: ['update-session-status', NEW, 'completed'] },
  { args: ['list-sessions', '5'] },
  { args: ['integrity-check'] },
];

/** What this product runs on its copy between the calls and the table comparison: today's flow on the session's groups. */
const PRODUCT_SESSION: readonly string[][] = [
  ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1'],
  ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--error', "Cannot find module './config' at /app/src/api/client.ts line 12"],
  ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--error', "Cannot find module './config' at /app/src/api/client.ts line 12"],
  ['assemble', '--session', NEW, '--group', 'ROT', '--agent', 'qa_expert', '--iteration', '1'],
  ['assemble', '--session', NEW, '--group', 'ROT', '--agent', 'tech_lead', '--iteration', '1', '--dry-run'],
];

interface Ran {
  code: number;
  json: unknown;
  stdout: string;
  stderr: string;
}

/** The JSON document a call printed (the original prints an informational `✓` line before it), or undefined. */
function documentOf(stdout: string): unknown {
  const start = stdout.search(/^[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start));
  } catch {
    return undefined;
  }
}

const TIME = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?Z?$/;

/** A value with every time replaced by a mark: the two copies are written seconds apart. */
function withoutTimes(value: unknown): unknown {
  if (typeof value === 'string') return TIME.test(value) ? '<time>' : value;
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutTimes(v)]));
  return value;
}

function run(command: string, args: readonly string[], cwd: string): Ran {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, CLAUDE_PROJECT_DIR: cwd } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json: documentOf(r.stdout) };
}

interface Copy {
  root: string;
  db: string;
  saved: { hash?: string; strategy?: string };
}

/** A BAZINGA project laid out from the checkout (its bazinga_db.py finds its root from where it lies) holding a copy of the fixture. */
function copyOfFixture(checkout: string, label: string): Copy {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `ca-cli-${label}-`));
  layoutFromCheckout(checkout, root);
  fs.cpSync(path.join(FIXTURE_DIR, 'bazinga'), path.join(root, 'bazinga'), { recursive: true });
  const artifact = path.join(root, 'bazinga', 'artifacts', NEW, 'research_ROT.md');
  fs.mkdirSync(path.dirname(artifact), { recursive: true });
  fs.writeFileSync(artifact, '# Refresh rotation\n\nRotate the refresh token on every use; a reused token revokes its whole family.\n');
  return { root, db: path.join(root, 'bazinga', 'bazinga.db'), saved: {} };
}

const PRODUCT_DB = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
const PRODUCT_ASSEMBLER = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');

const original = (copy: Copy, args: readonly string[]) => run('python3', [path.join(copy.root, BAZINGA_DB), '--db', copy.db, ...args], copy.root);
const product = (copy: Copy, args: readonly string[]) => run(process.execPath, [PRODUCT_DB, '--db', copy.db, ...args], copy.root);

function substitute(args: readonly string[], copy: Copy): string[] {
  return args.map((a) => (a === '{hash}' ? (copy.saved.hash ?? a) : a === '{strategy}' ? (copy.saved.strategy ?? a) : a));
}

function remember(copy: Copy, ran: Ran): void {
  const doc = ran.json as { pattern_hash?: string; strategy_id?: string } | undefined;
  if (doc?.pattern_hash) copy.saved.hash = doc.pattern_hash;
  if (doc?.strategy_id) copy.saved.strategy = doc.strategy_id;
}

type Rows = Map<string, Map<string, Record<string, unknown>>>;

/** Every row of BAZINGA's own tables by its key (its primary key, else its rowid), times marked; this product's `ca_*` objects and SQLite's aside. */
function hostRows(dbPath: string): Rows {
  const db = new Database(dbPath, { readonly: true });
  try {
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'ca\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
      .pluck()
      .all() as string[];
    const tables: Rows = new Map();
    for (const name of names) {
      // A table name cannot be bound; it comes from sqlite_master and is quoted as an identifier.
      const quoted = `"${name.replaceAll('"', '""')}"`;
      const pk = (db.prepare(`PRAGMA table_info(${quoted})`).all() as { name: string; pk: number }[]).filter((c) => c.pk > 0).sort((x, y) => x.pk - y.pk).map((c) => c.name);
      const rows = new Map<string, Record<string, unknown>>();
      for (const row of db.prepare(`SELECT rowid AS "rowid ", * FROM ${quoted}`).all() as Record<string, unknown>[]) {
        const key = pk.length > 0 ? JSON.stringify(pk.map((c) => row[c])) : String(row['rowid ']);
        delete row['rowid '];
        rows.set(key, withoutTimes(row) as Record<string, unknown>);
      }
      tables.set(name, rows);
    }
    return tables;
  } finally {
    db.close();
  }
}

interface HostDifference {
  /** Rows of the original's copy changed in the other, column by column (outside the allowed columns). */
  changed: string[];
  /** Rows of the original's copy missing from the other. */
  removed: string[];
  /** Rows only the other copy holds, counted by table. */
  added: Record<string, number>;
  /** Changes in the allowed columns, counted by table and column. */
  allowed: Record<string, number>;
}

/** How the copy `b` holds the rows of the original's copy `a`; `allow` names the columns `b` may have set (table → columns). */
function hostDifference(a: Rows, b: Rows, allow: Readonly<Record<string, readonly string[]>> = {}): HostDifference {
  const out: HostDifference = { changed: [], removed: [], added: {}, allowed: {} };
  for (const [table, rowsA] of a) {
    const rowsB = b.get(table) ?? new Map();
    for (const [key, rowA] of rowsA) {
      const rowB = rowsB.get(key);
      if (!rowB) {
        out.removed.push(`${table} ${key}`);
        continue;
      }
      for (const column of Object.keys({ ...rowA, ...rowB })) {
        if (JSON.stringify(rowA[column]) === JSON.stringify(rowB[column])) continue;
        if (allow[table]?.includes(column)) out.allowed[`${table}.${column}`] = (out.allowed[`${table}.${column}`] ?? 0) + 1;
        else out.changed.push(`${table} ${key} ${column}: ${JSON.stringify(rowA[column])} → ${JSON.stringify(rowB[column])}`);
      }
    }
    const added = [...rowsB.keys()].filter((k) => !rowsA.has(k)).length;
    if (added > 0) out.added[table] = added;
  }
  return out;
}

const counted = (counts: Record<string, number>) => Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';

type Verdict = 'agrees' | 'adds' | 'deviation' | 'differs';

interface CallResult {
  call: string;
  verdict: Verdict;
  /** The deviation register's id (spec §1.3) when the verdict is `deviation`. */
  deviation?: string;
  detail?: string;
}

/** The keys `ours` holds beyond `theirs`, when `theirs` is a part of it (every value of theirs equal in ours); undefined otherwise. */
function addedKeys(theirs: unknown, ours: unknown): string[] | undefined {
  const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);
  const objectPart = (t: Record<string, unknown>, o: Record<string, unknown>) => Object.entries(t).every(([k, v]) => k in o && same(v, o[k]));
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (isObject(theirs) && isObject(ours)) return objectPart(theirs, ours) ? Object.keys(ours).filter((k) => !(k in theirs)) : undefined;
  if (Array.isArray(theirs) && Array.isArray(ours) && theirs.length === ours.length && theirs.every((t, i) => isObject(t) && isObject(ours[i]) && objectPart(t, ours[i] as Record<string, unknown>))) {
    return [...new Set(ours.flatMap((o, i) => Object.keys(o as object).filter((k) => !(k in (theirs[i] as object)))))];
  }
  return undefined;
}

const sortedRows = (v: unknown) => (Array.isArray(v) ? v.map((r) => JSON.stringify(r)).sort() : undefined);

/**
 * One call's verdict: `agrees` (same exit, same document), `adds` (the original's document is a part
 * of this product's, which adds keys the specification names), `deviation` (a difference the
 * register names: F8, a success the original printed as a message line only; F10, rows of the same
 * time in another order; or the call's own), `differs` otherwise.
 */
function compareCall(call: Call, a: Ran, b: Ran): CallResult {
  const label = call.args.join(' ').slice(0, 90);
  const sameExit = (a.code === 0) === (b.code === 0);
  const docA = withoutTimes(a.json);
  const docB = withoutTimes(b.json);
  if (sameExit && JSON.stringify(docA) === JSON.stringify(docB)) return { call: label, verdict: 'agrees' };
  const detail = `original exit ${a.code} ${JSON.stringify(a.json ?? a.stdout.trim()).slice(0, 200)}; this product exit ${b.code} ${JSON.stringify(b.json ?? b.stderr.trim()).slice(0, 200)}`;
  const added = sameExit ? addedKeys(docA, docB) : undefined;
  if (added) return { call: label, verdict: 'adds', detail: added.join(', ') };
  if (a.code === 0 && b.code === 0 && a.json === undefined && b.json !== undefined) return { call: label, verdict: 'deviation', deviation: 'F8', detail };
  if (call.deviation === 'F10') {
    const same = sameExit && JSON.stringify(sortedRows(docA)) === JSON.stringify(sortedRows(docB));
    return same ? { call: label, verdict: 'deviation', deviation: 'F10', detail } : { call: label, verdict: 'differs', detail };
  }
  return call.deviation ? { call: label, verdict: 'deviation', deviation: call.deviation, detail } : { call: label, verdict: 'differs', detail };
}

interface Check {
  check: string;
  holds: boolean;
  detail: string;
}

function main(argv: string[]): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const positional = argv.filter((a) => !a.startsWith('--'));
  const unknown = argv.filter((a) => a.startsWith('--') && a !== '--json' && a !== '--keep');
  if (unknown.length > 0) return usage(`unknown flag '${unknown[0]}' (allowed: --json, --keep, --help)`);
  if (positional.length !== 1) return usage('give one BAZINGA checkout');
  const checkout = path.resolve(positional[0] as string);
  if (!fs.existsSync(path.join(checkout, BAZINGA_DB))) return usage(`${checkout} holds no ${BAZINGA_DB}`);

  const a = copyOfFixture(checkout, 'original');
  const b = copyOfFixture(checkout, 'product');
  const calls: CallResult[] = [];
  for (const call of CALLS) {
    const ra = original(a, substitute(call.args, a));
    const rb = product(b, substitute(call.args, b));
    remember(a, ra);
    remember(b, rb);
    calls.push(compareCall(call, ra, rb));
    process.stderr.write(`eval:cli: ${calls.at(-1)?.verdict.padEnd(9)} ${call.args[0]}\n`);
  }

  const checks: Check[] = [];
  const afterCalls = hostDifference(hostRows(a.db), hostRows(b.db));
  checks.push({
    check: "BAZINGA's tables after the calls hold the same rows",
    holds: afterCalls.changed.length + afterCalls.removed.length === 0 && Object.keys(afterCalls.added).length === 0,
    detail: [...afterCalls.changed, ...afterCalls.removed.map((r) => `missing ${r}`), ...Object.entries(afterCalls.added).map(([t, n]) => `${n} more in ${t}`)].join('; ') || 'identical',
  });

  const flow = [...PRODUCT_SESSION.map((args) => run(process.execPath, [PRODUCT_ASSEMBLER, ...args], b.root)), product(b, ['capture-outcomes', S1])];
  const flowFailures = flow.filter((r) => r.code !== 0);
  checks.push({ check: "this product's session on its copy (assemblies, a rebuild, a dry run, the outcome capture)", holds: flowFailures.length === 0, detail: flowFailures.map((r) => r.stderr.trim().split('\n').at(-1)).join('; ') || `${flow.length} runs, exit 0` });
  // Delivery marks a consumer row consumed, as BAZINGA's mark-context-consumed does; nothing else of BAZINGA's may change.
  const afterSession = hostDifference(hostRows(a.db), hostRows(b.db), { context_package_consumers: ['consumed_at'] });
  checks.push({
    check: "every row BAZINGA's CLI wrote is unchanged after this product's session (delivery marks aside)",
    holds: afterSession.changed.length + afterSession.removed.length === 0,
    detail: `${[...afterSession.changed, ...afterSession.removed.map((r) => `missing ${r}`)].join('; ') || 'none changed or missing'}; rows added: ${counted(afterSession.added)}; delivery marks: ${counted(afterSession.allowed)}`,
  });

  // BAZINGA's own CLI on both copies: the hash either tool returned, a repeat save on one row.
  const confidence = [a, b].map((copy) => original(copy, ['update-error-confidence', copy.saved.hash ?? '', 'acme-shop', 'success']).json as { success?: boolean; new_confidence?: number } | undefined);
  checks.push({
    check: "BAZINGA's update-error-confidence finds the hash this product's save-error-pattern returned",
    holds: a.saved.hash === b.saved.hash && confidence[1]?.success === true && confidence[0]?.new_confidence === confidence[1]?.new_confidence,
    detail: `hashes ${a.saved.hash === b.saved.hash ? 'equal' : `differ (${a.saved.hash} vs ${b.saved.hash})`}; new confidence ${confidence[0]?.new_confidence} on the original's copy, ${confidence[1]?.new_confidence} on this product's`,
  });
  const repeat = [a, b].map((copy) => original(copy, ['save-error-pattern', 'acme-shop', 'TypeError', MESSAGE, 'Guard the session before reading its token', '--lang', 'typescript']).json as { occurrences?: number; operation?: string } | undefined);
  checks.push({
    check: "a repeat save through BAZINGA's CLI counts on the one row",
    holds: repeat[1]?.operation === 'updated' && repeat[0]?.occurrences === repeat[1]?.occurrences,
    detail: `original's copy: ${repeat[0]?.operation} occurrences ${repeat[0]?.occurrences}; this product's copy: ${repeat[1]?.operation} occurrences ${repeat[1]?.occurrences}`,
  });
  const atEnd = hostDifference(hostRows(a.db), hostRows(b.db), { context_package_consumers: ['consumed_at'] });
  checks.push({
    check: "every row BAZINGA's CLI wrote is unchanged at the end",
    holds: atEnd.changed.length + atEnd.removed.length === 0,
    detail: [...atEnd.changed, ...atEnd.removed.map((r) => `missing ${r}`)].join('; ') || 'none changed or missing',
  });

  const counts = { agrees: 0, adds: 0, deviation: 0, differs: 0 };
  for (const c of calls) counts[c.verdict] += 1;
  const passed = counts.differs === 0 && checks.every((c) => c.holds);
  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ calls, counts, checks, passed }, null, 2)}\n`);
  } else {
    const lines = ['| call | verdict |', '|---|---|'];
    const verdictText = (c: CallResult) =>
      c.verdict === 'deviation' ? `deviation ${c.deviation}` : c.verdict === 'adds' ? `agrees, adds ${c.detail}` : c.verdict === 'differs' ? `differs: ${c.detail}` : 'agrees';
    for (const c of calls) lines.push(`| \`${c.call.replaceAll('|', '\\|')}\` | ${verdictText(c).replaceAll('|', '\\|')} |`);
    lines.push('', `${calls.length} calls: ${counts.agrees} agree, ${counts.adds} agree and add keys the specification names, ${counts.deviation} differ as the deviation register says, ${counts.differs} differ otherwise.`, '');
    for (const c of checks) lines.push(`- ${c.holds ? 'holds' : 'FAILS'}: ${c.check} (${c.detail})`);
    for (const c of calls.filter((x) => x.verdict === 'deviation')) lines.push(`- ${c.deviation}, \`${c.call}\`: ${c.detail}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (argv.includes('--keep')) process.stderr.write(`eval:cli: kept ${a.root} (the original's) and ${b.root} (this product's)\n`);
  else for (const copy of [a, b]) fs.rmSync(copy.root, { recursive: true, force: true });
  return passed ? 0 : 1;
}

function usage(message: string): number {
  process.stderr.write(`eval:cli: ${message}\nUsage: npm run eval:cli -- <BAZINGA checkout> [--json] [--keep]  (--help for more)\n`);
  return 2;
}

process.exitCode = main(process.argv.slice(2));
