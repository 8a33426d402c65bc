/**
 * Whether a builder item reached the agent: present in the product's block, absent with a reason
 * the block states, or absent silently. The contract the product follows, in one place
 * so that it is easy to adapt:
 *   - a package is present when the block holds `(id <package id>)`;
 *   - a reasoning entry when the block holds the first 60 characters of its content (whitespace
 *     collapsed on both sides, the stored text or the product's redaction of it), or else names
 *     it as `reasoning <id>` on a line that is not a `- ` line;
 *   - an error pattern (one fault: rows with the same error_type and message_pattern) when the
 *     block holds the first 40 characters of its message_pattern (whitespace collapsed);
 *   - an absence is stated when a line of the block that starts with `- ` names the item
 *     (`package <id>`, `reasoning <id>`, `error pattern <first 8 hex digits of a pattern_hash>`)
 *     and gives a reason (REASON below). A `- ` line that names it without one leaves it silent,
 *     and the verdict says which line named it.
 * Pure.
 */
import { redact } from '../../skills/bazinga-db/scripts/lib/index.ts';
import type { FloorItem } from './builderSection.ts';

export const REASONING_HEAD = 60;
export const PATTERN_HEAD = 40;
/** Words that say why an item was left out (the `### Left out` vocabulary and the budget's figures). */
export const REASON = /\b(budget|tokens?|limit|already delivered|delivered|zone|tier|share|redact\w*|duplicate|merged|superseded|older|not relevant|cap)\b/i;

export type Verdict =
  | { status: 'present'; how: string }
  | { status: 'stated'; line: string }
  | { status: 'silent'; named?: string };

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const head = (s: string, n: number) => Array.from(collapse(s)).slice(0, n).join('');
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** How a `- ` line names the item: a pattern that matches the name and nothing longer. */
function nameOf(item: FloorItem): RegExp {
  if (item.kind === 'package') return new RegExp(`\\bpackage ${item.id}(?!\\d)`);
  if (item.kind === 'reasoning') return new RegExp(`\\breasoning ${item.id}(?!\\d)`);
  return new RegExp(`\\berror pattern (?:${item.hashes.map((h) => escape(h.slice(0, 8))).join('|')})`);
}

/** The verdict on one builder item given the product's block (the text between the markers). */
export function judge(block: string, item: FloorItem): Verdict {
  const flat = collapse(block);
  const lines = block.split('\n');
  const listLines = lines.filter((l) => l.startsWith('- '));
  if (item.kind === 'package') {
    // `(id N)`, or `(id N; …)` with its provenance.
    if (block.includes(`(id ${item.id})`) || block.includes(`(id ${item.id};`)) return { status: 'present', how: `(id ${item.id})` };
  } else if (item.kind === 'reasoning') {
    const heads = new Set([head(item.content, REASONING_HEAD), head(redact(item.content).text, REASONING_HEAD)]);
    for (const h of heads) if (h !== '' && flat.includes(h)) return { status: 'present', how: 'its first 60 characters' };
    const ref = lines.find((l) => !l.startsWith('- ') && nameOf(item).test(l));
    if (ref !== undefined) return { status: 'present', how: `named: ${ref.trim().slice(0, 80)}` };
  } else {
    const h = head(item.messagePattern, PATTERN_HEAD);
    if (h !== '' && flat.includes(h)) return { status: 'present', how: 'its message_pattern' };
  }
  const naming = listLines.filter((l) => nameOf(item).test(l));
  const stated = naming.find((l) => REASON.test(l.replace(new RegExp(nameOf(item).source, 'g'), '')));
  if (stated !== undefined) return { status: 'stated', line: stated };
  return naming.length > 0 ? { status: 'silent', named: naming[0] as string } : { status: 'silent' };
}
