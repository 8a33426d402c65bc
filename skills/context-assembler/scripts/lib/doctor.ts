/**
 * The checks behind doctor.ts. Native and database modules are imported inside the checks, so a
 * broken better-sqlite3 becomes a failed row with its fix instead of a crash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BazingaError, describeRow, inspectSchema, invalid, nativeBindingError, openReadOnly, printError, redactExistingRows, redactionPolicy, resolvePaths, schemaStepsState, type DB } from '../../../bazinga-db/scripts/lib/index.ts';
import { parseFlags } from './params.ts';
import { guardIo } from './print.ts';
import { readNoServerNote } from './noServer.ts';
// @ts-expect-error plain JavaScript shared with the launchers
import warm from '../../../bazinga-db/bin/warmServer.cjs';

export interface Check {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix: string;
}

/**
 * Where the dependencies belong: the nearest folder above this module with a package.json, that is
 * `.claude/skills/` of an installed project (the installer writes its runtime package.json there)
 * or the bundle (plugin) root; the same rule as the launchers', from source and from the bundle.
 */
function findBundleRoot(): string {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return start;
  }
}
const BUNDLE_ROOT = findBundleRoot();

/** True when `dir` is the folder this module belongs to (this repository or the plugin), not a project. */
function isBundleRoot(dir: string): boolean {
  try {
    return fs.realpathSync(dir) === fs.realpathSync(BUNDLE_ROOT);
  } catch {
    return false;
  }
}
const NPM_INSTALL = `npm ${fs.existsSync(path.join(BUNDLE_ROOT, 'package-lock.json')) ? 'ci' : 'install'} --omit=dev`;
const MIN_NODE_MAJOR = 20;

const FLAGS = { '--db': 'string', '--project-root': 'string', '--config': 'string', '--format': 'string', '--help': 'bool' } as const;

const HELP = `doctor: check that context-assembler can run here

Usage: doctor [--db PATH] [--project-root DIR] [--config PATH] [--format table|json]

Checks Node, better-sqlite3, FTS5, the project root and database, the schema version, this
layer's schema steps (a step the last write's open could not run: which, why, the row to fix), unredacted
text in the newest rows (a warning: run bazinga-db redact-existing), the config, relevance (a
warning when context_engineering.enable_fts5 is false), the integration with today's BAZINGA
(which flow; which hook serves it, the plugin's or the wiring's, not both; a dry run of the hook on
the newest built prompt: the part it would replace, every other byte unchanged), the warm assembler
(whether one serves this build, or why none can run here: a warning) and the tokenizer. Exit 0 when
nothing failed, 1 when a check failed (its row says what to do).
Without --project-root or --db, no project in sight (none found from the working directory or
CLAUDE_PROJECT_DIR, or only this bundle's own folder) is a warning: the rest is still checked.
`;

interface DoctorIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (t: string) => void;
  stderr: (t: string) => void;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

async function runChecks(flags: ReturnType<typeof parseFlags>, io: DoctorIo): Promise<Check[]> {
  const checks: Check[] = [];
  const add = (check: string, status: Check['status'], detail: string, fix = '') => checks.push({ check, status, detail, fix });

  const major = Number(process.versions.node.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) add('node', 'ok', `v${process.versions.node}`);
  else add('node', 'fail', `v${process.versions.node}`, `install Node ${MIN_NODE_MAJOR} or newer`);

  let sqliteOk = false;
  try {
    const { default: Database } = await import('better-sqlite3');
    const mem = new Database(':memory:');
    const version = (mem.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    add('better-sqlite3', 'ok', `loads (SQLite ${version}, ABI ${process.versions.modules})`);
    sqliteOk = true;
    try {
      mem.exec('CREATE VIRTUAL TABLE fts_probe USING fts5(body)');
      add('fts5', 'ok', 'available');
    } catch (err) {
      add('fts5', 'warn', `not available (${message(err)})`, 'none needed: ranking uses the heuristic only');
    }
    mem.close();
  } catch (err) {
    // A package that is there but whose addon is not built (or built for another Node) says so in one line.
    const native = nativeBindingError(err, path.join(BUNDLE_ROOT, 'node_modules', 'better-sqlite3'));
    add('better-sqlite3', 'fail', native ? (native.message.split('; fix: ')[0] as string) : message(err), `cd "${BUNDLE_ROOT}" && npm rebuild better-sqlite3 (or ${NPM_INSTALL})`);
  }

  const { loadEnvironment } = await import('./shell.ts').catch(() => ({ loadEnvironment: undefined }));
  let dbPath: string | undefined;
  let projectRoot: string | undefined;
  // Asked for no project (no --project-root, no --db) and none in sight: a warning, not a failure;
  // the checks of the installation still tell whether it can run.
  const asked = flags.values.has('--project-root') || flags.values.has('--db');
  const noProject = (detail: string) =>
    add('project root', 'warn', `no BAZINGA project found: ${detail}`, 'pass --project-root DIR (or set CLAUDE_PROJECT_DIR) to check a project');
  try {
    const p = resolvePaths({ db: flags.values.get('--db'), projectRoot: flags.values.get('--project-root'), cwd: io.cwd, env: io.env });
    if (!asked && isBundleRoot(p.projectRoot) && !fs.existsSync(p.dbPath)) {
      noProject(`${p.projectRoot} (${p.detectionSource}) is this bundle's own folder, without a database`);
    } else {
      add('project root', 'ok', `${p.projectRoot} (${p.detectionSource})`);
      dbPath = p.dbPath;
      projectRoot = p.projectRoot;
    }
  } catch (err) {
    if (!asked && err instanceof BazingaError && err.code === 'NO_PROJECT_ROOT') noProject(`no folder with .claude/ and bazinga/ at or above ${io.cwd}, and no CLAUDE_PROJECT_DIR or BAZINGA_ROOT naming one`);
    else add('project root', 'fail', message(err), 'pass --project-root DIR, set CLAUDE_PROJECT_DIR, or run inside the project');
  }

  if (dbPath !== undefined) {
    if (!fs.existsSync(dbPath)) {
      add('database', 'fail', `${dbPath} does not exist`, 'start a BAZINGA session first, or pass --db PATH');
    } else {
      let writable = true;
      try {
        fs.accessSync(dbPath, fs.constants.R_OK | fs.constants.W_OK);
        fs.accessSync(path.dirname(dbPath), fs.constants.W_OK);
      } catch {
        writable = false;
      }
      if (writable) add('database', 'ok', `${dbPath} (${fs.statSync(dbPath).size} bytes, writable)`);
      else add('database', 'fail', `${dbPath} is not writable (file or folder)`, 'fix the permissions of the file and its folder (WAL needs both)');
      if (sqliteOk) {
        try {
          const db = openReadOnly(dbPath, 1000);
          try {
            const s = inspectSchema(db);
            if (s.missingCoreTables.includes('sessions')) add('schema', 'fail', 'not a BAZINGA database (no sessions table)', 'check --db: it points at another SQLite file');
            else if (s.version >= 19 && s.missingCoreTables.length === 0) add('schema', 'ok', `v${s.version}`);
            else if (s.version < 19) add('schema', 'fail', `v${s.version} (older than v19)`, 'open it once with the original BAZINGA tool to migrate it');
            else add('schema', 'fail', `missing tables: ${s.missingCoreTables.join(', ')}`, 'not a complete BAZINGA database; check --db');
            if (s.missingCoreTables.length === 0) add(...schemaStepsCheck(db));
            if (s.missingCoreTables.length === 0 && projectRoot !== undefined) add(...(await secretsCheck(db, projectRoot)));
          } finally {
            db.close();
          }
        } catch (err) {
          add('schema', 'fail', message(err), 'the file is not a readable SQLite database; restore it or point --db elsewhere');
        }
      }
    }
  }

  let configuredRelevance: boolean | undefined;
  if (loadEnvironment) {
    try {
      // What the config's parser warns about (unknown keys, ignored on every run) is a row of its own.
      const warnings: string[] = [];
      const env = loadEnvironment(flags, { cwd: io.cwd, env: io.env, stderr: (t: string) => warnings.push(t.trim()) });
      const where = fs.existsSync(env.configPath) ? env.configPath : `defaults (no ${env.configPath})`;
      configuredRelevance = env.config.enable_fts5;
      if (warnings.length === 0) add('config', 'ok', where);
      else add('config', 'warn', `${where}: ${warnings.join('; ')}`, 'remove or rename the keys named (references/configuration.md lists every key)');
    } catch (err) {
      if (err instanceof BazingaError && err.code === 'CONFIG') {
        const fix = err.extra.key ? 'fix the named key (references/configuration.md)' : 'make it a regular file holding valid JSON, or remove it for the defaults (references/configuration.md)';
        add('config', 'fail', message(err), fix);
      } else if (checks.some((c) => c.check === 'project root' && c.status !== 'ok')) add('config', 'warn', 'not checked: no project root');
      else add('config', 'fail', message(err), 'fix or remove the config file');
    }
  }

  if (projectRoot !== undefined && dbPath !== undefined) {
    // Needs better-sqlite3 (the dry run reads the stored texts): without it, its own row has said why.
    const integration = await import('./wiring/integration.ts').catch(() => undefined);
    for (const c of integration?.integrationChecks(projectRoot, dbPath, configuredRelevance, io.env) ?? []) add(c.check, c.status, c.detail, c.fix);
    // Where `report --format html` writes (the record it reads is kept by every recording assembly).
    add(...reportsCheck(path.join(projectRoot, 'bazinga', 'reports')));
  }

  add(...warmCheck(projectRoot));

  try {
    const { countCl100k, tokenizerSource } = await import('./tokens.ts');
    const started = performance.now();
    const n = countCl100k('The quick brown fox jumps over the lazy dog.');
    const from = tokenizerSource() === 'rank file' ? 'the build\'s rank file' : "js-tiktoken's table";
    add('tokenizer', 'ok', `cl100k_base loaded from ${from} and counted ${n} tokens in ${Math.round(performance.now() - started)} ms`);
  } catch (err) {
    add('tokenizer', 'fail', message(err), `cd "${BUNDLE_ROOT}" && ${NPM_INSTALL}`);
  }
  return checks;
}

/** How many failed schema steps the row names (the rest are counted). */
const STEPS_SHOWN = 3;

/**
 * This layer's schema steps (bazinga-db migrate.ts): FAIL when the last writer's open recorded a
 * step that failed (the database works without it; the row names the step, the error and the row
 * to fix), WARN when this release's objects are not all there yet (the next write makes them),
 * OK otherwise (a file no writer of this product opened yet included).
 */
function schemaStepsCheck(db: DB): [string, Check['status'], string, string?] {
  const s = schemaStepsState(db);
  if (s.failed !== undefined) {
    const shown = s.failed.failures.slice(0, STEPS_SHOWN).map((f) => `'${f.step}': ${f.error}${f.row ? ` (row to fix: ${describeRow(f.row)})` : ''}`);
    const more = s.failed.failures.length > STEPS_SHOWN ? `; and ${s.failed.failures.length - STEPS_SHOWN} more` : '';
    const when = `at ${s.failed.attempts} writer open${s.failed.attempts === 1 ? '' : 's'} in a row, the last ${s.failed.at} UTC`;
    const row = s.failed.failures.find((f) => f.row?.rowid !== undefined)?.row;
    const look = row ? `look at the row (bazinga-db query "SELECT rowid, * FROM ${row.table} WHERE rowid = ?" --param ${row.rowid}), ` : '';
    return [
      'migrations',
      'fail',
      `schema step${s.failed.failures.length === 1 ? '' : 's'} failed ${when}: ${shown.join('; ')}${more}; everything that does not need ${s.failed.failures.length === 1 ? 'it' : 'them'} works`,
      `${look}fix or delete it (or drop the trigger that refuses it), then run any bazinga-db write: the steps run again (references/schema-steps.md of bazinga-db says what each one needs)`,
    ];
  }
  if (s.recorded === 0 && s.missing.includes('ca_meta')) return ['migrations', 'ok', `this layer's tables are not made yet: the first write makes them (v${s.wanted})`];
  if (s.recorded >= s.wanted && s.missing.length === 0) return ['migrations', 'ok', `this layer's tables at v${s.recorded}`];
  const lacking = s.missing.length > 0 ? `; missing: ${s.missing.join(', ')}` : '';
  return ['migrations', 'warn', `this layer's tables at v${s.recorded}, not v${s.wanted}${lacking}`, 'any bazinga-db write brings them up to date; if every write says a schema step failed, see references/schema-steps.md of bazinga-db'];
}

/** The skill's folder: the nearest above this module with bin/context-assembler.cjs (from source and from the bundle). */
function skillDir(): string | undefined {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'bin', 'context-assembler.cjs'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The warm assembler of this build: whether one serves it, none runs (one is started by the hooks),
 * or none can run here (a warning: every call assembles in its own process), with what the
 * project was last told about it (noServer.ts).
 */
function warmCheck(projectRoot: string | undefined): [string, Check['status'], string, string?] {
  const dir = skillDir();
  const bundle = dir === undefined ? undefined : path.join(dir, 'dist', 'assemble.cjs');
  if (bundle === undefined || !fs.existsSync(bundle)) return ['warm assembler', 'ok', 'not used: no prebuilt bundle (npm run build makes them); every call assembles in its own process'];
  const note = projectRoot === undefined ? undefined : readNoServerNote(projectRoot);
  const told = note === undefined ? '' : `; the project was told on ${note.day} that none could run (${note.why})`;
  const status = (warm.serverStatus as (b: string) => { state: string; why?: string })(bundle);
  const socket = (warm.socketPath as (b: string) => string | undefined)(bundle);
  if (status.state === 'impossible') {
    return [
      'warm assembler',
      'warn',
      `none can run here: ${status.why ?? 'unknown'}; every call assembles in its own process${told}`,
      'set XDG_RUNTIME_DIR to a folder only you can enter, or remove what the detail names (it is not yours, a link, or open to others)',
    ];
  }
  if (status.state === 'present') return ['warm assembler', 'ok', `serves this build (socket ${socket})${told}`];
  return ['warm assembler', 'ok', `none runs for this build: the SessionStart hook or the next prompt hook starts one (socket ${socket})${told}`];
}

/** How many of each table's newest rows doctor looks at for unredacted text. */
const SECRETS_SCAN_ROWS = 10_000;

/** Rows that hold text the redaction engine would remove (written by the original tool or an older version). */
async function secretsCheck(db: DB, projectRoot: string): Promise<[string, Check['status'], string, string?]> {
  let policy: ReturnType<typeof redactionPolicy>;
  try {
    policy = redactionPolicy(projectRoot);
  } catch (err) {
    return ['secrets', 'warn', `not checked: ${message(err)}`, 'see the config row'];
  }
  const r = redactExistingRows(db, policy, { dryRun: true, limitPerTable: SECRETS_SCAN_ROWS });
  const scope = `newest ${SECRETS_SCAN_ROWS} rows per table`;
  if (r.rows_changed === 0) return ['secrets', 'ok', `no unredacted text in ${r.rows_scanned} rows (${scope})`];
  const tables = Object.entries(r.tables)
    .filter(([, c]) => c.changed > 0)
    .map(([t, c]) => `${t} ${c.changed}`)
    .join(', ');
  const rules = Object.keys(r.rules).sort().join(', ');
  return [
    'secrets',
    'warn',
    `${r.rows_changed} rows hold text the redaction engine would remove (${tables}; rules ${rules}; ${scope})`,
    'bazinga-db redact-existing --dry-run, then bazinga-db redact-existing',
  ];
}

function table(checks: readonly Check[]): string {
  const rows = checks.map((c) => [c.check, c.status.toUpperCase(), c.detail, c.fix]);
  const head = ['check', 'status', 'detail', 'fix'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}

export async function runDoctor(argv: readonly string[], rawIo: DoctorIo): Promise<number> {
  const io = guardIo(rawIo).io;
  let flags;
  try {
    flags = parseFlags(argv, FLAGS);
    const format = flags.values.get('--format') ?? 'table';
    if (format !== 'table' && format !== 'json') throw invalid(`--format must be one of table, json, got '${format}'`);
  } catch (err) {
    return printError(io.stderr, err, { exit: 2 });
  }
  if (flags.bools.has('--help')) {
    io.stdout(HELP);
    return 0;
  }
  const checks = await runChecks(flags, io);
  const ok = checks.every((c) => c.status !== 'fail');
  if (flags.values.get('--format') === 'json') io.stdout(JSON.stringify({ ok, checks }, null, 2) + '\n');
  else {
    const warned = checks.filter((c) => c.status === 'warn').length;
    const verdict = !ok ? 'broken: apply the fix of each FAIL row' : warned > 0 ? `healthy, with ${warned} warning${warned === 1 ? '' : 's'}: see the WARN rows` : 'healthy';
    io.stdout(`${table(checks)}\n${verdict}\n`);
  }
  return ok ? 0 : 1;
}

/** Whether `p` is a symbolic link (false when nothing is there). */
function isSymbolicLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Where `report --format html` writes: the folder, what it holds, and whether a report can be written there. */
function reportsCheck(reports: string): [string, 'ok' | 'warn', string, string?] {
  const what = 'context-assembler report --format html writes there; --format markdown or json prints to stdout';
  // The report writes through no link inside the project (bazinga-db projectWrite.ts): said here before a report is refused.
  for (const dir of [path.dirname(reports), reports]) {
    if (isSymbolicLink(dir)) return ['reports', 'warn', `${dir} is a symbolic link: the report writes through no link inside the project, so no HTML report can be written there`, 'make it a real folder, or give report --out FILE'];
  }
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(reports);
  } catch (err) {
    // Not there yet: made by the first report. Anything else (a file where a folder should be on the way): said.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ['reports', 'ok', `${reports} (none yet): ${what}`];
    return ['reports', 'warn', `${reports} cannot be made (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): no HTML report can be written there`, 'give report --out FILE, or fix the path'];
  }
  if (!st.isDirectory()) return ['reports', 'warn', `${reports} is not a folder: no HTML report can be written there`, `remove or rename it, or give report --out FILE`];
  try {
    fs.accessSync(reports, fs.constants.W_OK);
  } catch {
    return ['reports', 'warn', `${reports} is not writable: no HTML report can be written there`, 'fix its permissions, or give report --out FILE'];
  }
  let n = 0;
  try {
    n = fs.readdirSync(reports).filter((f) => f.endsWith('.html')).length;
  } catch {
    n = 0;
  }
  return ['reports', 'ok', `${reports} (${n > 0 ? `${n} HTML report${n === 1 ? '' : 's'}` : 'none yet'}): ${what}`];
}
