/**
 * What saving a memory does, decided from what the database holds (pure: the repository reads
 * the facts and carries the decision out, repo/memories.ts). In order:
 * 1. made from the same source before (`sourceRef`, as summarise-session gives) as a memory of
 *    its type: the same text (or a text merged there) is left as it is; a live one with another
 *    text is superseded by the new one (a state that moved on, a decision revised);
 * 2. the same normalised text as a live memory of its type: that memory is bumped;
 * 3. the same normalised title as a live memory of its type: a state supersedes it; a decision
 *    supersedes it when its statement says something else (statementRevised), else merges; an
 *    issue or a learning merges (so an issue saved again with "status": "resolved" resolves it);
 * 4. a live memory of its type at least `threshold` alike: a decision whose statement says
 *    something else supersedes it, anything else merges into it;
 * 5. otherwise created.
 */
import { memoryText, normaliseMemoryText, similarity, type MemoryContent, type MemoryType } from './memory.ts';

/** A stored memory, as far as the decision looks at it. */
export interface KnownMemory {
  id: number;
  type: MemoryType;
  title: string;
  content: MemoryContent;
}

/** What the repository read for one save. */
export interface SaveFacts {
  type: MemoryType;
  title: string;
  /** The save's content with its type's defaults (what is stored for a new memory). */
  content: MemoryContent;
  /** Its normalised text's hash (memoryHash). */
  hash: string;
  sourceRef: string | null;
  /** The memory made from the same source before (newest first: a live one before a superseded one). */
  earlier?: { id: number; hash: string; sourceRef: string | null; superseded: boolean };
  /** A live memory of the type with the same text hash. */
  same?: { id: number };
  /** The project's live memories of the type, newest first (the dedup window). */
  live: readonly KnownMemory[];
}

export type SaveDecision =
  | { action: 'unchanged'; id: number }
  | { action: 'bump'; id: number }
  | { action: 'supersede'; id: number }
  | { action: 'merge'; id: number; similarity: number }
  | { action: 'create' };

/** How much of a memory's normalised text dedup compares (a save stays cheap whatever the memories' size). */
export const COMPARED_CHARS = 4000;

/** See the module's rules; `threshold` is memory.dedup_similarity. */
export function decideSave(f: SaveFacts, threshold: number): SaveDecision {
  if (f.sourceRef !== null && f.earlier !== undefined) {
    // The source says what it said when the memory was made (whatever was merged into it since),
    // it was merged there, or a later memory replaced it: nothing to add. Else the source moved on.
    const e = f.earlier;
    if (e.hash === f.hash || e.sourceRef !== f.sourceRef || e.superseded) return { action: 'unchanged', id: e.id };
    return { action: 'supersede', id: e.id };
  }
  if (f.same) return { action: 'bump', id: f.same.id };
  const normalised = normaliseMemoryText(memoryText(f.type, f.title, f.content)).slice(0, COMPARED_CHARS);
  const title = normaliseMemoryText(f.title);
  const namesake = f.live.find((m) => normaliseMemoryText(m.title) === title);
  if (namesake) {
    // A decision under the same title whose statement says something else is a revision; its
    // rationale or alternatives changing is not.
    const revised = f.type === 'decision' && statementRevised(statementOf(f.content), statementOf(namesake.content), threshold);
    if (f.type === 'state' || revised) return { action: 'supersede', id: namesake.id };
    return { action: 'merge', id: namesake.id, similarity: similarity(normalised, comparable(namesake)) };
  }
  let best: { m: KnownMemory; sim: number } | undefined;
  for (const m of f.live) {
    const sim = similarity(normalised, comparable(m));
    if (sim >= threshold && (best === undefined || sim > best.sim)) best = { m, sim };
  }
  if (best === undefined) return { action: 'create' };
  // A decision alike as a whole (the same rationale, say) whose statement says something else is
  // a revision: it supersedes the old one, with its own title, never merges into it.
  if (f.type === 'decision' && statementRevised(statementOf(f.content), statementOf(best.m.content), threshold)) return { action: 'supersede', id: best.m.id };
  return { action: 'merge', id: best.m.id, similarity: best.sim };
}

const statementOf = (content: MemoryContent) => String(content.decision ?? '');

const comparable = (m: KnownMemory) => normaliseMemoryText(memoryText(m.type, m.title, m.content)).slice(0, COMPARED_CHARS);

/** Whether a decision's statement says something else than `theirs`: less than `threshold` alike on its own, or contradicting it. */
export function statementRevised(mine: string, theirs: string, threshold: number): boolean {
  return similarity(normaliseMemoryText(mine), normaliseMemoryText(theirs)) < threshold || contradicts(mine, theirs);
}

/** A negation, spelt out or contracted ("not", "never", "don't", "shouldn't", "cannot", "avoid", …). */
const NEGATION =
  /\b(?:not|no|never|none|without|cannot|avoid|stop|instead|disabled?|(?:do|does|did|should|would|could|must|need|is|are|was|were|has|have|had|ca|wo)n['’]?t)\b/i;

/**
 * Whether two decision statements say different things though they read alike: the numbers they
 * state differ ("15 minutes" / "60 minutes") or one is negated and the other not ("retry" / "do
 * not retry", "should" / "shouldn't"). Only the statement (`content.decision`) is compared: a
 * rationale or an alternative that gains a number or a "not" does not turn the decision around.
 */
export function contradicts(a: string, b: string): boolean {
  const numbers = (t: string) => [...new Set(normaliseMemoryText(t).match(/\d+/g) ?? [])].sort().join(' ');
  return numbers(a) !== numbers(b) || NEGATION.test(a) !== NEGATION.test(b);
}
