/** Repository: `ca_meta`, this layer's key/value notes (the search index's marks, the capture's looks). */
import { stmt, type DB } from '../statements.ts';

export function getMeta(db: DB, key: string): string | undefined {
  return (stmt(db, 'SELECT value FROM ca_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
}

export function setMeta(db: DB, key: string, value: string): void {
  stmt(
    db,
    "INSERT INTO ca_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = datetime('now')",
  ).run(key, value);
}
