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
  hasAssemblyRecord,
  listAssemblies,
  listLatestSessionIds,
  listRepeatedPatterns,
  listReportGroups,
  listReportPackages,
  redactText,
  type AssemblyRow,
  type DB,
} from '../../../../bazinga-db/scripts/lib/index.ts';
import { DEFAULT_CONFIG, lookupByModel, type Config } from '../config.ts';
import { PRODUCT_VERSION, type AssemblyDetail } from '../record.ts';
import { computeMetrics, type Metric } from './metrics.ts';

export interface SpawnReport {
  id: number;
  at: string;
  group_id: string | null;
  agent: string;
  iteration: number;
  source: AssemblyRow['source'];
  outcome: AssemblyRow['outcome'];
  reason: string | null;
  purpose: string | null;
  zone: string | null;
  usage_pct: number | null;
  budget: number | null;
  used_tokens: number | null;
  overrun: number;
  prompt_tokens: number | null;
  /** The model's context window the prompt is measured against (prompt hook records only). */
  model_window: number | null;
  duration_ms: number;
  version: string;
  /** How the group's iteration the spawn served ended (see verdictOf). */
  verdict: string;
  sections: AssemblyDetail['sections'] | null;
  shown: AssemblyDetail['shown'];
  left_out: AssemblyDetail['left_out'];
  left_out_counts: Record<string, number>;
  query: AssemblyDetail['query'];
  delivered: number[];
}

export interface GroupReport {
  id: string;
  name: string;
  status: string | null;
  revision_count: number;
  last_review_status: string | null;
  qa_attempts: number;
  tl_review_attempts: number;
  /** revision_count + 1: the iterations the group has been through (see metrics.ts). */
  iterations: number;
  spawns: number[];
}

export interface PackageLine {
  id: number;
  group_id: string | null;
  package_type: string;
  priority: string;
  file_path: string;
  summary: string;
}

export interface FailureSignature {
  pattern_hash: string;
  error_type: string;
  message: string;
  occurrences: number;
  last_seen: string | null;
}

export interface SessionReport {
  session_id: string;
  project_id: string;
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

const r = (t: string | null): string | null => (t === null ? null : redactText(t));
const rs = (t: string | null | undefined): string => redactText(t ?? '');

/** The sessions to report: the one named, or the project's last `last` by start time (newest first). */
export function sessionsToReport(db: DB, session: string | null, last: number): string[] {
  return session !== null ? [session] : listLatestSessionIds(db, last);
}

/** Everything the report shows for `sessionIds` (each must exist: checked by the caller). */
export function gatherReport(db: DB, sessionIds: readonly string[], opts: { database: string; now: Date; config?: Config }): ReportData {
  const config = opts.config ?? DEFAULT_CONFIG;
  const recordKept = hasAssemblyRecord(db);
  const sessions = sessionIds.map((id) => sessionReport(db, id, recordKept, config));
  return {
    report_version: 1,
    product_version: PRODUCT_VERSION,
    generated_at: opts.now.toISOString(),
    database: opts.database,
    sessions,
    metrics: computeMetrics(sessions, db),
  };
}

function sessionReport(db: DB, sessionId: string, recordKept: boolean, config: Config): SessionReport {
  const s = findReportSession(db, sessionId);
  let projectId = 'default';
  try {
    const pid = JSON.parse(s?.metadata ?? '{}')?.project_id;
    if (typeof pid === 'string' && pid !== '') projectId = pid;
  } catch {
    // no project id: 'default', as the assembler reads it
  }
  const groupRows = listReportGroups(db, sessionId);
  const groups = new Map<string, GroupReport>(
    groupRows.map((g) => [
      g.id,
      { id: g.id, name: rs(g.name), status: g.status, revision_count: g.revision_count, last_review_status: g.last_review_status, qa_attempts: g.qa_attempts, tl_review_attempts: g.tl_review_attempts, iterations: g.revision_count + 1, spawns: [] },
    ]),
  );
  const rows = recordKept ? listAssemblies(db, sessionId) : [];
  const spawns = rows.map((row) => spawnReport(row, groups.get(row.group_id ?? ''), config));
  for (const sp of spawns) if (sp.group_id !== null) groups.get(sp.group_id)?.spawns.push(sp.id);
  // Delivered: a consumption row (any agent, any iteration), or a consumer row marked consumed.
  const packages = listReportPackages(db, sessionId);
  const never = packages.filter((p) => !p.delivered);
  const failures = listRepeatedPatterns(db, projectId, 50);
  return {
    session_id: sessionId,
    project_id: projectId,
    start_time: s?.start_time ?? null,
    status: s?.status ?? null,
    record_kept: recordKept,
    groups: [...groups.values()],
    spawns,
    packages_total: packages.length,
    packages_delivered: packages.length - never.length,
    never_delivered: never.map((p) => ({ id: p.id, group_id: p.group_id, package_type: p.package_type, priority: p.priority, file_path: rs(p.file_path), summary: rs(p.summary) })),
    repeated_failures: failures.map((f) => {
      let sig: { error_type?: unknown; message_pattern?: unknown } = {};
      try {
        sig = JSON.parse(f.signature_json) ?? {};
      } catch {
        // an unreadable signature: shown by its hash
      }
      return { pattern_hash: f.pattern_hash, error_type: rs(String(sig.error_type ?? '')), message: rs(String(sig.message_pattern ?? '')), occurrences: f.occurrences, last_seen: f.last_seen };
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
  let detail: Partial<AssemblyDetail> = {};
  try {
    detail = JSON.parse(row.detail) as Partial<AssemblyDetail>;
  } catch {
    detail = {};
  }
  const query = detail.query ? { ...detail.query, terms: detail.query.terms.map(rs), scope: detail.query.scope.map(rs) } : null;
  return {
    id: row.id,
    at: row.created_at,
    group_id: row.group_id,
    agent: row.agent_type,
    iteration: row.iteration,
    source: row.source,
    outcome: row.outcome,
    reason: r(row.reason),
    purpose: row.purpose,
    zone: row.zone,
    usage_pct: row.usage_pct,
    budget: row.budget,
    used_tokens: row.used_tokens,
    overrun: row.overrun,
    prompt_tokens: row.prompt_tokens,
    model_window: row.prompt_tokens === null ? null : lookupByModel(config.model_context_windows, detail.model ?? 'default'),
    duration_ms: row.duration_ms,
    version: row.version,
    verdict: verdictOf(row.iteration, group),
    sections: detail.sections ?? null,
    shown: (detail.shown ?? []).map((x) => ({ ...x, id: typeof x.id === 'string' ? rs(x.id) : x.id })),
    left_out: (detail.left_out ?? []).map((x) => ({ ...x, id: typeof x.id === 'string' ? rs(x.id) : x.id })),
    left_out_counts: detail.left_out_counts ?? {},
    query,
    delivered: detail.delivered ?? [],
  };
}

