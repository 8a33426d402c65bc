/**
 * Relevance for one assembly: the query (explicit or implicit), the index brought up to date, and
 * the candidate packages read so that ranking them gives exactly the selection ranking every
 * eligible package would. Database reads go through the bazinga-db repositories; the signals
 * themselves are the pure core (core/relevance.ts, core/rank.ts).
 */
import type { DB } from '../../../bazinga-db/scripts/lib/db.ts';
import { writeTransaction } from '../../../bazinga-db/scripts/lib/db.ts';
import {
  findLatestSummary,
  listBucketHeads,
  searchEligiblePackages,
  type CandidatePackage,
  type EligibilityQuery,
} from '../../../bazinga-db/scripts/lib/repo/contextPackages.ts';
import {
  highlightTexts,
  indexedArtifactText,
  listPackagePaths,
  scorePackages,
  searchIndexBehind,
  syncSearchIndex,
} from '../../../bazinga-db/scripts/lib/repo/searchIndex.ts';
import { findSession } from '../../../bazinga-db/scripts/lib/repo/sessions.ts';
import { listTaskGroups } from '../../../bazinga-db/scripts/lib/repo/taskGroups.ts';
import { buildMatch, queryTerms, sessionMatch, type QueryTerm } from '../../../bazinga-db/scripts/lib/searchText.ts';
import type { Config, Zone } from './config.ts';
import type { AssemblyRequest, MatchInfo, QueryInfo } from './contract.ts';
import { rankPackages, parseSqliteTime, provesExact, scoreComponents, scoreOf, type BucketTail, type RankOutput } from './core/rank.ts';
import {
  implicitTask,
  markedTerms,
  normaliseBm25,
  parseScope,
  parseSpecializations,
  scopeSignal,
  underScope,
} from './core/relevance.ts';

/** What one request searches for. */
export interface SearchPlan {
  info: QueryInfo;
  /** Any of the query's terms (unrestricted; patterns and strategies are filtered by project). */
  anyOf: string | null;
  /** The same, within the request's session (packages, reasoning). */
  inSession: string | null;
  /** Each query term on its own (strategies are scored term by term). */
  termMatches: string[];
  /** Each term of the --error text on its own (error patterns are scored term by term). */
  errorTermMatches: string[];
  /** Packages whose summary, artifact text or path names a scope path, within the session. */
  scopeInSession: string | null;
  scopes: string[][];
  /** Component path of each task group of the session. */
  groupPaths: ReadonlyMap<string, string>;
}

/**
 * Builds the request's query: --task (with --error) when given, else the implicit task from the
 * database. `redact` runs on every text before terms are taken from it, so the recorded query
 * holds no secret. With `enabled` false only the scope (which needs no index) is planned.
 */
export function planSearch(db: DB, r: AssemblyRequest, config: Config, redact: (t: string) => string, enabled: boolean): SearchPlan {
  const groups = listTaskGroups(db, r.session, null);
  const groupPaths = new Map<string, string>();
  for (const g of groups) {
    if (typeof g.component_path === 'string' && g.component_path.trim() !== '') groupPaths.set(g.id, g.component_path.trim());
  }
  const own = groups.find((g) => g.id === r.group);
  let source: QueryInfo['source'] = 'none';
  let text: string | null = null;
  if (r.task !== null || r.error !== null) {
    source = 'explicit';
    text = [r.error, r.task].filter((t): t is string => t !== null).join('\n');
  } else {
    const implicit = implicitTask({
      groupName: typeof own?.name === 'string' ? own.name : null,
      componentPath: groupPaths.get(r.group) ?? null,
      specializations: parseSpecializations(own?.specializations),
      requirements: findSession(db, r.session)?.original_requirements ?? null,
      latestFailures: r.iteration > 0 && r.group !== 'global' ? (findLatestSummary(db, r.session, r.group, 'failures') ?? null) : null,
      iteration: r.iteration,
    });
    if (implicit !== '') {
      source = 'implicit';
      text = implicit;
    }
  }
  text = text === null ? null : redact(text);
  const terms: QueryTerm[] = enabled && text !== null ? queryTerms(text, config.relevance.max_query_terms) : [];
  const anyOf = buildMatch(terms);
  const errorTerms = enabled && r.error !== null ? queryTerms(redact(r.error), config.relevance.max_query_terms) : [];

  const scopeText = r.scope ?? groupPaths.get(r.group) ?? null;
  const scopes = scopeText === null ? [] : parseScope(scopeText);
  const scopeTerms: QueryTerm[] = scopes.map((segs) => ({ text: segs.join('/'), tokens: segs.map((s) => s.toLowerCase()) }));
  const scopeAny = enabled ? buildMatch(scopeTerms, ['summary', 'artifact', 'path']) : null;
  return {
    info: {
      source: anyOf === null ? 'none' : source,
      text: anyOf === null ? null : text,
      terms: terms.map((t) => t.text),
      scope: scopes.map((s) => s.join('/')),
      scope_source: scopes.length === 0 ? 'none' : r.scope !== null ? 'explicit' : 'group',
    },
    anyOf,
    inSession: anyOf === null ? null : sessionMatch(r.session, anyOf),
    termMatches: terms.map((t) => buildMatch([t]) as string),
    errorTermMatches: errorTerms.map((t) => buildMatch([t]) as string),
    scopeInSession: scopeAny === null ? null : sessionMatch(r.session, scopeAny),
    scopes,
    groupPaths,
  };
}

/**
 * Indexes rows that arrived since the index was last brought up to date (for example written by
 * the original tool). Derived data: when it cannot be written (a read-only file, a lock held too
 * long) the request goes on with the index as it is, and says so.
 */
export function refreshSearchIndex(db: DB, projectRoot: string | null, config: Config, warn: (m: string) => void): void {
  try {
    if (searchIndexBehind(db).length === 0) return;
    const report = writeTransaction(db, () =>
      syncSearchIndex(db, { projectRoot, artifactBytes: config.relevance.artifact_index_bytes, budgetMs: config.relevance.index_budget_ms }),
    );
    if (report.backlog > 0) warn(`context-assembler: search index still has ${report.backlog} older rows to index; later calls continue`);
  } catch (err) {
    warn(`context-assembler: could not bring the search index up to date (${(err as Error).message}); relevance uses what is indexed`);
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
}

const bucketKey = (row: CandidatePackage, group: string) => `${row.group_id === group ? 'g' : 's'}|${row.priority}|${row.package_type}`;

/**
 * Reads candidates, ranks them, and reads more until the selection is provably the one ranking
 * every eligible package would give: the newest packages of each bucket (the heuristic's only
 * possible winners), the best full-text hits, and the packages naming a scope path; each round
 * reads four times as many of each until `provesExact` holds or nothing is left unread.
 */
export function selectPackages(input: SelectInput): PackageSelection {
  const { db, query, plan, config } = input;
  const weights = config.relevance.column_weights;
  const all = Number.MAX_SAFE_INTEGER;
  let perBucket = input.exhaustive ? all : input.limit;
  let k = input.exhaustive ? all : config.relevance.candidates;
  for (let round = 1; ; round++) {
    const heads = listBucketHeads(db, query, perBucket);
    const hits = plan.inSession === null ? [] : searchEligiblePackages(db, query, { match: plan.inSession, weights, limit: k });
    const scoped = plan.scopeInSession === null ? [] : searchEligiblePackages(db, query, { match: plan.scopeInSession, weights, limit: k });
    const rows = new Map<number, CandidatePackage>();
    for (const row of [...heads, ...hits, ...scoped]) if (!rows.has(row.id)) rows.set(row.id, row);

    // Relevance of every candidate, exactly: hits carry their BM25, the others are scored by id.
    const scored = hits.map((h) => ({ key: h.id, bm25: h.bm25 }));
    if (plan.inSession !== null && hits.length === k) {
      const hitIds = new Set(hits.map((h) => h.id));
      const rest = [...rows.keys()].filter((id) => !hitIds.has(id));
      for (const h of scorePackages(db, plan.inSession, rest, weights)) scored.push({ key: h.id, bm25: h.bm25 });
    }
    const relevance = plan.inSession === null ? undefined : normaliseBm25(scored);
    const scope = scopeOf([...rows.values()], plan, db);
    const ranked = rankPackages({
      candidates: [...input.consumed.map((row) => ({ ...row, consumed: true })), ...[...rows.values()].map((row) => ({ ...row, consumed: false }))],
      totalAvailable: input.totalAvailable,
      group: query.groupId,
      agent: query.agentType as never,
      zone: input.zone,
      limit: input.limit,
      nowMs: input.nowMs,
      config,
      explain: input.explain,
      ...(relevance ? { relevance } : {}),
      scope,
    });

    // Buckets read to their bound may hold older packages not read.
    const perKey = new Map<string, CandidatePackage[]>();
    for (const row of heads) perKey.set(bucketKey(row, query.groupId), [...(perKey.get(bucketKey(row, query.groupId)) ?? []), row]);
    const hitsTruncated = hits.length === k;
    const scopeTruncated = scoped.length === k;
    const tails: BucketTail[] = [];
    for (const [key, list] of perKey) {
      if (list.length < perBucket) continue;
      const tail = list[list.length - 1] as CandidatePackage;
      const c = { ...tail, consumed: false };
      const base = scoreOf({ ...scoreComponents(c, { ...rankInputBase(input), candidates: [] }), relevance: 0, scope: 0 }, config, false);
      tails.push({
        priority: tail.priority,
        heuristic: base,
        createdMs: parseSqliteTime(tail.created_at),
        id: tail.id,
        scopePossible: scopeTruncated || groupScopePossible(key.startsWith('g|'), query.groupId, plan),
      });
    }
    const relevanceBound = hitsTruncated ? (relevance?.get((hits[hits.length - 1] as { id: number }).id) ?? 0) : 0;
    const exhausted = tails.length === 0 && !hitsTruncated && !scopeTruncated;
    if (exhausted || provesExact(ranked.selected, input.limit, tails, relevanceBound, input.zone, config)) {
      return { ranked, hits: hits.length, rounds: round };
    }
    perBucket *= 4;
    k *= 4;
  }
}

function rankInputBase(input: SelectInput) {
  return {
    group: input.query.groupId,
    agent: input.query.agentType,
    zone: input.zone,
    limit: input.limit,
    nowMs: input.nowMs,
    config: input.config,
    explain: false,
  };
}

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
  if (plan.anyOf === null) return out;
  const docs = packages.map((p) => ({
    id: p.id,
    summary: p.summary,
    path: p.file_path,
    artifact: indexedArtifactText(projectRoot, p.file_path, config.relevance.artifact_index_bytes),
  }));
  for (const row of highlightTexts(db, plan.anyOf, docs)) {
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
