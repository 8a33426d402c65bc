/**
 * The assembly record (ca_assemblies, schema.ts ASSEMBLY_DDL): what each recording assembly gave a
 * spawn. Written by the assembler in the transaction that records its consumption (or in one of
 * its own when nothing was delivered, or for a fallback), read by the report. BAZINGA's tools never
 * read it; a database no writer of this version opened has no such table (hasAssemblyRecord).
 */
import { hasTable, stmt, type DB } from '../statements.ts';

/** One row of ca_assemblies as written (detail: a JSON object, its texts redacted by the caller). */
export interface AssemblyRecord {
  created_at: string;
  session_id: string;
  group_id: string | null;
  agent_type: string;
  iteration: number;
  source: 'assemble' | 'consume' | 'prompt-hook';
  outcome: 'recorded' | 'unrecorded' | 'nothing-delivered' | 'skipped-zone' | 'fallback' | 'left';
  /** Why a fallback happened, or why the prompt hook left the prompt as the builder wrote it. */
  reason: string | null;
  purpose: string | null;
  zone: string | null;
  usage_pct: number | null;
  budget: number | null;
  used_tokens: number | null;
  overrun: number;
  /** The prompt's size by the builder's own estimate, with the block in it (the prompt hook only). */
  prompt_tokens: number | null;
  duration_ms: number;
  version: string;
  detail: string;
}

export type AssemblyRow = AssemblyRecord & { id: number };

/** Whether the file holds the record (a writer of schema v9 or later opened it). */
export function hasAssemblyRecord(db: DB): boolean {
  return hasTable(db, 'ca_assemblies');
}

export function insertAssembly(db: DB, r: AssemblyRecord): number {
  return Number(
    stmt(
      db,
      `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, reason, purpose, zone,
                                  usage_pct, budget, used_tokens, overrun, prompt_tokens, duration_ms, version, detail)
       VALUES (@created_at, @session_id, @group_id, @agent_type, @iteration, @source, @outcome, @reason, @purpose, @zone,
               @usage_pct, @budget, @used_tokens, @overrun, @prompt_tokens, @duration_ms, @version, @detail)`,
    ).run(r).lastInsertRowid,
  );
}

/** A session's records in the order they were written. */
export function listAssemblies(db: DB, sessionId: string): AssemblyRow[] {
  return stmt(db, 'SELECT * FROM ca_assemblies WHERE session_id = ? ORDER BY id').all(sessionId) as AssemblyRow[];
}
