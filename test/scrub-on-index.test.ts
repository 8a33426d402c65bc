/**
 * Rows other tools wrote are scrubbed once: BAZINGA's own CLI stores context-package summaries,
 * strategies and much else as given (its reasoning redaction knows about fifteen patterns). The
 * first time this product's index sees a row (a recording assembly, or any bazinga-db write), the
 * row is redacted in place with the same engine, in the same transaction, before it is indexed; a
 * dry run changes nothing. Rows are written here with plain SQL, the way that CLI writes them.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, runScript, S1, type Project } from './helpers.ts';
import { bazingaDbIn } from './inProcess.ts';

const ASSEMBLE = path.join(import.meta.dirname, '..', 'skills', 'context-assembler', 'scripts', 'assemble.ts');
const GH = 'ghp_R7mK2pQ9xL4vN8tB3wY6zC1dF5hJ0sA2eG7k';
const PW = 'Tr0ub4dor-and-3-horses';
const STRIPE = 'sk_live_51HqJ2xKlmNoPqRsTuVwXyZ0123456789ab';
const SECRETS = [GH, PW, STRIPE];

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

/** A project whose database holds rows with secrets, written by plain SQL as BAZINGA's CLI writes them. */
function projectWithForeignRows(): Project {
  const p = makeProject('ca-scrub-');
  projects.push(p);
  expect(bazingaDbIn(p, ['create-session', S1, 'simple', 'Add login']).code).toBe(0);
  expect(bazingaDbIn(p, ['create-task-group', 'AUTH', S1, 'Login']).code).toBe(0);
  const db = new Database(p.dbPath);
  try {
    db.prepare(
      `INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary, size_bytes, version, supersedes_id, scope, created_at)
       VALUES (?, 'AUTH', 'research', ?, 'investigator', 'high', ?, NULL, 1, NULL, 'group', datetime('now'))`,
    ).run(S1, `bazinga/artifacts/${S1}/research_AUTH.md`, `Login research: the CI uses ${GH} and the admin password=${PW}`);
    db.prepare(
      `INSERT INTO orchestration_logs (session_id, iteration, agent_type, agent_id, content, log_type, reasoning_phase, confidence_level, references_json, redacted, group_id, timestamp)
       VALUES (?, 1, 'developer', 'dev_1', ?, 'reasoning', 'completion', 'high', NULL, 0, 'AUTH', datetime('now'))`,
    ).run(S1, `Done; charged the test card with ${STRIPE}`);
    db.prepare(
      `INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at)
       VALUES ('s1', 'default', 'auth', ?, 1, NULL, NULL, datetime('now'), datetime('now'))`,
    ).run(`Log in to the registry with ${GH} before npm publish`);
  } finally {
    db.close();
  }
  return p;
}

const stored = (dbPath: string): string => {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = [
      ...db.prepare('SELECT summary AS t FROM context_packages').all(),
      ...db.prepare('SELECT content AS t FROM orchestration_logs').all(),
      ...db.prepare('SELECT insight AS t FROM strategies').all(),
    ] as { t: string }[];
    return rows.map((r) => r.t).join('\n');
  } finally {
    db.close();
  }
};

/** Every byte of the database and its log, as text (what a secret left in a free page would show in). */
const fileBytes = (dbPath: string): string => ['', '-wal'].map((s) => (fs.existsSync(dbPath + s) ? fs.readFileSync(dbPath + s).toString('latin1') : '')).join('');

describe('rows other tools wrote are scrubbed once', () => {
  it('a dry run changes nothing; the next recording assembly redacts them in place, before its index holds them, and leaves no byte of them in the file', () => {
    const p = projectWithForeignRows();
    const args = ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--format', 'json'];
    expect(runScript(ASSEMBLE, [...args, '--dry-run']).code).toBe(0);
    for (const s of SECRETS) expect(stored(p.dbPath)).toContain(s);
    const r = runScript(ASSEMBLE, args);
    expect(r.code, r.stderr).toBe(0);
    for (const s of SECRETS) {
      expect(r.stdout).not.toContain(s);
      expect(stored(p.dbPath)).not.toContain(s);
      expect(fileBytes(p.dbPath)).not.toContain(s);
    }
    expect(stored(p.dbPath)).toContain('[REDACTED:github_token]');
    // The reasoning row says it was redacted, as this product's own writes do.
    const db = new Database(p.dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT redacted FROM orchestration_logs').get()).toEqual({ redacted: 1 });
      // What the index holds is what is stored: no secret's words in it.
      const fts = db.prepare("SELECT count(*) AS n FROM ca_fts_packages WHERE ca_fts_packages MATCH 'ghp_R7mK2pQ9xL4vN8tB3wY6zC1dF5hJ0sA2eG7k'").get() as { n: number };
      expect(fts.n).toBe(0);
    } finally {
      db.close();
    }
    // The reads the other tool makes still work on the scrubbed rows.
    const got = bazingaDbIn(p, ['query', 'SELECT summary FROM context_packages']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.json[0].summary).toMatch(/^Login research: the CI uses \[REDACTED:github_token\] and the admin password=\[REDACTED:password\]$/);
    const why = bazingaDbIn(p, ['get-reasoning', S1, '--group_id', 'AUTH']);
    expect(why.code, why.stderr).toBe(0);
    expect(JSON.stringify(why.json)).toContain('Done; charged the test card with [REDACTED:stripe_key]');
  });

  it('any bazinga-db write scrubs the rows it indexes, the learnings too', () => {
    const p = projectWithForeignRows();
    expect(bazingaDbIn(p, ['save-reasoning', S1, 'AUTH', 'qa_expert', 'understanding', 'Reviewing the login']).code).toBe(0);
    for (const s of SECRETS) expect(stored(p.dbPath)).not.toContain(s);
    // A learning row rewritten in place by the other tool is scrubbed again when it is re-indexed.
    const db = new Database(p.dbPath);
    try {
      db.prepare("UPDATE strategies SET insight = ?, last_seen = datetime('now', '+1 minute') WHERE strategy_id = 's1'").run(`Publish with ${STRIPE}`);
    } finally {
      db.close();
    }
    expect(bazingaDbIn(p, ['save-reasoning', S1, 'AUTH', 'qa_expert', 'approach', 'Next']).code).toBe(0);
    expect(stored(p.dbPath)).not.toContain(STRIPE);
  });
});
