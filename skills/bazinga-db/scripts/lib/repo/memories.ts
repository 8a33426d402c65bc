/**
 * Project memory in the database (`ca_memories`, its full-text index `ca_fts_memories`): saving
 * with deduplication and supersession, reading, searching, access counts, archiving and
 * forgetting. Writers only (a database never opened by this version has no memory tables: reads
 * then find none). Values are always bound, never interpolated.
 */
import type { DB } from '../statements.ts';
import type { ProjectScope } from './sessions.ts';
import { stmt } from '../statements.ts';
import { decideSave, type SaveFacts } from '../memorySave.ts';
import { buildMatch, indexableText, queryTerms } from '../searchText.ts';
import {
  memoryHash,
  memoryText,
  mergeContent,
  withDefaults,
  normaliseMemoryText,
  type MemoryContent,
  type MemoryType,
} from '../memory.ts';

export interface MemoryRow {
  id: number;
  project_id: string;
  type: MemoryType;
  title: string;
  content: string;
  tags: string;
  importance: number;
  text_hash: string;
  source_session: string | null;
  source_group: string | null;
  source_agent: string | null;
  source_ref: string | null;
  /** Every source this memory was made or merged from (source_ref first). */
  sources: string;
  /** The text hash of what its source said when it was made (a later merge changes text_hash, not this). */
  source_hash: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  archived_at: string | null;
  last_accessed_at: string | null;
  access_count: number;
  parent_id: number | null;
  superseded_by: number | null;
}

/** A memory as commands print it: content and tags parsed. */
export type Memory = Omit<MemoryRow, 'content' | 'tags' | 'sources'> & { content: MemoryContent; tags: string[]; sources: string[] };

export function parseMemory(row: MemoryRow): Memory {
  return { ...row, content: JSON.parse(row.content) as MemoryContent, tags: JSON.parse(row.tags) as string[], sources: JSON.parse(row.sources) as string[] };
}

/**
 * Whether this database has the memory tables as this version reads them (a database no writer of
 * this version opened has not, nor one whose table an earlier definition made: its next writer
 * adds the columns; a reader finds no memory meanwhile).
 */
export function hasMemoryTables(db: DB): boolean {
  return stmt(db, "SELECT 1 FROM pragma_table_info('ca_memories') WHERE name = 'source_hash'").get() !== undefined;
}

export interface MemoryDraft {
  projectId: string;
  type: MemoryType;
  title: string;
  content: MemoryContent;
  tags: string[];
  importance: number;
  sourceSession: string | null;
  sourceGroup: string | null;
  sourceAgent: string | null;
  sourceRef: string | null;
  expiresAt: string | null;
  parentId: number | null;
}

export type SaveOperation = 'created' | 'bumped' | 'merged' | 'superseded' | 'unchanged';

export interface SaveResult {
  operation: SaveOperation;
  memory_id: number;
  /** merged: how alike the two were; superseded: the memory this one replaces. */
  similarity?: number;
  supersedes?: number;
}

const COLUMNS = `id, project_id, type, title, content, tags, importance, text_hash, source_session, source_group, source_agent, source_ref, sources, source_hash,
  created_at, updated_at, expires_at, archived_at, last_accessed_at, access_count, parent_id, superseded_by`;

export function getMemoryRow(db: DB, id: number): MemoryRow | undefined {
  return stmt(db, `SELECT ${COLUMNS} FROM ca_memories WHERE id = ?`).get(id) as MemoryRow | undefined;
}

/** Candidates a new memory may duplicate: the project's live memories of that type, newest first (at most `limit`). */
function liveOfType(db: DB, projectId: string, type: MemoryType, limit: number): MemoryRow[] {
  return stmt(
    db,
    `SELECT ${COLUMNS} FROM ca_memories WHERE project_id = ? AND type = ? AND archived_at IS NULL AND superseded_by IS NULL
     ORDER BY created_at DESC, id DESC LIMIT ?`,
  ).all(projectId, type, limit) as MemoryRow[];
}

function indexMemory(db: DB, id: number, type: MemoryType, title: string, content: MemoryContent): void {
  stmt(db, 'DELETE FROM ca_fts_memories WHERE rowid = ?').run(id);
  stmt(db, 'INSERT INTO ca_fts_memories (rowid, title, body) VALUES (?, ?, ?)').run(id, indexableText(title), indexableText(memoryText(type, '', content)));
}

function insertMemory(db: DB, d: MemoryDraft, hash: string, now: string): number {
  const r = stmt(
    db,
    `INSERT INTO ca_memories (project_id, type, title, content, tags, importance, text_hash, source_session, source_group, source_agent,
       source_ref, sources, source_hash, created_at, updated_at, expires_at, parent_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    d.projectId, d.type, d.title, JSON.stringify(d.content), JSON.stringify(d.tags), d.importance, hash, d.sourceSession, d.sourceGroup,
    d.sourceAgent, d.sourceRef, JSON.stringify(d.sourceRef === null ? [] : [d.sourceRef]), d.sourceRef === null ? null : hash, now, now, d.expiresAt, d.parentId,
  );
  const id = Number(r.lastInsertRowid);
  indexMemory(db, id, d.type, d.title, d.content);
  return id;
}

/** How many live memories of a type a save compares itself with (newest first). */
const DEDUP_WINDOW = 2000;

/**
 * Saves a memory, inside the caller's write transaction, never destroying anything: reads what
 * the decision needs (memorySave.ts decideSave: the rules, in order) and carries it out. Each read
 * is made only when the rules get that far: the memory made from the same source, then a live one
 * with the same text, then the live ones of the type.
 */
export function rememberMemory(db: DB, given: MemoryDraft, now: string, threshold: number): SaveResult {
  // Stored and compared with the type's defaults; merged with only what this save gave.
  const d: MemoryDraft = { ...given, content: withDefaults(given.type, given.content) };
  const hash = memoryHash(normaliseMemoryText(memoryText(d.type, d.title, d.content)));
  const facts: SaveFacts = { type: d.type, title: d.title, content: d.content, hash, sourceRef: d.sourceRef, live: [] };
  const rows = new Map<number, MemoryRow>();
  const keep = (row: MemoryRow) => (rows.set(row.id, row), row);
  const earlier =
    d.sourceRef === null
      ? undefined
      : (stmt(
          db,
          `SELECT ${COLUMNS} FROM ca_memories WHERE project_id = ? AND type = ?
             AND (source_ref = ? OR EXISTS (SELECT 1 FROM json_each(sources) WHERE json_each.value = ?))
           ORDER BY superseded_by IS NOT NULL, id DESC LIMIT 1`,
        ).get(d.projectId, d.type, d.sourceRef, d.sourceRef) as MemoryRow | undefined);
  if (earlier) facts.earlier = { id: keep(earlier).id, hash: earlier.source_hash ?? earlier.text_hash, sourceRef: earlier.source_ref, superseded: earlier.superseded_by !== null };
  else {
    const same = stmt(
      db,
      `SELECT ${COLUMNS} FROM ca_memories WHERE project_id = ? AND type = ? AND text_hash = ? AND superseded_by IS NULL ORDER BY archived_at IS NOT NULL, id LIMIT 1`,
    ).get(d.projectId, d.type, hash) as MemoryRow | undefined;
    if (same) facts.same = { id: keep(same).id };
    else facts.live = liveOfType(db, d.projectId, d.type, DEDUP_WINDOW).map((row) => ({ id: keep(row).id, type: row.type, title: row.title, content: JSON.parse(row.content) as MemoryContent }));
  }
  const decision = decideSave(facts, threshold);
  switch (decision.action) {
    case 'create':
      return { operation: 'created', memory_id: insertMemory(db, d, hash, now) };
    case 'unchanged':
      return { operation: 'unchanged', memory_id: decision.id };
    case 'supersede':
      return supersede(db, rows.get(decision.id) as MemoryRow, d, hash, now);
    case 'merge':
      return merge(db, rows.get(decision.id) as MemoryRow, given, now, decision.similarity);
    case 'bump': {
      const same = rows.get(decision.id) as MemoryRow;
      stmt(
        db,
        `UPDATE ca_memories SET access_count = access_count + 1, importance = MAX(importance, ?), tags = ?, sources = ?, archived_at = NULL, updated_at = ?
         WHERE id = ?`,
      ).run(d.importance, joinTags(same.tags, d.tags), withSource(same.sources, d.sourceRef), now, same.id);
      return { operation: 'bumped', memory_id: same.id };
    }
  }
  // Every action is handled above; the compiler cannot see the switch is exhaustive through the return.
  throw new Error(`unknown save decision ${JSON.stringify(decision)}`);
}

/** `d` merged into `kept` (see mergeContent); its text hash and index entry follow the merged text. */
function merge(db: DB, kept: MemoryRow, d: MemoryDraft, now: string, sim: number): SaveResult {
  const content = mergeContent(d.type, JSON.parse(kept.content) as MemoryContent, d.content);
  const hash = memoryHash(normaliseMemoryText(memoryText(kept.type, kept.title, content)));
  stmt(
    db,
    `UPDATE ca_memories SET content = ?, text_hash = ?, tags = ?, sources = ?, importance = MAX(importance, ?), access_count = access_count + 1,
       archived_at = NULL, updated_at = ? WHERE id = ?`,
  ).run(JSON.stringify(content), hash, joinTags(kept.tags, d.tags), withSource(kept.sources, d.sourceRef), d.importance, now, kept.id);
  indexMemory(db, kept.id, kept.type, kept.title, content);
  return { operation: 'merged', memory_id: kept.id, similarity: Math.round(sim * 1000) / 1000 };
}

function joinTags(kept: string, added: readonly string[]): string {
  return JSON.stringify([...new Set([...(JSON.parse(kept) as string[]), ...added])]);
}

/** A memory's sources with one more (JSON). */
function withSource(sources: string, ref: string | null): string {
  const list = JSON.parse(sources) as string[];
  return JSON.stringify(ref === null || list.includes(ref) ? list : [...list, ref]);
}

/** `d` replaces `old`: created with old as its parent, old marked superseded by it (never deleted). */
function supersede(db: DB, old: MemoryRow, d: MemoryDraft, hash: string, now: string): SaveResult {
  const id = insertMemory(db, d, hash, now);
  linkSupersession(db, old.id, id, now);
  return { operation: 'superseded', memory_id: id, supersedes: old.id };
}

/** An issue's content replaced (summarise-session resolving it): its text hash and index entry follow. */
export function resolveIssue(db: DB, row: MemoryRow, content: MemoryContent, now: string): void {
  const hash = memoryHash(normaliseMemoryText(memoryText(row.type, row.title, content)));
  stmt(db, 'UPDATE ca_memories SET content = ?, text_hash = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(content), hash, now, row.id);
  indexMemory(db, row.id, row.type, row.title, content);
}

/** Marks `oldId` superseded by `newId`, and newId's parent oldId when it has none (the caller checked both exist). */
export function linkSupersession(db: DB, oldId: number, newId: number, now: string): void {
  stmt(db, 'UPDATE ca_memories SET superseded_by = ?, updated_at = ? WHERE id = ?').run(newId, now, oldId);
  stmt(db, 'UPDATE ca_memories SET parent_id = COALESCE(parent_id, ?), updated_at = ? WHERE id = ?').run(oldId, now, newId);
}

/** Archives (or, with `archived` false, brings back) a memory; false when there is none. */
export function setArchived(db: DB, id: number, archived: boolean, now: string): boolean {
  return stmt(db, 'UPDATE ca_memories SET archived_at = ?, updated_at = ? WHERE id = ?').run(archived ? now : null, now, id).changes > 0;
}

/** Deletes a memory and its index entry; links to it are cleared by their foreign keys. False when there is none. */
export function deleteMemory(db: DB, id: number): boolean {
  stmt(db, 'DELETE FROM ca_fts_memories WHERE rowid = ?').run(id);
  stmt(db, 'UPDATE ca_memories SET superseded_by = NULL WHERE superseded_by = ?').run(id);
  stmt(db, 'UPDATE ca_memories SET parent_id = NULL WHERE parent_id = ?').run(id);
  const deleted = stmt(db, 'DELETE FROM ca_memories WHERE id = ?').run(id).changes > 0;
  // A deleted FTS5 row keeps its words in the index segments until they are merged: merge them now.
  if (deleted) stmt(db, "INSERT INTO ca_fts_memories(ca_fts_memories) VALUES ('optimize')").run();
  return deleted;
}

/** One more access of each memory, at `now`. */
export function touchMemories(db: DB, ids: readonly number[], now: string): void {
  for (const id of ids) stmt(db, 'UPDATE ca_memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?').run(now, id);
}

export interface MemoryQuery {
  /** One project's memories, or every project's (repo/sessions.ts ProjectScope: a session that records no project id). */
  scope: ProjectScope;
  /** Free text: ranked by full-text relevance (its terms, any of them). */
  text: string | null;
  type: MemoryType | null;
  /** Every one of these tags. */
  tags: readonly string[];
  minImportance: number;
  /** created_at bounds, inclusive. */
  since: string | null;
  until: string | null;
  /** Archived ones instead of live ones. */
  archived: boolean;
  includeSuperseded: boolean;
}

/**
 * The memories a query selects, each with its full-text relevance in [0, 1] (the best BM25 hit is
 * 1, the others in proportion; 0 without text). With text, only memories that hold a term.
 */
export function selectMemories(db: DB, q: MemoryQuery): { row: MemoryRow; relevance: number }[] {
  const where = [q.scope.wholeDatabase ? '1' : 'm.project_id = ?', 'm.importance >= ?', q.archived ? 'm.archived_at IS NOT NULL' : 'm.archived_at IS NULL'];
  const params: unknown[] = [...(q.scope.wholeDatabase ? [] : [q.scope.projectId]), q.minImportance];
  if (!q.includeSuperseded) where.push('m.superseded_by IS NULL');
  if (q.type !== null) {
    where.push('m.type = ?');
    params.push(q.type);
  }
  if (q.since !== null) {
    where.push('m.created_at >= ?');
    params.push(q.since);
  }
  if (q.until !== null) {
    where.push('m.created_at <= ?');
    params.push(q.until);
  }
  for (const tag of q.tags) {
    where.push('EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)');
    params.push(tag);
  }
  const cols = COLUMNS.split(',').map((c) => `m.${c.trim()}`).join(', ');
  const match = q.text === null ? null : buildMatch(queryTerms(q.text, 32));
  if (match === null) {
    const rows = db.prepare(`SELECT ${cols} FROM ca_memories m WHERE ${where.join(' AND ')} ORDER BY m.created_at DESC, m.id DESC`).all(...params) as MemoryRow[];
    return rows.map((row) => ({ row, relevance: 0 }));
  }
  // Title hits weigh twice a body hit (BM25 is lower-is-better).
  const rows = db
    .prepare(
      `SELECT ${cols}, bm25(ca_fts_memories, 2.0, 1.0) AS rank FROM ca_fts_memories JOIN ca_memories m ON m.id = ca_fts_memories.rowid
       WHERE ca_fts_memories MATCH ? AND ${where.join(' AND ')}`,
    )
    .all(match, ...params) as (MemoryRow & { rank: number })[];
  const best = Math.min(0, ...rows.map((r) => r.rank));
  return rows.map(({ rank, ...row }) => ({ row: row as MemoryRow, relevance: best === 0 ? 0 : Math.round((rank / best) * 1e4) / 1e4 }));
}

/** Every memory of a project (for maintenance), archived ones included. */
export function listProjectMemories(db: DB, projectId: string): MemoryRow[] {
  return stmt(db, `SELECT ${COLUMNS} FROM ca_memories WHERE project_id = ? ORDER BY id`).all(projectId) as MemoryRow[];
}
