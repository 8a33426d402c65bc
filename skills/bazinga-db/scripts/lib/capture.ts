/**
 * Error patterns learnt from a group's retries, with no change to BAZINGA. A group's failure texts
 * (its failures packages, and the review feedback its retry spawns were given: qa_feedback and
 * tl_feedback, as the assembly record keeps them) are put in time order and signed: each is saved
 * as an agent would save it through save-error-pattern (the error type and message its tool
 * printed, the original's signature and hash: hashing.ts capturedPatternOf), and known by the fault
 * of that signature (one fault, one key: patternFaults.ts); texts of one fault with no fix between
 * them are one failure. What the fixing agent wrote after a failure (its completion reasoning, else its
 * decisions, else its handoff package) is that failure's solution. A failure is decided once the
 * review after it is known:
 *
 * - passed: the next failure text of the group names another fault, or there is none and the group
 *   passed review (approved, completed or being merged). Its signature → solution becomes a pattern
 *   (read at confidence CAPTURED_CONFIDENCE, under the session's project id, `default` when it
 *   records none), or a known pattern of its fault is confirmed (+0.1 confidence, one more occurrence).
 * - failed: the next failure text names the same fault. A known pattern of it loses 0.2 confidence
 *   (not below 0.1); an unknown one is not learnt (nothing fixed it).
 *
 * A new pattern is a new row, written as BAZINGA's save-error-pattern writes it (confidence 0.5); the
 * confidence its passing review earns is kept beside it. A known one is never written: what this
 * layer learns of it is kept beside it (repo/patternLearning.ts, `ca_pattern_learning`) and read
 * with it by this layer, so a row BAZINGA wrote stays as BAZINGA wrote it and its own prompt builder
 * prints what it printed before.
 *
 * A known pattern is any row of the fault the session reads (repo/sessions.ts ProjectScope: its
 * project's, or every project's when it records none), whichever tool wrote it and under whatever
 * hash; the one moved is the row that stands for the fault (patternFaults.ts
 * compareRepresentatives: the most confident, then the most seen, then the newest).
 *
 * Each decided failure is written once to the ledger `ca_captures` with where it and its solution
 * came from, in the transaction that changes its pattern: running again changes nothing
 * (idempotent). A dry run reports what it would write and writes nothing.
 */
import { capturedPatternOf } from './hashing.ts';
import { keyNewPatterns, patternsToKey, representativeOf, rowsOfFaults } from './patternFaults.ts';
import { storeFaultKeys } from './repo/patternFaults.ts';
import { writeDerived } from './schemaSteps.ts';
import { pyJsonDumps } from './pyjson.ts';
import { redactText } from './redact.ts';
import {
  decidedFailures,
  groupFailures,
  groupFixes,
  groupPassed,
  groupsWithFailures,
  passedGroups,
  hasCaptureLedger,
  insertCapture,
  type CaptureEntry,
  type FailureRow,
  type FixRow,
} from './repo/captures.ts';
import { findErrorPattern, insertErrorPattern, nextConfidence } from './repo/errorPatterns.ts';
import { pruneLearning, recordLearning, withLearning } from './repo/patternLearning.ts';
import { getMeta, setMeta } from './repo/meta.ts';
import { indexedArtifactText } from './repo/searchIndex.ts';
import { getProjectScope } from './repo/sessions.ts';
import { hasAssemblyRecord } from './repo/assemblies.ts';
import { SETTLE_PER_SPAWN, settleableRecords, settleVerdicts } from './repo/outcomes.ts';
import { sqliteMs, sqliteTime } from './memory.ts';
import { oneLine, shorten } from './shown.ts';
import { writeTransaction, type DB } from './statements.ts';

/** How much of a failures package's artifact is read for its error text. */
const ARTIFACT_BYTES = 16_384;
/** The most characters of a captured solution (as save-error-pattern's callers are asked to keep them). */
const SOLUTION_CHARS = 500;
/**
 * A captured pattern's confidence when a tool's output signed it: its fix passed a review, more than
 * a pattern an agent saves by hand (0.5) can say; the assembler's default threshold
 * (error_patterns.min_confidence 0.7), so it is shown from the next spawn on, and one failing retry
 * (−0.2) hides it again. A failure told in prose only (no tool output recognised) starts at 0.5, as
 * a hand-saved one: shown once two more passing retries confirm it.
 */
export const CAPTURED_CONFIDENCE = 0.7;
export const CAPTURED_PROSE_CONFIDENCE = 0.5;

const capturedConfidence = (tool: string) => (tool === 'text' ? CAPTURED_PROSE_CONFIDENCE : CAPTURED_CONFIDENCE);

export interface CaptureOptions {
  sessionId: string;
  /** The groups to look at; all the session's groups with a failure text when absent. */
  groups?: readonly string[];
  /** Where artifacts are read from (null: summaries only). */
  projectRoot: string | null;
  dryRun: boolean;
  /** The ledger's time (ISO). */
  now: string;
  /** Groups (that passed review) to mark settled when none of their failures is left undecided. */
  settle?: readonly string[];
  /** Read only each source's newest this many failure texts and fixes of a group (a spawn: what its retry changed). */
  recent?: number;
}

export interface CaptureDecision extends Omit<CaptureEntry, 'refs'> {
  /** The row created or moved (what either tool's update-error-confidence takes), or the one a decision that writes none would have created. */
  pattern_hash: string;
  error_type: string;
  message_pattern: string;
  /** The failure texts merged into this failure (one fault, no fix between them). */
  failure_refs: string[];
}

export interface CaptureReport {
  session_id: string;
  project_id: string;
  dry_run: boolean;
  groups: number;
  /** Failures decided now (written unless a dry run). */
  decided: CaptureDecision[];
  /** Failures whose next review is not known yet. */
  undecided: number;
  /** The groups that have such a failure. */
  undecided_groups: string[];
}


/** SQLite's `YYYY-MM-DD HH:MM:SS` (UTC) or an ISO time, as epoch ms (NaN when neither). */
const timeMs = (value: string | null) => (value ? sqliteMs(value) : NaN);

interface Failure {
  first: FailureRow;
  refs: string[];
  firstMs: number;
  lastMs: number;
  /** The row it is saved as (the original's hash) and its fault key. */
  hash: string;
  fault: string;
  /** The tool its text was recognised as ('text': none). */
  tool: string;
  error_type: string;
  message_pattern: string;
  signatureJson: string;
}

/** The kinds of text a solution is taken from, in order of preference. */
const FIX_ORDER: Record<string, number> = { completion: 0, decisions: 1, handoff: 2 };

/** The fix of a failure among the texts the fixing agents wrote before the next failure: the last completion, else decisions, else handoff. */
function fixOf(fixes: readonly (FixRow & { ms: number })[], fromMs: number, toMs: number): FixRow | undefined {
  const inWindow = fixes.filter((f) => f.ms >= fromMs && f.ms < toMs && f.text.trim() !== '' && f.kind in FIX_ORDER);
  return inWindow.sort((a, b) => (FIX_ORDER[a.kind] as number) - (FIX_ORDER[b.kind] as number) || b.ms - a.ms)[0];
}

/**
 * A group's failures in time order, signed. Texts with nothing the fixing agents wrote between them
 * (no reasoning of theirs, of any phase, and no handoff) are one failure (QA's failures package and
 * the feedback the retry is given say the same failure, in other words): its signature is the first
 * a tool's output gives among them, else the first text's.
 */
function failuresOf(opts: CaptureOptions, rows: readonly FailureRow[], fixes: readonly (FixRow & { ms: number })[]): Failure[] {
  const timed = rows
    .map((row) => ({ row, ms: timeMs(row.at) }))
    .filter((r) => !Number.isNaN(r.ms) && typeof r.row.text === 'string')
    .sort((a, b) => a.ms - b.ms || a.row.ref.localeCompare(b.row.ref));
  const out: Failure[] = [];
  for (const { row, ms } of timed) {
    const text = failureTextOf(opts.projectRoot, row.text, row.file_path);
    const saved = capturedPatternOf(text, redactText);
    const signed = {
      hash: saved.hash,
      fault: saved.fault.fault_hash,
      tool: saved.fault.tool,
      error_type: saved.signature.error_type,
      message_pattern: saved.signature.message_pattern,
      signatureJson: pyJsonDumps(saved.signature),
    };
    const last = out.at(-1);
    if (last && !fixes.some((f) => f.ms >= last.lastMs && f.ms < ms)) {
      last.refs.push(row.ref);
      last.lastMs = ms;
      if (last.tool === 'text' && signed.tool !== 'text') Object.assign(last, signed);
      continue;
    }
    out.push({ first: row, refs: [row.ref], firstMs: ms, lastMs: ms, ...signed });
  }
  return out;
}

/**
 * A failure text as it is signed: the text (a failures package's summary, or review feedback) and,
 * when it names an artifact, that artifact's first ARTIFACT_BYTES (redacted; none without a
 * project root). The assembler signs a retry's failure the same way (its failure's own patterns).
 */
export function failureTextOf(projectRoot: string | null, text: string, filePath: string | null): string {
  const artifact = filePath === null ? '' : indexedArtifactText(projectRoot, filePath, ARTIFACT_BYTES);
  return artifact === '' ? text : `${text}\n${artifact}`;
}

/** Decides what can be decided of a session's failures and, unless a dry run, writes it. */
export function captureOutcomes(db: DB, opts: CaptureOptions): CaptureReport {
  // Known patterns are read in the session's scope; new ones are written under its project id.
  const scope = getProjectScope(db, opts.sessionId);
  const projectId = scope.projectId;
  const report: CaptureReport = { session_id: opts.sessionId, project_id: projectId, dry_run: opts.dryRun, groups: 0, decided: [], undecided: 0, undecided_groups: [] };
  // A file no writer of this version opened has no ledger: nothing can be kept, so nothing is decided
  // (a dry run, which keeps nothing, decides as if none were decided yet).
  const ledger = hasCaptureLedger(db);
  if (!ledger && !opts.dryRun) return report;
  const withRecord = hasAssemblyRecord(db);
  const groups = opts.groups ?? groupsWithFailures(db, opts.sessionId, withRecord);
  const pending: { decision: CaptureDecision; hash: string; signatureJson: string; solution: string | null; ms: number; tool: string }[] = [];
  // What a spawn's capture found of each group it read (see lastLook).
  const looks = new Map<string, string>();
  for (const groupId of groups) {
    if (groupId === 'global') continue;
    const rows = groupFailures(db, opts.sessionId, groupId, withRecord, opts.recent);
    if (rows.length === 0) continue;
    report.groups += 1;
    const decided = ledger ? decidedFailures(db, opts.sessionId, groupId) : new Set<string>();
    const passed = groupPassed(db, opts.sessionId, groupId);
    // Nothing can be decided (and nothing is read or signed) when every failure is, when a single
    // failure awaits the review after it, or (a spawn) when the group's failure texts and review are
    // what the last look at it found.
    const look = JSON.stringify({ refs: rows.map((r) => r.ref).sort(), passed });
    if (opts.recent !== undefined && ledger && lastLook(db, opts.sessionId, groupId) === look) continue;
    if (opts.recent !== undefined && !opts.dryRun) looks.set(groupId, look);
    if (rows.every((r) => decided.has(r.ref)) || (!passed && rows.length < 2)) {
      if (!passed && rows.length === 1 && !decided.has((rows[0] as FailureRow).ref)) {
        report.undecided += 1;
        report.undecided_groups.push(groupId);
      }
      continue;
    }
    // What the fixing agents wrote since the oldest failure read (a spawn reads few failures: few of these).
    const oldest = Math.min(...rows.map((r) => timeMs(r.at)).filter((ms) => !Number.isNaN(ms)));
    const since = opts.recent === undefined || !Number.isFinite(oldest) ? null : sqliteTime(oldest);
    const fixes = groupFixes(db, opts.sessionId, groupId, since)
      .map((f) => ({ ...f, ms: timeMs(f.at) }))
      .filter((f) => !Number.isNaN(f.ms));
    const failures = failuresOf(opts, rows, fixes);
    failures.forEach((f, i) => {
      // Decided already, under any of its texts (a spawn that read fewer of them may have named a later one).
      if (f.refs.some((ref) => decided.has(ref))) return;
      const next = failures[i + 1];
      const outcome = next ? (next.fault === f.fault ? 'failed' : 'passed') : passed ? 'passed' : undefined;
      if (outcome === undefined) {
        report.undecided += 1;
        if (!report.undecided_groups.includes(groupId)) report.undecided_groups.push(groupId);
        return;
      }
      const fix = fixOf(fixes, f.firstMs, next ? next.firstMs : Infinity);
      const solution = fix ? shorten(redactText(oneLine(fix.text)), SOLUTION_CHARS) : null;
      pending.push({
        ms: f.firstMs,
        tool: f.tool,
        hash: f.hash,
        signatureJson: f.signatureJson,
        solution,
        decision: {
          project_id: projectId,
          session_id: opts.sessionId,
          group_id: groupId,
          failure_ref: f.first.ref,
          failure_refs: f.refs,
          fail_iteration: f.first.iteration,
          outcome,
          pattern_hash: f.hash,
          fault_hash: f.fault,
          error_type: f.error_type,
          message_pattern: f.message_pattern,
          // Settled when written: what the pattern table holds then decides it.
          operation: outcome === 'passed' ? (solution === null ? 'no-solution' : 'created') : 'unknown-failed',
          solution_ref: fix?.ref ?? null,
          created_at: opts.now,
        },
      });
    });
  }
  if (pending.length === 0 && !opts.settle?.length && looks.size === 0) return report;
  // In the order the failures happened: a pattern one failure creates is known to the next.
  pending.sort((a, b) => a.ms - b.ms || a.decision.group_id.localeCompare(b.decision.group_id));
  // A dry run writes no pattern: what it would have created is known to the failures after it.
  const createdHere = new Map<string, { pattern_hash: string; project_id: string; confidence: number }>();
  const apply = () => {
    // Rows BAZINGA wrote since get their fault keys first, so a failure finds them by its fault
    // (a dry run keys them as it reads: patternFaults.ts rowsOfFaults).
    if (!opts.dryRun) writeDerived(db, () => keyNewPatterns(db), 0);
    // What was learnt of rows deleted since (cleanup-error-patterns) or saved again is not carried to another row.
    if (!opts.dryRun) writeDerived(db, () => pruneLearning(db), 0);
    for (const p of pending) {
      const d = p.decision;
      // The fault's rows as this layer reads them (with what it learnt of them); the stored ones stay as written.
      const stored = rowsOfFaults(db, scope, [d.fault_hash]);
      const known = representativeOf(withLearning(db, stored)) ?? createdHere.get(d.fault_hash);
      d.operation = d.outcome === 'failed' ? (known ? 'lowered' : 'unknown-failed') : known ? 'raised' : p.solution === null ? 'no-solution' : 'created';
      d.pattern_hash = known?.pattern_hash ?? p.hash;
      if (d.operation === 'created') createdHere.set(d.fault_hash, { pattern_hash: p.hash, project_id: projectId, confidence: capturedConfidence(p.tool) });
      if (opts.dryRun) {
        report.decided.push(d);
        continue;
      }
      const { failure_refs: refs, error_type: _type, message_pattern: _pattern, pattern_hash: _hash, ...entry } = d;
      if (!insertCapture(db, { ...entry, refs: JSON.stringify(refs) })) continue;
      report.decided.push(d);
      if (d.operation === 'created') {
        // The row BAZINGA's save-error-pattern writes (confidence 0.5 included); what the review
        // that passed says of it, beside it (repo/patternLearning.ts).
        insertErrorPattern(db, { hash: p.hash, projectId, signatureJson: p.signatureJson, solution: p.solution as string, lang: null });
        writeDerived(db, () => storeFaultKeys(db, [{ project_id: projectId, pattern_hash: p.hash, fault_hash: d.fault_hash, tool: p.tool }]), undefined);
        const row = findErrorPattern(db, p.hash, projectId);
        if (row) recordLearning(db, row, capturedConfidence(p.tool), false);
      } else if (known && (d.operation === 'raised' || d.operation === 'lowered')) {
        // As update-error-confidence would move it, kept beside the row (repo/patternLearning.ts): the row stays as its writer left it.
        const row = stored.find((r) => r.project_id === known.project_id && r.pattern_hash === known.pattern_hash);
        if (row) recordLearning(db, row, nextConfidence(known.confidence, d.operation === 'raised' ? 'success' : 'failure'), true);
      }
    }
  };
  if (opts.dryRun) apply();
  else
    writeTransaction(db, () => {
      apply();
      // Groups that passed with every failure decided: nothing later changes them (settledGroups).
      for (const g of opts.settle ?? []) if (!report.undecided_groups.includes(g)) setMeta(db, settledKey(opts.sessionId, g), '1');
      for (const [g, look] of looks) setMeta(db, lookKey(opts.sessionId, g), look);
    });
  return report;
}

/**
 * The verdicts now known of records not yet settled (the newest `limit`; -1: all) written as
 * outcome rows (repo/outcomes.ts), in a write transaction only when there are some.
 */
export function settleKnownVerdicts(db: DB, limit: number): number {
  const records = settleableRecords(db, limit);
  if (records.known.length > 0 || records.never.length > 0) writeTransaction(db, () => settleVerdicts(db, records));
  return records.known.length;
}

/**
 * The newest failure texts (of each source) and fixes a spawn's capture reads of a group: the last
 * transition is decided from the last two failures; an older one left undecided is decided at a
 * later spawn's or by capture-outcomes, which reads them all.
 */
export const RECENT_PER_SPAWN = 2;

/** The most groups that passed review a spawn's capture looks at besides its own (the rest at the next spawn). */
export const PASSED_GROUPS_PER_SPAWN = 4;

/** A group that passed review with every failure decided (captureBeforeSpawn reads it no more). */
const settledKey = (sessionId: string, groupId: string) => `capture.settled\u0000${sessionId}\u0000${groupId}`;

const lookKey = (sessionId: string, groupId: string) => `capture.look\u0000${sessionId}\u0000${groupId}`;

/**
 * What a spawn's capture last found of a group: the failure texts it read and whether the group had
 * passed review. The same again means nothing new to decide: the next spawn signs nothing (a
 * failure's artifact is read and redacted to sign it).
 */
const lastLook = (db: DB, sessionId: string, groupId: string) => getMeta(db, lookKey(sessionId, groupId));

const isSettled = (db: DB, sessionId: string, groupId: string) => getMeta(db, settledKey(sessionId, groupId)) !== undefined;

/**
 * The capture a spawn runs before it is assembled (never on a dry run): its own group's failures
 * (a retry decides the one before it), and those of up to PASSED_GROUPS_PER_SPAWN groups of the
 * session that passed review since (a group's last review comes after its last spawn). A group
 * that passed with every failure decided is marked settled and not read again; `capture-outcomes`
 * at the session's end reads every group. First, with `capture` off too, the pattern rows written
 * since get their fault keys and the verdicts now known of what earlier spawns were shown are
 * settled (outcome feedback reads them).
 */
export function captureBeforeSpawn(
  db: DB,
  opts: { sessionId: string; groupId: string; projectRoot: string | null; now: string; capture: boolean },
): CaptureReport | undefined {
  if (!hasCaptureLedger(db)) return undefined;
  // The rows BAZINGA wrote since the last writer get their fault keys (a read keys them itself, at
  // a cost: a writer stores them), in a write transaction only when there are some.
  if (patternsToKey(db)) writeTransaction(db, () => writeDerived(db, () => keyNewPatterns(db), 0));
  settleKnownVerdicts(db, SETTLE_PER_SPAWN);
  if (!opts.capture) return undefined;
  const passed = passedGroups(db, opts.sessionId).filter((g) => g !== opts.groupId && !isSettled(db, opts.sessionId, g)).slice(0, PASSED_GROUPS_PER_SPAWN);
  const groups = opts.groupId === 'global' ? passed : [opts.groupId, ...passed];
  if (groups.length === 0) return undefined;
  return captureOutcomes(db, { sessionId: opts.sessionId, groups, projectRoot: opts.projectRoot, dryRun: false, now: opts.now, settle: passed, recent: RECENT_PER_SPAWN });
}
