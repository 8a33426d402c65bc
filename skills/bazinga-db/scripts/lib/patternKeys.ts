/**
 * Error patterns keyed by their fault (hashing.ts faultPatternHash): the rows of one fault merged
 * (repo/errorPatterns.ts rekeyErrorPatterns), then what refers to a pattern by its old hash
 * follows it: the pattern part of the search index is built again, and the assembly records that
 * showed a re-keyed pattern name its new hash. Run by the v10 migration and by `context-assembler
 * learn` (rows the original tool wrote since are keyed its way). In the caller's write transaction.
 */
import { rekeyErrorPatterns, type Rekeyed } from './repo/errorPatterns.ts';
import { resetPatternIndex } from './repo/searchIndex.ts';
import { stmt, type DB } from './statements.ts';

export function keyPatternsByFault(db: DB): Rekeyed {
  const r = rekeyErrorPatterns(db);
  if (r.rekeyed === 0) return r;
  resetPatternIndex(db);
  const hasRecord = stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ca_assemblies'").get() !== undefined;
  if (hasRecord) {
    // A hash is 64 hex digits: it names one pattern wherever it appears in a record's detail.
    const update = stmt(db, 'UPDATE ca_assemblies SET detail = replace(detail, @old, @new) WHERE instr(detail, @old) > 0');
    for (const [key, hash] of r.moved) {
      const old = key.slice(key.indexOf('\u0000') + 1);
      if (/^[0-9a-f]{64}$/.test(old)) update.run({ old, new: hash });
    }
  }
  return r;
}
