/**
 * One spawn measured: the builder's prompt (its section is the floor) against the prompt after the
 * hook. What the hook did (replaced the section, put a block first, kept the builder's prompt), the
 * verdict on each builder item, the sizes, and whether every byte outside the markers is the
 * builder's: the hooked prompt must be the builder's prompt with its context section (heading to
 * the blank line before the next component) replaced by `<!-- context-assembler:begin -->`, the
 * block, `<!-- context-assembler:end -->` and a blank line; where the builder wrote no section,
 * with those put first. Pure.
 */
import { itemLabel, type BuilderSection, type FloorItem } from './builderSection.ts';
import { judge, type Verdict } from './presence.ts';

export const BEGIN = '<!-- context-assembler:begin -->';
export const END = '<!-- context-assembler:end -->';

/** The builder's own estimate_tokens (prompt_builder.py): code points ÷ 3.85 plus 2 %, rounded down; under 10: a quarter, at least 1. */
export function builderTokens(text: string): number {
  const n = Array.from(text).length;
  if (n === 0) return 0;
  if (n < 10) return Math.max(1, Math.floor(n / 4));
  return Math.floor((n / 3.85) * 1.02);
}

export interface Size {
  chars: number;
  tokens: number;
}
const sizeOf = (text: string): Size => ({ chars: Array.from(text).length, tokens: builderTokens(text) });

export interface ItemVerdict {
  label: string;
  item: FloorItem;
  verdict: Verdict;
}

export type HookOutcome = 'replaced' | 'inserted' | 'added beside the section' | 'kept' | 'changed without markers';

export interface SpawnMeasure {
  id: string;
  scenario: string;
  agent: string;
  group: string;
  what: string;
  outcome: HookOutcome;
  /** The builder's section (null: it wrote none). */
  section: Size | null;
  /** The block between the markers (null: none placed). */
  block: Size | null;
  blockText: string | null;
  items: ItemVerdict[];
  /** Every byte outside the markers is the builder's. */
  identical: boolean;
  /** Where the first difference lies, when not. */
  difference?: string;
  /** Instrument findings that make the spawn's figures unreliable (an unread section, a builder that did not rebuild the same prompt). */
  problems: string[];
  notes: string[];
}

function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `byte ${i}: builder ${JSON.stringify(a.subarray(i, i + 40).toString('utf8'))}, hooked ${JSON.stringify(b.subarray(i, i + 40).toString('utf8'))}`;
}

/** Measures one spawn from the builder's prompt, its section read into items, and the prompt the agent gets. */
export function measureSpawn(
  spawn: { id: string; scenario: string; agent: string; group: string; what: string },
  builderPrompt: Buffer,
  section: BuilderSection,
  hooked: Buffer,
): SpawnMeasure {
  const builderText = builderPrompt.toString('utf8');
  const m: SpawnMeasure = {
    ...spawn, outcome: 'kept', section: section.found ? sizeOf(builderText.slice(0, section.end).trimEnd()) : null, block: null, blockText: null,
    items: [], identical: true, problems: [], notes: [],
  };
  if (section.unread !== undefined) m.problems.push(`builder section not read to its end: ${JSON.stringify(section.unread)}`);
  for (const a of section.ambiguous) m.notes.push(`ambiguous: ${a}`);
  const begin = hooked.indexOf(BEGIN);
  if (begin < 0) {
    m.outcome = hooked.equals(builderPrompt) ? 'kept' : 'changed without markers';
    m.identical = hooked.equals(builderPrompt);
    if (!m.identical) m.difference = firstDifference(builderPrompt, hooked);
    m.items = section.items.map((item) => ({ label: itemLabel(item), item, verdict: { status: 'present', how: "builder's prompt kept" } }));
    return m;
  }
  const end = hooked.indexOf(END, begin);
  if (end < 0) {
    m.outcome = 'changed without markers';
    m.identical = false;
    m.difference = 'a begin marker without an end marker';
    return m;
  }
  const blockText = hooked.subarray(begin + BEGIN.length, end).toString('utf8').replace(/^\r?\n/, '');
  m.blockText = blockText;
  m.block = sizeOf(blockText.trimEnd());
  m.outcome = section.found ? 'replaced' : 'inserted';
  // The builder's prompt with its section (through its trailing blank line) taken out, the block's place marked.
  const sectionBytes = section.found ? Buffer.byteLength(builderText.slice(0, section.end)) : 0;
  const expected = Buffer.concat([Buffer.from('\u0000'), section.found ? builderPrompt.subarray(sectionBytes) : Buffer.concat([Buffer.from('\n\n'), builderPrompt])]);
  const actual = Buffer.concat([hooked.subarray(0, begin), Buffer.from('\u0000'), hooked.subarray(end + END.length)]);
  m.identical = actual.equals(expected);
  // A block put first with the builder's section kept after it: the bytes are the builder's, and so are its items (shown twice).
  const beside = section.found && actual.equals(Buffer.concat([Buffer.from('\u0000\n\n'), builderPrompt]));
  if (beside) {
    m.outcome = 'added beside the section';
    m.identical = true;
    m.notes.push("the builder's section is kept after the block: the agent reads both");
  }
  if (!m.identical) m.difference = firstDifference(expected, actual);
  m.items = section.items.map((item) => ({ label: itemLabel(item), item, verdict: beside ? { status: 'present', how: "builder's section kept" } : judge(blockText, item) }));
  return m;
}

export interface Totals {
  spawns: number;
  items: number;
  present: number;
  stated: number;
  silent: number;
  byKind: Record<FloorItem['kind'], { items: number; present: number; stated: number; silent: number }>;
  identical: number;
  problems: number;
}

export function totalsOf(measures: readonly SpawnMeasure[]): Totals {
  const kinds = () => ({ items: 0, present: 0, stated: 0, silent: 0 });
  const t: Totals = { spawns: measures.length, items: 0, present: 0, stated: 0, silent: 0, byKind: { package: kinds(), reasoning: kinds(), error_pattern: kinds() }, identical: 0, problems: 0 };
  for (const m of measures) {
    if (m.identical) t.identical++;
    t.problems += m.problems.length;
    for (const { item, verdict } of m.items) {
      t.items++;
      t[verdict.status]++;
      t.byKind[item.kind].items++;
      t.byKind[item.kind][verdict.status]++;
    }
  }
  return t;
}

/** Whether the product met the floor on every spawn measured: nothing absent silently, every byte outside the markers the builder's, nothing unread. */
export const meetsFloor = (measures: readonly SpawnMeasure[]) => {
  const t = totalsOf(measures);
  return t.silent === 0 && t.identical === t.spawns && t.problems === 0;
};

/** The items a block shows, a count a kind (read from its text: the block's own line formats). */
export interface BlockKinds {
  packages: number;
  reasoning: number;
  error_patterns: number;
  strategies: number;
  memories: number;
}

/** Counts the block's entries by kind: package lines `**[PRIORITY]** path (id N…)`, reasoning `**[agent] phase (…):**`, patterns `⚠️ **Known Issue**`, and the `- ` entries under the strategies and memory headings. */
export function blockKinds(blockText: string): BlockKinds {
  const count = (re: RegExp) => (blockText.match(re) ?? []).length;
  const under = (heading: RegExp) => {
    const at = blockText.search(heading);
    if (at < 0) return 0;
    const rest = blockText.slice(at).split('\n').slice(1);
    const end = rest.findIndex((l) => l.startsWith('#'));
    return (end < 0 ? rest : rest.slice(0, end)).filter((l) => l.startsWith('- ')).length;
  };
  return {
    packages: count(/^\*\*\[(?:CRITICAL|HIGH|MEDIUM|LOW)\]\*\* .* \(id \d+(?:; [^)]*)?\)$/gm),
    reasoning: count(/^\*\*\[[a-z_]+\] [A-Za-z_]+(?: \([^)]*\))?:\*\* /gm),
    error_patterns: count(/^⚠️ \*\*Known Issue\*\*/gm),
    strategies: under(/^### Strategies That Worked/m),
    memories: under(/^### Project Memory/m),
  };
}

export interface BlockStanding {
  /** Packages and reasoning entries the block shows, by the standing it marks. */
  held: number;
  contradicted: number;
  unreviewed: number;
  /** Tokens (cl100k) of the block, and of its provenance and standing marks. */
  tokens: number;
  markTokens: number;
}

/** The block with its provenance and standing marks taken out: what it would be without them. */
export function withoutMarks(blockText: string): string {
  return blockText
    .replace(/^(\*\*\[(?:CRITICAL|HIGH|MEDIUM|LOW)\]\*\* .* \(id \d+); [^)]*\)$/gm, '$1)')
    .replace(/^(\*\*\[[a-z_]+\] [A-Za-z_]+) \([^)]*\):\*\* /gm, '$1:** ')
    .replace(/\(seen (\d+) times, [^)]*?(; not matched to this task)?\)$/gm, '(seen $1 times$2)')
    .replace(/^(- \*\*[^*]+\*\* \(helpful \d+×), [^)]*?(; not matched to this task)?\):/gm, '$1$2):');
}

/** Held, contradicted and unreviewed items the block shows, and what its marks cost in tokens. */
export function blockStanding(blockText: string, count: (text: string) => number): BlockStanding {
  const k = blockKinds(blockText);
  const marked = (re: RegExp) => (blockText.match(re) ?? []).length;
  const line = String.raw`^(?:\*\*\[(?:CRITICAL|HIGH|MEDIUM|LOW)\]\*\* .* \(id \d+; |\*\*\[[a-z_]+\] [A-Za-z_]+ \()[^)\n]*`;
  const held = marked(new RegExp(`${line}held: `, 'gm'));
  const contradicted = marked(new RegExp(`${line}a claim that failed review: `, 'gm'));
  const tokens = count(blockText);
  return { held, contradicted, unreviewed: k.packages + k.reasoning - held - contradicted, tokens, markTokens: tokens - count(withoutMarks(blockText)) };
}
