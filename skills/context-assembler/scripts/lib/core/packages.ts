/**
 * The pack step for packages: redact → truncate → render → count → admit, in score order, within
 * the context budget. Pure. The counted tokens of the emitted package section (header included)
 * never exceed the budget.
 */
import type { Zone } from '../config.ts';
import type { Exclusion, PackedPackage, RankedPackage } from '../contract.ts';
import { pack, type CountTokens } from './pack.ts';
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
  countTokens: CountTokens;
}

export interface PackPackagesOutput {
  packages: PackedPackage[];
  /** Tokens of the whole emitted package section. */
  tokens: number;
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
  // Reserve the header at its widest (every prepared package admitted); the blank-line separators
  // are counted with each entry.
  const headerTokens = input.countTokens(header(prepared.length) + '\n\n');
  const packed = pack(prepared, input.budget - headerTokens, (p) => renderPackageEntry(p) + '\n\n', input.countTokens);
  const admitted = packed.admitted.map(({ item, tokens }) => ({ ...item, tokens }));
  const skipped = packed.skipped.map(({ item }) => item);
  // The section is counted again as emitted; drop from the end until it fits (BPE merges across
  // the joins could in principle differ from the sum of the parts).
  let tokens = input.countTokens(renderPackageSection(header(admitted.length), admitted.map(renderPackageEntry)));
  while (admitted.length > 0 && tokens > input.budget) {
    skipped.push(admitted.pop() as PackedPackage);
    tokens = input.countTokens(renderPackageSection(header(admitted.length), admitted.map(renderPackageEntry)));
  }
  for (const p of skipped) excluded.push({ kind: 'package', id: p.id, reason: 'budget' });
  return { packages: admitted, tokens, excluded };
}
