/**
 * Relevance for one assembly: the query (explicit or implicit), the index brought up to date, and
 * the candidate packages read so that ranking them gives exactly the selection ranking every
 * eligible package would. Database reads go through the bazinga-db repositories; the signals
 * themselves are the pure core (core/relevance.ts, core/rank.ts).
 */
import {
  findLatestSummary,
  findSession,
  highlightTexts,
  indexedArtifactText,
  packagePathText,
  pathsInText,
  listBucketHeads,
  listEligibleByIds,
  listPackagePaths,
  listPackagesNaming,
  listTaskGroups,
  planScopeMatch,
  planTextQuery,
  scorePackage,
  searchIndexBehind,
  indexerRunning,
  askIndexerToYield,
  MAX_INDEX_BUDGET_MS,
  searchRequestPackages,
  syncSearchIndex,
  writeTransaction,
  type CandidatePackage,
  type DB,
  type EligibilityQuery,
  type SearchedPackage,
  type TextMatch,
} from '../../../bazinga-db/scripts/lib/index.ts';
import { redactionPolicyOf, type Config, type Zone } from './config.ts';
import type { AssemblyRequest, MatchInfo, QueryInfo } from './contract.ts';
import { groupRequirements } from './core/groupTask.ts';
import { rankPackages, parseSqliteTime, provesExact, rawScoreOf, scoreComponents, type BucketTail, type RankInput, type RankOutput } from './core/rank.ts';
import {
  implicitTask,
  markedTerms,
  parseScope,
  parseStringList,
  scopeSignal,
  underScope,
} from './core/relevance.ts';

/** What one request searches for. */
export interface SearchPlan {
  info: QueryInfo;
  /** The terms within the postings budget of the package index (the session is a join condition). */
  inSession: TextMatch | null;
  /** The same for the reasoning index. */
  reasoningInSession: TextMatch | null;
  /** What the package query reads: its terms' document counts summed (at least the number of matches). */
  packagePostings: number;
  /** One match per term within the package index's postings budget (strategies are scored term by term on these). */
  terms: TextMatch[];
  /** The same terms, one match each, in the package index's path column only: the query's words that name the paths a package names. */
  pathTerms: TextMatch[];
  /** Packages whose summary, artifact text or path names a scope path as a phrase. */
  scopeInSession: TextMatch | null;
  scopes: string[][];
  /** Component path of each task group of the session. */
  groupPaths: ReadonlyMap<string, string>;
  /** Every task group of the session, oldest first (an empty list: none, or no such session). */
  groupIds: readonly string[];
  /** The languages and frameworks of the request's group: its specializations' names, --lang and --framework, lower-cased. */
  stack: ReadonlySet<string>;
  /** The query's text (explicit or implicit, redacted) and the group's name and component path: what error patterns and strategies are matched on (in memory, index or not). */
  taskText: string | null;
}

/**
 * Builds the request's query: --task (with --error) when given, else the implicit task from the
 * database. `redact` runs on every text before terms are taken from it, so the recorded query
 * holds no secret. With `enabled` false only the scope (which needs no index) is planned. With
 * `scopeByIndex` false (the index does not cover every package: a read of a file never indexed,
 * or a backlog) packages naming the scope are found without the index (listPackagesNaming), so
 * none is missed; undefined takes the plan already made for the request, if any.
 */
export function planSearch(db: DB, r: AssemblyRequest, config: Config, redact: (t: string) => string, enabled: boolean, scopeByIndex?: boolean): SearchPlan {
  // The steps of one in-process run share the request object: plan it once.
  const memo = plans.get(r);
  if (memo && memo.enabled === enabled && memo.config === config && (scopeByIndex === undefined || memo.scopeByIndex === scopeByIndex)) return memo.plan;
  const byIndex = scopeByIndex ?? true;
  const plan = buildPlan(db, r, config, redact, enabled, byIndex);
  plans.set(r, { plan, enabled, config, scopeByIndex: byIndex });
  return plan;
}

const plans = new WeakMap<AssemblyRequest, { plan: SearchPlan; enabled: boolean; config: Config; scopeByIndex: boolean }>();

function buildPlan(db: DB, r: AssemblyRequest, config: Config, redact: (t: string) => string, enabled: boolean, scopeByIndex: boolean): SearchPlan {
  const groups = listTaskGroups(db, r.session, null);
  const groupPaths = new Map<string, string>();
  for (const g of groups) {
    if (typeof g.component_path === 'string' && g.component_path.trim() !== '') groupPaths.set(g.id, g.component_path.trim());
  }
  const own = groups.find((g) => g.id === r.group);
  let source: QueryInfo['source'] = 'none';
  let text: string | null = null;
  if (r.task !== null) {
    source = 'explicit';
    text = [r.error, r.task].filter((t): t is string => t !== null).join('\n');
  } else {
    // What the database says this spawn works on: its group's task, or the session's for a session-wide spawn.
    // The request's own texts were redacted at the edge (shell.ts); the implicit task is read from the database here.
    const implicit = redact(
      implicitTask({
        groupName: typeof own?.name === 'string' ? own.name : null,
        componentPath: groupPaths.get(r.group) ?? null,
        specializations: parseStringList(own?.specializations),
        requirements: requirementsOfSpawn(findSession(db, r.session)?.original_requirements ?? null, groups, r.group),
        latestFailures: r.iteration > 0 && r.group !== 'global' ? (findLatestSummary(db, r.session, r.group, 'failures') ?? null) : null,
        iteration: r.iteration,
      }),
    );
    if (r.error !== null) {
      // A retry's feedback without a task: the feedback first, then the group's own task.
      source = 'explicit';
      text = implicit === '' ? r.error : `${r.error}\n${implicit}`;
    } else if (implicit !== '') {
      source = 'implicit';
      text = implicit;
    }
  }
  const limits = { maxTerms: config.relevance.max_query_terms, maxPostings: config.relevance.max_postings };
  const query = planTextQuery(db, enabled ? text : null, limits);

  // The group's own words: what its learnings are told apart by from another group's.
  const groupText = [typeof own?.name === 'string' ? own.name : null, groupPaths.get(r.group) ?? null].filter((t): t is string => t !== null && t.trim() !== '').join('\n') || null;
  const scopeText = r.scope ?? groupPaths.get(r.group) ?? null;
  const scopes = scopeText === null ? [] : parseScope(scopeText);
  const scopeAny = enabled && scopeByIndex ? planScopeMatch(scopes) : null;
  return {
    info: {
      source: query.any === null ? 'none' : source,
      text: query.any === null ? null : text,
      terms: query.terms,
      ...(query.dropped.length > 0 ? { dropped_terms: query.dropped } : {}),
      scope: scopes.map((s) => s.join('/')),
      scope_source: scopes.length === 0 ? 'none' : r.scope !== null ? 'explicit' : 'group',
    },
    inSession: query.packages,
    packagePostings: query.packagePostings,
    reasoningInSession: query.reasoning,
    terms: query.perTerm,
    pathTerms: query.perTermPaths,
    scopeInSession: scopeAny,
    scopes,
    groupPaths,
    groupIds: groups.map((g) => g.id),
    stack: stackOf(own?.specializations, r),
    taskText: [text, groupText].filter((t): t is string => t !== null && t.trim() !== '').join('\n') || null,
  };
}

/** The group's stack: the names of its specializations (`bazinga/templates/specializations/typescript.md` → typescript), --lang, --framework. */
function stackOf(specializations: unknown, r: AssemblyRequest): Set<string> {
  const names = parseStringList(specializations).map((s) => (s.split('/').pop() ?? '').replace(/\.[A-Za-z0-9]+$/, ''));
  return new Set([...names, r.lang ?? '', r.framework ?? ''].map((n) => n.trim().toLowerCase()).filter((n) => n !== ''));
}

/**
 * The part of the session's requirements a spawn's implicit task holds: all of it for a
 * session-wide spawn (group `global`), else only the passages naming the spawn's group (core/groupTask.ts).
 */
function requirementsOfSpawn(requirements: string | null, groups: readonly { id: string; name?: unknown; component_path?: unknown }[], group: string): string | null {
  if (requirements === null || group === 'global') return requirements;
  const identities = groups.map((g) => ({ id: g.id, name: typeof g.name === 'string' ? g.name : null, componentPath: typeof g.component_path === 'string' ? g.component_path : null }));
  return groupRequirements(requirements, identities, group);
}

/** What one call may spend indexing: relevance.index_budget_ms, at most MAX_INDEX_BUDGET_MS (a call stays well inside the warm assembler's answer time; index-search builds the rest). */
export function indexBudgetMs(config: Config): number {
  return Math.min(config.relevance.index_budget_ms, MAX_INDEX_BUDGET_MS);
}

/**
 * Indexes rows that arrived since the index was last brought up to date (for example written by
 * the original tool). Derived data: when it cannot be written (a read-only file, a lock held too
 * long) the request goes on with the index as it is, and says so. Returns whether the index then
 * covers every package (else their scope is matched without it).
 */
export function refreshSearchIndex(db: DB, projectRoot: string | null, config: Config, warn: (m: string) => void): boolean {
  try {
    const behind = searchIndexBehind(db);
    if (behind.length === 0) return true;
    // A read-only connection (a dry run, a read-only step, a file that cannot be written) uses the
    // index as the last writer left it: it cannot write, and must not. Patterns and strategies are
    // matched in memory, so only packages and reasoning rank differently.
    if (db.readonly) {
      const ranked = behind.filter((part) => part === 'packages' || part === 'reasoning');
      if (ranked.length > 0) {
        warn(`context-assembler: the search index does not cover every row of ${ranked.join(' and ')} (a read never indexes: \`bazinga-db index-search\` or a recording call does); those rank without relevance`);
      }
      return !ranked.includes('packages');
    }
    // The whole index is being built in the background (index-search): the spawn leaves it to that
    // process and ranks with what is indexed so far.
    if (indexerRunning(db.name) !== undefined) {
      // And it steps aside until this spawn has written what it writes.
      askIndexerToYield(db.name);
      warn('context-assembler: the search index is being built in the background; ranked with what is indexed so far');
      return !behind.includes('packages');
    }
    const report = writeTransaction(db, () =>
      // Rows other tools wrote are redacted in place as they are first indexed.
      syncSearchIndex(db, { projectRoot, artifactBytes: config.relevance.artifact_index_bytes, budgetMs: indexBudgetMs(config), scrub: redactionPolicyOf(config) }),
    );
    if (report.backlog > 0) warn(`context-assembler: search index still has ${report.backlog} rows to index; later calls continue`);
    return report.backlog === 0 || !searchIndexBehind(db).includes('packages');
  } catch (err) {
    warn(`context-assembler: could not bring the search index up to date (${(err as Error).message}); relevance uses what is indexed`);
    return false;
  }
}

export interface PackageSelection {
  ranked: RankOutput;
  /** Full-text hits read, and how many rounds of reading the exactness check needed. */
  hits: number;
  rounds: number;
}

type Query = EligibilityQuery & { iteration: number };

interface SelectInput {
  db: DB;
  query: Query;
  plan: SearchPlan;
  zone: Zone;
  limit: number;
  nowMs: number;
  config: Config;
  explain: boolean;
  totalAvailable: number;
  consumed: readonly CandidatePackage[];
  /** Read every eligible package (the reference the fast read is tested against). */
  exhaustive?: boolean;
  /** The outcome term per package id (core/outcomes.ts): packages shown before. */
  outcome?: ReadonlyMap<number, number>;
}

const bucketKey = (row: CandidatePackage, group: string) => `${row.group_id === group ? 'g' : 's'}|${row.priority}|${row.package_type}|${row.designated}`;

/**
 * Reads candidates, ranks them, and reads more until the selection is provably the one ranking
 * every eligible package would give: the newest packages of each bucket (the heuristic's only
 * possible winners), the best full-text hits, and the packages naming a scope path; each round
 * reads four times as many hits, and of each bucket when that is what the check lacks, until
 * `provesExact` holds or nothing is left unread.
 *
 * Relevance is exact for the hits. A candidate that is not a hit while hits were left unread has a
 * relevance of at most the last hit's: it is ranked at 0, scored exactly when that ranking selects
 * it, and otherwise counted with its bound in the exactness check.
 */
export function selectPackages(input: SelectInput): PackageSelection {
  const { db, query, plan, config } = input;
  const weights = config.relevance.column_weights;
  const all = Number.MAX_SAFE_INTEGER;
  let perBucket = input.exhaustive ? all : input.limit;
  // No more matches than the query's postings can exist: when those are fewer, read them all at once.
  let k = input.exhaustive ? all : Math.min(config.relevance.candidates, plan.packagePostings + 1);
  // What every ranking of this request shares (and what a bucket tail's heuristic is computed with).
  const base: RankInput = {
    candidates: [],
    totalAvailable: input.totalAvailable,
    group: query.groupId,
    agent: query.agentType,
    zone: input.zone,
    limit: input.limit,
    nowMs: input.nowMs,
    config,
    explain: input.explain,
  };
  const rank = (rows: Map<number, CandidatePackage>, relevance: Map<number, number> | undefined, scope: Map<number, number>, paths: Map<number, number>) =>
    rankPackages({
      ...base,
      candidates: [...input.consumed.map((row) => ({ ...row, consumed: true })), ...[...rows.values()].map((row) => ({ ...row, consumed: false }))],
      ...(relevance ? { relevance, paths } : {}),
      ...(input.outcome ? { outcome: input.outcome } : {}),
      scope,
    });
  const heuristic = (row: CandidatePackage) =>
    rawScoreOf({ ...scoreComponents({ ...row, consumed: false }, base), relevance: 0, scope: 0, paths: 0 }, config, false);
  const consumedIds = new Set(input.consumed.map((p) => p.id));
  const eligible = (p: SearchedPackage) => !consumedIds.has(p.id);
  // Reads are repeated in a later round only when their bound grew.
  let heads: CandidatePackage[] = [];
  let matched: SearchedPackage[] = [];
  let scopedMatched: SearchedPackage[] = [];
  let read = { perBucket: 0, k: 0 };
  // Without a scope search (no full-text index), every package whose text could name a path under
  // the scope is read at once (a superset, by each scope's last segment): none is left unread.
  const namingScope =
    plan.scopes.length > 0 && plan.scopeInSession === null
      ? listPackagesNaming(db, query, plan.scopes.map((segs) => segs[segs.length - 1] as string)).filter((p) => !consumedIds.has(p.id))
      : [];
  // Packages a helped spawn was shown are read whatever their bucket: their outcome term may lift
  // them above a bucket's tail, which the bound of what is left unread (provesExact) does not count.
  // A term of 0 or less only lowers a package, so the others need no reading.
  const helped = input.outcome ? [...input.outcome].filter(([, term]) => term > 0).map(([id]) => id) : [];
  const shownHelped = helped.length === 0 ? [] : listEligibleByIds(db, query, helped).filter((p) => !consumedIds.has(p.id));
  // Every package whose paths the query's words name is read at once (a term's path matches are
  // within the postings the query was planned for), so the paths signal is exact for each and 0
  // for every package not read; with its weight at 0 nothing is read for it.
  const named = config.ranking.weights.paths > 0 ? namedPaths(db, query, plan, input.totalAvailable + input.consumed.length) : { rows: [], signal: new Map<number, number>() };
  for (let round = 1; ; round++) {
    if (read.perBucket !== perBucket) heads = listBucketHeads(db, query, perBucket);
    // The best k matches of the request's packages; those not eligible are dropped after they
    // count toward the bound (an eligible package not read scores at most the k-th match).
    if (read.k !== k) {
      matched = plan.inSession === null ? [] : searchRequestPackages(db, query, { match: plan.inSession, weights, limit: k });
      scopedMatched = plan.scopeInSession === null ? [] : searchRequestPackages(db, query, { match: plan.scopeInSession, weights, limit: k, newest: true });
    }
    read = { perBucket, k };
    const hits = matched.filter(eligible);
    const scoped = [...scopedMatched.filter(eligible), ...namingScope];
    const rows = new Map<number, CandidatePackage>();
    // The heads are read whatever was consumed (their tails bound what is unread); a request for
    // more leaves what it was given out here.
    for (const row of [...heads, ...hits, ...named.rows, ...scoped, ...shownHelped]) if (!rows.has(row.id) && !consumedIds.has(row.id)) rows.set(row.id, row);
    const hitsTruncated = matched.length === k;
    const scopeTruncated = scopedMatched.length === k;

    // Relevance is BM25 over the best match of the request's packages, eligible or not, so a
    // package's relevance does not depend on how many matches were read.
    const best = matched.length === 0 ? 0 : -(matched[0] as { bm25: number }).bm25;
    const toRelevance = (bm25: number) => (best > 0 ? Math.max(0, -bm25) / best : 0);
    const relevance = plan.inSession === null ? undefined : new Map(hits.map((h) => [h.id, toRelevance(h.bm25)]));
    const relevanceBound = hitsTruncated ? toRelevance((matched[matched.length - 1] as { bm25: number }).bm25) : 0;
    const paths = named.signal;
    const scope = scopeOf([...rows.values()], plan, db);
    let ranked = rank(rows, relevance, scope, paths);
    // Selected candidates whose relevance is only bounded get their exact score, and the ranking is redone.
    const unsure = (id: number) => relevance !== undefined && hitsTruncated && !relevance.has(id);
    const rescore = ranked.selected.filter((p) => unsure(p.id));
    if (rescore.length > 0 && relevance && plan.inSession !== null) {
      for (const p of rescore) {
        const bm25 = scorePackage(db, plan.inSession, p.id, weights);
        relevance.set(p.id, bm25 === undefined ? 0 : toRelevance(bm25));
      }
      ranked = rank(rows, relevance, scope, paths);
    }

    // What was not read, or read without an exact relevance, may still belong in the selection.
    const selected = new Set(ranked.selected.map((p) => p.id));
    const perKey = new Map<string, CandidatePackage[]>();
    for (const row of heads) {
      const key = bucketKey(row, query.groupId);
      const list = perKey.get(key);
      if (list) list.push(row);
      else perKey.set(key, [row]);
    }
    const tails: BucketTail[] = [];
    for (const [key, list] of perKey) {
      if (list.length < perBucket) continue;
      const tail = list[list.length - 1] as CandidatePackage;
      tails.push({
        priority: tail.priority,
        heuristic: heuristic(tail),
        createdMs: parseSqliteTime(tail.created_at),
        id: tail.id,
        scopePossible: scopeTruncated || groupScopePossible(key.startsWith('g|'), query.groupId, plan),
      });
    }
    for (const row of rows.values()) {
      if (selected.has(row.id) || !unsure(row.id)) continue;
      tails.push({
        priority: row.priority,
        // Its paths signal is exact (every package that has one was read): counted in full.
        heuristic: heuristic(row) + config.ranking.weights.paths * (paths.get(row.id) ?? 0),
        createdMs: parseSqliteTime(row.created_at),
        id: row.id,
        scopePossible: scope.has(row.id),
      });
    }
    const textTruncated = hitsTruncated || scopeTruncated;
    const exhausted = !textTruncated && [...perKey.values()].every((list) => list.length < perBucket);
    if (exhausted || provesExact(ranked.selected, input.limit, tails, relevanceBound, input.zone, config, relevance !== undefined)) {
      return { ranked, hits: hits.length, rounds: round };
    }
    // Read further where it helps: more hits lower the relevance bound of everything unread; more
    // of each bucket only helps when the check fails even without any relevance left unread.
    if (textTruncated) k *= 4;
    if (!textTruncated || !provesExact(ranked.selected, input.limit, tails.map((t) => ({ ...t, scopePossible: false })), 0, input.zone, config, relevance !== undefined)) {
      perBucket *= 4;
    }
  }
}

/**
 * The paths signal: for each package whose path column (its artifact file and the paths its
 * artifact names) holds a query term, the sum of those terms' IDF, ln(1 + N / n) with n the
 * request's packages holding the term there and N the request's packages, over the best package's
 * sum. A term every package's paths hold (`src`) counts little; the one path the task and a
 * package both name counts most. Returns the packages read (eligible, consumed or not) and the signal.
 */
function namedPaths(db: DB, query: Query, plan: SearchPlan, total: number): { rows: SearchedPackage[]; signal: Map<number, number> } {
  const rows = new Map<number, SearchedPackage>();
  const sums = new Map<number, number>();
  // Scope-only planning (no index) asks for no terms: nothing is read.
  const perTerm = plan.pathTerms.map((match) => searchRequestPackages(db, query, { match, weights: NO_WEIGHTS, limit: Number.MAX_SAFE_INTEGER, newest: true }));
  const n = Math.max(total, ...perTerm.map((found) => found.length), 1);
  for (const found of perTerm) {
    if (found.length === 0) continue;
    const idf = Math.log(1 + n / found.length);
    for (const row of found) {
      rows.set(row.id, row);
      sums.set(row.id, (sums.get(row.id) ?? 0) + idf);
    }
  }
  let best = 0;
  for (const v of sums.values()) best = Math.max(best, v);
  const signal = new Map<number, number>();
  for (const [id, v] of sums) signal.set(id, best > 0 ? v / best : 0);
  return { rows: [...rows.values()], signal };
}

/** No BM25 is computed for a newest-first read (its weights are not used). */
const NO_WEIGHTS = { summary: 0, artifact: 0, path: 0 } as const;

/** Whether packages of a bucket could be in scope through their group's component path. */
function groupScopePossible(ownGroupBucket: boolean, group: string, plan: SearchPlan): boolean {
  if (plan.scopes.length === 0) return false;
  for (const [id, p] of plan.groupPaths) {
    if (ownGroupBucket !== (id === group)) continue;
    if (plan.scopes.some((s) => underScope(p, s))) return true;
  }
  return false;
}

/** The scope signal of each package: its path, its summary, the paths its artifact names, its group's component path. */
function scopeOf(rows: readonly CandidatePackage[], plan: SearchPlan, db: DB): Map<number, number> {
  const out = new Map<number, number>();
  if (plan.scopes.length === 0) return out;
  const named = listPackagePaths(db, rows.map((r) => r.id));
  for (const r of rows) {
    const componentPath = r.group_id === null ? '' : (plan.groupPaths.get(r.group_id) ?? '');
    const signal = scopeSignal({ paths: [r.file_path, componentPath, ...(named.get(r.id) ?? [])], texts: [r.summary] }, plan.scopes);
    if (signal) out.set(r.id, signal);
  }
  return out;
}

/**
 * Where the query matched each package (for --explain): its summary, the indexed part of its
 * artifact file (read again, redacted as when indexed) and its path, through the index's tokenizer.
 */
export function explainMatches(
  db: DB,
  plan: SearchPlan,
  packages: readonly { id: number; summary: string; file_path: string }[],
  projectRoot: string | null,
  config: Config,
): Map<number, MatchInfo> {
  const out = new Map<number, MatchInfo>();
  if (plan.inSession === null) return out;
  const docs = packages.map((p) => {
    const artifact = indexedArtifactText(projectRoot, p.file_path, config.relevance.artifact_index_bytes);
    return { id: p.id, summary: p.summary, path: packagePathText(p.file_path, pathsInText(artifact)), artifact };
  });
  for (const row of highlightTexts(db, plan.inSession, docs)) {
    const fields: MatchInfo['fields'] = [];
    const terms: string[] = [];
    for (const field of ['summary', 'artifact', 'path'] as const) {
      const found = markedTerms(row[field]);
      if (found.length > 0) fields.push(field);
      for (const t of found) if (!terms.includes(t)) terms.push(t);
    }
    out.set(row.id, { terms, fields });
  }
  return out;
}
