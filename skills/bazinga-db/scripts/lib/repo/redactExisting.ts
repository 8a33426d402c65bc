/**
 * Re-redaction of rows already in a database: those the original tool wrote (it stores package
 * summaries, strategies and most fields as given) or an older version of this one wrote (fewer
 * rules). Every free-text column of every table a command can fill is run through the engine;
 * JSON columns value by value, so the JSON stays valid. Artifact files are never touched.
 */
import type { DB } from '../statements.ts';
import { pyJsonDumps } from '../pyjson.ts';
import { Redactor, type RedactionPolicy } from '../redact.ts';

interface ColumnSpec {
  name: string;
  json?: true;
}

interface TableSpec {
  table: string;
  columns: readonly ColumnSpec[];
  /** A 0/1 column set to 1 on a row whose text changed. */
  flag?: string;
}

/** The tables and columns that hold text a caller wrote (ids, enums and timestamps excepted). */
const REDACTABLE: readonly TableSpec[] = [
  { table: 'sessions', columns: [{ name: 'original_requirements' }, { name: 'metadata', json: true }, { name: 'initial_branch' }] },
  {
    table: 'orchestration_logs',
    columns: [{ name: 'content' }, { name: 'references_json', json: true }, { name: 'event_payload', json: true }, { name: 'agent_id' }],
    flag: 'redacted',
  },
  { table: 'task_groups', columns: [{ name: 'name' }, { name: 'component_path' }, { name: 'assigned_to' }, { name: 'feature_branch' }, { name: 'specializations', json: true }] },
  { table: 'context_packages', columns: [{ name: 'summary' }, { name: 'file_path' }] },
  { table: 'error_patterns', columns: [{ name: 'signature_json', json: true }, { name: 'solution' }, { name: 'lang' }] },
  { table: 'strategies', columns: [{ name: 'insight' }, { name: 'topic' }, { name: 'lang' }, { name: 'framework' }] },
  { table: 'state_snapshots', columns: [{ name: 'state_data', json: true }] },
  { table: 'skill_outputs', columns: [{ name: 'output_data', json: true }] },
  { table: 'development_plans', columns: [{ name: 'original_prompt' }, { name: 'plan_text' }, { name: 'phases', json: true }, { name: 'metadata', json: true }] },
  { table: 'success_criteria', columns: [{ name: 'criterion' }, { name: 'actual' }, { name: 'evidence' }] },
];

export interface TableCount {
  scanned: number;
  changed: number;
}

export interface RedactExistingResult {
  rows_scanned: number;
  rows_changed: number;
  tables: Record<string, TableCount>;
  rules: Record<string, number>;
}

const PAGE_ROWS = 1000;

const quoteId = (name: string) => `"${name.replace(/"/g, '""')}"`;

function existingColumns(db: DB, table: string): Set<string> {
  const rows = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

/** Redacts one stored value; JSON that does not parse is redacted as text. */
function redactStored(redactor: Redactor, value: string, json: boolean): string {
  if (json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return redactor.text(value);
    }
    const redacted = redactor.json(parsed);
    return JSON.stringify(redacted) === JSON.stringify(parsed) ? value : pyJsonDumps(redacted);
  }
  return redactor.text(value);
}

/**
 * Scans every redactable row; unless `dryRun`, writes the changed ones (the caller holds the
 * transaction). `limitPerTable` scans only the newest rows of each table (doctor's quick look).
 */
export function redactExistingRows(db: DB, policy: RedactionPolicy, opts: { dryRun: boolean; limitPerTable?: number }): RedactExistingResult {
  const result: RedactExistingResult = { rows_scanned: 0, rows_changed: 0, tables: {}, rules: {} };
  for (const spec of REDACTABLE) {
    const present = existingColumns(db, spec.table);
    const columns = spec.columns.filter((c) => present.has(c.name));
    if (columns.length === 0) continue;
    const count: TableCount = { scanned: 0, changed: 0 };
    result.tables[spec.table] = count;
    // Newest first, a page at a time (a statement cannot stay open across the updates).
    const page = db.prepare(
      `SELECT rowid AS rid, ${columns.map((c) => quoteId(c.name)).join(', ')} FROM ${quoteId(spec.table)} WHERE rowid < ? ORDER BY rowid DESC LIMIT ?`,
    );
    const flag = spec.flag !== undefined && present.has(spec.flag) ? spec.flag : undefined;
    const sets = [...columns.map((c) => `${quoteId(c.name)} = ?`), ...(flag ? [`${quoteId(flag)} = 1`] : [])].join(', ');
    const update = opts.dryRun ? null : db.prepare(`UPDATE ${quoteId(spec.table)} SET ${sets} WHERE rowid = ?`);
    const limit = opts.limitPerTable ?? Number.MAX_SAFE_INTEGER;
    const rows = function* () {
      let below: bigint | number = Number.MAX_SAFE_INTEGER;
      let left = limit;
      while (left > 0) {
        const batch = page.all(below, Math.min(PAGE_ROWS, left)) as Record<string, unknown>[];
        if (batch.length === 0) return;
        yield* batch;
        left -= batch.length;
        below = batch[batch.length - 1]!.rid as number;
      }
    };
    for (const row of rows()) {
      count.scanned++;
      const redactor = new Redactor(policy);
      let changed = false;
      const next = columns.map((c) => {
        const value = row[c.name];
        if (typeof value !== 'string') return value;
        const out = redactStored(redactor, value, c.json === true);
        if (out !== value) changed = true;
        return out;
      });
      if (!changed) continue;
      count.changed++;
      for (const [rule, n] of Object.entries(redactor.hits)) result.rules[rule] = (result.rules[rule] ?? 0) + n;
      update?.run(...(next as (string | null)[]), row.rid as number);
    }
    result.rows_scanned += count.scanned;
    result.rows_changed += count.changed;
  }
  return result;
}

/** The tables the search index reads, whose rows are scrubbed as they are first indexed. */
export type IndexedTable = 'context_packages' | 'orchestration_logs' | 'error_patterns' | 'strategies';

/**
 * What a scrub redacts: the free-text columns the index reads, of the rows it reads (reasoning
 * rows of the log). Paths, ids and event payloads are left as the other tool wrote them: a
 * generated name (a ULID, a random suffix) reads like a token, and the row must still point at
 * its file. `redact-existing` goes further, on a user's word.
 */
const SCRUBBED: Readonly<Record<IndexedTable, TableSpec & { where?: string }>> = {
  context_packages: { table: 'context_packages', columns: [{ name: 'summary' }] },
  orchestration_logs: { table: 'orchestration_logs', columns: [{ name: 'content' }], flag: 'redacted', where: "log_type = 'reasoning'" },
  error_patterns: { table: 'error_patterns', columns: [{ name: 'signature_json', json: true }, { name: 'solution' }] },
  strategies: { table: 'strategies', columns: [{ name: 'insight' }, { name: 'topic' }] },
};

/**
 * Redacts rows in place as the search index first sees them (rows the original tool or BAZINGA's
 * own CLI wrote, which redact less or nothing): `rowids` (or the rowid range (from, to]) of one
 * indexed table, every redactable column, under the caller's transaction. Returns each changed
 * row's new values by column, so the caller indexes what is now stored.
 */
export function scrubRows(
  db: DB,
  table: IndexedTable,
  rows: { from: number; to: number } | readonly number[],
  policy: RedactionPolicy,
): Map<number, Record<string, string>> {
  const changed = new Map<number, Record<string, string>>();
  const spec = SCRUBBED[table];
  const present = existingColumns(db, table);
  const columns = spec.columns.filter((c) => present.has(c.name));
  if (columns.length === 0) return changed;
  const select = `SELECT rowid AS rid, ${columns.map((c) => quoteId(c.name)).join(', ')} FROM ${quoteId(table)}`;
  const read = Array.isArray(rows)
    ? rows.length === 0
      ? []
      : (db.prepare(`${select} WHERE rowid IN (SELECT value FROM json_each(?))`).all(JSON.stringify(rows)) as Record<string, unknown>[])
    : (db.prepare(`${select} WHERE rowid > ? AND rowid <= ?${spec.where ? ` AND ${spec.where}` : ''}`).all((rows as { from: number }).from, (rows as { to: number }).to) as Record<string, unknown>[]);
  const flag = spec.flag !== undefined && present.has(spec.flag) ? spec.flag : undefined;
  const update = db.prepare(
    `UPDATE ${quoteId(table)} SET ${[...columns.map((c) => `${quoteId(c.name)} = ?`), ...(flag ? [`${quoteId(flag)} = 1`] : [])].join(', ')} WHERE rowid = ?`,
  );
  for (const row of read) {
    const redactor = new Redactor(policy);
    const next: Record<string, string> = {};
    let any = false;
    const values = columns.map((c) => {
      const value = row[c.name];
      if (typeof value !== 'string') return value;
      const out = redactStored(redactor, value, c.json === true);
      if (out !== value) {
        any = true;
        next[c.name] = out;
      }
      return out;
    });
    if (!any) continue;
    update.run(...(values as (string | null)[]), row.rid as number);
    changed.set(row.rid as number, next);
  }
  return changed;
}
