/**
 * Standalone consumption: `consume.ts --ids 3,5 --agent developer --iteration 1` marks packages
 * consumed after a successful spawn, through the same rule as the pipeline's consume step. All or
 * nothing: every id is checked first (exists, belongs to --session when given); one bad id writes
 * nothing. A package whose consumer list does not name the agent is recorded too (the block shows
 * a group's packages to every agent): by its consumption_scope row.
 */
import { guardIo } from './print.ts';
import {
  BazingaError,
  findPackage,
  invalid,
  markPackageConsumed,
  parseInteger,
  printError,
  SPAWNED_AGENTS as AGENTS,
  writeTransaction,
  type DB,
  type PackageRow,
} from '../../../bazinga-db/scripts/lib/index.ts';
import { DEFAULT_MODEL, type ParsedFlags } from './params.ts';
import { learnBeforeSpawn, loadEnvironment, makeDeps, type ScriptIo } from './shell.ts';

export interface ConsumeIdsRequest {
  ids: number[];
  agent: string;
  iteration: number;
  session: string | null;
}

export function consumeIdsRequest(flags: ParsedFlags): ConsumeIdsRequest {
  const idsText = flags.values.get('--ids') ?? '';
  const parts = idsText.split(',').map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) {
    throw invalid(`--ids must be a comma-separated list of package ids such as 3,5, got '${idsText}'`);
  }
  const agent = (flags.values.get('--agent') ?? '').trim().toLowerCase();
  if (!(AGENTS as readonly string[]).includes(agent)) {
    throw new BazingaError(agent ? 'VALIDATION' : 'USAGE', `--agent must be one of ${AGENTS.join(', ')}, got '${flags.values.get('--agent') ?? ''}'`);
  }
  const iteration = parseInteger('--iteration', flags.values.get('--iteration') ?? '0', 0);
  return { ids: [...new Set(parts.map(Number))], agent, iteration, session: flags.values.get('--session') ?? null };
}

/**
 * Marks the ids; returns the exit code (0 done, 1 a package problem, nothing written).
 * `inTransaction` runs inside the write transaction that marks them (the prompt hook's assembly record),
 * given the ids this run recorded (those another spawn recorded at this iteration first are not).
 * `settle`, when given, runs in that transaction before the marks (the prompt hook's request sent
 * to the warm assembler: record.ts settleDelivery); the ids it returns were recorded by an earlier
 * run of the same request and are not marked again. Once marked, what the session's reviews and
 * retries now say is learnt (learnBeforeSpawn: the recording step of an `assemble --dry-run` +
 * `consume --ids` flow), unless `learns` is false (the prompt hook, whose assembly learnt already).
 */
export function consumeIds(
  req: ConsumeIdsRequest,
  flags: ParsedFlags,
  rawIo: ScriptIo,
  inTransaction?: (db: DB, recorded: number[]) => void,
  learns = true,
  settle?: (db: DB, ids: readonly number[]) => number[],
): number {
  const io = guardIo(rawIo).io;
  const env = loadEnvironment(flags, io);
  const { deps, close } = makeDeps(env, DEFAULT_MODEL, flags, (m) => io.stderr(`⚠ ${m}\n`), undefined, {
    writes: true,
    ...(io.limits ? { busyBudgetMs: io.limits.busyBudgetMs } : {}),
  });
  try {
    const db = deps.db();
    const problems: string[] = [];
    const packages: PackageRow[] = [];
    for (const id of req.ids) {
      const pkg = findPackage(db, id);
      if (!pkg) problems.push(`package ${id} does not exist`);
      else if (req.session !== null && pkg.session_id !== req.session) problems.push(`package ${id} belongs to session ${pkg.session_id}, not ${req.session}`);
      else packages.push(pkg);
    }
    if (problems.length > 0) {
      return printError(io.stderr, invalid(`nothing marked: ${problems.join('; ')}`), { exit: 1 });
    }
    if (flags.bools.has('--dry-run')) {
      io.stdout(JSON.stringify({ success: true, dry_run: true, agent: req.agent, iteration: req.iteration, consumed: [] }, null, 2) + '\n');
      return 0;
    }
    const results = writeTransaction(db, () => {
      const recorded = new Set(settle?.(db, packages.map((p) => p.id)) ?? []);
      const marked = packages.filter((pkg) => !recorded.has(pkg.id)).map((pkg) => ({ package_id: pkg.id, ...markPackageConsumed(db, pkg, req.agent, req.iteration) }));
      // What this run recorded: what it marked, and what an earlier run of its request recorded
      // that it delivers too; not what another spawn had recorded at this iteration already.
      const mine = packages.filter((pkg) => recorded.has(pkg.id) || marked.some((m) => m.package_id === pkg.id && (m.consumer_row_updated || m.scope_inserted))).map((pkg) => pkg.id);
      inTransaction?.(db, mine);
      return marked;
    });
    io.stdout(
      JSON.stringify({ success: true, agent: req.agent, iteration: req.iteration, consumed: packages.map((p) => p.id), results }, null, 2) + '\n',
    );
    const first = packages[0];
    if (learns && first) {
      const warn = (m: string) => io.stderr(`⚠ ${m}\n`);
      learnBeforeSpawn(env, { session: first.session_id, group: first.group_id ?? 'global', now: io.now().toISOString() }, warn);
    }
    return 0;
  } finally {
    close();
  }
}
