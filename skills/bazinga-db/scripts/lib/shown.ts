/**
 * How stored text is shown in a context block: on one line, cut at a word, and a reasoning
 * entry's line. Both skills use these: the assembler renders with them, and bazinga-db counts the
 * tokens of a reasoning entry as it will be shown when it stores the entry (save-reasoning), so
 * that an assembly sizes it without loading the rank table. Pure; lengths are in code points.
 */

/** Characters of a reasoning entry's content shown in a block (context_engineering.reasoning.content_chars). */
export const DEFAULT_REASONING_CONTENT_CHARS = 300;

/** Collapses every run of whitespace (newlines included) to one space and trims. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Cuts `text` to at most `max` characters at a word boundary, ending in "..." when cut. A cut
 * that would lose more than half of the allowance to reach a word boundary cuts mid-word instead.
 */
export function truncateAtWord(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  if (max <= 3) return '.'.repeat(Math.max(0, max));
  const head = chars.slice(0, max - 3).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= (max - 3) / 2 ? head.slice(0, space) : head;
  return cut.replace(/[\s,;:.-]+$/, '') + '...';
}

/** A reasoning entry as a block shows it (one line, without its line break). */
export function reasoningLine(agentType: string, phase: string, content: string): string {
  return `**[${agentType}] ${phase}:** ${content}`;
}

/**
 * The line of a stored reasoning row as shown with `contentChars` characters of content, with its
 * line break: the text whose count save-reasoning stores.
 */
export function shownReasoningLine(agentType: string, phase: string, storedContent: string, contentChars: number): string {
  return reasoningLine(oneLine(agentType), phase, truncateAtWord(oneLine(storedContent), contentChars)) + '\n';
}

/**
 * How a stored text is shown as the tail of a one-line entry: after a space, on one line, ending
 * the line. save-reasoning stores its count too, which bounds the entry when it is shown cut to
 * another length than the one counted.
 */
export function shownTail(text: string): string {
  return ` ${oneLine(text)}\n`;
}
