/**
 * Documents of older versions, read into this version's shape in one place: a piped document is
 * validated (contract.ts), then upgraded here, and the steps see only the current shape.
 *
 * Version 1 (no `doc_version`): the request may lack purpose, task, error, scope, lang and
 * framework (none given); the document may lack its purpose (the request's, else the agent's) and
 * summary_cap (the zone's, from this config); a ranked document may lack the learnings and the
 * exclusions (none), its candidates (none) and its available count (the packages it holds); a
 * packed one may lack the block pool (rebuilt from what it kept, with the tiers it carries or the
 * tier table's). An error pattern of a document before fault keys (no `fault_hash`) is keyed by
 * its row's hash.
 */
import { purposeOf, type Config } from './config.ts';
import { DOC_VERSION, STEPS, type AssemblyDoc, type BlockPool, type ErrorPatternItem, type PipedDoc, type Step } from './contract.ts';
import { KINDS } from './core/kinds.ts';
import { tierOf, type Tier, type TierSubject } from './core/tiers.ts';
import { summaryCapOf } from './core/zone.ts';

const reached = (doc: PipedDoc, step: Step) => STEPS.indexOf(doc.step) >= STEPS.indexOf(step);

/** An error pattern with its fault key (a document before fault keys has none: its row's hash stands in). */
const withFaultKey = <P extends ErrorPatternItem>(p: P): P => ({ ...p, fault_hash: (p as Partial<ErrorPatternItem>).fault_hash ?? p.pattern_hash });

export function upgradeDoc(piped: PipedDoc, config: Config): AssemblyDoc {
  const r = piped.request;
  const request = {
    ...r,
    purpose: r.purpose ?? null,
    task: r.task ?? null,
    error: r.error ?? null,
    scope: r.scope ?? null,
    lang: r.lang ?? null,
    framework: r.framework ?? null,
  };
  const { doc_version: _read, ...rest } = piped;
  const doc: AssemblyDoc = {
    doc_version: DOC_VERSION,
    ...rest,
    request,
    purpose: piped.purpose ?? purposeOf(config, request.agent, request.purpose),
    summary_cap: piped.summary_cap === undefined ? summaryCapOf(config, piped.zone) : piped.summary_cap,
  };
  if (!reached(doc, 'rank')) return doc;
  const ranked: AssemblyDoc = {
    ...doc,
    // A rank document always has its candidates (none when it lacks them: pack shows nothing of it).
    ...(doc.step === 'rank' ? { candidates: doc.candidates ?? [] } : {}),
    // Without a count, what the document holds is what was available (as the block always said).
    total_available: doc.total_available ?? (doc.packages ?? doc.candidates ?? []).length,
    priority_used: doc.priority_used ?? null,
    error_patterns: (doc.error_patterns ?? []).map(withFaultKey),
    strategies: doc.strategies ?? [],
    ...(doc.block_pool ? { block_pool: { ...doc.block_pool, error_patterns: doc.block_pool.error_patterns.map(withFaultKey) } } : {}),
    excluded: doc.excluded ?? [],
  };
  if (ranked.step !== 'pack' || ranked.block_pool !== undefined || ranked.truncation === undefined) return ranked;
  // Packed with a block fit but without its pool: the reasoning step refits what it kept.
  const packages = ranked.packages ?? [];
  const subjects = KINDS.package.subjects(packages, request);
  const pool: BlockPool = {
    packages: packages.map((p, i) => ({ ...p, tier: p.tier ?? tierOf(subjects[i] as TierSubject, ranked.purpose) })),
    error_patterns: ranked.error_patterns!.map((p) => ({ ...p, tier: p.tier ?? (2 as Tier) })),
    strategies: ranked.strategies!.map((s) => ({ ...s, tier: s.tier ?? (2 as Tier) })),
    memories: (ranked.memories ?? []).map((m) => ({ ...m, tier: m.tier ?? (3 as Tier) })),
    excluded: ranked.excluded!,
  };
  return { ...ranked, block_pool: pool };
}
