/**
 * Deterministic identifiers shared with the original tool: consumption scope ids, strategy ids,
 * and error-pattern signatures with their hashes. All hashes are SHA-256 of UTF-8, lower-case hex.
 */
import { createHash } from 'node:crypto';
import { patternSignature } from './faultSignature.ts';

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `consumption_scope.scope_id`: first 32 hex of sha256("session:group:agent:iteration:package"). */
export function consumptionScopeId(
  sessionId: string,
  groupId: string,
  agentType: string,
  iteration: number,
  packageId: number,
): string {
  return sha256Hex(`${sessionId}:${groupId}:${agentType}:${iteration}:${packageId}`).slice(0, 32);
}

/** `strategies.strategy_id`: "<project>_<topic>_" + first 16 hex of sha256(insight). */
export function strategyId(projectId: string, topic: string, insight: string): string {
  return `${projectId}_${topic}_${sha256Hex(insight).slice(0, 16)}`;
}

/**
 * Normalises an error message into the pattern the original stores (legacyErrorPatternHash; the
 * assembler also matches --error against stored patterns with it): paths reduced to their last
 * component, line numbers and short quoted strings replaced, trimmed, at most 500 characters.
 */
export function normaliseErrorMessage(message: string): string {
  const pattern = message
    .replace(/\/[^\s]+\//g, '.../')
    .replace(/[A-Z]:\\[^\s]+\\/g, '...\\')
    .replace(/line \p{Nd}+/gu, 'line N')
    .replace(/'[^']{1,50}'/g, "'...'")
    .replace(/"[^"]{1,50}"/g, '"..."')
    .trim();
  return Array.from(pattern).slice(0, 500).join('');
}

/** `error_type` as the original normalises it: "" becomes "Unknown", anything else is trimmed. */
export function normaliseErrorType(errorType: string): string {
  return errorType === '' ? 'Unknown' : errorType.trim();
}

export interface ErrorSignature {
  error_type: string;
  message_pattern: string;
  context_hints: string[];
  stack_pattern: unknown[];
}

/** A signature as this layer stores it: keyed by faultPatternHash, with the tool it was recognised as. */
export interface StoredSignature extends ErrorSignature {
  /** faultSignature's tool ('tsc', 'vitest', 'node', 'eslint', 'pytest', 'npm', 'gyp', 'text'): marks a row keyed this way. */
  tool: string;
}

/**
 * The signature and hash an error is stored under (save-error-pattern, the capture): the fault's
 * signature of `message` (patternSignature), `redact` applied to the text before it is
 * normalised (normalising cuts paths and quotes, and a secret cut in half is no longer
 * recognisable) and to the pattern after.
 */
export function errorPatternOf(
  errorType: string,
  message: string,
  opts: { hints?: string[]; stack?: unknown[]; redact?: (text: string) => string } = {},
): { hash: string; signature: StoredSignature } {
  const redact = opts.redact ?? ((t: string) => t);
  const fault = patternSignature(redact(errorType), redact(message));
  const signature: StoredSignature = {
    error_type: redact(fault.error_type),
    message_pattern: redact(fault.message_pattern),
    context_hints: opts.hints ?? [],
    stack_pattern: opts.stack ?? [],
    tool: fault.tool,
  };
  return { hash: faultPatternHash(signature), signature };
}

/**
 * `error_patterns.pattern_hash` of one fault (faultSignature.ts patternSignature): over its error
 * type and message pattern only, so that one fault met in many files, lines and runs, with any
 * hints, is one pattern. Rows keyed the original's way (legacyErrorPatternHash) are re-keyed to it
 * (repo/errorPatterns.ts rekeyErrorPatterns).
 */
export function faultPatternHash(sig: { error_type: string; message_pattern: string }): string {
  return sha256Hex(`fault:${sig.error_type}:${sig.message_pattern}`);
}

/**
 * The pattern_hash the original tool writes: over error type, message pattern (normaliseErrorMessage)
 * and sorted hints; the stack is not part of it. It splits one fault into one hash per file and
 * position, so this layer no longer keys by it; kept to recognise and re-key such rows.
 */
export function legacyErrorPatternHash(sig: ErrorSignature): string {
  const hints = [...sig.context_hints].sort(compareCodePoints).join(',');
  return sha256Hex(`${sig.error_type}:${sig.message_pattern}:${hints}`);
}

/** Orders strings by Unicode code point, as Python's sorted() does (JS sorts by UTF-16 unit). */
function compareCodePoints(a: string, b: string): number {
  const ca = Array.from(a);
  const cb = Array.from(b);
  const n = Math.min(ca.length, cb.length);
  for (let i = 0; i < n; i++) {
    const x = (ca[i] as string).codePointAt(0) as number;
    const y = (cb[i] as string).codePointAt(0) as number;
    if (x !== y) return x - y;
  }
  return ca.length - cb.length;
}
