/**
 * Error patterns keyed by their fault (hashing.ts faultPatternHash): the rows of one fault merged
 * (repo/errorPatterns.ts rekeyErrorPatterns), then what refers to a pattern by its old hash
 * follows it: the pattern part of the search index is built again, the assembly records that
 * showed a re-keyed pattern name its new hash, and its outcome counts and capture ledger rows move
 * to it. Run by the v10 migration and by `context-assembler
 * learn` (rows the original tool wrote since are keyed its way). In the caller's write transaction.
 */
import { rekeyErrorPatterns, type Rekeyed } from './repo/errorPatterns.ts';
import { resetPatternIndex } from './repo/searchIndex.ts';
import { hasTable, stmt, type DB } from './statements.ts';

export function keyPatternsByFault(db: DB): Rekeyed {
  const r = rekeyErrorPatterns(db);
  if (r.rekeyed === 0) return r;
  resetPatternIndex(db);
  const moves = [...r.moved].map(([key, hash]) => ({ project: key.slice(0, key.indexOf('\u0000')), old: key.slice(key.indexOf('\u0000') + 1), new: hash }));
  if (hasTable(db, 'ca_assemblies')) {
    // A hash is 64 hex digits: it names one pattern wherever it appears in a record's detail.
    const update = stmt(db, 'UPDATE ca_assemblies SET detail = replace(detail, @old, @new) WHERE instr(detail, @old) > 0');
    for (const m of moves) if (/^[0-9a-f]{64}$/.test(m.old)) update.run({ old: m.old, new: m.new });
  }
  if (hasTable(db, 'ca_outcomes')) {
    // The verdicts that followed its showing follow the pattern (merged ones add up).
    const move = stmt(
      db,
      `INSERT INTO ca_outcomes (project_id, kind, item_id, session_id, day, helped, hurt)
       SELECT project_id, kind, @new, session_id, day, helped, hurt FROM ca_outcomes WHERE project_id = @project AND kind = 'error_pattern' AND item_id = @old
       ON CONFLICT (project_id, kind, item_id, session_id, day) DO UPDATE SET helped = helped + excluded.helped, hurt = hurt + excluded.hurt`,
    );
    const drop = stmt(db, "DELETE FROM ca_outcomes WHERE project_id = @project AND kind = 'error_pattern' AND item_id = @old");
    for (const m of moves) {
      move.run(m);
      drop.run({ project: m.project, old: m.old });
    }
  }
  if (hasTable(db, 'ca_captures')) {
    const update = stmt(db, 'UPDATE ca_captures SET pattern_hash = @new WHERE project_id = @project AND pattern_hash = @old');
    for (const m of moves) update.run(m);
  }
  return r;
}
