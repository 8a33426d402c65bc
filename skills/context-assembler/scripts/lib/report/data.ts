/**
 * What `report` shows, read from one database (read-only, nothing written): the assembly record
 * (ca_assemblies) beside BAZINGA's own tables (sessions, task_groups, context_packages, the
 * consumption tables, error_patterns), for one session or a project's last N sessions. Every text
 * that reaches the report passes the redaction engine here, once, so JSON, markdown and HTML carry
 * the same redacted texts. The four success metrics of the strategy the product comes from are
 * computed in metrics.ts.
 */
import {
  findReportSession,
  getProjectScope,
  hasAssemblyRecord,
  listAssemblies,
  listItemRows,
  listLatestSessionIds,
  listReportGroups,
  listReportPackages,
  listScopePatterns,
  mergeFaults,
  oneLine,
  redactText,
  shorten,
  withFaultKeys,
  withLearning,
  type AssemblyRow,
  type DB,
  type FaultedPattern,
  type ItemIds,
  type MergedFault,
  type ProjectScope,
  type ReportGroupRow,
  type ReportPackageRow,
} from '../../../../bazinga-db/scripts/lib/index.ts';
import { DEFAULT_CONFIG, lookupByModel, type Config } from '../config.ts';
import { PRODUCT_VERSION, type AssemblyDetail } from '../record.ts';
import type { FloorLeftOut } from '../core/floor.ts';
import { computeMetrics, type Metric } from './metrics.ts';

/** A record as the report shows it: its columns (redacted, figures made numbers), and what they imply. */
export type SpawnReport = Pick<
  AssemblyRow,
  'id' | 'group_id' | 'iteration' | 'source' | 'outcome' | 'reason' | 'purpose' | 'zone' | 'usage_pct' | 'budget' | 'used_tokens' | 'overrun' | 'prompt_tokens' | 'duration_ms' | 'version'
> & {
  /** created_at */
  at: string;
  /** agent_type */
  agent: string;
  /** The model's context window the prompt is measured against (prompt hook records only). */
  model_window: number | null;
  /** How the group's iteration the spawn served ended (see verdictOf). */
  verdict: string;
  sections: AssemblyDetail['sections'] | null;
  shown: (AssemblyDetail['shown'][number] & Titled)[];
  left_out: (AssemblyDetail['left_out'][number] & Titled)[];
  left_out_counts: Record<string, number>;
  query: AssemblyDetail['query'];
  delivered: number[];
  /** What BAZINGA's own section would have shown and what of it the block did not hold (null: a record before this version). */
  builder: { items: number; left_out: (FloorLeftOut & Titled)[] } | null;
};

/** An item's line as a reader knows it (a package's summary, a reasoning entry's agent, phase and opening words, …), redacted; null when its row is gone. */
export interface Titled {
  title: string | null;
}

/** A task group as the report shows it (redacted), with its iterations and spawns on record. */
export type GroupReport = ReportGroupRow & {
  /** revision_count + 1: the iterations the group has been through (see metrics.ts). */
  iterations: number;
  spawns: number[];
  /** The spawns on record per agent type (this product's records; qa_attempts and tl_review_attempts are BAZINGA's own counters). */
  spawns_by_agent: Record<string, number>;
};

/** A package no agent was given. */
export type PackageLine = Omit<ReportPackageRow, 'delivered'>;

export interface FailureSignature {
  /** The row that stands for the fault (its most confident). */
  pattern_hash: string;
  /** The fault's key: the id a spawn's items name the pattern by. */
  fault_hash: string;
  error_type: string;
  message: string;
  occurrences: number;
  last_seen: string | null;
}

export interface SessionReport {
  session_id: string;
  /** The session's project id (`default` when its metadata records none). */
  project_id: string;
  /** Set when it records none: its patterns and strategies are every project's (bazinga-db ProjectScope). */
  whole_database?: boolean;
  start_time: string | null;
  status: string | null;
  /** Whether the database holds the assembly record at all (a writer of this version opened it). */
  record_kept: boolean;
  groups: GroupReport[];
  spawns: SpawnReport[];
  packages_total: number;
  packages_delivered: number;
  never_delivered: PackageLine[];
  repeated_failures: FailureSignature[];
  fallbacks: number[];
}

export interface ReportData {
  report_version: 1;
  product_version: string;
  generated_at: string;
  database: string;
  sessions: SessionReport[];
  metrics: Metric[];
}

// Every text from the database passes the redaction engine here (ids too: a session, group or
// project id can hold anything), and every figure is made a number: a column that SQLite typed as
// text, or a hand-edited `detail`, never reaches a page as markup.
// Texts repeat across a session's records (agents, zones, query terms, reasons): each is redacted once.
const redacted = new Map<string, string>();
const redactOnce = (t: string): string => {
  let out = redacted.get(t);
  if (out === undefined) {
    if (redacted.size > 100_000) redacted.clear();
    redacted.set(t, (out = redactText(t)));
  }
  return out;
};
const r = (t: unknown): string | null => (t === null || t === undefined ? null : redactOnce(String(t)));
const rs = (t: unknown): string => redactOnce(t === null || t === undefined ? '' : String(t));
const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : Number.isFinite(Number(x)) ? Number(x) : 0);
const numOrNull = (x: unknown): number | null => (x === null || x === undefined ? null : num(x));
const itemId = (id: unknown): number | string => (typeof id === 'number' && Number.isFinite(id) ? id : rs(id));

/** The sessions to report: the one named, or the project's last `last` by start time (newest first). */
export function sessionsToReport(db: DB, session: string | null, last: number): string[] {
  return session !== null ? [session] : listLatestSessionIds(db, last);
}

/** Everything the report shows for `sessionIds` (each must exist: checked by the caller). */
export function gatherReport(db: DB, sessionIds: readonly string[], opts: { database: string; now: Date; config?: Config }): ReportData {
  const config = opts.config ?? DEFAULT_CONFIG;
  const recordKept = hasAssemblyRecord(db);
  // Each session's patterns as the assembler reads them (bazinga-db ProjectScope).
  const sessions = sessionIds.map((id) => ({ id, scope: getProjectScope(db, id) }));
  const reports = sessions.map((x) => sessionReport(db, x.id, x.scope, recordKept, config));
  const faults = faultsOfScopes(db, sessions.map((x) => x.scope));
  return {
    report_version: 1,
    product_version: PRODUCT_VERSION,
    generated_at: opts.now.toISOString(),
    database: rs(opts.database),
    sessions: reports,
    metrics: computeMetrics(reports, { patterns: faults.length, repeated: faults.filter((f) => f.occurrences >= 2).length }),
  };
}

/**
 * The error patterns the sessions read, one per fault (bazinga-db patternFaults.ts mergeFaults: the
 * rows of one fault as one, their occurrences summed): every project's when one of the sessions
 * records no project id, else each project's own (a fault met in two projects is two); each row
 * with what this layer learnt of it (repo/patternLearning.ts).
 */
export function faultsOfScopes(db: DB, scopes: readonly ProjectScope[]): MergedFault<FaultedPattern>[] {
  const whole = scopes.find((s) => s.wholeDatabase);
  const read = whole ? [whole] : [...new Map(scopes.map((s) => [s.projectId, s])).values()];
  return read.flatMap((scope) => mergeFaults(withFaultKeys(db, withLearning(db, listScopePatterns(db, scope)))));
}

function sessionReport(db: DB, sessionId: string, scope: ProjectScope, recordKept: boolean, config: Config): SessionReport {
  const s = findReportSession(db, sessionId);
  const groupRows = listReportGroups(db, sessionId);
  // Keyed by the groups' own ids: two that redact alike stay two.
  const groups = new Map<string, GroupReport>(
    groupRows.map((g) => [
      String(g.id),
      {
        id: rs(g.id),
        name: rs(g.name),
        status: r(g.status),
        revision_count: num(g.revision_count),
        last_review_status: r(g.last_review_status),
        qa_attempts: num(g.qa_attempts),
        tl_review_attempts: num(g.tl_review_attempts),
        iterations: num(g.revision_count) + 1,
        spawns: [],
        spawns_by_agent: {},
      },
    ]),
  );
  const rows = recordKept ? listAssemblies(db, sessionId) : [];
  const spawns = rows.map((row) => {
    const group = row.group_id === null ? undefined : groups.get(String(row.group_id));
    const sp = spawnReport(row, group, config);
    group?.spawns.push(sp.id);
    if (group) group.spawns_by_agent[sp.agent] = (group.spawns_by_agent[sp.agent] ?? 0) + 1;
    return sp;
  });
  withTitles(db, spawns);
  const packages = listReportPackages(db, sessionId);
  // Given to an agent: recorded as consumed, or shown by a block that reached its prompt (a zone that
  // records no consumption still shows packages).
  const shownIds = new Set(spawns.filter((sp) => sp.outcome !== 'left' && sp.outcome !== 'fallback').flatMap((sp) => sp.shown.filter((x) => x.kind === 'package').map((x) => x.id)));
  const never = packages.filter((p) => !p.delivered && !shownIds.has(num(p.id)));
  // The faults seen twice or more (in one row or in several), most often first (at most 50).
  const failures = faultsOfScopes(db, [scope])
    .filter((f) => f.occurrences >= 2)
    .sort((a, b) => b.occurrences - a.occurrences || (a.last_seen === b.last_seen ? 0 : a.last_seen < b.last_seen ? 1 : -1) || (a.fault_hash < b.fault_hash ? -1 : 1))
    .slice(0, 50);
  return {
    session_id: rs(sessionId),
    project_id: rs(scope.projectId),
    ...(scope.wholeDatabase ? { whole_database: true } : {}),
    start_time: r(s?.start_time ?? null),
    status: r(s?.status ?? null),
    record_kept: recordKept,
    groups: [...groups.values()],
    spawns,
    packages_total: packages.length,
    packages_delivered: packages.length - never.length,
    never_delivered: never.map((p) => ({ id: num(p.id), group_id: r(p.group_id), package_type: rs(p.package_type), priority: rs(p.priority), file_path: rs(p.file_path), summary: rs(p.summary) })),
    repeated_failures: failures.map((f) => {
      // An unreadable signature: shown by its hash.
      const sig = signatureFields(f.signature_json);
      return { pattern_hash: rs(f.pattern_hash), fault_hash: rs(f.fault_hash), error_type: rs(sig.error_type), message: rs(sig.message_pattern), occurrences: num(f.occurrences), last_seen: r(f.last_seen) };
    }),
    fallbacks: spawns.filter((sp) => sp.outcome === 'fallback' || sp.outcome === 'left').map((sp) => sp.id),
  };
}

/**
 * How the iteration a spawn served ended, from BAZINGA's task_groups row: an iteration below the
 * group's revision_count went back to the developer ("revised"); the current one shows
 * last_review_status (APPROVED, CHANGES_REQUESTED), else "completed" for a completed group, else
 * "open". A spawn without a group (session-wide) has none ("-").
 */
export function verdictOf(iteration: number, group: GroupReport | undefined): string {
  if (group === undefined) return '-';
  if (iteration < group.revision_count) return 'revised';
  if (group.last_review_status) return group.last_review_status;
  return group.status === 'completed' ? 'completed' : 'open';
}

function spawnReport(row: AssemblyRow, group: GroupReport | undefined, config: Config): SpawnReport {
  const detail = detailOf(row.detail);
  const q = detail.query;
  const query = q ? { source: rs(q.source), terms: (q.terms ?? []).map(rs), scope: (q.scope ?? []).map(rs), scope_source: rs(q.scope_source) } : null;
  const sections = detail.sections
    ? {
        packages: num(detail.sections.packages),
        reasoning: num(detail.sections.reasoning),
        error_patterns: num(detail.sections.error_patterns),
        strategies: num(detail.sections.strategies),
        memories: num(detail.sections.memories),
      }
    : null;
  return {
    id: num(row.id),
    at: rs(row.created_at),
    group_id: r(row.group_id),
    agent: rs(row.agent_type),
    iteration: num(row.iteration),
    source: rs(row.source) as AssemblyRow['source'],
    outcome: rs(row.outcome) as AssemblyRow['outcome'],
    reason: r(row.reason),
    purpose: r(row.purpose),
    zone: r(row.zone),
    usage_pct: numOrNull(row.usage_pct),
    budget: numOrNull(row.budget),
    used_tokens: numOrNull(row.used_tokens),
    overrun: num(row.overrun),
    prompt_tokens: numOrNull(row.prompt_tokens),
    model_window: row.prompt_tokens === null ? null : lookupByModel(config.model_context_windows, typeof detail.model === 'string' ? detail.model : 'default'),
    duration_ms: num(row.duration_ms),
    version: rs(row.version),
    verdict: verdictOf(num(row.iteration), group),
    sections,
    shown: (detail.shown ?? []).map((x) => ({
      kind: rs(x.kind) as typeof x.kind,
      id: itemId(x.id),
      tier: numOrNull(x.tier) as typeof x.tier,
      tokens: numOrNull(x.tokens),
      title: null,
      ...(typeof x.provenance === 'string' ? { provenance: rs(x.provenance) } : {}),
      ...(x.standing === 'held' || x.standing === 'contradicted' ? { standing: x.standing } : {}),
      ...(typeof x.standing_by === 'string' ? { standing_by: rs(x.standing_by) } : {}),
    })),
    left_out: (detail.left_out ?? []).map((x) => ({ kind: rs(x.kind) as typeof x.kind, id: itemId(x.id), reason: rs(x.reason) as typeof x.reason, tier: numOrNull(x.tier) as typeof x.tier, title: null })),
    left_out_counts: Object.fromEntries(Object.entries(detail.left_out_counts ?? {}).map(([k, v]) => [rs(k), num(v)])),
    query,
    delivered: (detail.delivered ?? []).map(num),
    builder: detail.builder ? { items: num(detail.builder.items), left_out: detail.builder.left_out.map((x) => ({ kind: rs(x.kind) as typeof x.kind, id: itemId(x.id), reason: rs(x.reason) as typeof x.reason, title: null })) } : null,
  };
}

/**
 * A record's `detail` as the report reads it: each part taken only when it has the shape this
 * version writes (a hand-edited or foreign value is left out, never fatal).
 */
function detailOf(text: unknown): Partial<AssemblyDetail> {
  let v: unknown;
  try {
    v = JSON.parse(String(text));
  } catch {
    return {};
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return {};
  const d = v as Record<string, unknown>;
  const obj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);
  const items = (x: unknown) => (Array.isArray(x) ? x.filter(obj) : []);
  const strings = (x: unknown) => (Array.isArray(x) ? x.filter((t): t is string => typeof t === 'string') : []);
  const out: Partial<AssemblyDetail> = {
    shown: items(d.shown) as unknown as AssemblyDetail['shown'],
    left_out: items(d.left_out) as unknown as AssemblyDetail['left_out'],
    left_out_counts: (obj(d.left_out_counts) ? d.left_out_counts : {}) as AssemblyDetail['left_out_counts'],
    delivered: (Array.isArray(d.delivered) ? d.delivered : []) as number[],
  };
  if (obj(d.sections)) out.sections = d.sections as unknown as AssemblyDetail['sections'];
  if (obj(d.query)) out.query = { source: String(d.query.source ?? ''), terms: strings(d.query.terms), scope: strings(d.query.scope), scope_source: String(d.query.scope_source ?? '') };
  if (typeof d.model === 'string') out.model = d.model;
  if (obj(d.builder) && typeof d.builder.items === 'number') out.builder = { items: d.builder.items, left_out: items(d.builder.left_out) as unknown as FloorLeftOut[] };
  return out;
}

/** A stored signature's error type and message as the report reads them: none from one that does not parse. */
function signatureFields(json: string): { error_type?: unknown; message_pattern?: unknown } {
  try {
    return JSON.parse(json) ?? {};
  } catch {
    return {};
  }
}

/** How long an item's line may be in the report (code points; shortened, never cut blind). */
const TITLE_CHARS = 160;

/**
 * Each item a spawn names (shown, left out, BAZINGA's own left out) gets its line, read from the
 * rows the record's ids point to, in one read per kind (bazinga-db listItemRows): a package's
 * priority, type and summary; a reasoning entry's agent, phase, iteration and opening words; an
 * error pattern's error and fix (its most confident row); a strategy's topic and insight; a
 * memory's type and title. Redacted like every text of the report; an item whose row is gone keeps
 * a null title (the report says so).
 */
function withTitles(db: DB, spawns: readonly SpawnReport[]): void {
  const items = spawns.flatMap((sp) => [...sp.shown, ...sp.left_out, ...(sp.builder?.left_out ?? [])]);
  if (items.length === 0) return;
  const idsOf = <T>(kind: string, as: (id: number | string) => T | null) => [...new Set(items.filter((x) => x.kind === kind).map((x) => as(x.id)).filter((x): x is T => x !== null))];
  const asNumber = (id: number | string) => (typeof id === 'number' ? id : /^\d+$/.test(id) ? Number(id) : null);
  const ids: ItemIds = {
    packages: idsOf('package', asNumber),
    reasoning: idsOf('reasoning', asNumber),
    patterns: idsOf('error_pattern', (id) => String(id)),
    strategies: idsOf('strategy', (id) => String(id)),
    memories: idsOf('memory', asNumber),
  };
  const rows = listItemRows(db, ids);
  const line = (t: string) => rs(shorten(oneLine(t), TITLE_CHARS));
  const titles = new Map<string, string>();
  for (const p of rows.packages) titles.set(`package:${p.id}`, line(`${p.priority} ${p.package_type}: ${p.summary}`));
  for (const e of rows.reasoning) titles.set(`reasoning:${e.id}`, line(`${e.agent_type} ${e.reasoning_phase ?? 'reasoning'}${e.iteration === null ? '' : `, iteration ${e.iteration}`}: ${e.content}`));
  for (const p of rows.patterns) {
    if (titles.has(`error_pattern:${p.key}`)) continue;
    const sig = signatureFields(p.signature_json);
    const error = typeof sig.message_pattern === 'string' && sig.message_pattern !== '' ? `${String(sig.error_type ?? 'error')}: ${sig.message_pattern}` : '(its stored signature is unreadable)';
    titles.set(`error_pattern:${p.key}`, line(`${error} → fix: ${p.solution}`));
  }
  for (const st of rows.strategies) titles.set(`strategy:${st.strategy_id}`, line(`${st.topic}: ${st.insight}`));
  for (const m of rows.memories) titles.set(`memory:${m.id}`, line(`${m.type}: ${m.title}`));
  for (const x of items) x.title = titles.get(`${x.kind}:${x.id}`) ?? null;
}
