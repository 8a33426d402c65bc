/**
 * The builder's own context section, read item by item: every package, reasoning entry and error
 * pattern it printed, mapped to its database row. The section is the ground truth; the database
 * (opened read-only) only names what it shows. Each row the builder could print for the spawn (its
 * filters, without its limits and budget) is rendered exactly as the builder renders it, and the
 * section is then read from its heading on, line after line, each line matched whole against an
 * unused rendering: the items are the rows whose lines are there, in the builder's order. What is
 * left over (a line no row renders) is reported, never guessed at.
 *
 * The builder's formats (prompt_builder.py build_context_block): `## Context from Prior Work`, a
 * blank line, its sections joined by one newline, each a `### ` heading, a blank line, and lines
 * ending in a blank line: `**[PRIORITY]** path` / `> summary` (cut at 200, then `...`),
 * `**[agent] phase:** content` (cut at 300), `**Known Issue**: signature_json` (cut at 100) /
 * `> **Solution**: solution` (cut at 200). Python cuts code points, as `cut` does here.
 */
import Database from 'better-sqlite3';

export const SECTION_HEADING = '## Context from Prior Work\n\n';
const HEADINGS = {
  package: '### Relevant Context\n\n',
  reasoning: '### Prior Agent Reasoning\n\n',
  error_pattern: '### Known Error Patterns\n\n',
} as const;

/** The producers whose reasoning the builder shows each reviewer (its relevant_agents; the developer gets none). */
export const REASONING_PRODUCERS: Readonly<Record<string, readonly string[]>> = {
  qa_expert: ['developer', 'senior_software_engineer'],
  tech_lead: ['developer', 'senior_software_engineer', 'qa_expert'],
  senior_software_engineer: ['developer'],
  investigator: ['developer', 'senior_software_engineer', 'qa_expert'],
};

export interface PackageItem {
  kind: 'package';
  id: number;
  priority: string;
  packageType: string;
  filePath: string;
  summary: string;
  groupId: string | null;
  producer: string;
  consumers: string[];
  line: string;
}

export interface ReasoningItem {
  kind: 'reasoning';
  id: number;
  agent: string;
  phase: string | null;
  content: string;
  groupId: string | null;
  line: string;
}

/** One fault: the builder's rows with the same error_type and message_pattern count as one item. */
export interface ErrorPatternItem {
  kind: 'error_pattern';
  hashes: string[];
  projects: string[];
  errorType: string;
  messagePattern: string;
  line: string;
}

export type FloorItem = PackageItem | ReasoningItem | ErrorPatternItem;

export interface BuilderSection {
  /** Whether the prompt opens with the builder's context section. */
  found: boolean;
  /** Where the section ends (after its last line's blank line; the builder's join to the next component follows). */
  end: number;
  items: FloorItem[];
  /** What could not be read as the builder's lines, if anything (the first 120 characters from there). */
  unread?: string;
  /** Two rows rendering the same line: the first in the builder's order was taken. */
  ambiguous: string[];
}

/** The first `n` code points, as Python's `s[:n]`. */
export const cut = (s: string, n: number) => {
  const points = Array.from(s);
  return points.length <= n ? s : points.slice(0, n).join('');
};
const codePoints = (s: string) => Array.from(s).length;

type Candidate = { item: FloorItem; order: number };

export interface SpawnKey {
  session: string;
  group: string;
  agent: string;
}

/** Every row the builder could print for the spawn, rendered as it renders them, in its order. */
export function readCandidates(dbPath: string, spawn: SpawnKey): { package: Candidate[]; reasoning: Candidate[]; error_pattern: Candidate[] } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const packages = db
      .prepare(
        `SELECT id, file_path, priority, summary, group_id, package_type, producer_agent FROM context_packages
         WHERE session_id = ? AND (group_id = ? OR group_id IS NULL OR group_id = '')
         ORDER BY CASE priority WHEN 'critical' THEN 1 WHEN 'high' THEN 2 WHEN 'medium' THEN 3 WHEN 'low' THEN 4 ELSE 5 END, created_at DESC, id`,
      )
      .all(spawn.session, spawn.group) as { id: number; file_path: string; priority: string; summary: string | null; group_id: string | null; package_type: string; producer_agent: string }[];
    const consumersOf = db.prepare('SELECT agent_type FROM context_package_consumers WHERE package_id = ? ORDER BY rowid');
    const pkg: Candidate[] = packages
      .filter((p) => p.summary)
      .map((p, order) => {
        const summary = p.summary as string;
        const shown = codePoints(summary) > 200 ? `${cut(summary, 200)}...` : summary;
        return {
          order,
          item: {
            kind: 'package', id: p.id, priority: p.priority, packageType: p.package_type, filePath: p.file_path, summary, groupId: p.group_id, producer: p.producer_agent,
            consumers: (consumersOf.all(p.id) as { agent_type: string }[]).map((c) => c.agent_type),
            line: `**[${p.priority.toUpperCase()}]** ${p.file_path}\n> ${shown}\n\n`,
          },
        };
      });
    const producers = REASONING_PRODUCERS[spawn.agent] ?? [];
    const reasoning: Candidate[] =
      producers.length === 0
        ? []
        : (
            db
              .prepare(
                `SELECT id, agent_type, reasoning_phase, content, group_id FROM orchestration_logs
                 WHERE session_id = ? AND (group_id = ? OR group_id = 'global') AND log_type = 'reasoning'
                   AND agent_type IN (${producers.map(() => '?').join(',')})
                 ORDER BY timestamp DESC, id DESC`,
              )
              .all(spawn.session, spawn.group, ...producers) as { id: number; agent_type: string; reasoning_phase: string | null; content: string | null; group_id: string | null }[]
          ).map((r, order) => ({
            order,
            item: {
              kind: 'reasoning', id: r.id, agent: r.agent_type, phase: r.reasoning_phase, content: r.content ?? '', groupId: r.group_id,
              line: `**[${r.agent_type}] ${r.reasoning_phase ?? 'None'}:** ${r.content ? cut(r.content, 300) : ''}\n\n`,
            },
          }));
    const patterns = db
      .prepare('SELECT pattern_hash, project_id, signature_json, solution FROM error_patterns WHERE confidence > 0.7 ORDER BY confidence DESC, occurrences DESC, rowid')
      .all() as { pattern_hash: string; project_id: string; signature_json: string | null; solution: string | null }[];
    const errorPattern: Candidate[] = patterns.map((p, order) => {
      let signature: { error_type?: unknown; message_pattern?: unknown } = {};
      try {
        signature = JSON.parse(p.signature_json ?? '{}') as typeof signature;
      } catch {
        // a signature that is not JSON: the builder prints its text all the same
      }
      return {
        order,
        item: {
          kind: 'error_pattern', hashes: [p.pattern_hash], projects: [p.project_id],
          errorType: String(signature.error_type ?? ''), messagePattern: String(signature.message_pattern ?? ''),
          line: `**Known Issue**: ${p.signature_json ? cut(p.signature_json, 100) : ''}\n> **Solution**: ${p.solution ? cut(p.solution, 200) : ''}\n\n`,
        },
      };
    });
    return { package: pkg, reasoning, error_pattern: errorPattern };
  } finally {
    db.close();
  }
}

/** Reads the builder's context section at the start of `prompt` into its items (see the header). */
export function readBuilderSection(prompt: string, candidates: ReturnType<typeof readCandidates>): BuilderSection {
  if (!prompt.startsWith(SECTION_HEADING)) return { found: false, end: 0, items: [], ambiguous: [] };
  let pos = SECTION_HEADING.length;
  const items: FloorItem[] = [];
  const ambiguous: string[] = [];
  let first = true;
  for (const kind of ['package', 'reasoning', 'error_pattern'] as const) {
    const heading = (first ? '' : '\n') + HEADINGS[kind];
    if (!prompt.startsWith(heading, pos)) continue;
    let at = pos + heading.length;
    const unused = [...candidates[kind]];
    let lines = 0;
    for (;;) {
      const matching = unused.filter((c) => prompt.startsWith(c.item.line, at));
      if (matching.length === 0) break;
      // Prefer the longest line (a line can begin another), then the builder's order.
      matching.sort((a, b) => b.item.line.length - a.item.line.length || a.order - b.order);
      const taken = matching[0] as Candidate;
      // Rows of one fault print the same line: they are one item (mergeFaults); other kinds say so.
      if (kind !== 'error_pattern' && matching.some((c) => c !== taken && c.item.line === taken.item.line)) ambiguous.push(`${kind} line at ${at} renders ${matching.filter((c) => c.item.line === taken.item.line).length} rows`);
      unused.splice(unused.indexOf(taken), 1);
      items.push(taken.item);
      at += taken.item.line.length;
      lines++;
    }
    if (lines === 0) return { found: true, end: pos, items, ambiguous, unread: prompt.slice(pos, pos + 120) };
    pos = at;
    first = false;
  }
  const rest = prompt.slice(pos);
  const section: BuilderSection = { found: true, end: pos, items: mergeFaults(items), ambiguous };
  if (items.length === 0 || (rest !== '' && !rest.startsWith('\n\n'))) section.unread = rest.slice(0, 120);
  return section;
}

/** Error pattern rows of one fault (the same error_type and message_pattern) become one item. */
function mergeFaults(items: FloorItem[]): FloorItem[] {
  const out: FloorItem[] = [];
  for (const item of items) {
    if (item.kind !== 'error_pattern') {
      out.push(item);
      continue;
    }
    const same = out.find((o): o is ErrorPatternItem => o.kind === 'error_pattern' && o.errorType === item.errorType && o.messagePattern === item.messagePattern);
    if (same) {
      same.hashes.push(...item.hashes);
      same.projects.push(...item.projects);
    } else out.push({ ...item, hashes: [...item.hashes], projects: [...item.projects] });
  }
  return out;
}

/** How an item is named in the report: `package 12 [CRITICAL failures → developer]`, `reasoning 40 [developer approach]`, `error pattern 3f2a9c01 [TypeError, acme-web]`. */
export function itemLabel(item: FloorItem): string {
  if (item.kind === 'package') return `package ${item.id} [${item.priority.toUpperCase()} ${item.packageType} → ${item.consumers.join(', ')}]`;
  if (item.kind === 'reasoning') return `reasoning ${item.id} [${item.agent} ${item.phase ?? 'None'}]`;
  return `error pattern ${[...new Set(item.hashes.map((h) => h.slice(0, 8)))].join('/')} [${item.errorType}, ${[...new Set(item.projects)].join(' + ')}]`;
}
