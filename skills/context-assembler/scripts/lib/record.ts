/**
 * The assembly record (bazinga-db's ca_assemblies): what one recording assembly gave a spawn, made
 * from the final document. Written in the write transaction that records the packages it delivers
 * (pipeline.ts), in one of its own when it delivers none, by the prompt hook with the prompt's size
 * once the block is placed (wiring/promptHook.ts), and for a recording call that fell back (best
 * effort: shell.ts). Dry runs and reads write none. The report reads it (report/).
 *
 * Every text in it comes from the document, which the steps redacted already (the query's text and
 * terms, ids, reasons); a fallback's reason is redacted here.
 *
 * A request the launcher sent the warm assembler carries a key (Delivery): the server's run records
 * under it only when no run of the request recorded first, and the caller's own run, after the
 * server gave no answer, takes the place of what the server recorded (settleDelivery). So a
 * delivery is recorded once, by the run whose block was printed.
 */
import { packageProvenance, patternProvenance, reasoningProvenance, strategyProvenance } from './core/standing.ts';
import {
  deleteAssembly,
  findAssemblyByKey,
  findPackage,
  hasAssemblyRecord,
  insertAssembly,
  openDatabase,
  redactText,
  unmarkPackageConsumed,
  writeTransaction,
  type AssemblyRecord,
  type DB,
} from '../../../bazinga-db/scripts/lib/index.ts';
import type { AssemblyDoc, Exclusion } from './contract.ts';
import type { ItemKind, Tier } from './core/tiers.ts';
import { floorLeftOut, type FloorLeftOut } from './core/floor.ts';

/** The product's version, as package.json and the plugin manifest give it (a test keeps the three equal). */
export const PRODUCT_VERSION = '0.1.0';

/** Items left out listed one by one, at most (the rest are counted per reason). */
export const LEFT_OUT_LISTED = 50;

/** What the record holds beyond its columns (the `detail` JSON). */
export interface AssemblyDetail {
  /** Tokens each section of the block used. */
  sections: { packages: number; reasoning: number; error_patterns: number; strategies: number; memories: number };
  /** Every item shown, in the block's order within its kind. */
  shown: {
    kind: ItemKind;
    id: number | string;
    tier: Tier | null;
    tokens: number | null;
    /** Where it came from, compact (core/standing.ts), whether or not the block showed it; absent when nothing is known. */
    provenance?: string;
    /** Its standing when the spawn was given it (absent: unreviewed), and what held or contradicted it. */
    standing?: 'held' | 'contradicted';
    standing_by?: string;
  }[];
  /** The first LEFT_OUT_LISTED items left out, with why. */
  left_out: { kind: ItemKind; id: number | string; reason: Exclusion['reason']; tier: Tier | null }[];
  /** Everything left out, counted per reason. */
  left_out_counts: Record<string, number>;
  /** The query relevance ranked by (redacted, as the document holds it). */
  query: { source: string; terms: string[]; scope: string[]; scope_source: string } | null;
  /** Packages delivered and recorded (ids). */
  delivered: number[];
  /**
   * What BAZINGA's own prompt builder would have shown this spawn (and the work under review): how
   * many items, and those the block did not hold, with why (core/floor.ts). Absent before this version.
   */
  builder?: { items: number; left_out: FloorLeftOut[] };
  /** The model the spawn runs on (the prompt size is measured against its context window). */
  model: string;
  /**
   * The error text the spawn was given (--error, or a retry's qa_feedback and tl_feedback), redacted
   * and cut to ERROR_CHARS: the failure the capture learns from (bazinga-db capture.ts).
   */
  error?: string;
}

/** The most characters of a request's error text kept on record. */
export const ERROR_CHARS = 4000;

export interface RecordMeta {
  source: AssemblyRecord['source'];
  durationMs: number;
  /** The builder's estimate of the prompt with the block in it (the prompt hook only). */
  promptTokens?: number | null;
  /** The prompt hook's outcome when it did not place the block ('left', with why). */
  outcome?: AssemblyRecord['outcome'];
  reason?: string | null;
}

const tierOf = (item: { tier?: Tier }): Tier | null => item.tier ?? null;

/** An item's provenance and standing as its record keeps them (fields left out when not known). */
function provenanceOf(text: string | null, s: { standing?: 'held' | 'contradicted'; standing_by?: string }): Pick<AssemblyDetail['shown'][number], 'provenance' | 'standing' | 'standing_by'> {
  return { ...(text !== null ? { provenance: text } : {}), ...(s.standing ? { standing: s.standing } : {}), ...(s.standing_by ? { standing_by: s.standing_by } : {}) };
}

/** The record of a final (consume step) document. Pure. */
export function assemblyRecord(doc: AssemblyDoc, meta: RecordMeta): AssemblyRecord {
  // A block the prompt hook did not place reached no agent: nothing of it is on record as shown.
  const placed = meta.outcome !== 'left';
  const packages = placed ? (doc.packages ?? []) : [];
  const entries = placed ? (doc.reasoning?.entries ?? []) : [];
  const patterns = placed ? (doc.error_patterns ?? []) : [];
  const strategies = placed ? (doc.strategies ?? []) : [];
  const memories = placed ? (doc.memories ?? []) : [];
  const sum = (xs: readonly { tokens?: number }[]) => xs.reduce((a, x) => a + (x.tokens ?? 0), 0);
  const excluded = doc.excluded ?? [];
  const counts: Record<string, number> = {};
  for (const e of excluded) counts[e.reason] = (counts[e.reason] ?? 0) + 1;
  const q = doc.query;
  const detail: AssemblyDetail = {
    sections: {
      packages: placed ? (doc.packages_tokens ?? sum(packages)) : 0,
      reasoning: placed ? (doc.reasoning?.used_tokens ?? 0) : 0,
      error_patterns: sum(patterns),
      strategies: sum(strategies),
      memories: sum(memories),
    },
    shown: [
      ...packages.map((p) => ({ kind: 'package' as const, id: p.id, tier: tierOf(p), tokens: p.tokens, ...provenanceOf(packageProvenance(p), p) })),
      ...entries.map((e) => ({ kind: 'reasoning' as const, id: e.id, tier: tierOf(e), tokens: e.tokens, ...provenanceOf(reasoningProvenance(e), e) })),
      ...patterns.map((p) => ({ kind: 'error_pattern' as const, id: p.fault_hash, tier: tierOf(p), tokens: p.tokens ?? null, ...provenanceOf(patternProvenance(p), {}) })),
      ...strategies.map((s) => ({ kind: 'strategy' as const, id: s.strategy_id, tier: tierOf(s), tokens: s.tokens ?? null, ...provenanceOf(strategyProvenance(s), {}) })),
      ...memories.map((m) => ({ kind: 'memory' as const, id: m.id, tier: tierOf(m), tokens: m.tokens ?? null })),
    ],
    left_out: excluded.slice(0, LEFT_OUT_LISTED).map((e) => ({ kind: e.kind, id: e.id, reason: e.reason, tier: e.tier ?? null })),
    left_out_counts: counts,
    query: q ? { source: q.source, terms: q.terms, scope: q.scope, scope_source: q.scope_source } : null,
    delivered: placed ? (doc.consumed ?? []) : [],
    ...(doc.floor ? { builder: { items: doc.floor.packages.length + doc.floor.reasoning.length + doc.floor.error_patterns.length, left_out: placed ? floorLeftOut(doc) : [] } } : {}),
    model: doc.request.model,
    ...(doc.request.error ? { error: Array.from(redactText(doc.request.error)).slice(0, ERROR_CHARS).join('') } : {}),
  };
  const consumption = doc.consumption;
  const outcome: AssemblyRecord['outcome'] =
    meta.outcome ?? (consumption === 'recorded' || consumption === 'unrecorded' || consumption === 'skipped-zone' ? consumption : 'nothing-delivered');
  const r = doc.request;
  return {
    created_at: r.now,
    session_id: r.session,
    group_id: r.group,
    agent_type: r.agent,
    iteration: r.iteration,
    source: meta.source,
    outcome,
    reason: meta.reason === undefined || meta.reason === null ? null : redactText(meta.reason),
    purpose: doc.purpose ?? null,
    zone: doc.zone,
    usage_pct: doc.usage_pct,
    budget: doc.context_budget,
    used_tokens: !placed ? 0 : (doc.truncation?.used ?? detail.sections.packages + detail.sections.reasoning),
    overrun: placed ? (doc.truncation?.overrun ?? 0) : 0,
    prompt_tokens: meta.promptTokens ?? null,
    duration_ms: Math.round(meta.durationMs * 10) / 10,
    version: PRODUCT_VERSION,
    detail: JSON.stringify(detail),
  };
}

/** The record of a recording call that fell back: only what its request says, and why. */
export function fallbackRecord(
  request: { now: string; session: string; group: string | null; agent: string; iteration: number },
  reason: string,
  meta: { source: AssemblyRecord['source']; durationMs: number },
): AssemblyRecord {
  return {
    created_at: request.now,
    session_id: request.session,
    group_id: request.group,
    agent_type: request.agent,
    iteration: request.iteration,
    source: meta.source,
    outcome: 'fallback',
    reason: redactText(reason),
    purpose: null,
    zone: null,
    usage_pct: null,
    budget: null,
    used_tokens: null,
    overrun: 0,
    prompt_tokens: null,
    duration_ms: Math.round(meta.durationMs * 10) / 10,
    version: PRODUCT_VERSION,
    detail: '{}',
  };
}

/**
 * A request's key and the run's part in it: the warm assembler's run (`supersedes` false), or the
 * caller's own run of the same request after the server gave no usable answer (true).
 */
export interface Delivery {
  key: string;
  supersedes: boolean;
}

/** Thrown inside a write transaction by the server's run of a request another run recorded first: it records nothing. */
export class DeliveryTaken extends Error {
  constructor(key: string) {
    super(`request ${key} was recorded by the caller's own run; this run records nothing`);
  }
}

/**
 * Settles, inside the write transaction that records a delivery of `delivery`'s request, which run
 * counts. The server's run: throws DeliveryTaken when a record of the request exists (the caller
 * ran it itself and recorded first). The caller's own run: the server's record, if any, is removed,
 * and the packages it recorded that this run does not deliver (`delivering`) are recorded as not
 * consumed again; returns those it recorded that this run delivers too (recorded already: they
 * count as this run's).
 */
export function settleDelivery(db: DB, delivery: Delivery, delivering: readonly number[]): number[] {
  const earlier = findAssemblyByKey(db, delivery.key);
  if (earlier === undefined) return [];
  if (!delivery.supersedes) throw new DeliveryTaken(delivery.key);
  deleteAssembly(db, earlier.id);
  const recorded = deliveredBy(earlier.detail);
  const kept = new Set(delivering);
  for (const id of recorded) {
    if (kept.has(id)) continue;
    const pkg = findPackage(db, id);
    if (pkg) unmarkPackageConsumed(db, pkg, earlier.agent_type, earlier.iteration);
  }
  return recorded.filter((id) => kept.has(id));
}

/** The packages a record's detail says it delivered and recorded (none when it says nothing readable). */
function deliveredBy(detail: string): number[] {
  try {
    const d = (JSON.parse(detail) as { delivered?: unknown }).delivered;
    return Array.isArray(d) ? d.filter((id): id is number => Number.isInteger(id)) : [];
  } catch {
    return [];
  }
}

/**
 * Writes `record` inside the caller's write transaction, in a savepoint of its own: a record that
 * cannot be written (a file whose schema step has not made the table yet) is left out, and the
 * transaction (the consumption it records beside) goes on. With `delivery`, the record carries its
 * key and the delivery is settled first (settleDelivery: the server's run of a request recorded
 * already writes nothing). Returns whether it was written.
 */
export function writeRecord(db: DB, record: AssemblyRecord, delivery?: Delivery): boolean {
  if (!hasAssemblyRecord(db)) return false;
  try {
    db.transaction(() => {
      if (delivery !== undefined) settleDelivery(db, delivery, []);
      insertAssembly(db, delivery === undefined ? record : { ...record, request_key: delivery.key });
    })();
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes `record` in a connection and a write transaction of its own, waiting at most `busyMs` for
 * a lock (twice that in all); returns whether it was written. Never throws: a record is never worth
 * failing what it records.
 */
export function writeRecordAlone(dbPath: string, record: AssemblyRecord, busyMs: number, delivery?: Delivery): boolean {
  let db: DB | undefined;
  try {
    // derived: as an assembly opens it (a schema step an indexer is still making is not redone here).
    db = openDatabase({ dbPath, create: false, busyTimeoutMs: busyMs, busyBudgetMs: busyMs * 2, derived: true });
    const conn = db;
    return writeTransaction(conn, () => writeRecord(conn, record, delivery));
  } catch {
    return false;
  } finally {
    try {
      db?.close();
    } catch {
      // nothing to keep
    }
  }
}

/** Whether a run of the request `key` has recorded its delivery (the prompt hook asks before it places a block). */
export function deliveryRecorded(db: DB, key: string): boolean {
  return findAssemblyByKey(db, key) !== undefined;
}
