/**
 * The pack step for packages: redact → truncate → render → size → admit, in score order, within
 * the context budget. Pure. The counted tokens of the emitted package section (header included)
 * never exceed the budget.
 *
 * The section's figure is the sum of its parts' figures: every part but the last ends in a line
 * break and every part starts with a non-blank character, so the cl100k pieces of the section are
 * the pieces of its parts and its count is the sum of their counts (tested). A figure made of
 * bounds is itself an upper bound; only when it would not fit is the section counted as emitted.
 */
import type { Zone } from '../config.ts';
import type { Exclusion, PackedPackage, RankedPackage } from '../contract.ts';
import { pack, type Sized, type TokenCounter } from './pack.ts';
import { availableText, renderPackageEntry, renderPackageHeader, renderPackageSection } from './render.ts';
import { isRedactionEmptied, oneLine, truncateAtWord } from './text.ts';

export interface PackPackagesInput {
  selected: readonly RankedPackage[];
  zone: Zone;
  totalAvailable: number;
  /** totalAvailable is a lower bound (shown "N+"). */
  totalCapped?: boolean;
  priorityUsed: string | null;
  budget: number;
  summaryCap: number;
  redact: (text: string) => string;
  counter: TokenCounter;
}

export interface PackPackagesOutput {
  packages: PackedPackage[];
  /** Tokens of the whole emitted package section (an upper bound when exact is false). */
  tokens: number;
  exact: boolean;
  excluded: Exclusion[];
}

export function packPackages(input: PackPackagesInput): PackPackagesOutput {
  const excluded: Exclusion[] = [];
  const prepared: RankedPackage[] = [];
  for (const p of input.selected) {
    const redacted = input.redact(oneLine(p.summary));
    if (isRedactionEmptied(redacted)) {
      excluded.push({ kind: 'package', id: p.id, reason: 'redaction-emptied' });
      continue;
    }
    prepared.push({ ...p, file_path: input.redact(oneLine(p.file_path)), summary: truncateAtWord(redacted, input.summaryCap) });
  }
  const header = (count: number) => renderPackageHeader(input.zone, count, availableText(input.totalAvailable, input.totalCapped), input.priorityUsed);
  const { counter } = input;
  // The header is reserved at its widest (every prepared package admitted); the blank-line
  // separators are counted with each entry.
  const entry = (p: RankedPackage) => renderPackageEntry(p) + '\n\n';
  const packed = pack(prepared, input.budget, entry, counter, { reserve: header(prepared.length) + '\n\n' });
  const admitted = packed.admitted.map(({ item, tokens }) => ({ ...item, tokens }));
  const skipped = packed.skipped;
  let section = packageSectionTokens(header(admitted.length), admitted, counter, input.budget);
  // Counted as emitted: drop from the end until it fits.
  while (admitted.length > 0 && section.tokens > input.budget) {
    skipped.push(admitted.pop() as PackedPackage);
    section = { tokens: counter.count(renderPackageSection(header(admitted.length), admitted.map(renderPackageEntry))), exact: true };
  }
  for (const p of skipped) excluded.push({ kind: 'package', id: p.id, reason: 'budget' });
  return { packages: admitted, tokens: section.tokens, exact: section.exact && packed.exact, excluded };
}

/** The section's tokens: its figure while that fits the budget, else its count as emitted. */
export function packageSectionTokens(header: string, admitted: readonly Pick<PackedPackage, 'id' | 'priority' | 'file_path' | 'summary'>[], counter: TokenCounter, budget: number): Sized {
  const figure = packageSectionFigure(header, admitted, counter);
  if (figure.tokens <= budget || figure.exact) return figure;
  return { tokens: counter.count(renderPackageSection(header, admitted.map(renderPackageEntry))), exact: true };
}

/**
 * The section's figure from its parts: the header and each entry with its separator, the last
 * entry as emitted (a counter that does not add up is asked for the whole section).
 */
function packageSectionFigure(header: string, admitted: readonly Pick<PackedPackage, 'id' | 'priority' | 'file_path' | 'summary'>[], counter: TokenCounter): Sized {
  const texts = admitted.length === 0 ? [header] : [header + '\n\n', ...admitted.map((p, i) => renderPackageEntry(p) + (i < admitted.length - 1 ? '\n\n' : ''))];
  if (!counter.additive) return { tokens: counter.count(texts.join('')), exact: true };
  const parts = texts.map((t) => counter.rawBound(t));
  return { tokens: counter.scale(parts.reduce((sum, p) => sum + p.tokens, 0)), exact: parts.every((p) => p.exact) };
}
