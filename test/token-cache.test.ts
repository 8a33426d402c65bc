/**
 * The token-count cache (ca_token_counts): filled by an assembly, used by the next one (so the
 * tokenizer is not needed for text seen before), and only derived data (emptying it changes
 * nothing in the output).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { copyFixture, REPO_ROOT, runScript, S1 } from './helpers.ts';

const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');

describe('ca_token_counts', () => {
  const project = copyFixture('ca-token-cache-');
  afterAll(() => project.cleanup());
  const args = ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--now', '2025-12-02T12:00:00Z', '--dry-run', '--format', 'json'];
  const rows = () => {
    const db = new Database(project.dbPath, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM ca_token_counts').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('is filled by an assembly, and a second identical assembly adds nothing', () => {
    const first = runScript(ASSEMBLE, args);
    expect(first.code, first.stderr).toBe(0);
    const filled = rows();
    expect(filled).toBeGreaterThan(0);
    const second = runScript(ASSEMBLE, args);
    expect(second.stdout).toBe(first.stdout);
    expect(rows()).toBe(filled);
  });

  it('is what the counts come from (a tampered entry shows in the output)', () => {
    const before = runScript(ASSEMBLE, args).json;
    const db = new Database(project.dbPath);
    db.prepare('UPDATE ca_token_counts SET tokens = tokens + 1000').run();
    db.close();
    const tampered = runScript(ASSEMBLE, args).json;
    expect(tampered.packages_tokens).toBeGreaterThan(before.packages_tokens + 1000);
    // Undo: the cache is derived data; emptying it gives the original counts back.
    const db2 = new Database(project.dbPath);
    db2.prepare('DELETE FROM ca_token_counts').run();
    db2.close();
    expect(runScript(ASSEMBLE, args).stdout).toBe(JSON.stringify(before, null, 2) + '\n');
  });
});
