/** Repository: `context_packages` and `context_package_consumers`. */
import { stmt, type DB } from '../statements.ts';
import type { TextMatch } from '../textMatch.ts';
import { PACKAGE_TYPES, PRIORITIES, PRIORITY_ORDER } from '../enums.ts';

export interface PackageRow {
  id: number;
  session_id: string;
  group_id: string | null;
  package_type: string;
  file_path: string;
  producer_agent: string;
  priority: string;
  summary: string;
  size_bytes: number | null;
  version: number | null;
  supersedes_id: number | null;
  scope: string | null;
  created_at: string | null;
}

/** The package fields `get-context-packages` prints. */
export interface PackageListing {
  id: number;
  package_type: string;
  priority: string;
  summary: string;
  file_path: string;
  size_bytes: number | null;
  group_id: string | null;
}

export interface NewPackage {
  sessionId: string;
  /** null for a session-wide (global) package. */
  groupId: string | null;
  scope: 'group' | 'global';
  packageType: string;
  filePath: string;
  producerAgent: string;
  priority: string;
  summary: string;
  sizeBytes: number | null;
  /** SQLite time text; omitted → CURRENT_TIMESTAMP (only generators of test data set it). */
  createdAt?: string;
}

/** Inserts the package; returns its id. */
export function insertPackage(db: DB, p: NewPackage): number {
  const info = stmt(
    db,
    `INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority,
                                   summary, size_bytes, version, supersedes_id, scope, created_at)
     VALUES (@sessionId, @groupId, @packageType, @filePath, @producerAgent, @priority, @summary, @sizeBytes,
             1, NULL, @scope, COALESCE(@createdAt, CURRENT_TIMESTAMP))`,
  ).run({ ...p, createdAt: p.createdAt ?? null });
  return Number(info.lastInsertRowid);
}

export function insertConsumer(db: DB, packageId: number, agentType: string): void {
  stmt(db, 'INSERT INTO context_package_consumers (package_id, agent_type) VALUES (?, ?)').run(packageId, agentType);
}

export function findPackage(db: DB, id: number): PackageRow | undefined {
  return stmt(db, 'SELECT * FROM context_packages WHERE id = ?').get(id) as PackageRow | undefined;
}

export interface EligibilityQuery {
  sessionId: string;
  groupId: string;
  agentType: string;
  /** null: the legacy rule (the agent's consumer row is still pending); a number: iteration-aware. */
  iteration: number | null;
}

/**
 * Two rules, in named parts that every query composes (constant SQL, no values). The original
 * tool's `get-context-packages` (listEligiblePackages): IN_SCOPE ∧ DESIGNATED ∧ not consumed
 * (NOT_CONSUMED_AT_ITERATION, or under the legacy rule a pending consumer row). The assembler's
 * candidates (the other reads below): IN_SCOPE ∧ CURRENT, whatever the consumer list (today's
 * prompt builder shows a group's packages to every agent; being named ranks a package up, as
 * `designated`), and consumption left out only where the caller passes what was consumed.
 */

/** The request's scope: the session's packages of the group, or session-wide. */
const IN_SCOPE = `cp.session_id = @sessionId AND (cp.group_id = @groupId OR cp.scope = 'global')`;

/** Current: not superseded. */
const CURRENT = `cp.supersedes_id IS NULL`;

/** An assembler's candidate: current, with a summary to show (the prompt builder skips an empty one too). */
const CANDIDATE = `${CURRENT} AND cp.summary <> ''`;

/** Naming the agent as a consumer (a condition, or the candidate column `designated`). */
const NAMES_AGENT = `EXISTS (SELECT 1 FROM context_package_consumers c WHERE c.package_id = cp.id AND c.agent_type = @agentType)`;

/** Current and naming the agent as a consumer: the original's `get-context-packages`. */
const DESIGNATED = `${CURRENT} AND ${NAMES_AGENT}`;

/**
 * The agent has not consumed the package at @iteration: no scope row, no consumed consumer row.
 * (The scope lookup names its index: otherwise SQLite prefers the covering session index and
 * scans every scope row of the session for each package.)
 */
const NOT_CONSUMED_AT_ITERATION = `NOT EXISTS (SELECT 1 FROM consumption_scope s INDEXED BY ca_idx_consumption_package
                  WHERE s.package_id = cp.id AND s.agent_type = @agentType AND s.iteration = @iteration
                    AND s.session_id = cp.session_id)
  AND NOT EXISTS (SELECT 1 FROM context_package_consumers c
                  WHERE c.package_id = cp.id AND c.agent_type = @agentType
                    AND c.consumed_at IS NOT NULL AND c.iteration = @iteration)`;

/** The legacy rule (no iteration given): the agent still has a pending consumer row. */
const PENDING_CONSUMER = `EXISTS (SELECT 1 FROM context_package_consumers c
                WHERE c.package_id = cp.id AND c.agent_type = @agentType AND c.consumed_at IS NULL)`;

/** The eligibility rule of a context request: in scope, designated, not yet consumed (ever, or at this iteration). */
const ELIGIBLE_WHERE = `${IN_SCOPE} AND ${DESIGNATED}
  AND CASE WHEN @iteration IS NULL THEN ${PENDING_CONSUMER} ELSE ${NOT_CONSUMED_AT_ITERATION} END`;

/**
 * Priority first (PRIORITY_ORDER, bound as `,critical,high,medium,low,`), an unknown priority last.
 * The order is a parameter, not SQL text, so it lives only in enums.ts.
 */
const BY_PRIORITY = `coalesce(nullif(instr(@priorityOrder, ',' || cp.priority || ','), 0), 1e9)`;
const PRIORITY_ORDER_PARAM = `,${PRIORITY_ORDER.join(',')},`;

/** Eligible packages, priority first, then newest, then highest id; at most `limit`. */
export function listEligiblePackages(db: DB, q: EligibilityQuery, limit: number): PackageListing[] {
  return stmt(
    db,
    `SELECT cp.id, cp.package_type, cp.priority, cp.summary, cp.file_path, cp.size_bytes, cp.group_id
     FROM context_packages cp WHERE ${ELIGIBLE_WHERE}
     ORDER BY ${BY_PRIORITY}, cp.created_at DESC, cp.id DESC LIMIT @limit`,
  ).all({ ...q, limit, priorityOrder: PRIORITY_ORDER_PARAM }) as PackageListing[];
}

/** The number of eligible packages, ignoring any limit. */
export function countEligiblePackages(db: DB, q: EligibilityQuery): number {
  const row = stmt(db, `SELECT COUNT(*) AS n FROM context_packages cp WHERE ${ELIGIBLE_WHERE}`).get(q) as { n: number };
  return row.n;
}

/**
 * Whether the agent already consumed the package at `iteration`: the negation of the
 * iteration-aware eligibility filter itself, so a package this calls free is one a ranking in the
 * same transaction would offer.
 */
export function isConsumedAtIteration(db: DB, packageId: number, agentType: string, iteration: number): boolean {
  return (
    stmt(db, `SELECT 1 FROM context_packages cp WHERE cp.id = @packageId AND NOT (${NOT_CONSUMED_AT_ITERATION})`).get({
      packageId,
      agentType,
      iteration,
    }) !== undefined
  );
}

export function hasConsumer(db: DB, packageId: number, agentType: string): boolean {
  return stmt(db, 'SELECT 1 FROM context_package_consumers WHERE package_id = ? AND agent_type = ?').get(packageId, agentType) !== undefined;
}

/**
 * Marks the agent's lowest-id pending consumer row consumed at `iteration`. Returns whether a row
 * changed (false when the agent's rows are all consumed already).
 */
export function markConsumerConsumed(db: DB, packageId: number, agentType: string, iteration: number): boolean {
  return (
    stmt(
      db,
      `UPDATE context_package_consumers SET consumed_at = CURRENT_TIMESTAMP, iteration = @iteration
       WHERE id = (SELECT id FROM context_package_consumers
                   WHERE package_id = @packageId AND agent_type = @agentType AND consumed_at IS NULL
                   ORDER BY id LIMIT 1)`,
    ).run({ packageId, agentType, iteration }).changes > 0
  );
}

/**
 * Takes back a mark of markConsumerConsumed: the agent's newest row of the package consumed at
 * `iteration` is pending again. Returns whether a row changed.
 */
export function unmarkConsumerConsumed(db: DB, packageId: number, agentType: string, iteration: number): boolean {
  return (
    stmt(
      db,
      `UPDATE context_package_consumers SET consumed_at = NULL
       WHERE id = (SELECT id FROM context_package_consumers
                   WHERE package_id = @packageId AND agent_type = @agentType AND iteration = @iteration AND consumed_at IS NOT NULL
                   ORDER BY id DESC LIMIT 1)`,
    ).run({ packageId, agentType, iteration }).changes > 0
  );
}

/** A candidate package of a request, with whether the agent consumed it at this iteration and whether its consumer list names the agent. */
export interface CandidatePackage {
  id: number;
  session_id: string;
  group_id: string | null;
  scope: string | null;
  package_type: string;
  priority: string;
  file_path: string;
  summary: string;
  size_bytes: number | null;
  created_at: string | null;
  consumed: 0 | 1;
  /** 1 when the package's consumer list names the agent (it ranks up), else 0. */
  designated: 0 | 1;
}

const CANDIDATE_COLUMNS = `cp.id, cp.session_id, cp.group_id, cp.scope, cp.package_type, cp.priority, cp.file_path, cp.summary,
  cp.size_bytes, cp.created_at, ${NAMES_AGENT} AS designated`;

/**
 * The newest `perBucket` current packages of every (priority, package type, designated) bucket,
 * for the group and for the session-wide packages: at most 2 × 4 × 5 × 2 × perBucket rows however
 * large the session is. Within a bucket every ranking signal but recency is constant, so the top
 * packages by score over all buckets are always among these.
 */
export function listBucketHeads(db: DB, q: EligibilityQuery & { iteration: number }, perBucket: number): CandidatePackage[] {
  // One statement: for each bucket (in PRIORITIES × PACKAGE_TYPES order, the group's half before
  // the session-wide one) its newest rows, each read by its bucket index and stopped at the limit.
  return stmt(
    db,
    `WITH bucket(ord, priority, package_type, designated) AS MATERIALIZED (
       SELECT key, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(@buckets))
     SELECT ${HEAD_COLUMNS} FROM (
     SELECT ${CANDIDATE_COLUMNS}, b.ord AS ord, 0 AS half FROM bucket b CROSS JOIN context_packages cp
     WHERE cp.id IN (
       SELECT p.id FROM context_packages p INDEXED BY ca_idx_cp_group_bucket
       WHERE p.session_id = @sessionId AND p.group_id = @groupId AND p.priority = b.priority AND p.package_type = b.package_type
         AND ${asAlias(CANDIDATE, 'p')} AND ${asAlias(NAMES_AGENT, 'p')} = b.designated
       ORDER BY p.created_at DESC, p.id DESC LIMIT @perBucket)
     UNION ALL
     SELECT ${CANDIDATE_COLUMNS}, b.ord AS ord, 1 AS half FROM bucket b CROSS JOIN context_packages cp
     WHERE cp.id IN (
       SELECT p.id FROM context_packages p INDEXED BY ca_idx_cp_scope_bucket
       WHERE p.session_id = @sessionId AND p.scope = 'global' AND p.priority = b.priority AND p.package_type = b.package_type
         AND (p.group_id IS NULL OR p.group_id <> @groupId)
         AND ${asAlias(CANDIDATE, 'p')} AND ${asAlias(NAMES_AGENT, 'p')} = b.designated
       ORDER BY p.created_at DESC, p.id DESC LIMIT @perBucket))
     ORDER BY ord, half, created_at DESC, id DESC`,
  ).all({ ...q, buckets: BUCKETS, perBucket }) as CandidatePackage[];
}

/**
 * The group's current failures packages: the newest `perPriority` of each priority (one seek of
 * the bucket index each), priority first, then newest. What the limit must never pass over for a
 * package of lower priority (core/rank.ts keepFailuresAbove).
 */
export function listGroupFailures(db: DB, q: Pick<EligibilityQuery, 'sessionId' | 'groupId' | 'agentType'>, perPriority: number): CandidatePackage[] {
  const read = stmt(
    db,
    `SELECT ${CANDIDATE_COLUMNS}, 0 AS consumed FROM context_packages cp INDEXED BY ca_idx_cp_group_bucket
     WHERE cp.session_id = @sessionId AND cp.group_id = @groupId AND cp.priority = @priority AND cp.package_type = 'failures' AND ${CANDIDATE}
     ORDER BY cp.created_at DESC, cp.id DESC LIMIT @perPriority`,
  );
  return PRIORITIES.flatMap((priority) => read.all({ sessionId: q.sessionId, groupId: q.groupId, agentType: q.agentType, priority, perPriority }) as CandidatePackage[]);
}

/** A condition on the package alias `cp` (DESIGNATED and the like) written for another alias. */
const asAlias = (condition: string, alias: string) => condition.replace(/\bcp\./g, `${alias}.`);

/** The candidate columns of a row of the union above (each part computed `designated` with its own alias). */
const HEAD_COLUMNS = `id, session_id, group_id, scope, package_type, priority, file_path, summary, size_bytes, created_at, designated, 0 AS consumed`;

/** Every (priority, package type, designated) bucket, in the order the heads are read (JSON, bound as a parameter). */
const BUCKETS = JSON.stringify(PRIORITIES.flatMap((priority) => PACKAGE_TYPES.flatMap((type) => [1, 0].map((designated) => [priority, type, designated]))));

/** The request's current packages among `ids` (packages shown before whose outcome may lift them; the builder's own choice). */
export function listEligibleByIds(db: DB, q: EligibilityQuery, ids: readonly number[]): CandidatePackage[] {
  if (ids.length === 0) return [];
  return stmt(
    db,
    `SELECT ${CANDIDATE_COLUMNS}, 0 AS consumed FROM context_packages cp
     WHERE cp.id IN (SELECT value FROM json_each(@ids)) AND ${IN_SCOPE} AND ${CANDIDATE}
     ORDER BY cp.id`,
  ).all({ ...q, ids: JSON.stringify(ids) }) as CandidatePackage[];
}

/**
 * The request's current packages whose summary, path or indexed artifact paths contain one of
 * `needles`: a superset of those that can name a path under a scope (each needle is a scope's last
 * segment), for when no full-text index can say which do.
 */
export function listPackagesNaming(db: DB, q: EligibilityQuery, needles: readonly string[]): CandidatePackage[] {
  if (needles.length === 0) return [];
  return stmt(
    db,
    `WITH needle(v) AS MATERIALIZED (SELECT value FROM json_each(@needles))
     SELECT ${CANDIDATE_COLUMNS}, 0 AS consumed FROM context_packages cp
     WHERE ${IN_SCOPE} AND ${CANDIDATE}
       AND EXISTS (SELECT 1 FROM needle WHERE instr(cp.summary, needle.v) > 0 OR instr(cp.file_path, needle.v) > 0
                   OR instr((SELECT pp.paths FROM ca_package_paths pp WHERE pp.package_id = cp.id), needle.v) > 0)
     ORDER BY cp.id`,
  ).all({ ...q, needles: JSON.stringify(needles) }) as CandidatePackage[];
}

/**
 * How many packages of the request's scope (group and session-wide, not superseded) there are,
 * whatever their consumer list, consumed or not, counting at most `cap` of each half: the count
 * costs the cap, not the session's size. `capped` says a half reached it (the true count is larger).
 * A request that leaves out what was consumed (--more) has this minus listConsumedPackages().length.
 */
export function countRequestPackages(db: DB, q: Pick<EligibilityQuery, 'sessionId' | 'groupId'>, cap: number): { count: number; capped: boolean } {
  const row = stmt(
    db,
    `SELECT
       (SELECT COUNT(*) FROM (SELECT 1 FROM context_packages cp INDEXED BY ca_idx_cp_group_bucket
        WHERE cp.session_id = @sessionId AND cp.group_id = @groupId AND ${CANDIDATE} LIMIT @cap)) AS g,
       (SELECT COUNT(*) FROM (SELECT 1 FROM context_packages cp INDEXED BY ca_idx_cp_scope_bucket
        WHERE cp.session_id = @sessionId AND cp.scope = 'global' AND (cp.group_id IS NULL OR cp.group_id <> @groupId)
          AND ${CANDIDATE} LIMIT @cap)) AS s`,
  ).get({ sessionId: q.sessionId, groupId: q.groupId, cap }) as { g: number; s: number };
  return { count: row.g + row.s, capped: row.g >= cap || row.s >= cap };
}

/**
 * Packages in the request's scope the agent already consumed at this iteration (left out, and
 * reported as exclusions, by a request for more: --more). Both reads stay inside the session: its scope rows, and the consumer rows of its
 * own packages (looked up by package), never the agent's consumer rows of every session.
 */
export function listConsumedPackages(db: DB, q: EligibilityQuery & { iteration: number }): CandidatePackage[] {
  return stmt(
    db,
    `SELECT ${CANDIDATE_COLUMNS}, 1 AS consumed FROM context_packages cp
     WHERE cp.id IN (SELECT s.package_id FROM consumption_scope s
                     WHERE s.session_id = @sessionId AND s.agent_type = @agentType AND s.iteration = @iteration
                     UNION
                     SELECT p.id FROM context_packages p INDEXED BY idx_cp_session
                     WHERE p.session_id = @sessionId
                       AND EXISTS (SELECT 1 FROM context_package_consumers c INDEXED BY idx_cpc_package
                                   WHERE c.package_id = p.id AND c.agent_type = @agentType
                                     AND c.consumed_at IS NOT NULL AND c.iteration = @iteration))
       AND ${IN_SCOPE} AND ${CANDIDATE}
     ORDER BY cp.id`,
  ).all(q) as CandidatePackage[];
}

/** A package of the request's scope found by the full-text index: BM25 (lower is better). */
export type SearchedPackage = CandidatePackage & { bm25: number };

/**
 * The request's packages (session; group or session-wide; not superseded) that match a MATCH
 * expression over `ca_fts_packages`, at most `limit`: the best BM25 first (ties: newest id), or,
 * with `newest`, the newest first and no BM25 computed (a filter, not a ranking). Each says whether
 * the agent is a designated consumer (only the rows returned are checked, so that cost is bounded
 * by `limit`); whether it was consumed at this iteration is the caller's to check against
 * `listConsumedPackages`. Column weights: summary,
 * artifact text, path. The session is a condition on the package, not part of the MATCH: FTS5's
 * bm25() counts the documents of every phrase it is given, and a session holds them all. The match
 * is held to the session's range of package ids (FTS5 reads only that part of each term's
 * document list), so its cost follows the session, not every session's packages.
 */
export function searchRequestPackages(
  db: DB,
  q: EligibilityQuery & { iteration: number },
  search: { match: TextMatch; weights: { summary: number; artifact: number; path: number }; limit: number; newest?: boolean },
): SearchedPackage[] {
  const range = sessionIdRange(db, 'context_packages', q.sessionId);
  if (range === undefined) return [];
  // Newest first by the index's own rowid order: FTS5 then stops at `limit` instead of reading
  // every match of the session's band to sort it (a phrase of common words: 45 ms at 1M).
  const order = search.newest ? 'f.rowid DESC' : 'bm25, cp.id DESC';
  const score = search.newest ? '0.0' : 'bm25(ca_fts_packages, @ws, @wa, @wp)';
  return stmt(
    db,
    `WITH top AS (
       SELECT cp.id AS id, ${score} AS bm25 FROM ca_fts_packages f CROSS JOIN context_packages cp ON cp.id = f.rowid
       WHERE ca_fts_packages MATCH @match AND f.rowid >= @lo AND f.rowid <= @hi
         AND cp.session_id = @sessionId AND (cp.group_id = @groupId OR cp.scope = 'global') AND cp.supersedes_id IS NULL AND cp.summary <> ''
       ORDER BY ${order} LIMIT @limit)
     SELECT ${CANDIDATE_COLUMNS}, 0 AS consumed, top.bm25 AS bm25
     FROM top JOIN context_packages cp ON cp.id = top.id
     ORDER BY ${search.newest ? 'cp.id DESC' : 'top.bm25, cp.id DESC'}`,
  ).all({
    ...q,
    match: search.match,
    ...range,
    ...(search.newest ? {} : { ws: search.weights.summary, wa: search.weights.artifact, wp: search.weights.path }),
    limit: search.limit,
  }) as SearchedPackage[];
}

/**
 * The smallest and largest id of a session's rows, or undefined when it has none: for packages
 * two seeks on idx_cp_session (session_id, id); for logs, whose session indexes order by time,
 * a read of the session's own index entries. A session's rows are written while it runs, so
 * their ids are a narrow band of a table that holds every session.
 */
export function sessionIdRange(db: DB, table: 'context_packages' | 'orchestration_logs', sessionId: string): { lo: number; hi: number } | undefined {
  const sql =
    table === 'context_packages'
      ? `SELECT (SELECT MIN(id) FROM context_packages WHERE session_id = @s) AS lo, (SELECT MAX(id) FROM context_packages WHERE session_id = @s) AS hi`
      : 'SELECT MIN(id) AS lo, MAX(id) AS hi FROM orchestration_logs WHERE session_id = @s';
  const r = stmt(db, sql).get({ s: sessionId }) as { lo: number | null; hi: number | null };
  return r.lo === null || r.hi === null ? undefined : { lo: r.lo, hi: r.hi };
}

/** The summary of the newest package of a type in a group (for example its latest failures report). */
export function findLatestSummary(db: DB, sessionId: string, groupId: string, packageType: string): string | undefined {
  // The newest of each priority's bucket (one index seek each), then the newest of those.
  const newest = stmt(
    db,
    `SELECT summary, created_at, id FROM context_packages INDEXED BY ca_idx_cp_group_bucket
     WHERE session_id = ? AND group_id = ? AND priority = ? AND package_type = ? AND supersedes_id IS NULL
     ORDER BY created_at DESC, id DESC LIMIT 1`,
  );
  let best: { summary: string; created_at: string | null; id: number } | undefined;
  for (const priority of PRIORITIES) {
    const row = newest.get(sessionId, groupId, priority, packageType) as typeof best;
    if (row && (!best || (row.created_at ?? '') > (best.created_at ?? '') || ((row.created_at ?? '') === (best.created_at ?? '') && row.id > best.id))) best = row;
  }
  return best?.summary;
}
