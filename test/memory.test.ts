/**
 * Project memory across sessions (bazinga-db's memory commands, the assembler's Project Memory
 * section, the session-start hook). On real SQLite files: a copy of the v19 fixture (two sessions
 * of project acme-shop) and fresh projects. Two sessions on one database: the second session's
 * spawn and rehydration carry the first one's decisions and learnings; dedup merges near
 * duplicates and says so; a contradicting decision supersedes the old one, which stays readable;
 * maintenance archives and deletes by the rules at a given --now, and --dry-run changes nothing;
 * the hook's output stays under Claude Code's 10,000-character limit.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { similarity, normaliseMemoryText } from '../skills/bazinga-db/scripts/lib/memory.ts';
import { HOOK_OUTPUT_LIMIT, withinLimit } from '../hooks/rehydrate.mjs';
import { capturingIo, runBazingaDbInProcess } from './inProcess.ts';
import { REPO_ROOT, S1, S2, copyFixture, makeProject, type Project } from './helpers.ts';

const projects: Project[] = [];
const track = (p: Project) => (projects.push(p), p);
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

const db = (p: Project, ...args: string[]) => runBazingaDbInProcess(['--quiet', '--project-root', p.root, ...args], { cwd: p.root, env: {} });
const ok = (p: Project, ...args: string[]) => {
  const r = db(p, ...args);
  expect(r.code, `${args[0]}: ${r.stderr}`).toBe(0);
  return r.json;
};
const ASSEMBLE = { name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' } as const;
function assemble(p: Project, ...args: string[]): string {
  const run = capturingIo(['--project-root', p.root, '--dry-run', ...args], { cwd: p.root, env: {} });
  expect(runScript(ASSEMBLE, run.io), run.err()).toBe(0);
  return run.out();
}
const decision = (text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ decision: text, ...extra });

describe('two sessions on one database', () => {
  it("the second session's spawn and rehydration carry the first session's decisions and learnings", () => {
    const p = track(copyFixture('ca-mem-two-'));
    const first = ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    expect(first).toMatchObject({ success: true, project_id: 'acme-shop' });
    expect(first.created).toBeGreaterThanOrEqual(10);
    // Session 1's decisions (reasoning and packages), its open critical issue, learnings and group states.
    const types = first.memories.map((m: { type: string }) => m.type);
    expect(types.filter((t: string) => t === 'decision').length).toBe(4);
    expect(types.filter((t: string) => t === 'issue')).toEqual(['issue']);
    expect(types.filter((t: string) => t === 'state').length).toBe(2);
    // Run again: nothing new, nothing bumped (idempotent).
    const again = ok(p, 'summarise-session', S1, '--now', '2025-12-02T19:00:00Z');
    expect(again).toMatchObject({ created: 0, merged: 0, superseded: 0, unchanged: first.memories.length });

    // Session 2 (CHK) spawns a developer on flaky checkout tests and token storage: session 1's
    // decision and learning come with it.
    const md = assemble(p, '--session', S2, '--group', 'CHK', '--agent', 'developer', '--now', '2025-12-04T12:00:00Z', '--task', 'checkout tests time out with fake timers; where to store auth tokens');
    expect(md).toContain('\n### Project Memory (');
    const section = md.slice(md.indexOf('\n### Project Memory ('));
    expect(section).toContain('**Store tokens in SecureStore, never AsyncStorage; read API base URL from config** (importance 7, 2025-12-02)');
    expect(section).toContain('**JestTimeout: Exceeded timeout of 5000 ms for a test** → Reset fake timers in afterEach');
    // Rehydration at the start of a third session: decisions, the open issue, learnings, continuity.
    const r = ok(p, 'rehydrate', 'acme-shop', '--now', '2025-12-05T09:00:00Z');
    expect(r.markdown.startsWith('## Project Memory: acme-shop\n\n_Last session ended 2025-12-03 14:00 UTC (1 day ago); 2 sessions so far._\n')).toBe(true);
    expect(r.markdown).toContain('\n### Key decisions (importance ≥ 7, last 30 days)\n');
    expect(r.markdown).toContain('**All groups: no secrets in AsyncStorage; SecureStore only**');
    expect(r.markdown).toContain('\n### Open issues (critical and high, oldest first)\n\n- **[CRITICAL] 3 auth tests fail');
    expect(r.markdown).toContain('\n### Learnings (most used, last 60 days)\n');
    expect(r.markdown).toContain('Write the failing expiry test before touching token code');
    // The accesses are counted (not with --dry-run).
    const shown = r.memory_ids as number[];
    expect(ok(p, 'get-memory', String(shown[0])).access_count).toBe(1);
    ok(p, 'rehydrate', 'acme-shop', '--now', '2025-12-05T09:00:00Z', '--dry-run');
    expect(ok(p, 'get-memory', String(shown[0])).access_count).toBe(1);
  });

  it('a group that completed since: its open issue is resolved on the next summary, and its state moves on (the old state superseded, readable)', () => {
    const p = track(copyFixture('ca-mem-done-'));
    ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    const issue = ok(p, 'search-memories', 'acme-shop', '--type', 'issue').memories[0];
    // The orchestrator (another tool) marks the group completed.
    const raw = new Database(p.dbPath);
    raw.prepare("UPDATE task_groups SET status = 'completed' WHERE id = 'AUTH' AND session_id = ?").run(S1);
    raw.close();
    const next = ok(p, 'summarise-session', S1, '--now', '2025-12-03T18:00:00Z');
    expect(next.resolved_issues).toEqual([issue.id]);
    expect(ok(p, 'get-memory', String(issue.id)).content.status).toBe('resolved');
    const states = next.memories.filter((m: { type: string; operation: string }) => m.type === 'state' && m.operation === 'superseded');
    expect(states).toHaveLength(1);
    const newer = ok(p, 'get-memory', String(states[0].memory_id));
    expect(newer.content.completion).toBe(100);
    const older = ok(p, 'get-memory', String(newer.parent_id));
    expect(older.superseded_by).toBe(newer.id);
  });
});

describe('save-memory: dedup and supersession', () => {
  it('the same text is bumped, a near duplicate (≥ 0.85) merges and says so, a contradicting decision supersedes', () => {
    const p = track(makeProject('ca-mem-dedup-'));
    const a = ok(p, 'save-memory', 'proj', 'decision', 'Use PostgreSQL for orders', '--content', decision('Use PostgreSQL for orders: ACID transactions', { alternatives: ['MongoDB'] }), '--importance', '8', '--now', '2025-12-01T10:00:00Z');
    expect(a).toMatchObject({ operation: 'created', memory_id: 1 });
    const same = ok(p, 'save-memory', 'proj', 'decision', 'Use  postgresql for orders', '--content', decision('Use PostgreSQL for orders: ACID transactions!', { alternatives: ['MongoDB'] }), '--importance', '6');
    expect(same).toMatchObject({ operation: 'bumped', memory_id: 1 });
    expect(ok(p, 'get-memory', '1')).toMatchObject({ access_count: 1, importance: 8 });
    const near = ok(p, 'save-memory', 'proj', 'decision', 'Use PostgreSQL for the orders', '--content', decision('Use PostgreSQL for the orders: ACID transactions', { alternatives: ['MySQL'] }), '--tags', 'db');
    expect(near.operation).toBe('merged');
    expect(near.memory_id).toBe(1);
    expect(near.similarity).toBeGreaterThanOrEqual(0.85);
    expect(near.message).toMatch(/^\d+% alike memory 1: merged into it/);
    const merged = ok(p, 'get-memory', '1');
    expect(merged.content.alternatives).toEqual(['MongoDB', 'MySQL']);
    expect(merged.tags).toEqual(['db']);
    // The same title, another decision: the new one supersedes, the old stays readable.
    const flip = ok(p, 'save-memory', 'proj', 'decision', 'Use PostgreSQL for orders', '--content', decision('Move orders to CockroachDB for multi-region writes'));
    expect(flip).toMatchObject({ operation: 'superseded', supersedes: 1 });
    expect(ok(p, 'get-memory', '1').superseded_by).toBe(flip.memory_id);
    expect(ok(p, 'get-memory', String(flip.memory_id)).parent_id).toBe(1);
    expect(ok(p, 'search-memories', 'proj', '--type', 'decision').memories.map((m: { id: number }) => m.id)).toEqual([flip.memory_id]);
    expect(ok(p, 'search-memories', 'proj', '--type', 'decision', '--include-superseded').count).toBe(2);
  });

  it('a contradicting decision supersedes even when it reads alike: numbers or a negation differ', () => {
    const p = track(makeProject('ca-mem-contra-'));
    const a = ok(p, 'save-memory', 'proj', 'decision', 'Session timeout', '--content', decision('Sessions expire after 15 minutes of inactivity'));
    const b = ok(p, 'save-memory', 'proj', 'decision', 'Session timeout', '--content', decision('Sessions expire after 60 minutes of inactivity'));
    expect(b).toMatchObject({ operation: 'superseded', supersedes: a.memory_id });
    const c = ok(p, 'save-memory', 'proj', 'decision', 'Card payment retries', '--content', decision('Retry failed card payments automatically'));
    const d = ok(p, 'save-memory', 'proj', 'decision', 'Card payments retried', '--content', decision('Do not retry failed card payments automatically'));
    expect(d).toMatchObject({ operation: 'superseded', supersedes: c.memory_id });
    // Reworded, saying the same: merged.
    const e = ok(p, 'save-memory', 'proj', 'decision', 'Session timeout', '--content', decision('Sessions expire after 60 minutes of inactivity.', { rationale: 'mobile users' }));
    expect(e).toMatchObject({ operation: 'merged', memory_id: b.memory_id });
  });

  it('an issue saved again with "status": "resolved" is resolved, and rehydrate no longer lists it', () => {
    const p = track(makeProject('ca-mem-resolve-'));
    const issue = (content: object) => ok(p, 'save-memory', 'proj', 'issue', 'Search returns duplicates', '--content', JSON.stringify({ description: 'search shows each hit twice', severity: 'critical', ...content }));
    const first = issue({});
    expect(ok(p, 'rehydrate', 'proj', '--dry-run').markdown).toContain('[CRITICAL] Search returns duplicates');
    const fixed = issue({ status: 'resolved', attempted_fixes: ['dedupe by id in the query'] });
    expect(fixed).toMatchObject({ operation: 'merged', memory_id: first.memory_id });
    expect(ok(p, 'get-memory', String(first.memory_id)).content).toMatchObject({ status: 'resolved', attempted_fixes: ['dedupe by id in the query'] });
    expect(ok(p, 'rehydrate', 'proj', '--dry-run').markdown).toBe('');
  });

  it('a merge takes what the save said, never a default: a re-save without status or severity keeps them', () => {
    const p = track(makeProject('ca-mem-defaults-'));
    const save = (content: object) => ok(p, 'save-memory', 'proj', 'issue', 'Login crash', '--content', JSON.stringify({ description: 'Login crashes on a null token', ...content }));
    const id = save({ severity: 'critical' }).memory_id;
    save({ status: 'resolved' });
    expect(ok(p, 'get-memory', String(id)).content).toMatchObject({ severity: 'critical', status: 'resolved' });
    save({ attempted_fixes: ['guard null'] });
    expect(ok(p, 'get-memory', String(id)).content).toMatchObject({ severity: 'critical', status: 'resolved', attempted_fixes: ['guard null'] });
    // Said outright, it reopens.
    save({ status: 'open' });
    expect(ok(p, 'get-memory', String(id)).content.status).toBe('open');
  });

  it('summarise-session again keeps what a user merged into a memory it made (the source did not change)', () => {
    const p = track(copyFixture('ca-mem-usermerge-'));
    const first = ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    const issue = first.memories.find((m: { type: string }) => m.type === 'issue');
    const merged = ok(p, 'save-memory', 'acme-shop', 'issue', issue.title, '--content', JSON.stringify({ description: 'refresh reuse, expiry 500, clock skew', status: 'resolved', severity: 'high' }));
    expect(merged).toMatchObject({ operation: 'merged', memory_id: issue.memory_id });
    expect(ok(p, 'summarise-session', S1, '--now', '2025-12-03T18:00:00Z')).toMatchObject({ created: 0, superseded: 0, merged: 0 });
    expect(ok(p, 'get-memory', String(issue.memory_id))).toMatchObject({ superseded_by: null, content: { status: 'resolved', severity: 'high' } });
  });

  it('only the decision itself can contradict: a rationale or an alternative gaining a number or a "not" merges', () => {
    const p = track(makeProject('ca-mem-rationale-'));
    const save = (extra: object) => ok(p, 'save-memory', 'proj', 'decision', 'Order store', '--content', decision('Orders live in PostgreSQL', { alternatives: ['MongoDB', 'MySQL'], ...extra }));
    const id = save({ rationale: 'ACID' }).memory_id;
    for (const extra of [{ rationale: 'ACID, see ADR 7' }, { rationale: 'ACID, not eventual consistency' }, { alternatives: ['MongoDB (dropped: no joins)'] }]) {
      expect(save(extra)).toMatchObject({ operation: 'merged', memory_id: id });
    }
    const kept = ok(p, 'get-memory', String(id));
    expect(kept.content.alternatives).toEqual(['MongoDB', 'MySQL', 'MongoDB (dropped: no joins)']);
    expect(kept.content.rationale).toBe('ACID, not eventual consistency');
    // A contracted negation in the statement itself does turn it around.
    const a = ok(p, 'save-memory', 'proj', 'decision', 'Upload retries', '--content', decision('The client should retry failed uploads'));
    const b = ok(p, 'save-memory', 'proj', 'decision', 'Upload retries', '--content', decision("The client shouldn't retry failed uploads"));
    expect(b).toMatchObject({ operation: 'superseded', supersedes: a.memory_id });
  });

  it('a source names one memory of one type: reused for another type it neither hides nor drops anything', () => {
    const p = track(makeProject('ca-mem-source-'));
    const a = ok(p, 'save-memory', 'proj', 'learning', 'Pin Node', '--content', '{"lesson":"pin node 20"}', '--source', 'ticket-42');
    const b = ok(p, 'save-memory', 'proj', 'issue', 'Payment webhook drops events', '--content', '{"description":"webhooks lost under load","severity":"critical"}', '--source', 'ticket-42');
    expect(b.operation).toBe('created');
    expect(ok(p, 'get-memory', String(a.memory_id)).superseded_by).toBeNull();
    expect(ok(p, 'search-memories', 'proj', '--query', 'webhook').count).toBe(1);
  });

  it('summarise-session again after a summarised memory was superseded and archived: nothing bumped, nothing restored', () => {
    const p = track(copyFixture('ca-mem-idem-'));
    const first = ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    const id = first.memories.find((m: { source: string }) => m.source === 'reasoning:7').memory_id;
    const newer = ok(p, 'save-memory', 'acme-shop', 'decision', 'All groups: no secrets in AsyncStorage; SecureStore only', '--content', decision('Keychain on iOS, Keystore on Android; never AsyncStorage'));
    expect(newer).toMatchObject({ operation: 'superseded', supersedes: id });
    ok(p, 'memory-maintenance', 'acme-shop', '--now', '2025-12-03T00:00:00Z');
    const before = ok(p, 'get-memory', String(id));
    expect(before.archived_at).not.toBeNull();
    expect(ok(p, 'summarise-session', S1, '--now', '2025-12-04T00:00:00Z')).toMatchObject({ created: 0, merged: 0, superseded: 0 });
    expect(ok(p, 'get-memory', String(id))).toEqual(before);
  });

  it('supersede-memory links two live memories of one project and type only', () => {
    const p = track(makeProject('ca-mem-link-'));
    const save = (project: string, type: string, title: string, content: object) => ok(p, 'save-memory', project, type, title, '--content', JSON.stringify(content)).memory_id as number;
    const a = save('proj', 'decision', 'A', { decision: 'alpha beta gamma' });
    const b = save('proj', 'decision', 'B', { decision: 'delta epsilon zeta' });
    const other = save('other', 'decision', 'C', { decision: 'eta theta iota' });
    const l = save('proj', 'learning', 'L', { lesson: 'kappa lambda mu' });
    expect(ok(p, 'supersede-memory', String(a), String(b))).toEqual({ success: true, memory_id: a, superseded_by: b });
    expect(db(p, 'supersede-memory', String(b), String(a)).error.error).toBe(`memory ${a} is itself superseded (by ${b}); supersede ${b} with a live memory`);
    expect(db(p, 'supersede-memory', String(b), String(other)).error.error).toContain('a memory supersedes one of its own project and type');
    expect(db(p, 'supersede-memory', String(b), String(l)).error.error).toContain(`${b} is a decision of proj, ${l} a learning of proj`);
    expect(db(p, 'supersede-memory', String(b), String(b)).error.error).toBe('a memory cannot supersede itself');
  });

  it('similarity is the Dice coefficient of character trigrams: 1 for equal texts, high for a word changed, low for unrelated ones', () => {
    const s = (a: string, b: string) => similarity(normaliseMemoryText(a), normaliseMemoryText(b));
    expect(s('Use PostgreSQL for orders', 'use postgresql for orders!')).toBe(1);
    expect(s('Use PostgreSQL for the orders: ACID transactions', 'Use PostgreSQL for orders: ACID transactions')).toBeGreaterThanOrEqual(0.85);
    expect(s('Use PostgreSQL for orders', 'Cache product images in a CDN')).toBeLessThan(0.3);
    // Dates are not what a memory says.
    expect(s('Deployed 2025-12-01T10:00:00Z: v2', 'Deployed 2025-12-02 11:00:00: v2')).toBe(1);
  });

  it.each([
    { name: 'unknown type', args: ['p', 'note', 't', '--content', '{}'], code: 'VALIDATION', says: "type must be one of decision, issue, state, learning, got 'note'" },
    { name: 'a field of another type', args: ['p', 'learning', 't', '--content', decision('x')], code: 'VALIDATION', says: 'content.decision is not a learning field; the learning fields are: lesson, context, applicability, evidence' },
    { name: 'missing first field', args: ['p', 'issue', 't', '--content', '{"severity":"high"}'], code: 'VALIDATION', says: 'content.description is required for a issue memory' },
    { name: 'bad severity', args: ['p', 'issue', 't', '--content', '{"description":"d","severity":"urgent"}'], code: 'VALIDATION', says: 'content.severity must be one of critical, high, medium, low, got "urgent"' },
    { name: 'completion over 100', args: ['p', 'state', 't', '--content', '{"task":"t","completion":120}'], code: 'VALIDATION', says: 'content.completion must be an integer from 0 to 100, got 120' },
    { name: 'title over 100 characters', args: ['p', 'decision', 'x'.repeat(101), '--content', decision('d')], code: 'VALIDATION', says: 'title must be at most 100 characters, got 101' },
    { name: 'importance 11', args: ['p', 'decision', 't', '--content', decision('d'), '--importance', '11'], code: 'VALIDATION', says: '--importance must be from 1 to 10, got 11' },
    { name: 'no content', args: ['p', 'decision', 't'], code: 'USAGE', says: 'save-memory needs exactly one of --content JSON or --content-file PATH' },
    { name: 'content not JSON', args: ['p', 'decision', 't', '--content', 'decided!'], code: 'VALIDATION', says: 'content must be a JSON object' },
    { name: '--now not a date', args: ['p', 'decision', 't', '--content', decision('d'), '--now', '1'], code: 'VALIDATION', says: "--now must be an ISO-8601 date-time such as 2025-12-02T12:00:00Z, got '1'" },
    { name: '--now before year 1000', args: ['p', 'decision', 't', '--content', decision('d'), '--now', '-271821-04-20T00:00:00Z'], code: 'VALIDATION', says: '--now must be an ISO-8601 date-time' },
    { name: '--now on a day that does not exist', args: ['p', 'decision', 't', '--content', decision('d'), '--now', '2025-02-30'], code: 'VALIDATION', says: "--now must be an ISO-8601 date-time such as 2025-12-02T12:00:00Z, got '2025-02-30'" },
    { name: '--now at 24:00', args: ['p', 'decision', 't', '--content', decision('d'), '--now', '2025-02-10T24:00:00Z'], code: 'VALIDATION', says: '--now must be an ISO-8601 date-time' },
    { name: '--expires not a date', args: ['p', 'decision', 't', '--content', decision('d'), '--expires', 'soon'], code: 'VALIDATION', says: "--expires must be an ISO-8601 date or date-time such as 2025-12-02 or 2025-12-02T12:00:00Z, got 'soon'" },
  ])('$name → $code', ({ args, code, says }) => {
    const p = track(makeProject('ca-mem-bad-'));
    const r = db(p, 'save-memory', ...args);
    expect(r.error).toMatchObject({ code });
    expect(r.error.error).toContain(says);
  });

  it('secrets are redacted at ingest: title, content and tags', () => {
    const p = track(makeProject('ca-mem-secret-'));
    const key = 'sk-ant-api03-Zx9Qw7Er5Ty3Ui1Op8As6Df4Gh2Jk0LmNbVcXz';
    const saved = ok(p, 'save-memory', 'proj', 'learning', `Rotate ${key}`, '--content', JSON.stringify({ lesson: `the key ${key} leaked in CI logs`, evidence: `password=hunter2hunter2` }));
    expect(saved.redacted).toBe(true);
    const tagged = ok(p, 'save-memory', 'proj', 'learning', 'Tagged', '--content', '{"lesson":"t"}', '--tags', `aws,AKIAIOSFODNN7EXAMPLQ,${key}`);
    expect(ok(p, 'get-memory', String(tagged.memory_id)).tags.join(' ')).not.toMatch(/akiaiosfodnn7examplq|sk-ant-api03/i);
    const raw = fs.readFileSync(p.dbPath).toString('latin1');
    expect(raw.toLowerCase()).not.toContain('akiaiosfodnn7examplq');
    expect(raw).not.toContain(key);
    expect(raw).not.toContain('hunter2hunter2');
    expect(JSON.stringify(ok(p, 'get-memory', String(saved.memory_id)))).toContain('[REDACTED');
  });
});

describe('a memory table of an earlier definition', () => {
  it('reads find no memory and fail nothing; the next writer adds the columns, and the old rows are found', () => {
    const p = track(makeProject('ca-mem-v6-'));
    ok(p, 'create-session', 'S', 'simple', 'req');
    const raw = new Database(p.dbPath);
    raw.exec('DROP TABLE ca_memories');
    raw.exec(`CREATE TABLE ca_memories (id INTEGER PRIMARY KEY AUTOINCREMENT, project_id TEXT NOT NULL, type TEXT NOT NULL, title TEXT NOT NULL,
      content TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]', importance INTEGER NOT NULL, text_hash TEXT NOT NULL, source_session TEXT, source_group TEXT,
      source_agent TEXT, source_ref TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, expires_at TEXT, archived_at TEXT, last_accessed_at TEXT,
      access_count INTEGER NOT NULL DEFAULT 0, parent_id INTEGER, superseded_by INTEGER)`);
    raw.prepare("INSERT INTO ca_memories (project_id, type, title, content, importance, text_hash, created_at, updated_at) VALUES ('proj', 'learning', 'Old lesson', '{\"lesson\":\"kept\"}', 6, 'h', '2025-12-01 00:00:00', '2025-12-01 00:00:00')").run();
    raw.prepare("UPDATE ca_meta SET value = '6' WHERE key = 'ca_schema'").run();
    raw.close();
    expect(ok(p, 'search-memories', 'proj')).toMatchObject({ count: 0 });
    expect(ok(p, 'rehydrate', 'proj', '--dry-run').markdown).toBe('');
    ok(p, 'save-memory', 'proj', 'learning', 'New lesson', '--content', '{"lesson":"learnt"}');
    const titles = ok(p, 'search-memories', 'proj').memories.map((m: { title: string; sources: string[] }) => [m.title, m.sources]);
    expect(titles).toEqual(expect.arrayContaining([['Old lesson', []], ['New lesson', []]]));
  });
});

describe('search-memories', () => {
  it('ranks by text relevance, importance, recency and access (weights in config), filters by type, tags, importance, time and archive', () => {
    const p = track(makeProject('ca-mem-search-'));
    const save = (type: string, title: string, content: object, ...extra: string[]) => ok(p, 'save-memory', 'proj', type, title, '--content', JSON.stringify(content), ...extra).memory_id as number;
    const old = save('decision', 'Cache sessions in Redis', { decision: 'Redis holds sessions' }, '--importance', '9', '--now', '2025-06-01T00:00:00Z', '--tags', 'cache');
    const fresh = save('decision', 'Queue emails through SQS', { decision: 'SQS for outgoing email' }, '--importance', '5', '--now', '2025-12-01T00:00:00Z');
    const issue = save('issue', 'Redis eviction drops sessions', { description: 'sessions vanish under memory pressure', severity: 'high' }, '--now', '2025-12-01T00:00:00Z', '--tags', 'cache,prod');
    const search = (...args: string[]) => ok(p, 'search-memories', 'proj', '--now', '2025-12-02T00:00:00Z', ...args).memories.map((m: { id: number }) => m.id);
    expect(search('--query', 'redis sessions')).toEqual([issue, old]);
    // The fresh one outranks the older, more important one: recency decays over 30 days.
    expect(search('--type', 'decision')).toEqual([fresh, old]);
    expect(search('--tags', 'cache,prod')).toEqual([issue]);
    expect(search('--min-importance', '6')).toEqual([old]);
    expect(search('--since', '2025-11-01')).toEqual(expect.arrayContaining([fresh, issue]));
    expect(search('--since', '2025-11-01')).not.toContain(old);
    // A date alone as --until is that whole day.
    expect(search('--since', '2025-12-01', '--until', '2025-12-01')).toEqual(expect.arrayContaining([fresh, issue]));
    ok(p, 'archive-memory', String(old));
    expect(search('--type', 'decision')).toEqual([fresh]);
    expect(search('--archived')).toEqual([old]);
    // The weights are config: with importance alone, the most important first.
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { memory: { search_weights: { text: 0, importance: 1, recency: 0, access: 0 } } } }));
    ok(p, 'archive-memory', String(old), '--restore');
    expect(search()).toEqual([old, issue, fresh]);
    const recencyOnly = JSON.stringify({ context_engineering: { memory: { search_weights: { text: 0, importance: 0, recency: 1, access: 0 } } } });
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), recencyOnly);
    expect(search()[2]).toBe(old);
  });

  it('reads a database no writer of this version opened: no memories, nothing written', () => {
    const p = track(copyFixture('ca-mem-old-'));
    const before = fs.readFileSync(p.dbPath);
    expect(ok(p, 'search-memories', 'acme-shop')).toEqual({ success: true, project_id: 'acme-shop', count: 0, memories: [] });
    expect(db(p, 'get-memory', '1').error).toMatchObject({ code: 'NOT_FOUND' });
    expect(ok(p, 'rehydrate', 'acme-shop', '--dry-run').markdown).toBe('');
    expect(fs.readFileSync(p.dbPath).equals(before)).toBe(true);
  });
});

describe('memory-maintenance', () => {
  it('archives and deletes by the rules at --now; --dry-run says the same and changes nothing', () => {
    const p = track(makeProject('ca-mem-life-'));
    const at = (day: string) => ['--now', `${day}T00:00:00Z`];
    const save = (type: string, title: string, content: object, ...extra: string[]) => ok(p, 'save-memory', 'proj', type, title, '--content', JSON.stringify(content), ...extra).memory_id as number;
    const lowDecision = save('decision', 'Use tabs', { decision: 'tabs' }, '--importance', '3', ...at('2024-01-01'));
    const keyDecision = save('decision', 'Use PostgreSQL', { decision: 'postgres' }, '--importance', '9', ...at('2024-01-01'));
    const resolved = save('issue', 'Login loop', { description: 'loop', status: 'resolved', severity: 'high' }, ...at('2024-06-01'));
    const unusedLearning = save('learning', 'Pin Node versions', { lesson: 'pin node' }, ...at('2024-01-01'));
    const expiring = save('learning', 'Feature flag X is on', { lesson: 'flag' }, '--expires', '2024-03-01', ...at('2024-01-01'));
    const firstState = save('state', 'Release 1', { task: 'ship', completion: 40 }, ...at('2024-01-01'));
    const nextState = save('state', 'Release 1', { task: 'ship it now', completion: 80 }, ...at('2024-02-01'));
    expect(ok(p, 'get-memory', String(firstState)).superseded_by).toBe(nextState);

    const plan = ok(p, 'memory-maintenance', 'proj', '--dry-run', ...at('2024-09-01'));
    const ids = (list: { memory_id: number }[]) => list.map((a) => a.memory_id).sort((a, b) => a - b);
    expect(ids(plan.archived)).toEqual([lowDecision, resolved, unusedLearning, expiring, firstState].sort((a, b) => a - b));
    expect(plan.archived.find((a: { memory_id: number }) => a.memory_id === lowDecision).rule).toBe('importance ≤ 5 and older than 90 days');
    expect(plan.archived.find((a: { memory_id: number }) => a.memory_id === expiring).rule).toBe('past its expiry time');
    expect(plan.deleted).toEqual([]);
    expect(ok(p, 'get-memory', String(lowDecision)).archived_at).toBeNull();
    const done = ok(p, 'memory-maintenance', 'proj', ...at('2024-09-01'));
    expect(ids(done.archived)).toEqual(ids(plan.archived));
    expect(ok(p, 'get-memory', String(lowDecision)).archived_at).toBe('2024-09-01 00:00:00');
    expect(ok(p, 'get-memory', String(keyDecision)).archived_at).toBeNull();
    // A year later: the low decision (archived > 365 days), the resolved issue (archived > 180 days),
    // the superseded state (> 90 days) and the unused learnings (> 365 days) go.
    const later = ok(p, 'memory-maintenance', 'proj', ...at('2025-09-02'));
    expect(ids(later.deleted)).toEqual([lowDecision, resolved, unusedLearning, expiring, firstState].sort((a, b) => a - b));
    expect(db(p, 'get-memory', String(lowDecision)).error).toMatchObject({ code: 'NOT_FOUND' });
    // The state that superseded the deleted one lost only its parent link.
    expect(ok(p, 'get-memory', String(nextState)).parent_id).toBeNull();
    expect(ok(p, 'search-memories', 'proj', '--type', 'decision').memories.map((m: { id: number }) => m.id)).toEqual([keyDecision]);
  });

  it('forget-memory deletes one memory; archive-memory --restore brings one back', () => {
    const p = track(makeProject('ca-mem-forget-'));
    const id = ok(p, 'save-memory', 'proj', 'learning', 'L', '--content', '{"lesson":"l"}').memory_id;
    expect(ok(p, 'archive-memory', String(id))).toEqual({ success: true, memory_id: id, archived: true });
    expect(ok(p, 'archive-memory', String(id), '--restore')).toEqual({ success: true, memory_id: id, archived: false });
    expect(ok(p, 'forget-memory', String(id))).toEqual({ success: true, memory_id: id, deleted: true });
    expect(db(p, 'forget-memory', String(id)).error).toMatchObject({ code: 'NOT_FOUND', error: `Memory not found: ${id}` });
  });

  it('a decision alike as a whole but whose statement changes meaning supersedes the old one under its own title, never merges into it', () => {
    const p = track(makeProject('ca-mem-revised-'));
    const rationale = 'a reused refresh token means it was stolen; rotating tokens detect theft by reuse and the safe answer is to revoke';
    const first = ok(p, 'save-memory', 'proj', 'decision', 'Refresh token reuse revokes the session family', '--content', JSON.stringify({ decision: 'reuse of a refresh token revokes the whole family', rationale, alternatives: ['ignore reuse', 'log only'] }));
    const second = ok(p, 'save-memory', 'proj', 'decision', 'Refresh token reuse revokes the session per device', '--content', JSON.stringify({ decision: 'reuse of a refresh token revokes only the device session', rationale, alternatives: ['ignore reuse', 'log only'] }));
    expect(second).toMatchObject({ operation: 'superseded', supersedes: first.memory_id });
    const old = ok(p, 'get-memory', String(first.memory_id));
    expect(old).toMatchObject({ title: 'Refresh token reuse revokes the session family', superseded_by: second.memory_id });
    expect(old.content.decision).toBe('reuse of a refresh token revokes the whole family');
    expect(ok(p, 'get-memory', String(second.memory_id))).toMatchObject({ title: 'Refresh token reuse revokes the session per device', parent_id: first.memory_id });
    // Only the rationale reworded: the same decision, merged.
    const third = ok(p, 'save-memory', 'proj', 'decision', 'Refresh token reuse revokes the session per device', '--content', JSON.stringify({ decision: 'reuse of a refresh token revokes only the device session', rationale: `${rationale}, per device` }));
    expect(third).toMatchObject({ operation: 'merged', memory_id: second.memory_id });
  });

  it('forget-memory removes the bytes: neither the text nor its index words stay in the database file or its log', () => {
    const p = track(copyFixture('ca-mem-forget-bytes-'));
    const files = () => ['', '-wal', '-shm'].map((s) => p.dbPath + s).filter((f) => fs.existsSync(f));
    const holds = (word: string) => files().some((f) => fs.readFileSync(f).includes(word));
    const id = ok(p, 'save-memory', 'proj', 'learning', 'Zanzibarquux lesson', '--content', '{"lesson":"Flibbertigibbet wobbleplonk happens when zanzibarquux is on"}').memory_id;
    // A second memory keeps the index alive (its segments are merged, not dropped).
    ok(p, 'save-memory', 'proj', 'learning', 'Another lesson', '--content', '{"lesson":"Keep the fixture small"}');
    expect(holds('wobbleplonk')).toBe(true);
    expect(ok(p, 'forget-memory', String(id)).deleted).toBe(true);
    for (const word of ['wobbleplonk', 'Flibbertigibbet', 'zanzibarquux', 'Zanzibarquux']) expect(holds(word), word).toBe(false);
    expect(ok(p, 'search-memories', 'proj', '--query', 'small').memories).toHaveLength(1);
  });
});

describe('rehydrate and the session-start hook', () => {
  const HOOK = path.join(REPO_ROOT, 'hooks', 'rehydrate.mjs');
  const hook = (project: string) => spawnSync(process.execPath, [HOOK], { cwd: REPO_ROOT, env: { ...process.env, CLAUDE_PROJECT_DIR: project, CLAUDE_PLUGIN_ROOT: REPO_ROOT }, encoding: 'utf8' });

  it('--max-tokens bounds the block (rehydrate_max_tokens by default) and says how many were left out', () => {
    const p = track(copyFixture('ca-mem-budget-'));
    ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    const whole = ok(p, 'rehydrate', 'acme-shop', '--now', '2025-12-03T09:00:00Z', '--dry-run');
    const small = ok(p, 'rehydrate', 'acme-shop', '--now', '2025-12-03T09:00:00Z', '--dry-run', '--max-tokens', '300');
    expect(whole.left_out).toBe(0);
    expect(small.tokens).toBeLessThanOrEqual(300);
    expect(small.left_out).toBeGreaterThan(0);
    expect(small.markdown).toContain(`_${small.left_out} more left out for the budget of 300 tokens: search-memories acme-shop finds them._`);
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { memory: { rehydrate_max_tokens: 300 } } }));
    expect(ok(p, 'rehydrate', 'acme-shop', '--now', '2025-12-03T09:00:00Z', '--dry-run').memory_ids).toEqual(small.memory_ids);
  });

  it('the hook prints the block under 10,000 characters for a project with memories, and nothing otherwise, exit 0 always', () => {
    const p = track(copyFixture('ca-mem-hook-'));
    // No memories yet: silent.
    let r = hook(p.root);
    expect([r.status, r.stdout]).toEqual([0, '']);
    // Many long memories: the block is bounded all the same.
    ok(p, 'summarise-session', S1);
    // Forty decisions unlike each other (distinct words: near duplicates would merge into one).
    const word = (i: number, j: number) => crypto.createHash('sha256').update(`${i}:${j}`).digest('base64').replace(/[^a-z]/g, '').slice(0, 7);
    for (let i = 0; i < 40; i++) {
      const text = Array.from({ length: 50 }, (_, j) => word(i, j)).join(' ');
      ok(p, 'save-memory', 'acme-shop', 'decision', `Decision ${i} ${word(i, 99)}`, '--content', decision(text), '--importance', '9');
      ok(p, 'save-memory', 'acme-shop', 'issue', `Issue ${i} ${word(i, 98)} ${word(i, 97)} ${word(i, 96)}`, '--content', JSON.stringify({ description: text, severity: 'high', attempted_fixes: [word(i, 1), word(i, 2)] }));
    }
    fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { memory: { rehydrate_max_tokens: 100000 } } }));
    r = hook(p.root);
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith('## Project Memory: acme-shop\n')).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(HOOK_OUTPUT_LIMIT);
    // Bounded by rehydrate itself (--max-chars), so what it counts as accessed is what it printed.
    expect(r.stdout).toMatch(/_\d+ more left out for the budget of 100000 tokens and 9800 characters: search-memories acme-shop finds them\._\n$/);
    const shownIds = [...r.stdout.matchAll(/\(memory (\d+)\)/g)].map((m) => Number(m[1]));
    const accessed = (ok(p, 'search-memories', 'acme-shop', '--limit', '100').memories as { id: number; access_count: number; last_accessed_at: string | null }[])
      .filter((m) => m.last_accessed_at !== null)
      .map((m) => m.id);
    expect(accessed.sort((a, b) => a - b)).toEqual([...shownIds].sort((a, b) => a - b));
    // No database: silent.
    const none = track(makeProject('ca-mem-none-'));
    r = hook(none.root);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '', '']);
    // A broken database: one line on stderr, exit 0.
    fs.writeFileSync(path.join(none.root, 'bazinga', 'bazinga.db'), 'not a database at all, just text');
    r = hook(none.root);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^context-assembler: project memory not loaded \(.+\)\n$/);
  });

  it('the hook never writes a database with nothing to show, and answers from a read when a writer holds the lock', async () => {
    const p = track(copyFixture('ca-mem-hook-ro-'));
    const bytes = fs.readFileSync(p.dbPath);
    expect(hook(p.root)).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(p.dbPath).equals(bytes)).toBe(true);
    expect(fs.readdirSync(path.dirname(p.dbPath)).sort()).toEqual(['artifacts', 'bazinga.db']);
    // An empty database file: silent, and still empty.
    const empty = track(makeProject('ca-mem-hook-empty-'));
    fs.writeFileSync(empty.dbPath, '');
    expect(hook(empty.root)).toMatchObject({ status: 0, stdout: '', stderr: '' });
    expect(fs.statSync(empty.dbPath).size).toBe(0);
    // Memories, and another process holding the write lock: the block from the read, within a few seconds.
    ok(p, 'summarise-session', S1);
    const lock = new Database(p.dbPath);
    lock.exec('BEGIN IMMEDIATE');
    try {
      const started = performance.now();
      const r = hook(p.root);
      expect(r.status).toBe(0);
      expect(r.stdout.startsWith('## Project Memory: acme-shop\n')).toBe(true);
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      lock.exec('ROLLBACK');
      lock.close();
    }
  });

  it('withinLimit cuts at a line and says so', () => {
    const text = Array.from({ length: 400 }, (_, i) => `- line ${i} ${'x'.repeat(40)}`).join('\n') + '\n';
    const cut = withinLimit(text);
    expect(cut.length).toBeLessThanOrEqual(HOOK_OUTPUT_LIMIT);
    expect(text.startsWith(cut.slice(0, cut.indexOf('\n_(cut')))).toBe(true);
    expect(withinLimit('short\n')).toBe('short\n');
  });
});

describe('the assembler section', () => {
  it('memory.block_max and memory.block_share bound the Project Memory section; 0 turns it off', () => {
    const p = track(copyFixture('ca-mem-block-'));
    ok(p, 'summarise-session', S1, '--now', '2025-12-02T18:00:00Z');
    const run = (config?: object) => {
      if (config) fs.writeFileSync(path.join(p.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { memory: config } }));
      return JSON.parse(assemble(p, '--session', S2, '--group', 'CHK', '--agent', 'developer', '--now', '2025-12-04T12:00:00Z', '--task', 'auth tokens SecureStore refresh expiry', '--format', 'json'));
    };
    const shown = run();
    expect(shown.memories.length).toBe(3);
    expect(shown.memories.every((m: { tier: number }) => m.tier === 3)).toBe(true);
    expect(run({ block_max: 1 }).memories).toHaveLength(1);
    expect(run({ block_max: 0 }).memories).toBeUndefined();
    const tight = run({ block_share: 0.0005 });
    expect(tight.memories).toEqual([]);
    expect(tight.excluded.filter((e: { kind: string }) => e.kind === 'memory').map((e: { reason: string }) => e.reason)).toEqual(['budget', 'budget', 'budget']);
    // Off: not read at all, so not reported as left out either.
    const off = run({ block_share: 0 });
    expect(off.memories).toBeUndefined();
    expect(off.excluded.filter((e: { kind: string }) => e.kind === 'memory')).toEqual([]);
    // A session's own memories are in its block already (its packages, its reasoning): not again.
    ok(p, 'summarise-session', S2, '--now', '2025-12-04T12:00:00Z');
    const own = run({ block_share: 0.1, block_max: 10 });
    expect(own.memories.length).toBeGreaterThan(0);
    for (const m of own.memories) expect(ok(p, 'get-memory', String(m.id)).source_session).toBe(S1);
  });
});
