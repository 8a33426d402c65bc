/**
 * Deterministic identifiers shared with the original tool: consumption scope ids, strategy ids,
 * and error-pattern signatures with their hashes (the original's, for every row either tool
 * writes); and this layer's own fault keys of those rows (ca_pattern_faults). All hashes are
 * SHA-256 of UTF-8, lower-case hex.
 */
import { createHash } from 'node:crypto';
import { faultOfText, patternSignature } from './faultSignature.ts';
import { firstCodePoints } from './textScan.ts';

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
 * Normalises an error message into the pattern the original stores (errorSignature; the
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
  return firstCodePoints(pattern, 500);
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

/**
 * The signature the original tool stores for an error (its `_extract_error_signature`): the type
 * normalised (normaliseErrorType), the message normalised (normaliseErrorMessage), the hints and
 * stack as given. `redact` is applied field by field, to the message also before it is normalised
 * (normalising cuts paths and quotes, and a secret cut in half is no longer recognisable); hints
 * and stack are the caller's to redact (they are JSON).
 */
export function errorSignature(
  errorType: string,
  message: string,
  opts: { hints?: string[]; stack?: unknown[]; redact?: (text: string) => string } = {},
): ErrorSignature {
  const redact = opts.redact ?? ((t: string) => t);
  return {
    error_type: redact(normaliseErrorType(errorType)),
    message_pattern: redact(normaliseErrorMessage(redact(message))),
    context_hints: opts.hints ?? [],
    stack_pattern: opts.stack ?? [],
  };
}

/**
 * `error_patterns.pattern_hash` as the original computes it (its `_generate_pattern_hash`): over
 * error type, message pattern and the hints sorted by code point; the stack is not part of it.
 * Every row either tool writes is keyed by it, so both tools' `update-error-confidence` find it.
 */
export function errorPatternHash(sig: ErrorSignature): string {
  const hints = [...sig.context_hints].sort(compareCodePoints).join(',');
  return sha256Hex(`${sig.error_type}:${sig.message_pattern}:${hints}`);
}

/**
 * The fault a pattern row stands for (this layer's own key, kept in ca_pattern_faults): one fault
 * met in many files, lines and runs, with any hints, is one fault, however many rows either tool
 * wrote of it. `tool` is the tool whose output it was recognised as ('text': none; 'none': a row
 * whose signature is not one).
 */
export interface FaultKey {
  fault_hash: string;
  tool: string;
}

/** The fault key of a stored signature's type and message: faultSignature.ts patternSignature, hashed. */
export function faultKeyOf(sig: { error_type: string; message_pattern: string }): FaultKey {
  const fault = patternSignature(sig.error_type, sig.message_pattern);
  return { fault_hash: faultPatternHash(fault), tool: fault.tool };
}

/**
 * A stored `signature_json` read back: undefined when it is not one (not JSON, not an object, no
 * string type or message). Hints that are not strings are dropped, a stack that is not an array is [].
 */
export function parseStoredSignature(json: string | null): (ErrorSignature & { extra: string[] }) | undefined {
  if (json === null) return undefined;
  let s: unknown;
  try {
    s = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (s === null || typeof s !== 'object' || Array.isArray(s)) return undefined;
  const o = s as Record<string, unknown>;
  if (typeof o.error_type !== 'string' || typeof o.message_pattern !== 'string') return undefined;
  return {
    error_type: o.error_type,
    message_pattern: o.message_pattern,
    context_hints: Array.isArray(o.context_hints) ? o.context_hints.filter((h): h is string => typeof h === 'string') : [],
    stack_pattern: Array.isArray(o.stack_pattern) ? o.stack_pattern : [],
    // Keys the original never writes (an earlier release of this layer added `tool`).
    extra: Object.keys(o).filter((k) => !SIGNATURE_KEYS.has(k)),
  };
}

const SIGNATURE_KEYS = new Set(['error_type', 'message_pattern', 'context_hints', 'stack_pattern']);

/** The fault key of a stored row; a row whose signature is not one is a fault of its own, keyed by its hash. */
export function faultKeyOfRow(row: { pattern_hash: string; signature_json: string | null }): FaultKey {
  const sig = parseStoredSignature(row.signature_json);
  return sig === undefined ? { fault_hash: row.pattern_hash, tool: 'none' } : faultKeyOf(sig);
}

/**
 * The row an error is saved as (save-error-pattern): the original's signature and hash
 * (errorSignature, errorPatternHash), and the fault key of that signature.
 */
export function errorPatternOf(
  errorType: string,
  message: string,
  opts: { hints?: string[]; stack?: unknown[]; redact?: (text: string) => string } = {},
): { hash: string; signature: ErrorSignature; fault: FaultKey } {
  const signature = errorSignature(errorType, message, opts);
  return { hash: errorPatternHash(signature), signature, fault: faultKeyOf(signature) };
}

/**
 * The row the capture saves of a failure text (any tool's output): the error type its tool names
 * and the error's own message as printed (faultSignature.ts faultOfText), saved as an agent would
 * save them (errorPatternOf); `tool` is the tool the whole text was recognised as (its fault key
 * is its saved signature's, so a row BAZINGA saves of the same error has the same one).
 */
export function capturedPatternOf(text: string, redact: (text: string) => string = (t) => t): { hash: string; signature: ErrorSignature; fault: FaultKey } {
  const { signature: fault, message } = faultOfText(redact(text));
  const saved = errorPatternOf(fault.error_type, message, { redact });
  return { ...saved, fault: { fault_hash: saved.fault.fault_hash, tool: fault.tool } };
}

/** The most blank-line separated parts of a failure text signed on their own (failureFaultKeys). */
const FAILURE_PARTS_MAX = 32;

/**
 * The fault keys of a failure text (a retry's review feedback, a failures report with its
 * artifact), in order: the one the capture learns from the whole text (capturedPatternOf), then
 * those of its parts (split at blank lines, the first FAILURE_PARTS_MAX) in which a tool's output
 * is recognised: two reviews' feedback joined, or a report quoting two tools' outputs, holds a
 * fault each. Each key once. `redact` as the capture applies it.
 */
export function failureFaultKeys(text: string, redact: (text: string) => string = (t) => t): string[] {
  const keys = [capturedPatternOf(text, redact).fault.fault_hash];
  for (const part of text.split(/\n[^\S\n]*\n/, FAILURE_PARTS_MAX)) {
    const signed = capturedPatternOf(part, redact);
    if (signed.fault.tool !== 'text' && !keys.includes(signed.fault.fault_hash)) keys.push(signed.fault.fault_hash);
  }
  return keys;
}

/** The hash of a fault's type and message pattern (faultKeyOf). */
export function faultPatternHash(sig: { error_type: string; message_pattern: string }): string {
  return sha256Hex(`fault:${sig.error_type}:${sig.message_pattern}`);
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
