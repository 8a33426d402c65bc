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
  deviation?: 'F5' | 'F8' | 'F10' | 'F13';
  /** Both tools are expected to refuse it (exit non-zero). */
  fails?: true;
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
  { args: ['update-session-status', NEW, 'active'], deviation: 'F8' },
  { args: ['save-context-package', NEW, 'ROT', 'research', `bazinga/artifacts/${NEW}/research_ROT.md`, 'requirements_engineer', '["developer"]', 'high', 'Rotate the refresh token on every use; reuse revokes the family'] },
  { args: ['get-context-packages', NEW, 'ROT', 'developer'] },
  { args: ['save-consumption', NEW, 'ROT', 'developer', '1', '8'] },
  { args: ['get-consumption', NEW] },
  { args: ['update-context-references', 'ROT', NEW, '[8]'], deviation: 'F8' },
  { args: ['save-reasoning', NEW, 'ROT', 'developer', 'understanding', 'Refresh tokens rotate; a reused one revokes its family', '--iteration', '1'] },
  { args: ['save-reasoning', NEW, 'ROT', 'developer', 'completion', 'Rotation done; reuse of a rotated token revokes the family', '--iteration', '1', '--confidence', 'high'] },
  { args: ['get-reasoning', NEW, '--group_id', 'ROT'], deviation: 'F10' },
  { args: ['save-error-pattern', 'acme-shop', 'TypeError', MESSAGE, 'Guard the session before reading its token', '--lang', 'typescript'] },
  { args: ['save-error-pattern', 'acme-shop', 'TypeError', MESSAGE, 'Guard the session before reading its token; return 401 when it is gone', '--lang', 'typescript'] },
  { args: ['update-error-confidence', '{hash}', 'acme-shop', 'success'] },
  { args: ['save-error-pattern', 'acme-shop', 'Error', "Cannot find module './config'", 'Import config from src/config/index.ts'] },
  { args: ['get-error-patterns', 'acme-shop', '--min_confidence', '0.5', '--limit', '50'], deviation: 'F5' },
  { args: ['save-strategy', 'acme-shop', 'methodology', 'Write the failing rotation test before the code', '--lang', 'typescript'] },
  { args: ['save-strategy', 'acme-shop', 'methodology', 'Write the failing rotation test before the code', '--lang', 'typescript'] },
  { args: ['update-strategy-helpfulness', '{strategy}', '2'] },
  { args: ['get-strategies', 'acme-shop', '--lang', 'typescript'] },
  { args: ['update-error-confidence', '{hash}', 'acme-shop', 'failure'] },
  { args: ['cleanup-error-patterns', 'acme-shop'] },
  { args: ['get-error-patterns', 'acme-shop'] },
  { args: ['update-session-status', NEW, 'completed'], deviation: 'F8' },
  { args: ['list-sessions', '5'] },
  { args: ['get-session', 'bazinga_29990101_000000'], fails: true },
  { args: ['create-session', 'bazinga_20260302_100000', 'sideways', 'A mode neither knows'], fails: true },
  { args: ['update-error-confidence', '0000000000000000000000000000000000000000000000000000000000000000', 'acme-shop', 'success'], deviation: 'F13' },
  { args: ['integrity-check'] },
];

/** The keys this product adds to a command's output, as the specification names them ("Port adds"). */
const SPEC_ADDS: Readonly<Record<string, readonly string[]>> = {
  'create-session': ['existing'],
  'save-context-package': ['success', 'redacted'],
  'save-strategy': ['operation', 'redacted'],
};

/**
 * A session of today's flow after the calls: this product's recording assemblies (a developer's
 * retry given the failure's text, its rebuild, QA, a dry run), BAZINGA's own writes between them
 * on both copies (the developer's completion, the group passing review), then this product's outcome
 * capture, which meets a fault BAZINGA's table already holds (the `Cannot find module` of the
 * calls): what it learns of that row must stay beside it.
 */
type SessionStep = { by: 'product'; args: string[] } | { by: 'host'; args: string[] } | { by: 'capture' } | { by: 'pause' };
/** Node's report of the fault the calls saved (`Error`, `Cannot find module './config'`), as a retry is given it. */
const FAILURE = "Error: Cannot find module './config'\n    at Object.<anonymous> (/app/src/api/client.ts:12:3)";
const PRODUCT_SESSION: readonly SessionStep[] = [
  { by: 'product', args: ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1'] },
  { by: 'product', args: ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--error', FAILURE] },
  { by: 'product', args: ['assemble', '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--error', FAILURE] },
  { by: 'pause' },
  { by: 'host', args: ['save-reasoning', S1, 'AUTH', 'developer', 'completion', 'Imported config from src/config/index.ts; the API client builds again', '--iteration', '2'] },
  { by: 'host', args: ['update-task-group', 'AUTH', S1, '--status', 'completed'] },
  { by: 'pause' },
  { by: 'product', args: ['assemble', '--session', NEW, '--group', 'ROT', '--agent', 'qa_expert', '--iteration', '1'] },
  { by: 'product', args: ['assemble', '--session', NEW, '--group', 'ROT', '--agent', 'tech_lead', '--iteration', '1', '--dry-run'] },
  { by: 'capture' },
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
/** When the run began (UTC, as both tools write times): an earlier time is the fixture's and is compared as it is. */
const RUN_START = new Date(Date.now() - 60_000).toISOString().replace('T', ' ').slice(0, 19);

/**
 * A value with the times written during this run replaced by their shape (every digit a 9): the two
 * copies are written seconds apart, but a time in another format, or an older time changed, still
 * differs.
 */
function withoutTimes(value: unknown): unknown {
  if (typeof value === 'string') return TIME.test(value) && value.replace('T', ' ').slice(0, 19) >= RUN_START ? value.replace(/\d/g, '9') : value;
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutTimes(v)]));
  return value;
}

function run(command: string, args: readonly string[], cwd: string): Ran {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, CLAUDE_PROJECT_DIR: cwd } });
  if (r.error) throw new Error(`could not run ${command}: ${r.error.message}`);
  const stdout = r.stdout ?? '';
  return { code: r.status ?? -1, stdout, stderr: r.stderr ?? '', json: documentOf(stdout) };
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
function hostRows(dbPath: string, timesOfThisRun = true): Rows {
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
        rows.set(key, timesOfThisRun ? (withoutTimes(row) as Record<string, unknown>) : row);
      }
      tables.set(name, rows);
    }
    return tables;
  } finally {
    db.close();
  }
}

/** One column of one row that differs: where, and its values before and after. */
interface Change {
  table: string;
  key: string;
  column: string;
  before: unknown;
  after: unknown;
  /** The row as it was (its other columns say whose it is). */
  row: Record<string, unknown>;
}

interface HostDifference {
  /** Columns of rows of the first copy changed in the second. */
  changed: Change[];
  /** Rows of the first copy missing from the second. */
  removed: string[];
  /** Rows only the second copy holds, counted by table. */
  added: Record<string, number>;
  /** Those rows themselves, by table. */
  addedRows: Record<string, Record<string, unknown>[]>;
}

const changeText = (c: Change) => `${c.table} ${c.key} ${c.column}: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`;

/** How the copy `b` holds the rows of `a`: the columns changed, the rows missing, the rows added. */
function hostDifference(a: Rows, b: Rows): HostDifference {
  const out: HostDifference = { changed: [], removed: [], added: {}, addedRows: {} };
  for (const [table, rowsA] of a) {
    const rowsB = b.get(table) ?? new Map();
    for (const [key, rowA] of rowsA) {
      const rowB = rowsB.get(key);
      if (!rowB) {
        out.removed.push(`${table} ${key}`);
        continue;
      }
      for (const column of Object.keys({ ...rowA, ...rowB })) {
        if (JSON.stringify(rowA[column]) !== JSON.stringify(rowB[column])) out.changed.push({ table, key, column, before: rowA[column] ?? null, after: rowB[column] ?? null, row: rowA });
      }
    }
    const added = [...rowsB.entries()].filter(([k]) => !rowsA.has(k)).map(([, r]) => r);
    if (added.length > 0) {
      out.added[table] = added.length;
      out.addedRows[table] = added;
    }
  }
  return out;
}

const counted = (counts: Record<string, number>) => Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ') || 'none';

/**
 * Whether a change is a delivered package's consumer row marked consumed: consumed_at set where it
 * was empty, or the iteration BAZINGA's mark-context-consumed sets with it (one this product
 * delivered the package at), for a (package, agent) its blocks showed.
 */
function isDeliveryMark(c: Change, delivered: ReadonlySet<string>): boolean {
  if (c.table !== 'context_package_consumers') return false;
  const at = (iteration: unknown) => delivered.has(`${c.row.package_id}|${c.row.agent_type}|${iteration}`);
  const pair = [...delivered].some((d) => d.startsWith(`${c.row.package_id}|${c.row.agent_type}|`));
  if (c.column === 'consumed_at') return c.before === null && pair;
  if (c.column === 'iteration') return at(c.after);
  return false;
}

/** The (package, agent, iteration) a recording assembly's printed block delivered: the packages it shows (`(id N)`). */
function blockDeliveries(args: readonly string[], stdout: string): string[] {
  if (args.includes('--dry-run')) return [];
  const flag = (name: string) => args[args.indexOf(name) + 1];
  return [...stdout.matchAll(/\(id (\d+)[;)]/g)].map((m) => `${m[1]}|${flag('--agent')}|${flag('--iteration')}`);
}

/** The ledger of this product's capture: the faults of the known patterns it raised, and of those it created. */
function capturesOf(dbPath: string): { raised: string[]; created: string[] } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.prepare('SELECT operation, fault_hash FROM ca_captures').all() as { operation: string; fault_hash: string }[];
    return { raised: rows.filter((r) => r.operation === 'raised').map((r) => r.fault_hash), created: rows.filter((r) => r.operation === 'created').map((r) => r.fault_hash) };
  } finally {
    db.close();
  }
}

/** The fault key a row holds (this product's table of them). */
function faultOf(dbPath: string, patternHash: string): string | undefined {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT fault_hash FROM ca_pattern_faults WHERE pattern_hash = ?').get(patternHash) as { fault_hash: string } | undefined)?.fault_hash;
  } finally {
    db.close();
  }
}

/** The pattern rows this product's capture created (its ledger's faults, by their keys). */
function createdPatternRows(dbPath: string): Set<string> {
  const db = new Database(dbPath, { readonly: true });
  try {
    return new Set(
      (db.prepare("SELECT f.pattern_hash FROM ca_captures c JOIN ca_pattern_faults f ON f.fault_hash = c.fault_hash AND f.project_id = c.project_id WHERE c.operation = 'created'").all() as { pattern_hash: string }[]).map((r) => r.pattern_hash),
    );
  } finally {
    db.close();
  }
}

/** A list of patterns without the given rows. */
const withoutCreated = (doc: unknown, rows: ReadonlySet<string>) => (Array.isArray(doc) ? doc.filter((p: { pattern_hash?: string }) => !rows.has(String(p.pattern_hash))) : doc);

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
  const objectPart = (t: Record<string, unknown>, o: Record<string, unknown>) => Object.entries(t).every(([k, v]) => k in o && same(v, o[k]));
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
  if (isObject(theirs) && isObject(ours)) return objectPart(theirs, ours) ? Object.keys(ours).filter((k) => !(k in theirs)) : undefined;
  if (Array.isArray(theirs) && Array.isArray(ours) && theirs.length === ours.length && theirs.every((t, i) => isObject(t) && isObject(ours[i]) && objectPart(t, ours[i] as Record<string, unknown>))) {
    return [...new Set(ours.flatMap((o, i) => Object.keys(o as object).filter((k) => !(k in (theirs[i] as object)))))];
  }
  return undefined;
}

/** Two pattern lists that differ only in the order of ties: grouped by (confidence, occurrences) in order, the same groups with the same rows (the calls ask for every row: no limit cuts a group). */
function sameUpToTies(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  const tie = (r: { confidence?: unknown; occurrences?: unknown }) => `${r.confidence}/${r.occurrences}`;
  const groups = (rows: { confidence?: unknown; occurrences?: unknown }[]) => {
    const out: { key: string; rows: string[] }[] = [];
    for (const r of rows) {
      if (out.at(-1)?.key !== tie(r)) out.push({ key: tie(r), rows: [] });
      out.at(-1)?.rows.push(JSON.stringify(r));
    }
    return out;
  };
  const [ga, gb] = [groups(a), groups(b)];
  if (ga.length !== gb.length || ga.some((g, i) => g.key !== gb[i]?.key)) return false;
  return ga.every((g, i) => same([...g.rows].sort(), [...(gb[i]?.rows ?? [])].sort()));
}

const sortedRows = (v: unknown) => (Array.isArray(v) ? v.map((r) => JSON.stringify(r)).sort() : undefined);

const roundedNumbers = (v: unknown): unknown =>
  typeof v === 'number' ? Math.round(v * 100) / 100 : Array.isArray(v) ? v.map(roundedNumbers) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roundedNumbers(x)])) : v;
const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);

/**
 * One call's verdict. `agrees`: both succeed and print the same JSON document (times of this run
 * aside), or both refuse a call expected to fail. `adds`: the original's document is a part of this
 * product's, which adds only the keys the specification names for the command (SPEC_ADDS).
 * `deviation`: a difference the register names, checked to be only that: F8, a success the original
 * prints as a `✓` line only and this product as a JSON document with success true; F5, the same
 * documents once numbers are rounded to 2 decimals (with F10 when rows that then tie come in the
 * explicit tie-break's order); F10, the same rows in another order; F13, the
 * original's `success: false` with exit 0 where this product exits 1. `differs` otherwise.
 */
function compareCall(call: Call, a: Ran, b: Ran): CallResult {
  const label = call.args.join(' ').slice(0, 90);
  const detail = `original exit ${a.code} ${JSON.stringify(a.json ?? a.stdout.trim()).slice(0, 200)}; this product exit ${b.code} ${JSON.stringify(b.json ?? b.stderr.trim()).slice(0, 200)}`;
  const differs: CallResult = { call: label, verdict: 'differs', detail };
  if (call.fails) return a.code !== 0 && b.code !== 0 ? { call: label, verdict: 'agrees', detail: 'both refuse it' } : differs;
  if (call.deviation === 'F13') {
    const original = a.json as { success?: boolean } | undefined;
    return a.code === 0 && original?.success === false && b.code === 1 && b.json === undefined ? { call: label, verdict: 'deviation', deviation: 'F13', detail } : differs;
  }
  if (a.code !== 0 || b.code !== 0) return differs;
  const docA = withoutTimes(a.json);
  const docB = withoutTimes(b.json);
  if (a.json === undefined) {
    // F8: the original's `✓` line, this product's document saying the same (success, and the ids the call names).
    const doc = (b.json ?? {}) as Record<string, unknown>;
    const names = call.args.slice(1).filter((x) => !x.startsWith('--') && !x.startsWith('['));
    const saysIt = doc.success === true && names.every((n) => Object.values(doc).some((v) => v === n || String(v) === n));
    return call.deviation === 'F8' && /^✓ /m.test(a.stdout) && saysIt ? { call: label, verdict: 'deviation', deviation: 'F8', detail } : differs;
  }
  if (b.json === undefined) return differs;
  if (same(docA, docB)) return { call: label, verdict: 'agrees' };
  const added = addedKeys(docA, docB);
  if (added && added.length > 0 && added.every((k) => SPEC_ADDS[call.args[0] as string]?.includes(k))) return { call: label, verdict: 'adds', detail: added.join(', ') };
  // F5: this product's figures are the original's rounded to 2 decimals (its own already are).
  const rounded = same(roundedNumbers(docB), docB);
  if (call.deviation === 'F5' && rounded && same(roundedNumbers(docA), docB)) return { call: label, verdict: 'deviation', deviation: 'F5', detail };
  // Rounded, rows of one confidence and count tie: the original leaves their order to SQLite, this product breaks the tie explicitly.
  if (call.deviation === 'F5' && rounded && sameUpToTies(roundedNumbers(docA), docB)) return { call: label, verdict: 'deviation', deviation: 'F5, F10', detail };
  if (call.deviation === 'F10' && same(sortedRows(docA), sortedRows(docB))) return { call: label, verdict: 'deviation', deviation: 'F10', detail };
  return differs;
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
  try {
    return compareCopies(a, b, argv);
  } finally {
    if (argv.includes('--keep')) process.stderr.write(`eval:cli: kept ${a.root} (the original's) and ${b.root} (this product's)\n`);
    else for (const copy of [a, b]) fs.rmSync(copy.root, { recursive: true, force: true });
  }
}

/** The calls on both copies, this product's session on its own, and the checks; the report printed; 0 when everything agrees. */
function compareCopies(a: Copy, b: Copy, argv: readonly string[]): number {
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
    detail: [...afterCalls.changed.map(changeText), ...afterCalls.removed.map((r) => `missing ${r}`), ...Object.entries(afterCalls.added).map(([t, n]) => `${n} more in ${t}`)].join('; ') || 'identical',
  });

  // What this product's steps change of BAZINGA's tables, read as stored (times too), each run of
  // its steps from just before to just after it (BAZINGA's own writes between them are its own).
  const knownHash = b.saved.hash;
  const scopeKey = (r: Record<string, unknown>) => `${r.package_id}|${r.agent_type}|${r.iteration}`;
  const recordedBefore = new Set([...(hostRows(b.db, false).get('consumption_scope')?.values() ?? [])].map(scopeKey));
  const runs: Ran[] = [];
  const productChanges: HostDifference = { changed: [], removed: [], added: {}, addedRows: {} };
  // What this product's blocks delivered, read from the blocks it printed: (package, agent, iteration).
  const delivered = new Set<string>();
  let before: Rows | null = null;
  const closeSegment = () => {
    if (before === null) return;
    const d = hostDifference(before, hostRows(b.db, false));
    productChanges.changed.push(...d.changed);
    productChanges.removed.push(...d.removed);
    for (const [t, rows] of Object.entries(d.addedRows)) {
      productChanges.added[t] = (productChanges.added[t] ?? 0) + rows.length;
      (productChanges.addedRows[t] ??= []).push(...rows);
    }
    before = null;
  };
  for (const step of PRODUCT_SESSION) {
    if (step.by === 'pause') {
      spawnSync(process.execPath, ['-e', 'setTimeout(() => {}, 1100)']);
      continue;
    }
    if (step.by === 'host') {
      closeSegment();
      runs.push(original(a, step.args), original(b, step.args));
      continue;
    }
    before ??= hostRows(b.db, false);
    if (step.by === 'product') {
      const r = run(process.execPath, [PRODUCT_ASSEMBLER, ...step.args], b.root);
      for (const d of blockDeliveries(step.args, r.stdout)) delivered.add(d);
      runs.push(r);
    } else runs.push(product(b, ['capture-outcomes', S1]));
  }
  closeSegment();
  const failed = runs.filter((r) => r.code !== 0);
  const learnt = capturesOf(b.db);
  const knownFault = knownHash === undefined ? undefined : faultOf(b.db, knownHash);
  checks.push({
    check: "a session of today's flow on this product's copy (its assemblies, BAZINGA's writes between them, the capture meeting the fault BAZINGA's table holds)",
    holds: failed.length === 0 && knownFault !== undefined && learnt.raised.includes(knownFault),
    detail: `${runs.length} runs, ${failed.length} failed${failed.map((r) => `: ${r.stderr.trim().split('\n').at(-1)}`).join('')}; the capture raised ${learnt.raised.length} known pattern(s)${knownFault !== undefined && learnt.raised.includes(knownFault) ? ", the saved one's fault among them" : ' (not the saved one)'}, created ${learnt.created.length}`,
  });
  // Only a delivered package's consumer row marked consumed, as BAZINGA's mark-context-consumed
  // marks it; rows added only as the delivery records of what the blocks showed and as the
  // patterns the capture created.
  const createdRows = createdPatternRows(b.db);
  const unexplained = productChanges.changed.filter((c) => !isDeliveryMark(c, delivered));
  const addedOther = Object.keys(productChanges.added).filter((t) => t !== 'consumption_scope' && t !== 'error_patterns');
  // Each record added is a delivery a block showed, and each delivery is on record (added now, or there before).
  const records = new Set((productChanges.addedRows.consumption_scope ?? []).map(scopeKey));
  const recordsMatch =
    records.size === (productChanges.addedRows.consumption_scope ?? []).length && [...records].every((r) => delivered.has(r)) && [...delivered].every((d) => records.has(d) || recordedBefore.has(d));
  const patternsAdded = (productChanges.addedRows.error_patterns ?? []).map((r) => String(r.pattern_hash));
  const patternsMatch = patternsAdded.length === learnt.created.length && patternsAdded.every((h) => createdRows.has(h));
  checks.push({
    check: "this product's steps change no row of BAZINGA's tables but a delivered package's consumer row marked consumed; they add only the delivery records of what their blocks showed and the patterns the capture created",
    holds: unexplained.length + productChanges.removed.length + addedOther.length === 0 && recordsMatch && patternsMatch,
    detail: `${[...unexplained.map(changeText), ...productChanges.removed.map((r) => `missing ${r}`), ...addedOther.map((t) => `rows added to ${t}`)].join('; ') || 'none changed or missing'}; delivery records added ${records.size} for the ${delivered.size} (package, agent, iteration) the blocks showed (${[...delivered].filter((d) => recordedBefore.has(d)).length} on record before)${recordsMatch ? '' : ' (they differ)'}; patterns added ${patternsAdded.length}, created by the capture ${learnt.created.length}${patternsMatch ? '' : ' (they differ)'}; consumer rows marked consumed: ${productChanges.changed.length - unexplained.length}`,
  });
  // The same host writes on both copies: outside what the product's session added, the copies agree.
  const copiesAgree = (when: string): Check => {
    const d = hostDifference(hostRows(a.db), hostRows(b.db));
    const other = d.changed.filter((c) => !isDeliveryMark(c, delivered));
    return {
      check: `BAZINGA's tables of both copies agree ${when} but for the product's delivery records and captures`,
      holds: other.length + d.removed.length === 0,
      detail: [...other.map(changeText), ...d.removed.map((r) => `missing ${r}`)].join('; ') || 'agree',
    };
  };
  checks.push(copiesAgree('after the session'));

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
  checks.push(copiesAgree('at the end'));
  // What BAZINGA's own CLI prints of the patterns and the reasoning, on both copies: the same (what the capture learnt stays beside the rows), but for the rows the capture created.
  for (const args of [['get-error-patterns', 'acme-shop', '--min_confidence', '0', '--limit', '50'], ['get-reasoning', S1, '--group_id', 'AUTH']]) {
    const ra = original(a, args);
    const rb = original(b, args);
    checks.push({
      check: `BAZINGA's own \`${args.join(' ')}\` prints the same on both copies`,
      holds: ra.code === 0 && rb.code === 0 && same(withoutTimes(ra.json), withoutTimes(withoutCreated(rb.json, createdRows))),
      detail: same(withoutTimes(ra.json), withoutTimes(withoutCreated(rb.json, createdRows)))
        ? `the same${createdRows.size > 0 && args[0] === 'get-error-patterns' ? ` (beside the ${createdRows.size} pattern(s) the capture created)` : ''}`
        : `${JSON.stringify(ra.json).slice(0, 300)} vs ${JSON.stringify(rb.json).slice(0, 300)}`,
    });
  }

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
  return passed ? 0 : 1;
}

function usage(message: string): number {
  process.stderr.write(`eval:cli: ${message}\nUsage: npm run eval:cli -- <BAZINGA checkout> [--json] [--keep]  (--help for more)\n`);
  return 2;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`eval:cli: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
