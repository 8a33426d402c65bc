/**
 * Packages for the block: redact → shorten (the zone's summary cap) → render, before the block's
 * fit (core/block.ts) admits them. Pure. And the package section's token figure.
 *
 * The section's figure is the sum of its parts' figures: every part but the last ends in a line
 * break and every part starts with a non-blank character, so the cl100k pieces of the section are
 * the pieces of its parts and its count is the sum of their counts (tested). A figure made of
 * bounds is itself an upper bound; only when it would not fit is the section counted as emitted.
 */
import type { Exclusion, RankedPackage } from '../contract.ts';
import { type Sized, type TokenCounter } from './pack.ts';
import { renderPackageEntry, renderPackageSection } from './render.ts';
import { isRedactionEmptied, oneLine, withConclusion } from './text.ts';

/**
 * The ranked packages as the block shows them: summary and path redacted and on one line, the
 * summary shortened to `summaryCap` characters with its structure kept (a blind cut made when it
 * was stored shown as an omission, never as a word cut mid-way, followed by its artifact's
 * conclusion where that was read); a package whose summary redaction emptied is excluded
 * (redaction-emptied).
 */
export function preparePackages(
  selected: readonly RankedPackage[],
  summaryCap: number,
  redact: (text: string) => string,
  /** Per package id, the conclusion of its artifact (core/text.ts conclusionOf, redacted): shown after a summary the store cut. */
  conclusions?: ReadonlyMap<number, string>,
): { packages: RankedPackage[]; excluded: Exclusion[] } {
  const packages: RankedPackage[] = [];
  const excluded: Exclusion[] = [];
  for (const p of selected) {
    const redacted = redact(oneLine(p.summary));
    if (isRedactionEmptied(redacted)) excluded.push({ kind: 'package', id: p.id, reason: 'redaction-emptied' });
    else packages.push({ ...p, file_path: redact(oneLine(p.file_path)), summary: withConclusion(redacted, conclusions?.get(p.id) ?? null, summaryCap) });
  }
  return { packages, excluded };
}

/** The section's tokens: its figure while that fits the budget, else its count as emitted. */
export function packageSectionTokens(header: string, admitted: readonly Parameters<typeof renderPackageEntry>[0][], counter: TokenCounter, budget: number): Sized {
  const figure = packageSectionFigure(header, admitted, counter);
  if (figure.tokens <= budget || figure.exact) return figure;
  return { tokens: counter.count(renderPackageSection(header, admitted.map(renderPackageEntry))), exact: true };
}

/**
 * The section's figure from its parts: the header and each entry with its separator, the last
 * entry as emitted (a counter that does not add up is asked for the whole section).
 */
function packageSectionFigure(header: string, admitted: readonly Parameters<typeof renderPackageEntry>[0][], counter: TokenCounter): Sized {
  const texts = admitted.length === 0 ? [header] : [header + '\n\n', ...admitted.map((p, i) => renderPackageEntry(p) + (i < admitted.length - 1 ? '\n\n' : ''))];
  if (!counter.additive) return { tokens: counter.count(texts.join('')), exact: true };
  const parts = texts.map((t) => counter.rawBound(t));
  return { tokens: counter.scale(parts.reduce((sum, p) => sum + p.tokens, 0)), exact: parts.every((p) => p.exact) };
}
