/**
 * Texts the redaction engine leaves unchanged are kept across runs (ca_redaction_settled, keys from
 * settledKey): a recording assembly stores what it found settled, a later one emits those texts
 * without running the engine (a stored key is trusted: a tampered entry shows in the output), the
 * key changes with the policy and with the engine's version, a dry run stores nothing, and the
 * table is derived data (emptying it changes nothing that is delivered). The version is pinned to
 * the engine's sources, so a change to the rules cannot leave old keys standing.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY,
  ISO_TIME,
  REDACTION_VERSION,
  redact,
  redactionMemo,
  settledKey,
  type RedactionPolicy,
  type SettledTexts,
} from '../skills/bazinga-db/scripts/lib/redact.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import { capturingIo, copyIndexedFixture } from './inProcess.ts';
import { REPO_ROOT, S1 } from './helpers.ts';

/** A store in memory: which keys it holds, and what was added. */
function memoryStore(known: Iterable<string> = []): SettledTexts & { keys: Set<string> } {
  const keys = new Set(known);
  return { keys, has: (text, policy) => keys.has(settledKey(text, policy)), add: (text, policy) => void keys.add(settledKey(text, policy)) };
}

const TOKEN = 'ghp_' + 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8';

describe('redactionMemo with a store of settled texts', () => {
  it('a text the store knows is returned as it is; one it does not know is redacted, and added when the engine leaves it unchanged', () => {
    const secret = `deploy with ${TOKEN}`;
    const store = memoryStore([settledKey(secret, DEFAULT_POLICY)]);
    const memo = redactionMemo();
    memo.useSettled(store);
    // Trusted as stored (whoever can write the table can write the text itself).
    expect(memo(secret, DEFAULT_POLICY)).toBe(secret);
    const plain = 'refresh tokens rotate on every use';
    expect(memo(plain, DEFAULT_POLICY)).toBe(plain);
    expect(store.keys.has(settledKey(plain, DEFAULT_POLICY))).toBe(true);
    const other = `token ${TOKEN} in the logs`;
    expect(memo(other, DEFAULT_POLICY)).not.toContain(TOKEN);
    // A text the engine changed is not settled.
    expect(store.keys.has(settledKey(other, DEFAULT_POLICY))).toBe(false);
    // A text of several lines (a whole block) is not kept.
    expect(memo('first line\nsecond line', DEFAULT_POLICY)).toBe('first line\nsecond line');
    expect(store.keys.size).toBe(2);
  });

  it('the key changes with the mode, the allowlist and the text', () => {
    const text = 'refresh tokens rotate on every use';
    const keys = new Set([
      settledKey(text, DEFAULT_POLICY),
      settledKey(text, { mode: 'pattern_only', allowlist: [] }),
      settledKey(text, { mode: 'both', allowlist: [/rotate/] }),
      settledKey(text, { mode: 'both', allowlist: [/rotate/i] }),
      settledKey(`${text}\n`, DEFAULT_POLICY),
      settledKey(`${text}.`, DEFAULT_POLICY),
    ]);
    expect(keys.size).toBe(6);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{32}$/);
  });

  it('an ISO time is left as it is by every mode of the engine, with or without an allowlist (the memo does not start the engine for one)', () => {
    const modes = ['both', 'pattern_only', 'entropy'] as const;
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.boolean(),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 1, max: 6 }),
        (date, millis, at, length) => {
          const text = millis ? date.toISOString() : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
          expect(text).toMatch(ISO_TIME);
          // An allowlist holding a piece of the time sets that piece aside while the rules run.
          const piece = text.slice(at, at + length).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          for (const mode of modes) {
            for (const allowlist of [[], [new RegExp(piece)]]) expect(redact(text, { mode, allowlist } as RedactionPolicy).text).toBe(text);
          }
        },
      ),
      { numRuns: 500, seed: 27 },
    );
    expect(ISO_TIME.test(`2025-12-02T12:00:00Z ${TOKEN}`)).toBe(false);
  });
});

describe('REDACTION_VERSION', () => {
  it("is pinned to the engine's sources: a change to the rules fails here until the version is raised (and this digest updated)", () => {
    const lib = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'scripts', 'lib');
    const files = ['redact.ts', 'redactRules.ts', ...fs.readdirSync(path.join(lib, 'redact')).sort().map((f) => `redact/${f}`)];
    const hash = crypto.createHash('sha256');
    for (const f of files) {
      // The version's own line is not part of what it versions.
      const source = fs.readFileSync(path.join(lib, f), 'utf8').replace(/^export const REDACTION_VERSION = \d+;$/m, '');
      hash.update(`${f}\n${source}\n`);
    }
    expect({ version: REDACTION_VERSION, sources: hash.digest('hex').slice(0, 16) }).toEqual({ version: 6, sources: '8be66332e9451a20' });
  });
});

describe('ca_redaction_settled in an assembly', () => {
  const project = copyIndexedFixture('ca-settled-');
  afterAll(() => project.cleanup());
  const assemble = (record: boolean) => {
    const run = capturingIo(
      ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'tech_lead', '--iteration', '1', '--now', '2025-12-02T12:00:00Z', '--format', 'json', ...(record ? [] : ['--dry-run'])],
      { cwd: project.root, now: '2025-12-02T12:00:00Z' },
    );
    const code = runAssembler({ name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' }, run.io);
    expect(code, run.err()).toBe(0);
    return JSON.parse(run.out());
  };
  const keys = () => {
    const db = new Database(project.dbPath, { readonly: true });
    try {
      return (db.prepare('SELECT text_hash FROM ca_redaction_settled ORDER BY text_hash').all() as { text_hash: string }[]).map((r) => r.text_hash);
    } finally {
      db.close();
    }
  };

  it('a dry run stores nothing; a recording run stores the keys of what it found settled, among them each shown summary', () => {
    const dry = assemble(false);
    expect(keys()).toEqual([]);
    const recorded = assemble(true);
    expect(recorded.packages.length + recorded.reasoning.entries.length).toBeGreaterThan(0);
    expect(recorded.packages.map((p: any) => p.id)).toEqual(dry.packages.map((p: any) => p.id));
    const stored = new Set(keys());
    expect(stored.size).toBeGreaterThan(0);
    for (const p of recorded.packages) expect(stored.has(settledKey(p.summary, DEFAULT_POLICY)), p.summary).toBe(true);
  });

  it('a stored key is what the engine is skipped for: a tampered entry shows its text unredacted; emptying the table changes nothing delivered', () => {
    const before = assemble(false);
    const entry = before.reasoning.entries[0];
    expect(entry).toBeDefined();
    // The entry's text with a secret in it, stored by another tool, with its key planted.
    const db = new Database(project.dbPath);
    const leaked = `${entry.content} ${TOKEN}`;
    db.prepare('UPDATE orchestration_logs SET content = ? WHERE id = ?').run(leaked, entry.id);
    const redactedRun = assemble(false);
    expect(JSON.stringify(redactedRun)).not.toContain(TOKEN);
    db.prepare('INSERT INTO ca_redaction_settled (text_hash) VALUES (?)').run(settledKey(leaked, DEFAULT_POLICY));
    db.close();
    expect(JSON.stringify(assemble(false))).toContain(TOKEN);
    // Derived data only: without the table's rows, what is delivered is the same (redacted again).
    const conn = new Database(project.dbPath);
    conn.prepare('DELETE FROM ca_redaction_settled').run();
    conn.prepare('UPDATE orchestration_logs SET content = ? WHERE id = ?').run(entry.content, entry.id);
    conn.close();
    expect(assemble(false)).toEqual(before);
  });
});
