/**
 * The token-count cache (ca_token_counts): what an assembly had to count is stored, the next
 * assembly sizes the same text from it without loading the rank table, a stored count is what the
 * figure comes from, and it is derived data only (emptying it changes nothing that is delivered).
 * A reasoning budget of 150 tokens makes the bounds of the fixture's entries too wide, so the
 * first assembly has to count.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { renderReasoningEntry } from '../skills/context-assembler/scripts/lib/core/render.ts';
import { countCl100k } from '../skills/context-assembler/scripts/lib/tokens.ts';
import { textHash } from '../skills/bazinga-db/scripts/lib/tokens.ts';
import { copyFixture, REPO_ROOT, runScript, S1 } from './helpers.ts';

const ASSEMBLE = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');

describe('ca_token_counts', () => {
  const project = copyFixture('ca-token-cache-');
  afterAll(() => project.cleanup());
  const config = path.join(project.root, 'bazinga', 'tight.json');
  fs.writeFileSync(config, JSON.stringify({ context_engineering: { reasoning: { level_budgets: { minimal: 150, medium: 150, full: 150 } } } }));
  // A dry run unless `record`: only a recording run stores counts (a dry run writes nothing).
  const args = (format: string, record = false) => ['--project-root', project.root, '--config', config, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--now', '2025-12-02T12:00:00Z', ...(record ? [] : ['--dry-run']), '--format', format];
  const rows = () => {
    const db = new Database(project.dbPath, { readonly: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM ca_token_counts').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };
  const block = () => spawnSync(process.execPath, ['--import', 'tsx', ASSEMBLE, ...args('markdown')], { cwd: REPO_ROOT, encoding: 'utf8' }).stdout;
  const withoutCounting = (doc: Record<string, unknown>) => ({ ...doc, counting: undefined });

  it('stores what a recording assembly counted; the next assembly reuses it and loads no rank table', () => {
    const first = runScript(ASSEMBLE, args('json', true));
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.counting.tokenizer_loaded).toBe(true);
    expect(first.json.reasoning.entries.length).toBeGreaterThan(0);
    const filled = rows();
    expect(filled).toBeGreaterThan(0);
    const second = runScript(ASSEMBLE, args('json'));
    expect(second.json.counting.tokenizer_loaded).toBe(false);
    // The first run recorded its packages for qa_expert: the reasoning is what must be the same.
    expect(second.json.reasoning).toEqual(first.json.reasoning);
    expect(rows()).toBe(filled);
  });

  it('a stored count is what the figure comes from (a tampered entry shows in the output)', () => {
    const before = runScript(ASSEMBLE, args('json')).json;
    const entry = before.reasoning.entries[0];
    const line = renderReasoningEntry(entry) + '\n';
    expect(entry.tokens).toBe(Math.ceil(countCl100k(line) * 1.2));
    const db = new Database(project.dbPath);
    expect(db.prepare('UPDATE ca_token_counts SET tokens = tokens + 5 WHERE text_hash = ?').run(textHash(line)).changes).toBe(1);
    db.close();
    const tampered = runScript(ASSEMBLE, args('json')).json;
    expect(tampered.reasoning.entries[0].tokens).toBe(Math.ceil((countCl100k(line) + 5) * 1.2));
    // The count put right again: the next test compares a block with the table against one without it.
    const fix = new Database(project.dbPath);
    fix.prepare('UPDATE ca_token_counts SET tokens = tokens - 5 WHERE text_hash = ?').run(textHash(line));
    fix.close();
  });

  it('is derived data: emptying it changes nothing that is delivered', () => {
    const before = block();
    expect(before).toContain('### Prior Agent Reasoning');
    const db = new Database(project.dbPath);
    db.prepare('DELETE FROM ca_token_counts').run();
    db.close();
    expect(block()).toBe(before);
  });
});
