/** Repository: `ca_redaction_settled`, the texts the redaction engine leaves unchanged (this layer's own table; keys from redact.ts settledKey). */
import { stmt, type DB } from '../statements.ts';

export function isSettledText(db: DB, key: string): boolean {
  return stmt(db, 'SELECT 1 FROM ca_redaction_settled WHERE text_hash = ?').get(key) !== undefined;
}

/** Records keys of texts found settled; a key already present stays as it is. */
export function saveSettledTexts(db: DB, keys: Iterable<string>): void {
  const insert = stmt(db, 'INSERT INTO ca_redaction_settled (text_hash) VALUES (?) ON CONFLICT (text_hash) DO NOTHING');
  for (const key of keys) insert.run(key);
}
