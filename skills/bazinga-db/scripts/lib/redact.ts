/**
 * The redaction engine: one module that every text this product stores or prints goes through.
 * bazinga-db runs it on each field before writing a row; the context-assembler runs it on each
 * string it emits. A secret is replaced by a marker that names the rule that found it and keeps
 * what identifies it (the key, the user of a URL): `password=[REDACTED:password]`,
 * `[REDACTED:jwt]`. Text between `<private>` and `</private>` is removed whole.
 *
 * Stages, in order (each sees the previous one's output):
 *   1. `<private>…</private>` blocks (always);
 *   2. allowlisted matches are set aside and put back unchanged at the end;
 *   3. patterns (unless mode is `entropy`): private-key blocks, provider tokens (redactRules.ts),
 *      also cut by line breaks or split into strings over lines, base64, hex or percent-encoding
 *      whose decoded text holds a secret (the patterns run again on it), URL credentials, Authorization headers,
 *      cookies, command-line secrets, key = value assignments whose key names a secret (and the
 *      defaults of reads from the environment), the wrapped tail of a redacted value, and
 *      passwords given in a sentence;
 *   4. the entropy check (unless mode is `pattern_only`): long random-looking tokens that are not
 *      an obvious non-secret (UUIDs, hashes in a commit or checksum context, paths, base64 prose).
 *
 * Each stage is a module of redact/ (rules.ts holds what they share); this one runs them in order.
 *
 * Linear time: every regex is anchored to a literal or a word start and bounded, the key = value
 * scanner consumes what it reads, wrapped tokens are found in one pass over the text with its
 * line breaks taken out, and each base64 run is decoded once, so no input makes the engine
 * backtrack or rescan for long (test/redaction.linear.test.ts guards it; bench/redaction.ts
 * measures it). Pure functions: text in, text out.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_POLICY, HOLD_CLOSE, HOLD_OPEN, Redaction, RedactionPolicy, Run, marker } from './redact/rules.ts';
import { removePrivate } from './redact/private.ts';
import { redactKeyBlocks } from './redact/keyBlocks.ts';
import { mayHoldToken, redactAllTokens } from './redact/tokens.ts';
import { redactBase64 } from './redact/base64.ts';
import { redactPercentEncoded } from './redact/percent.ts';
import { redactProse } from './redact/prose.ts';
import { redactUrlsHeadersCli } from './redact/urls.ts';
import { redactAssignments, redactContinuations } from './redact/assignments.ts';
import { classifyKey } from './redact/keys.ts';
import { type ValueSpan, isAlreadyRedacted, isSecretValue } from './redact/values.ts';
import { holdPublicBlocks, redactHighEntropy } from './redact/entropy.ts';
export { DEFAULT_POLICY, marker, REDACTION_MODES, RULE_DOCS, RULE_IDS, type Redaction, type RedactionMode, type RedactionPolicy, type RuleDoc } from './redact/rules.ts';
export { shannonEntropy } from './redact/entropy.ts';

/**
 * Redacts one text under a policy. Meant to be idempotent (redacting the output again changes
 * nothing), and it is on the corpus; not always: a marker can leave what follows it for another
 * rule to read (`-u <token>%3A<password>`), or an allowlist can read context that redaction
 * changed. redactionMemo checks before it relies on it.
 */
export function redact(text: string, policy: RedactionPolicy = DEFAULT_POLICY): Redaction {
  const run = new Run();
  let work = removePrivate(text, run);
  const held: string[] = [];
  for (const allow of policy.allowlist) {
    const re = new RegExp(allow.source, allow.flags.includes('g') ? allow.flags : allow.flags + 'g');
    work = work.replace(re, (m) => {
      if (m === '') return m;
      held.push(m);
      return `${HOLD_OPEN}${held.length - 1}${HOLD_CLOSE}`;
    });
  }
  if (policy.mode !== 'entropy') work = redactPatterns(work, run, 0);
  if (policy.mode !== 'pattern_only') work = holdPublicBlocks(work, held);
  if (policy.mode !== 'pattern_only') work = redactHighEntropy(work, run);
  if (held.length > 0) work = work.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => held[Number(i)] ?? '');
  return { text: work, redacted: run.redacted, hits: run.hits };
}

/**
 * What every pattern rule but the token rules needs in a text to find anything: an operator or a
 * separator (`=`, `:`, `@`), a line break, a word that names a secret, a `-p` flag. A decoded base64
 * text with none of these, and nothing a token rule could match (mayHoldToken), is not run through
 * the rules.
 */
const MAY_HOLD_SECRET = /[=:@\n]|pass|pwd|pw|secret|key|token|cred|auth|sig|bearer|private|-p/i;
const mayHoldSecret = (text: string) => MAY_HOLD_SECRET.test(text) || mayHoldToken(text);

/** How deep base64 (or hex, or percent-encoding) inside base64 is decoded (a Docker config's `auth` inside an encoded config). */
const MAX_BASE64_DEPTH = 1;

/**
 * The pattern stages (3), in order. Base64 is decoded and its text run through these stages
 * again, to MAX_BASE64_DEPTH levels.
 */
function redactPatterns(text: string, run: Run, depth: number): string {
  let work = redactKeyBlocks(text, run);
  work = redactAllTokens(work, run);
  if (depth <= MAX_BASE64_DEPTH) {
    const redactDecoded = (decoded: string, inner: Run) => (mayHoldSecret(decoded) ? redactPatterns(decoded, inner, depth + 1) : decoded);
    work = redactBase64(work, run, (decoded) => redactDecoded(decoded, new Run()) !== decoded);
    work = redactPercentEncoded(work, run, redactDecoded);
  }
  work = redactUrlsHeadersCli(work, run);
  work = redactAssignments(work, run);
  work = redactContinuations(work, run);
  return redactProse(work, run);
}

/** Redacts a text and returns only the text. */
export const redactText = (text: string, policy: RedactionPolicy = DEFAULT_POLICY): string => redact(text, policy).text;

/** A function that redacts one text under a policy, as redactText does. */
export type TextRedaction = (text: string, policy: RedactionPolicy) => string;

/**
 * The version of the engine's behaviour, part of the key a settled text is kept under across runs
 * (settledKey). test/redaction-settled.test.ts pins it to a digest of the engine's sources: any
 * change to them fails that test until this number is raised, so no text is taken as settled under
 * rules that no longer hold.
 */
export const REDACTION_VERSION = 6;

/**
 * Texts a policy is known to leave unchanged, found by earlier runs (the assembler keeps them in
 * the database: ca_redaction_settled). `has` may say no when it cannot tell; `add` records a text
 * this run found settled. A key is as trusted as the database that holds it: planting one takes
 * the whole text, secret included, and whoever can write the database can write any text in a
 * form no rule knows (redaction keeps accidents out of the block; it is no boundary against the
 * database's own writers).
 */
export interface SettledTexts {
  has(text: string, policy: RedactionPolicy): boolean;
  add(text: string, policy: RedactionPolicy): void;
}

/**
 * The key a settled text is kept under: 32 hex of the SHA-256 of the engine's version, the
 * Unicode version of the runtime (the rules' \p{…} classes and case mapping follow it), the policy
 * (mode, allowlist) and the text.
 */
export function settledKey(text: string, policy: RedactionPolicy): string {
  const rules = JSON.stringify([REDACTION_VERSION, process.versions.unicode ?? '', policy.mode, policy.allowlist.map((r) => [r.source, r.flags])]);
  return createHash('sha256').update(`${rules}\n${text}`, 'utf8').digest('hex').slice(0, 32);
}

/** redactionMemo's function, which can also be given the texts earlier runs found settled. */
export interface RedactionMemo extends TextRedaction {
  /** Texts `store` knows to be settled are returned as they are, unredacted; texts found settled are added to it. */
  useSettled(store: SettledTexts): void;
}

/** A UTC time as Date#toISOString writes it. */
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;

/**
 * redactText with a memory, for one process that redacts the same texts more than once: an
 * assembly redacts each item before it is counted and packed, then the whole printed document
 * again at the door (print.ts), and some texts (the query of a request) on several steps. What a
 * text redacts to is remembered, and so is an output as its own result once redacting it again
 * is seen to change nothing (checked, not assumed: see redact): the door's pass over texts
 * redacted already costs a lookup each, and a text that a second pass changes is redacted again
 * there, as without the memo. Texts are remembered per policy object, up to `maxChars`
 * characters in all (keys and results), then only computed.
 *
 * With a store of settled texts (useSettled), a text an earlier run found unchanged by the same
 * engine version and policy is not redacted again: stored rows are redacted when written, so on
 * most calls every text is one of those, and the engine (its first use in a process costs a few
 * milliseconds) is not run at all.
 */
export function redactionMemo(maxChars = 4_000_000): RedactionMemo {
  const byPolicy = new WeakMap<RedactionPolicy, Map<string, string>>();
  let stored = 0;
  let settledTexts: SettledTexts | undefined;
  const remember = (policy: RedactionPolicy, text: string, out: string, settled: boolean) => {
    const cost = text.length + (settled && out !== text ? out.length : 0);
    if (stored + cost > maxChars) return;
    let memo = byPolicy.get(policy);
    if (memo === undefined) byPolicy.set(policy, (memo = new Map()));
    memo.set(text, out);
    if (settled && out !== text) memo.set(out, out);
    stored += cost;
  };
  const memoized = (text: string, policy: RedactionPolicy): string => {
    const known = byPolicy.get(policy)?.get(text);
    if (known !== undefined) return known;
    // An ISO time (a document's `now`, new on every call) is left as it is by every rule: the
    // engine need not start for it (test/secrets.engine.test.ts checks that it is left).
    if (ISO_TIME.test(text)) return text;
    if (settledTexts?.has(text, policy)) {
      remember(policy, text, text, true);
      return text;
    }
    const out = redact(text, policy).text;
    // Items are one line; a whole block or document seldom comes back the same, and is not kept.
    if (out === text && !text.includes('\n')) settledTexts?.add(text, policy);
    remember(policy, text, out, out === text || redact(out, policy).text === out);
    return out;
  };
  return Object.assign(memoized, {
    useSettled: (store: SettledTexts) => {
      settledTexts = store;
    },
  });
}

/**
 * Redacts every string inside a JSON value (keys kept), for documents printed or stored as JSON.
 * A value under a key that is a key = value secret by itself (`{"password": "x"}`) is redacted
 * even when the engine would not know it from the string alone. Strings under `skipKeys` (ids and
 * hashes the product itself made) are left alone.
 */
export function redactJson<T>(value: T, policy: RedactionPolicy = DEFAULT_POLICY, skipKeys: ReadonlySet<string> = NO_KEYS): { value: T; redacted: boolean; hits: Record<string, number> } {
  return walkJson(value, policy, skipKeys, redact);
}

/**
 * redactJson's value only, each string redacted by `redactString` (a text redactor such as one of
 * redactionMemo()'s), with the same rule for values under secret keys.
 */
export function redactJsonValue<T>(value: T, policy: RedactionPolicy, redactString: TextRedaction): T {
  return walkJson(value, policy, NO_KEYS, (text, p) => ({ text: redactString(text, p), redacted: false, hits: {} })).value;
}

function walkJson<T>(value: T, policy: RedactionPolicy, skipKeys: ReadonlySet<string>, redact: (text: string, policy: RedactionPolicy) => Redaction): { value: T; redacted: boolean; hits: Record<string, number> } {
  const total = new Run();
  const walk = (v: unknown, key: string | null): unknown => {
    if (typeof v === 'string') {
      // Ids and hashes the product made would read as random tokens: patterns only, no entropy.
      const skip = key !== null && skipKeys.has(key);
      if (skip && policy.mode === 'entropy') return v;
      let r = redact(v, skip ? { mode: 'pattern_only', allowlist: policy.allowlist } : policy);
      const cls = key === null ? null : classifyKey(key);
      if (cls !== null && policy.mode !== 'entropy' && r.text === v && !isAlreadyRedacted(v)) {
        const span: ValueSpan = { start: 0, end: v.length, quote: '', bare: v, open: false };
        if (isSecretValue(cls, span, false, '')) r = { text: marker(cls), redacted: true, hits: { [cls]: 1 } };
      }
      if (r.redacted) total.redacted = true;
      total.count(r.hits);
      return r.text;
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, key));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v)) out[k] = walk(item, k);
      return out;
    }
    return v;
  };
  const out = walk(value, null) as T;
  return { value: out, redacted: total.redacted, hits: total.hits };
}

const NO_KEYS: ReadonlySet<string> = new Set();

/** Adds one redaction's hits to a running total (for counts per rule). */
function addHits(total: Record<string, number>, hits: Record<string, number>): void {
  for (const [rule, n] of Object.entries(hits)) total[rule] = (total[rule] ?? 0) + n;
}

/**
 * Redacts the texts of one write (or one printed document) under one policy and remembers
 * whether any rule fired and how often each did.
 */
export class Redactor {
  redacted = false;
  readonly hits: Record<string, number> = {};
  constructor(readonly policy: RedactionPolicy = DEFAULT_POLICY) {}

  text(value: string): string {
    return this.take(redact(value, this.policy)).text;
  }

  /** A text that may be null (an optional column). */
  optional(value: string | null | undefined): string | null {
    return value === null || value === undefined ? null : this.text(value);
  }

  json<T>(value: T, skipKeys?: ReadonlySet<string>): T {
    return this.take(redactJson(value, this.policy, skipKeys)).value;
  }

  private take<R extends { redacted: boolean; hits: Record<string, number> }>(r: R): R {
    if (r.redacted) this.redacted = true;
    addHits(this.hits, r.hits);
    return r;
  }
}
