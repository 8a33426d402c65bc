/** Repository: `ca_token_counts`, cached cl100k counts of rendered text (this layer's own table). */
import { stmt, type DB } from '../statements.ts';

export function findTokenCount(db: DB, textHash: string): number | undefined {
  const row = stmt(db, 'SELECT tokens FROM ca_token_counts WHERE text_hash = ?').get(textHash) as { tokens: number } | undefined;
  return row?.tokens;
}

/** Stores counts; a hash already present keeps its count (the same text always counts the same). */
export function saveTokenCounts(db: DB, counts: ReadonlyMap<string, number>): void {
  const insert = stmt(db, 'INSERT INTO ca_token_counts (text_hash, tokens) VALUES (?, ?) ON CONFLICT (text_hash) DO NOTHING');
  for (const [hash, tokens] of counts) insert.run(hash, tokens);
}
