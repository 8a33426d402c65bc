/**
 * The warning for a request whose session or task group does not exist. The block is assembled as
 * always (what the session-wide and project-wide stores give); one line on stderr names what was
 * not found and what exists, so that a mistyped `--session` or `--group` does not pass unseen.
 *
 * It runs on every assembly that reads the database, so it costs nothing when both exist: the
 * session's groups are those the search plan listed already, and the session itself is looked up
 * (by its key) only when it has no group. The lists it prints are bounded, and so is the count.
 * The group `global` (session-wide) always exists.
 */
import { countSessions, listRecentSessionIds, sessionExists, type DB } from '../../../bazinga-db/scripts/lib/index.ts';
import type { AssemblyRequest } from './contract.ts';

/** Sessions named when the requested one is missing (the most recently created). */
export const SESSIONS_NAMED = 3;
/** Groups named when the requested one is missing. */
export const GROUPS_NAMED = 10;
/** Sessions counted at most; past it the warning says `1000+`. */
export const SESSIONS_COUNTED = 1000;

/**
 * The warning line (without the `⚠ ` its printer adds) when the request's session or group does
 * not exist, else undefined. `groupIds` are the session's task groups, as the search plan listed them.
 */
export function unknownTargetWarning(db: DB, r: Pick<AssemblyRequest, 'session' | 'group'>, groupIds: readonly string[]): string | undefined {
  if (groupIds.length === 0 && !sessionExists(db, r.session)) {
    const count = countSessions(db, SESSIONS_COUNTED + 1);
    if (count === 0) return `context-assembler: session '${r.session}' not found; the database has no sessions`;
    const recent = listRecentSessionIds(db, SESSIONS_NAMED);
    const of = count > SESSIONS_COUNTED ? `${SESSIONS_COUNTED}+` : String(count);
    return `context-assembler: session '${r.session}' not found; sessions: ${recent.join(', ')} (${recent.length} most recent of ${of})`;
  }
  if (r.group === 'global' || groupIds.includes(r.group)) return undefined;
  if (groupIds.length === 0) return `context-assembler: group '${r.group}' not found in session ${r.session}; the session has no task groups`;
  const named = groupIds.slice(0, GROUPS_NAMED);
  const more = groupIds.length > named.length ? ` (${named.length} of ${groupIds.length})` : '';
  return `context-assembler: group '${r.group}' not found in session ${r.session}; groups: ${named.join(', ')}${more}`;
}
