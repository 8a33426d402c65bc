/**
 * Error patterns and strategies for the block. Pure: rows in, the few worth showing out.
 * Patterns: confident enough, not past their TTL (by UTC date, against the injected clock),
 * matching the request's language when one is given; those whose normalised message matches the
 * request's error text first, then by confidence, occurrences and last seen.
 */
import { normaliseErrorMessage } from '../../../../bazinga-db/scripts/lib/hashing.ts';
import type { ErrorPatternRow } from '../../../../bazinga-db/scripts/lib/repo/errorPatterns.ts';
import type { ErrorPatternItem, StrategyItem } from '../contract.ts';
import { parseSqliteTime } from './rank.ts';
import { oneLine, truncateAtWord } from './text.ts';

export type ErrorPatternRowInput = Pick<
  ErrorPatternRow,
  'pattern_hash' | 'signature_json' | 'solution' | 'confidence' | 'occurrences' | 'lang' | 'last_seen' | 'ttl_days'
>;

export interface SelectPatternsInput {
  rows: readonly ErrorPatternRowInput[];
  nowMs: number;
  minConfidence: number;
  max: number;
  solutionChars: number;
  lang: string | null;
  error: string | null;
  redact: (text: string) => string;
}

const round2 = (x: number) => Math.round(x * 100) / 100;
const DAY_MS = 86_400_000;

/** Expired when the UTC date of last_seen plus ttl_days is before the UTC date of now. */
export function isExpired(lastSeen: string, ttlDays: number, nowMs: number): boolean {
  const seen = parseSqliteTime(lastSeen);
  if (Number.isNaN(seen)) return false;
  const seenDay = Math.floor(seen / DAY_MS);
  const today = Math.floor(nowMs / DAY_MS);
  return seenDay + ttlDays < today;
}

function parseSignature(json: string): { error_type: string; message_pattern: string } {
  try {
    const s = JSON.parse(json) as { error_type?: unknown; message_pattern?: unknown };
    return {
      error_type: typeof s.error_type === 'string' ? s.error_type : 'Unknown',
      message_pattern: typeof s.message_pattern === 'string' ? s.message_pattern : '',
    };
  } catch {
    return { error_type: 'Unknown', message_pattern: '' };
  }
}

export function selectErrorPatterns(input: SelectPatternsInput): ErrorPatternItem[] {
  const wanted = input.error ? normaliseErrorMessage(input.error).toLowerCase() : null;
  // Choose on the stored fields, then redact only the few that are shown.
  const chosen = input.rows
    .filter((r) => round2(r.confidence) >= input.minConfidence)
    .filter((r) => !isExpired(r.last_seen, r.ttl_days, input.nowMs))
    .filter((r) => input.lang === null || r.lang === null || r.lang === input.lang)
    .map((r) => {
      const sig = parseSignature(r.signature_json);
      const pattern = sig.message_pattern.toLowerCase();
      return { r, sig, matched: wanted !== null && pattern !== '' && (wanted === pattern || wanted.includes(pattern)) };
    })
    .sort(
      (a, b) =>
        Number(b.matched) - Number(a.matched) ||
        round2(b.r.confidence) - round2(a.r.confidence) ||
        b.r.occurrences - a.r.occurrences ||
        (a.r.last_seen === b.r.last_seen ? 0 : a.r.last_seen < b.r.last_seen ? 1 : -1) ||
        (a.r.pattern_hash < b.r.pattern_hash ? -1 : 1),
    )
    .slice(0, input.max);
  return chosen.map(({ r, sig, matched }) => ({
    pattern_hash: r.pattern_hash,
    error_type: input.redact(oneLine(sig.error_type)),
    message_pattern: input.redact(oneLine(sig.message_pattern)),
    solution: truncateAtWord(input.redact(oneLine(r.solution)), input.solutionChars),
    confidence: round2(r.confidence),
    occurrences: r.occurrences,
    last_seen: r.last_seen,
    matched_error: matched,
  }));
}

export interface StrategyRowInput {
  strategy_id: string;
  topic: string;
  insight: string;
  helpfulness: number;
}

/** Strategies arrive ordered (helpfulness, last seen); here they are redacted and cut. */
export function prepareStrategies(rows: readonly StrategyRowInput[], insightChars: number, redact: (t: string) => string): StrategyItem[] {
  return rows.map((r) => ({
    strategy_id: r.strategy_id,
    topic: redact(oneLine(r.topic)),
    insight: truncateAtWord(redact(oneLine(r.insight)), insightChars),
    helpfulness: r.helpfulness,
  }));
}
