/**
 * Where this product's block goes in a prompt today's BAZINGA prompt builder wrote, worked out on
 * the prompt's bytes (nothing outside the replaced part is decoded and encoded again, so a byte
 * that is not UTF-8 stays what it was). Pure: the caller reads the files and the database.
 *
 * The builder's facts (../../../references/wiring.md): the prompt is its components joined by
 * one blank line; its context section, `## Context from Prior Work`, is the first component when
 * present (never elsewhere); the component after it is, depending on the group and on the
 * builder's budget, the specialization guidance, the skills checklist, the reasoning-save block,
 * the agent's definition or the task. The section ends where that component begins, and a line
 * quoted from the database (a summary, a reasoning excerpt) that looks like one does not end it.
 */

export const BLOCK_BEGIN = '<!-- context-assembler:begin -->';
export const BLOCK_END = '<!-- context-assembler:end -->';
/** The heading of the builder's context section. */
export const BUILDER_SECTION = '## Context from Prior Work';

/**
 * How each component the builder can write after its context section begins, in the builder's
 * order (the reasoning-save block and the task open with a rule; the task with a blank line too).
 * The agent's definition, which can also come next, opens with its file's own first lines: the
 * caller reads them (`agentOpening`).
 */
export const NEXT_COMPONENTS: readonly string[] = [
  '## SPECIALIZATION GUIDANCE (Advisory)\n',
  '## Skills Checklist\n',
  '---\n\n## 🔴 MANDATORY REASONING SAVES',
  '\n---\n\n## Current Task Assignment\n',
];

/** What opens an agent definition whose file could not be read: YAML frontmatter naming the agent. */
const FRONTMATTER_OPENING = '---\nname: ';

/** A stored text the builder may print in its section: a package summary, a reasoning entry's content or an error pattern's solution. */
export interface QuotedText {
  kind: 'summary' | 'reasoning' | 'solution';
  text: string;
}

/**
 * How the builder prints each kind (bazinga-today.md): what stands right before the text, and where
 * it cuts the text (in characters): `**[PRIORITY]** path` then `> ` and the summary's first 200;
 * `**[agent] phase:** ` and the content's first 300; `> **Solution**: ` and the solution's first 200.
 */
export const QUOTE_FORMS: Readonly<Record<QuotedText['kind'], { before: string; cut: number }>> = {
  summary: { before: '> ', cut: 200 },
  reasoning: { before: ':** ', cut: 300 },
  solution: { before: '> **Solution**: ', cut: 200 },
};
/** Where the printed texts are looked for: the builder's section is a few kilobytes at the top. */
const QUOTE_SEARCH_BYTES = 256 * 1024;
/** How much of a text must follow its print prefix for the print to be found. */
const QUOTE_ANCHOR_BYTES = 48;

/** Where the block goes, or why it goes nowhere. Offsets are byte offsets into the prompt. */
export type Placement =
  | { kind: 'replace'; end: number; next: string }
  | { kind: 'renew'; end: number }
  | { kind: 'insert' }
  | { kind: 'unknown'; why: string };

export interface PlacementInput {
  /** Blocks this hook put in this prompt before (newest first): a prompt opening with one of them marked is a second run. */
  earlierBlocks: readonly string[];
  /** Stored texts the builder may quote in its section (listQuotableTexts), each with what it is. */
  quoted: readonly QuotedText[];
  /** The first lines of the agent's definition file, when it could be read. */
  agentOpening?: string | undefined;
}

/** `\r\n` when the prompt's first line ends so (a builder run on Windows writes text mode), else `\n`. */
export function newlineOf(prompt: Buffer): '\n' | '\r\n' {
  const lf = prompt.indexOf(0x0a);
  return lf > 0 && prompt[lf - 1] === 0x0d ? '\r\n' : '\n';
}

const withNewline = (text: string, nl: string) => (nl === '\n' ? text : text.replace(/\r?\n/g, nl));

/**
 * Text from the database made safe to sit between the markers: a marker inside it (a summary that
 * quotes one) is written with `&lt;` so it can never open or close a block.
 */
export function neutraliseMarkers(text: string): string {
  return text.replace(/<!--(\s*context-assembler\s*:)/gi, '&lt;!--$1');
}

/** The block between the markers, as it goes into the prompt (with the blank line that separates it from the next component). */
export function markedBlock(block: string, nl: '\n' | '\r\n'): string {
  return withNewline(`${BLOCK_BEGIN}\n${neutraliseMarkers(block).trimEnd()}\n${BLOCK_END}\n\n`, nl);
}

/** Where `block` goes in `prompt`; see Placement. */
export function placeBlock(prompt: Buffer, input: PlacementInput): Placement {
  const nl = newlineOf(prompt);
  for (const earlier of input.earlierBlocks) {
    const marked = Buffer.from(markedBlock(earlier, nl));
    if (prompt.length >= marked.length && prompt.subarray(0, marked.length).equals(marked)) return { kind: 'renew', end: marked.length };
  }
  if (startsWith(prompt, BLOCK_BEGIN)) return { kind: 'unknown', why: 'the prompt opens with a block this hook did not make (edited since?)' };
  const heading = Buffer.from(BUILDER_SECTION + nl);
  if (!startsWith(prompt, heading.toString())) return { kind: 'insert' };
  const next = sectionEnd(prompt, heading.length, nl, input);
  if (next === undefined) return { kind: 'unknown', why: `no component of the builder's follows its "${BUILDER_SECTION}" section` };
  return { kind: 'replace', end: next.at, next: next.opening };
}

function startsWith(prompt: Buffer, text: string): boolean {
  const t = Buffer.from(text);
  return prompt.length >= t.length && prompt.subarray(0, t.length).equals(t);
}

/**
 * The byte offset where the component after the context section begins, and its opening line:
 * the first place after `from` where a blank line is followed by one of the openings, unless a
 * text the builder printed there runs across it.
 */
function sectionEnd(prompt: Buffer, from: number, nl: string, input: PlacementInput): { at: number; opening: string } | undefined {
  const openings = [...NEXT_COMPONENTS, ...(input.agentOpening ? [input.agentOpening] : []), FRONTMATTER_OPENING].map((o) => withNewline(o, nl));
  const gap = Buffer.from(nl + nl);
  const found: { at: number; opening: string }[] = [];
  for (const opening of openings) {
    const needle = Buffer.concat([gap, Buffer.from(opening)]);
    for (let i = prompt.indexOf(needle, from); i !== -1; i = prompt.indexOf(needle, i + 1)) found.push({ at: i + gap.length, opening });
  }
  found.sort((a, b) => a.at - b.at);
  const spans = printedSpans(prompt, from, input.quoted, nl);
  return found.find((c) => !spans.some((sp) => sp.start < c.at && c.at < sp.end));
}

/**
 * Where the builder printed the stored texts in its section: each text, cut as the builder cuts
 * it, found right after its print prefix; the span runs as far as the prompt's bytes are the
 * text's. A text the builder did not print in this prompt spans nothing, so no stored text can
 * hide a boundary it does not itself stand across, and none reaches past the builder's cut.
 */
function printedSpans(prompt: Buffer, from: number, quoted: readonly QuotedText[], nl: string): { start: number; end: number }[] {
  const window = prompt.subarray(0, Math.min(prompt.length, QUOTE_SEARCH_BYTES));
  const spans: { start: number; end: number }[] = [];
  for (const q of quoted) {
    const form = QUOTE_FORMS[q.kind];
    const text = Buffer.from(withNewline(Array.from(q.text).slice(0, form.cut).join(''), nl));
    if (text.length === 0) continue;
    const needle = Buffer.concat([Buffer.from(form.before), text.subarray(0, QUOTE_ANCHOR_BYTES)]);
    for (let i = window.indexOf(needle, from); i !== -1; i = window.indexOf(needle, i + 1)) {
      const start = i + form.before.length;
      let end = start;
      while (end - start < text.length && end < window.length && window[end] === text[end - start]) end++;
      spans.push({ start, end });
    }
  }
  return spans;
}

/** How many packages the builder's own section (the part a `replace` placement removes) lists: `**[PRIORITY]** path` lines. */
export function builderPackageCount(prompt: Buffer, placement: Placement): number {
  if (placement.kind !== 'replace') return 0;
  return prompt.subarray(0, placement.end).toString('utf8').match(/^\*\*\[[A-Z]+\]\*\* \S/gm)?.length ?? 0;
}

/** The prompt with the block placed (the caller has checked the placement is not `unknown`). */
export function withBlock(prompt: Buffer, placement: Exclude<Placement, { kind: 'unknown' }>, block: string): Buffer {
  const marked = Buffer.from(markedBlock(block, newlineOf(prompt)));
  const keepFrom = placement.kind === 'insert' ? 0 : placement.end;
  return Buffer.concat([marked, prompt.subarray(keepFrom)]);
}

/** A one-line description of what the placement replaces, for doctor and the hook's messages. */
export function describePlacement(prompt: Buffer, placement: Placement): string {
  switch (placement.kind) {
    case 'replace':
      return `the builder's "${BUILDER_SECTION}" section (bytes 0-${placement.end}, ${lineCount(prompt.subarray(0, placement.end))} lines), up to ${JSON.stringify(firstLine(placement.next))}`;
    case 'renew':
      return `this product's earlier block (bytes 0-${placement.end})`;
    case 'insert':
      return 'nothing: the prompt has no context section, the block goes first';
    case 'unknown':
      return `nothing: ${placement.why}`;
  }
}

const lineCount = (b: Buffer) => b.toString('latin1').split('\n').length - 1;
const firstLine = (text: string) => text.replace(/^(?:\r?\n)+/, '').split(/\r?\n/)[0] ?? '';
