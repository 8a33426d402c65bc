/**
 * Repository: what one spawn of an agent on a task group could be shown, reduced to a few figures,
 * so the prompt hook can tell whether anything arrived since it last assembled for the same params
 * file; and the stored texts that today's BAZINGA prompt builder quotes in its own context section.
 * Read-only; every figure is a count, a maximum or a sum over indexed columns.
 */
import { hasTable, stmt, type DB } from '../statements.ts';
import { hasMemoryTables } from './memories.ts';

export interface SpawnState {
  sessionFound: boolean;
  groupFound: boolean;
  /**
   * One line of figures that changes whenever something this spawn could be shown changed: the
   * packages the assembler can show the group (its own and those of global scope), its reasoning
   * (and the session-wide reasoning), the group's review state (revision count, last verdict,
   * attempts), the error patterns and strategies of every project, the project memories. What an
   * assembly itself writes (consumption marks, access counts) is not in it.
   */
  fingerprint: string;
}

type Figures = Record<string, unknown> | undefined;

/** The state of `group` (`global`: the whole session) in `sessionId`; see SpawnState. */
export function readSpawnState(db: DB, sessionId: string, group: string): SpawnState {
  const session = stmt(db, 'SELECT 1 AS found FROM sessions WHERE session_id = ?').get(sessionId) as Figures;
  // The assembler's own eligibility (contextPackages.ts): the group's packages and those of global scope.
  const packages = stmt(
    db,
    `SELECT count(*) AS n, max(id) AS last FROM context_packages
     WHERE session_id = @sessionId AND (group_id = @group OR scope = 'global')`,
  ).get({ sessionId, group }) as Figures;
  const reasoning = stmt(
    db,
    `SELECT count(*) AS n, max(id) AS last FROM orchestration_logs
     WHERE session_id = @sessionId AND log_type = 'reasoning' AND (group_id = @group OR group_id = 'global')`,
  ).get({ sessionId, group }) as Figures;
  const review = stmt(
    db,
    `SELECT revision_count, last_review_status, qa_attempts, tl_review_attempts, status FROM task_groups
     WHERE session_id = ? AND id = ?`,
  ).get(sessionId, group) as Figures;
  const patterns = stmt(db, 'SELECT count(*) AS n, max(last_seen) AS seen, sum(occurrences) AS occ, sum(confidence) AS conf FROM error_patterns').get() as Figures;
  // What the capture learnt of the rows (kept beside them, repo/patternLearning.ts) moves what a block shows too.
  const learnt = hasTable(db, 'ca_pattern_learning')
    ? (stmt(db, 'SELECT count(*) AS n, max(last_seen) AS seen, sum(occurrences_delta) AS occ, sum(confidence_delta) AS conf FROM ca_pattern_learning').get() as Figures)
    : null;
  const strategies = stmt(db, 'SELECT count(*) AS n, max(last_seen) AS seen, sum(helpfulness) AS help FROM strategies').get() as Figures;
  const memories = hasMemoryTables(db)
    ? (stmt(
        db,
        `SELECT count(*) AS n, max(id) AS last, max(updated_at) AS updated, count(archived_at) AS archived, count(superseded_by) AS superseded FROM ca_memories`,
      ).get() as Figures)
    : null;
  return {
    sessionFound: session !== undefined,
    groupFound: review !== undefined,
    fingerprint: JSON.stringify({ packages, reasoning, review: review ?? null, patterns, learnt, strategies, memories }),
  };
}

/** How many of each kind of quoted text the hook looks at (the builder shows at most 5 packages, 5 reasoning entries and 3 patterns). */
const QUOTED_ROWS = 200;

/**
 * Stored texts holding a blank line that the prompt builder may quote in its context section for
 * this group (package summaries, reasoning, error-pattern solutions), newest first. A quoted text
 * can hold lines that look like the builder's next component; the hook must not end the section
 * there. Texts without a blank line cannot, and are not returned.
 */
export function listQuotableTexts(db: DB, sessionId: string, group: string): { kind: 'summary' | 'reasoning' | 'solution'; text: string }[] {
  const wholeSession = group === 'global' ? 1 : 0;
  const params = { sessionId, group, wholeSession, rows: QUOTED_ROWS };
  const summaries = stmt(
    db,
    `SELECT summary AS text FROM context_packages
     WHERE session_id = @sessionId AND (@wholeSession = 1 OR group_id = @group OR group_id IS NULL OR group_id = '')
       AND instr(summary, char(10) || char(10)) > 0
     ORDER BY id DESC LIMIT @rows`,
  ).all(params) as { text: string }[];
  const reasoning = stmt(
    db,
    `SELECT content AS text FROM orchestration_logs
     WHERE session_id = @sessionId AND log_type = 'reasoning' AND (@wholeSession = 1 OR group_id = @group OR group_id = 'global')
       AND instr(content, char(10) || char(10)) > 0
     ORDER BY id DESC LIMIT @rows`,
  ).all(params) as { text: string }[];
  const solutions = stmt(
    db,
    `SELECT solution AS text FROM error_patterns WHERE instr(solution, char(10) || char(10)) > 0
     ORDER BY confidence DESC, occurrences DESC LIMIT @rows`,
  ).all({ rows: QUOTED_ROWS }) as { text: string }[];
  const of = (kind: 'summary' | 'reasoning' | 'solution', rows: { text: unknown }[]) =>
    rows.filter((r): r is { text: string } => typeof r.text === 'string').map((r) => ({ kind, text: r.text }));
  return [...of('summary', summaries), ...of('reasoning', reasoning), ...of('solution', solutions)];
}
