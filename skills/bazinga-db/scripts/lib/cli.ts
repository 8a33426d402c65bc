/**
 * The bazinga-db command line: global flags, dispatch, and the output/error contract. Every
 * argument is checked before the database is opened, so a malformed call never creates or
 * touches a file.
 */
// The driver, handed over at load: a missing package stops the CLI here, where the launcher names the fix.
import Database from 'better-sqlite3';
import { useDriver } from './driver.ts';
import { COMMANDS, COMMANDS_BY_NAME, UNSUPPORTED_COMMANDS, type CommandContext } from './commands/index.ts';
import { tokenize, type ParsedArgs } from './args.ts';
import { openDatabase, openReadOnly, settleFresh, writeTransaction, DEFAULT_BUSY_TIMEOUT_MS, type DB } from './db.ts';
import { indexSettings, redactionPolicy } from './settings.ts';
import { DEFAULT_POLICY, Redactor, redactJson, redactText, type RedactionPolicy } from './redact.ts';
import { syncSearchIndex } from './repo/searchIndex.ts';
import { BazingaError, printError, usage } from './errors.ts';
import { parseInteger } from './validate.ts';
import { markRunComplete } from './runComplete.ts';
import { resolvePaths, type ResolvedPaths } from './paths.ts';
import { defaultRelaunch, runChild, startDetached } from './relaunch.ts';
import { Relayed } from './commands/types.ts';

useDriver(Database);

export interface CliIo {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

interface GlobalOptions {
  db?: string;
  projectRoot?: string;
  quiet: boolean;
  busyTimeoutMs: number;
  help: boolean;
  command?: string;
  rest: string[];
}

const GLOBAL_VALUE_FLAGS: Record<string, 'db' | 'projectRoot' | 'busyTimeout'> = {
  '--db': 'db',
  '--project-root': 'projectRoot',
  '--busy-timeout': 'busyTimeout',
};

/** Milliseconds, from --busy-timeout or BAZINGA_BUSY_TIMEOUT_MS: the shared integer rule, 0 or more. */
const parseBusyTimeout = (value: string, source: string): number => parseInteger(source, value, 0);

/** Global flags come before the command; everything after the command belongs to it. */
function parseGlobal(argv: readonly string[], env: NodeJS.ProcessEnv): GlobalOptions {
  const envTimeout = env.BAZINGA_BUSY_TIMEOUT_MS;
  const opts: GlobalOptions = {
    quiet: false,
    busyTimeoutMs: envTimeout ? parseBusyTimeout(envTimeout, 'BAZINGA_BUSY_TIMEOUT_MS') : DEFAULT_BUSY_TIMEOUT_MS,
    help: false,
    rest: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (!token.startsWith('-')) {
      opts.command = token;
      opts.rest = argv.slice(i + 1);
      return opts;
    }
    if (token === '-h' || token === '--help') {
      opts.help = true;
      continue;
    }
    if (token === '--quiet') {
      opts.quiet = true;
      continue;
    }
    const eq = token.indexOf('=');
    const name = (eq === -1 ? token : token.slice(0, eq)).replace(/_/g, '-');
    const key = GLOBAL_VALUE_FLAGS[name];
    if (key === undefined) throw usage(`Unknown global flag: ${token}. Global flags: --db PATH, --project-root DIR, --quiet, --busy-timeout MS, --help`);
    let value: string | undefined;
    if (eq !== -1) value = token.slice(eq + 1);
    else value = argv[++i];
    if (value === undefined) throw usage(`Flag '${name}' requires a value`);
    if (key === 'busyTimeout') opts.busyTimeoutMs = parseBusyTimeout(value, '--busy-timeout');
    else opts[key] = value;
  }
  return opts;
}

function helpText(): string {
  const lines = [
    'bazinga-db: read and write a BAZINGA database (SQLite, schema v19)',
    '',
    'Usage: tsx skills/bazinga-db/scripts/bazinga-db.ts [global flags] <command> [arguments]',
    '',
    'Global flags (before the command):',
    '  --db PATH            database file (default: <project root>/bazinga/bazinga.db)',
    '  --project-root DIR   project root (must contain bazinga/)',
    '  --quiet              no informational lines on stderr',
    `  --busy-timeout MS    the whole wait for a locked database, retries included (default ${DEFAULT_BUSY_TIMEOUT_MS}, env BAZINGA_BUSY_TIMEOUT_MS)`,
    '  -h, --help           this text',
    '',
    'Project root, first match: --project-root, the folder above --db\'s folder, $BAZINGA_ROOT,',
    '$CLAUDE_PROJECT_DIR, then the nearest folder above the working directory with .claude/ and bazinga/.',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.synopsis}`),
    '  help',
    '',
    'Reads (get-*, list-sessions, query, integrity-check, redact-existing --dry-run) open the database',
    'read-only: they never create, switch or extend it; a missing database is NOT_FOUND.',
    '',
    'Output: one JSON document on stdout, exit 0. Errors: nothing on stdout; the last stderr line is',
    '{"success":false,"error":"…","code":"…"}; exit 2 for USAGE, 1 otherwise.',
  ];
  return lines.join('\n') + '\n';
}

/** One command's usage, for `<command> --help`. */
function commandHelp(synopsis: string): string {
  return [
    `Usage: bazinga-db [global flags] ${synopsis}`,
    '',
    'Global flags: --db PATH, --project-root DIR, --quiet, --busy-timeout MS (bazinga-db --help lists every command).',
    'Every command, its checks and its output: skills/bazinga-db/references/bazinga-db.md.',
  ].join('\n') + '\n';
}

/**
 * Indexes what the command wrote (and anything written since by other tools). The write itself
 * has succeeded by now; an index that cannot be updated is caught up by the next reader.
 */
function keepIndexInStep(db: DB, projectRoot: string, notice: (line: string) => void): void {
  try {
    writeTransaction(db, () => syncSearchIndex(db, { projectRoot, ...indexSettings(projectRoot), scrub: redactionPolicy(projectRoot) }));
  } catch (err) {
    notice(`⚠ search index not updated (${(err as Error).message}); the next assembly catches up`);
  }
}

/**
 * How a command uses the database: `read` opens it read-only (never creating, switching or
 * extending it: a read never writes), `write` opens the read-write connection (creating the
 * database when missing), `none` never opens it. A command missing here is a writer; the tests
 * check that every command is listed.
 */
export type Access = 'read' | 'write' | 'none';

export const COMMAND_ACCESS: Readonly<Record<string, Access | ((args: ParsedArgs) => Access)>> = {
  'create-session': 'write',
  'get-session': 'read',
  'list-sessions': 'read',
  'update-session-status': 'write',
  'create-task-group': 'write',
  'get-task-groups': 'read',
  'update-context-references': 'write',
  'save-context-package': 'write',
  'get-context-packages': 'read',
  'mark-context-consumed': 'write',
  'save-consumption': 'write',
  'get-consumption': 'read',
  'save-reasoning': 'write',
  'get-reasoning': 'read',
  'save-error-pattern': 'write',
  'get-error-patterns': 'read',
  'update-error-confidence': 'write',
  'cleanup-error-patterns': 'write',
  'save-strategy': 'write',
  'get-strategies': 'read',
  'update-strategy-helpfulness': 'write',
  'extract-strategies': 'write',
  query: 'read',
  'integrity-check': 'read',
  'detect-paths': 'none',
  // Counting what would change writes nothing.
  'redact-existing': (args) => (args.bools.has('--dry-run') ? 'read' : 'write'),
  'capture-outcomes': (args) => (args.bools.has('--dry-run') ? 'read' : 'write'),
  // In the background it only starts itself again (the started process writes).
  'index-search': (args) => (args.bools.has('--background') ? 'none' : 'write'),
  'save-memory': 'write',
  'get-memory': 'read',
  'search-memories': 'read',
  'supersede-memory': 'write',
  'archive-memory': 'write',
  'forget-memory': 'write',
  'memory-maintenance': (args) => (args.bools.has('--dry-run') ? 'read' : 'write'),
  'summarise-session': 'write',
  // Rehydrating counts the accesses; with --dry-run it only reads.
  rehydrate: (args) => (args.bools.has('--dry-run') ? 'read' : 'write'),
};

/** The access of one call (its flags can make a writer a reader: redact-existing --dry-run). */
export function commandAccess(name: string, args: ParsedArgs): Access {
  const access = COMMAND_ACCESS[name] ?? 'write';
  return typeof access === 'function' ? access(args) : access;
}

/**
 * Keys whose values this product made itself (hashes, row and scope ids): printed as they are,
 * since a hash would otherwise read as a random token to the entropy check.
 */
const PRODUCT_IDS: ReadonlySet<string> = new Set([
  'pattern_hash', 'scope_id', 'strategy_id', 'strategy_ids', 'session_id', 'group_id', 'project_id', 'id',
  'package_id', 'log_id', 'idempotency_key', 'text_hash', 'hash',
]);

/** Runs one bazinga-db invocation; returns the exit code. */
export function runCli(argv: readonly string[], io: CliIo): number {
  let quiet = argv.slice(0, Math.max(0, argv.findIndex((t) => !t.startsWith('-')))).includes('--quiet');
  const opened: DB[] = [];
  try {
    const opts = parseGlobal(argv, io.env);
    quiet = opts.quiet;
    if (opts.help || opts.command === 'help') {
      io.stdout(helpText());
      return 0;
    }
    if (opts.command === undefined) throw usage('No command given. Run with --help to list the commands.');
    const command = COMMANDS_BY_NAME.get(opts.command);
    if (!command) {
      if (UNSUPPORTED_COMMANDS.has(opts.command)) throw usage(`Command not supported by this implementation: ${opts.command}`);
      throw usage(`Unknown command: ${opts.command}`);
    }
    // `<command> --help` (or -h) anywhere after the command: that command's usage, nothing run.
    if (opts.rest.some((t) => t === '--help' || t === '-h')) {
      io.stdout(commandHelp(command.synopsis));
      return 0;
    }
    const notice = (line: string) => {
      if (!quiet) io.stderr(redactText(line) + '\n');
    };
    let paths: ResolvedPaths | undefined;
    let db: DB | undefined;
    let policy: RedactionPolicy | undefined;
    // Set from the arguments once they are tokenized, before the command runs.
    let access: Access = 'write';
    const ctx: CommandContext = {
      cwd: io.cwd,
      env: io.env,
      warn: (line: string) => io.stderr(redactText(line) + '\n'),
      paths: () => (paths ??= resolvePaths({ db: opts.db, projectRoot: opts.projectRoot, cwd: io.cwd, env: io.env })),
      db: () => {
        if (!db) {
          // A write's schema made in a missing or empty file is kept only when the command succeeds.
          db = openDatabase({ dbPath: ctx.paths().dbPath, busyTimeoutMs: opts.busyTimeoutMs, notice, readOnly: access === 'read', holdFresh: access === 'write' });
          opened.push(db);
        }
        return db;
      },
      redactor: () => new Redactor((policy ??= redactionPolicy(ctx.paths().projectRoot))),
      again: (o) => runChild(defaultRelaunch(), argv, { cwd: io.cwd, env: io.env, ...o }),
      detach: (drop) => startDetached(defaultRelaunch(), argv.filter((a, i) => !(a === drop && i > argv.indexOf(opts.command ?? ''))), { cwd: io.cwd, env: io.env }),
      readOnlyDb: () => {
        const conn = ctx.db();
        if (conn.readonly) {
          conn.pragma('query_only = ON');
          return conn;
        }
        const ro = openReadOnly(ctx.paths().dbPath, opts.busyTimeoutMs);
        opened.push(ro);
        return ro;
      },
    };
    // What is printed is redacted like what is stored (rows written by older tools included). A
    // config that is not a regular file fails every write (CONFIG); a read prints with the defaults
    // and says why.
    const printPolicy = (): RedactionPolicy => {
      try {
        return (policy ??= redactionPolicy(ctx.paths().projectRoot));
      } catch (err) {
        if (err instanceof BazingaError && err.code === 'CONFIG') notice(`⚠ ${err.message}; printed with the default redaction policy`);
        return (policy = DEFAULT_POLICY);
      }
    };
    const args = tokenize(opts.rest, command.flags, command.maxPositionals);
    access = commandAccess(command.name, args);
    const result = command.run(args, ctx);
    if (result instanceof Relayed) {
      // Printed (and redacted) by the child: passed on as it is.
      io.stdout(result.run.stdout);
      io.stderr(result.run.stderr);
      if (result.run.code === 0) markRunComplete();
      return result.run.code;
    }
    if (command.indexes && db) keepIndexInStep(db, ctx.paths().projectRoot, notice);
    if (db) settleFresh(db, true);
    const text = command.print?.(result);
    if (text !== undefined) io.stdout(redactText(text, printPolicy()));
    else io.stdout(JSON.stringify(redactJson(result, printPolicy(), PRODUCT_IDS).value, null, 2) + '\n');
    markRunComplete();
    return 0;
  } catch (err) {
    // A schema this failed command made in an empty file is undone with its work.
    for (const db of opened) settleFresh(db, false);
    return printError(io.stderr, err, { present: (json) => redactJson(json).value });
  } finally {
    for (const db of opened.reverse()) {
      try {
        db.close();
      } catch {
        // Closing after a failure must not mask the failure being reported.
      }
    }
  }
}
