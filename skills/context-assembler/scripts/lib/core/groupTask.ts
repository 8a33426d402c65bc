/**
 * One group's share of the session's requirements. Pure.
 *
 * BAZINGA keeps the user's request once per session (`sessions.original_requirements`) and, per
 * task group, only a name, a component path and specializations. In a session of several groups
 * the request names every group's work, often in one sentence ("Add JWT auth and an offline cart
 * to the shop app"), so a group's implicit query holds only the passages of the request that name
 * that group:
 *
 * - The request is read as lines, each line as sentences, each sentence as clauses (split at a
 *   comma, semicolon or colon followed by a space, outside brackets, and before "and", "plus",
 *   "then", "as well as").
 * - A passage names a group when it holds one of the group's own words: the words of its id, its
 *   name and its component path (layout segments such as `src` left out), less the words another
 *   group of the session also has. A passage word and a group word are the same when equal or
 *   when one begins with the other and the shorter has at least MIN_STEM characters (`auth` and
 *   `authentication`, `route` and `routes`).
 * - A passage naming several groups belongs to those it names the most words of.
 * - A passage naming none belongs with the clause a conjunction joins it to ("add readiness" and
 *   "liveness probes"), else continues the passage before it (the rest of a sentence, the next
 *   sentence of a paragraph); a heading, a list item or a blank line ends that, and then the
 *   passage belongs to the groups its heading names (a `#` line or a line ending in a colon), if
 *   any. Text that names no group and follows none (a preamble, a "Constraints" section) is the
 *   session's, not a group's.
 *
 * With one group in the session (or none), the whole request is that group's task; a group no
 * passage names gets none of it.
 */
import { wordsOf } from './relevance.ts';

/** What a task group is told apart by: its stored id, name and component path. */
export interface GroupIdentity {
  id: string;
  name: string | null;
  componentPath: string | null;
}

/** The shortest common beginning that makes two different words the same word (`auth` … `authentication`). */
export const MIN_STEM = 4;

/** Path segments that name a layout, not a piece of work. */
const GENERIC_SEGMENTS = new Set(['src', 'lib', 'libs', 'app', 'apps', 'packages', 'package', 'services', 'service', 'internal', 'cmd', 'pkg', 'main', 'index', 'source', 'sources', 'code', 'modules']);

/**
 * The passages of `requirements` that name group `groupId` (see the module comment), in their
 * order, one per line; the whole text when the session has no other group; '' when no passage
 * names it (its own fields then make its query).
 */
export function groupRequirements(requirements: string, groups: readonly GroupIdentity[], groupId: string): string {
  const others = groups.filter((g) => g.id !== groupId);
  if (others.length === 0) return requirements.trim();
  const self = groups.find((g) => g.id === groupId) ?? { id: groupId, name: null, componentPath: null };
  const namedBy = groupNamer(distinctWords([self, ...others]));
  const out: string[] = [];
  let section: ReadonlySet<string> = NOBODY;
  let previous: ReadonlySet<string> | null = null;
  for (const line of requirements.split(/\r?\n/)) {
    if (line.trim() === '') {
      previous = null;
      continue;
    }
    // A heading starts a section of its own, a list item a passage of its own.
    if (isHeading(line)) section = namedBy(line);
    if (isHeading(line) || LIST_ITEM.test(line)) previous = null;
    const passages = passagesOf(line);
    const named = passages.map((p) => namedBy(p.text));
    const joined = joinedOwners(passages, named);
    const kept: Passage[] = [];
    passages.forEach((p, i) => {
      const own = named[i] as ReadonlySet<string>;
      const owners = own.size > 0 ? own : (joined[i] ?? previous ?? section);
      if (owners.has(groupId)) kept.push(p);
      previous = owners;
    });
    out.push(...runsOf(line, kept));
  }
  return out.join('\n');
}

/**
 * For each passage, the groups of the first passage naming one that it is joined to by
 * conjunctions only ("add readiness | and liveness probes": two halves of one piece of work), read
 * from the end of the line once.
 */
function joinedOwners(passages: readonly Passage[], named: readonly ReadonlySet<string>[]): (ReadonlySet<string> | undefined)[] {
  const out: (ReadonlySet<string> | undefined)[] = new Array(passages.length).fill(undefined);
  for (let i = passages.length - 2; i >= 0; i--) {
    if (!(passages[i] as Passage).joinsNext) continue;
    const next = named[i + 1] as ReadonlySet<string>;
    out[i] = next.size > 0 ? next : out[i + 1];
  }
  return out;
}

/** Kept passages as the line's own text: each run of adjacent ones from its first start to its last end. */
function runsOf(line: string, kept: readonly Passage[]): string[] {
  const runs: string[] = [];
  let from = -1;
  let to = -1;
  let last = -1;
  for (const p of kept) {
    if (from !== -1 && p.index !== last + 1) {
      runs.push(line.slice(from, to));
      from = -1;
    }
    if (from === -1) from = p.start;
    to = p.end;
    last = p.index;
  }
  if (from !== -1) runs.push(line.slice(from, to));
  return runs;
}

const NOBODY: ReadonlySet<string> = new Set();

/** A line that starts a list item: `- x`, `* x`, `+ x`, `1. x`, `1) x`. */
const LIST_ITEM = /^\s*(?:[-*+]|\d{1,3}[.)])\s+/;

/** A markdown heading, or a line that introduces what follows it (`Authentication:`). */
function isHeading(line: string): boolean {
  return /^\s*#/.test(line) || /:\s*$/.test(line);
}

/** A group's own words: those of its id, name and component path that no other group of the session has. */
function distinctWords(groups: readonly GroupIdentity[]): Map<string, string[]> {
  const each = groups.map((g) => ({ id: g.id, words: identityWords(g) }));
  const holders = new Map<string, number>();
  for (const g of each) for (const w of g.words) holders.set(w, (holders.get(w) ?? 0) + 1);
  return new Map(each.map((g) => [g.id, [...g.words].filter((w) => holders.get(w) === 1)]));
}

function identityWords(g: GroupIdentity): Set<string> {
  const words = new Set([...wordsOf(g.id), ...wordsOf(g.name ?? '')]);
  for (const segment of (g.componentPath ?? '').split(/[\\/]+/)) {
    // A file's extension names its language, not the work.
    for (const w of wordsOf(segment.replace(/\.[A-Za-z0-9]+$/, ''))) if (!GENERIC_SEGMENTS.has(w)) words.add(w);
  }
  return words;
}

/**
 * A function giving the groups a passage names the most words of (none when it names no group's
 * word). Which groups a word is of is worked out once per distinct word of the request.
 */
function groupNamer(vocabularies: ReadonlyMap<string, readonly string[]>): (text: string) => Set<string> {
  const groupsOfWord = new Map<string, string[]>();
  const groupsOf = (word: string): string[] => {
    let ids = groupsOfWord.get(word);
    if (ids === undefined) {
      ids = [...vocabularies].filter(([, vocabulary]) => vocabulary.some((v) => sameWord(word, v))).map(([id]) => id);
      groupsOfWord.set(word, ids);
    }
    return ids;
  };
  return (text) => {
    // Words of the passage, each counted once however many of a group's words it is (auth: auth, authentication).
    const counts = new Map<string, number>();
    for (const word of wordsOf(text)) for (const id of groupsOf(word)) counts.set(id, (counts.get(id) ?? 0) + 1);
    const best = Math.max(0, ...counts.values());
    return new Set([...counts].filter(([, n]) => n === best && n > 0).map(([id]) => id));
  };
}

function sameWord(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= MIN_STEM && long.startsWith(short);
}

/** One clause of a line: its text (trimmed), where it lies in the line, and whether a conjunction joins it to the next. */
interface Passage {
  text: string;
  start: number;
  end: number;
  index: number;
  joinsNext: boolean;
}

/** Before a conjunction that joins two pieces of work. */
const CONJUNCTION = /^\s(?:and|plus|then|as well as)\s/i;

/**
 * A line's clauses in order: split at `.` `!` `?` `,` `;` `:` followed by a space (outside
 * brackets) and before a joining conjunction; blank ones dropped.
 */
function passagesOf(line: string): Passage[] {
  const cuts: { at: number; resume: number; conjunction: boolean }[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
    if (depth > 0) continue;
    // A sentence keeps its full stop; a clause leaves its comma behind.
    if (/[.!?,;:]/.test(c) && /\s/.test(line[i + 1] ?? ' ')) cuts.push({ at: /[.!?]/.test(c) ? i + 1 : i, resume: i + 1, conjunction: false });
    else if (c === ' ' && CONJUNCTION.test(line.slice(i, i + 12))) cuts.push({ at: i, resume: i + 1, conjunction: true });
  }
  const out: Passage[] = [];
  let from = 0;
  for (const [k, cut] of [...cuts, { at: line.length, resume: line.length, conjunction: false }].entries()) {
    const raw = line.slice(from, cut.at);
    const text = raw.trim();
    if (text !== '') {
      const start = from + (raw.length - raw.trimStart().length);
      out.push({ text, start, end: start + text.length, index: out.length, joinsNext: cut.conjunction });
    } else if (k > 0 && out.length > 0 && cut.conjunction) out[out.length - 1]!.joinsNext = true;
    from = cut.resume;
  }
  return out;
}
