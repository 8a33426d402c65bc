/**
 * The full-text index on real databases: kept in step by the write commands (run in process
 * through runCli), rows written by another tool indexed on the next assembly, artifact text
 * bounded and redacted, dropping every ca_* object harmless, and relevance end to end on the
 * bundled fixture (in process and through the real command).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { bazingaDbInProcess, capturingIo, copyIndexedFixture } from './inProcess.ts';
import { openDatabase, writeTransaction } from '../skills/bazinga-db/scripts/lib/db.ts';
import { insertConsumer, insertPackage } from '../skills/bazinga-db/scripts/lib/repo/contextPackages.ts';
import { insertReasoning } from '../skills/bazinga-db/scripts/lib/repo/reasoning.ts';
import { searchIndexBehind } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import { runReport } from '../skills/context-assembler/scripts/lib/report/run.ts';
import { makeProject, REPO_ROOT, S1, writeArtifact, type Project } from './helpers.ts';

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

function track(p: Project): Project {
  projects.push(p);
  return p;
}

/** bazinga-db in process; returns the parsed JSON (throws with stderr on failure). */
function db(project: Project, ...args: string[]): any {
  const { code, out, err } = bazingaDbInProcess(project, args);
  if (code !== 0) throw new Error(`bazinga-db ${args[0]} exit ${code}: ${err}`);
  return JSON.parse(out);
}

/**
 * assemble in process; returns the JSON document (or the markdown with format markdown) and stderr.
 * A dry run unless `record`: only a recording run writes (and brings the file's index up to date).
 */
function assemble(project: Project, args: readonly string[], config?: object, opts: { record?: boolean } = {}): { doc: any; stderr: string; stdout: string } {
  const extra: string[] = [];
  if (config) {
    const file = path.join(project.root, 'bazinga', 'test_config.json');
    fs.writeFileSync(file, JSON.stringify({ context_engineering: config }));
    extra.push('--config', file);
  }
  const run = capturingIo(['--project-root', project.root, '--db', project.dbPath, '--now', '2025-12-02T12:00:00Z', ...(opts.record ? [] : ['--dry-run']), ...extra, ...args], {
    cwd: project.root,
    now: '2025-12-02T12:00:00Z',
  });
  const code = runAssembler({ name: 'assemble.ts', step: 'consume', defaultFormat: 'json', readsStdin: false, summary: '' }, run.io);
  expect(code).toBe(0);
  const out = run.out();
  return { doc: out.trim().startsWith('{') ? JSON.parse(out) : undefined, stderr: run.err(), stdout: out };
}

function freshSession(project: Project) {
  db(project, 'create-session', 'S', 'parallel', 'Build the shop');
  db(project, 'create-task-group', 'AUTH', 'S', 'JWT authentication', 'in_progress', '--component_path', 'src/auth/');
  db(project, 'create-task-group', 'CART', 'S', 'Offline cart', 'pending', '--component_path', 'src/cart/');
}

function savePackage(project: Project, group: string, type: string, priority: string, name: string, summary: string, body: string) {
  const file = writeArtifact(project, 'S', name, body);
  return db(project, 'save-context-package', 'S', group, type, file, 'qa_expert', '["developer"]', priority, summary).package_id as number;
}

describe('write commands keep the index in step', () => {
  it('a package is found by a word of its artifact file, a reasoning entry by its content, a pattern and a strategy by theirs', () => {
    const project = track(makeProject());
    freshSession(project);
    const wanted = savePackage(project, 'AUTH', 'research', 'medium', 'old.md', 'Notes from the spike', '# Spike\n\nThe `refreshToken` rotation lives in src/auth/rotate.ts.\n');
    // Critical research, not failures: the limit never passes over the group's failures for a package of lower priority.
    for (let i = 0; i < 4; i++) savePackage(project, 'AUTH', 'research', 'critical', `f${i}.md`, `Checkout total off by ${i} cent`, '# Totals\n');
    db(project, 'save-reasoning', 'S', 'AUTH', 'qa_expert', 'understanding', 'Reuse of a refresh token must be detected server side');
    db(project, 'save-error-pattern', 'acme', 'TypeError', "Cannot read properties of undefined (reading 'exp')", 'Guard the decoded JWT before reading exp');
    db(project, 'save-strategy', 'acme', 'testing', 'Freeze the clock when testing token expiry');
    const conn = new Database(project.dbPath, { readonly: true });
    try {
      expect(conn.prepare("SELECT rowid FROM ca_fts_packages WHERE ca_fts_packages MATCH 'rotation'").all()).toEqual([{ rowid: wanted }]);
      expect(conn.prepare("SELECT count(*) AS n FROM ca_fts_reasoning WHERE ca_fts_reasoning MATCH 'detected'").get()).toEqual({ n: 1 });
      expect(conn.prepare("SELECT count(*) AS n FROM ca_fts_patterns WHERE ca_fts_patterns MATCH 'decoded'").get()).toEqual({ n: 1 });
      expect(conn.prepare("SELECT count(*) AS n FROM ca_fts_strategies WHERE ca_fts_strategies MATCH 'expiry'").get()).toEqual({ n: 1 });
      expect(conn.prepare('SELECT paths FROM ca_package_paths WHERE package_id = ?').get(wanted)).toEqual({ paths: 'src/auth/rotate.ts' });
    } finally {
      conn.close();
    }
    // The older, medium-priority package is the developer's first pick for the task; without relevance the four critical ones win.
    const withTask = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--task', 'rotate the refresh token']).doc;
    expect(withTask.packages.map((p: any) => p.id)[0]).toBe(wanted);
    const off = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--task', 'rotate the refresh token'], { enable_fts5: false }).doc;
    // (it is still shown, after them: the prompt builder shows the group's five by priority.)
    expect(off.packages.map((p: any) => p.id).indexOf(wanted)).toBeGreaterThanOrEqual(4);
    expect(off.query.source).toBe('none');
  });

  it('artifact text is bounded by relevance.artifact_index_bytes and redacted before it is indexed', () => {
    const project = track(makeProject());
    fs.writeFileSync(path.join(project.root, 'bazinga', 'skills_config.json'), JSON.stringify({ context_engineering: { relevance: { artifact_index_bytes: 64 } } }));
    freshSession(project);
    const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const body = `early words here. token ${secret} is the deploy key\n${'filler '.repeat(20)}\nlatecomer appears after the bound\n`;
    savePackage(project, 'AUTH', 'research', 'low', 'a.md', 'A note', body);
    // A second secret that the 64-byte bound cuts in two: redacted whole before the cut.
    const cut = 'AKIA' + 'Z7Q2XK4PLM3NB6VR';
    savePackage(project, 'AUTH', 'research', 'low', 'b.md', 'B note', `${'x'.repeat(50)} ${cut} trailing words\n`);
    const conn = new Database(project.dbPath, { readonly: true });
    try {
      expect(conn.prepare("SELECT count(*) AS n FROM ca_fts_packages WHERE ca_fts_packages MATCH 'early'").get()).toEqual({ n: 1 });
      expect(conn.prepare("SELECT count(*) AS n FROM ca_fts_packages WHERE ca_fts_packages MATCH 'latecomer'").get()).toEqual({ n: 0 });
    } finally {
      conn.close();
    }
    for (const file of [project.dbPath, `${project.dbPath}-wal`]) {
      if (fs.existsSync(file)) expect(fs.readFileSync(file).includes(secret.slice(4).toLowerCase())).toBe(false);
    }
    // No token of the index holds 8 or more characters of either secret.
    const conn2 = new Database(project.dbPath);
    try {
      conn2.exec("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'ca_fts_packages', 'row')");
      const tokens = [...(conn2.prepare('SELECT term FROM ca_term_df').all() as { term: string }[]), ...(conn2.prepare('SELECT term FROM temp.v').all() as { term: string }[])].map((r) => r.term);
      for (const s of [secret, cut].map((x) => x.toLowerCase())) {
        for (let i = 0; i + 8 <= s.length; i++) expect(tokens.filter((t) => t.includes(s.slice(i, i + 8)))).toEqual([]);
      }
    } finally {
      conn2.close();
    }
  });
});

describe('a read of rows the index does not cover', () => {
  it('matches their scope without the index: an old package naming the scope beats the newer ones of its bucket, as with the index', () => {
    const project = track(makeProject());
    freshSession(project);
    // Written as another tool writes: no index catch-up.
    const conn = openDatabase({ dbPath: project.dbPath });
    let scoped = 0;
    writeTransaction(conn, () => {
      for (let i = 0; i < 30; i++) {
        const id = insertPackage(conn, {
          sessionId: 'S',
          groupId: 'AUTH',
          scope: 'group',
          packageType: 'research',
          filePath: writeArtifact(project, 'S', `n${i}.md`, '# Notes\n'),
          producerAgent: 'qa_expert',
          priority: 'medium',
          summary: i === 0 ? 'Key rotation touches src/billing/rotate.ts' : `note ${i}`,
          sizeBytes: null,
          createdAt: `2025-12-01 10:${String(i).padStart(2, '0')}:00`,
        });
        insertConsumer(conn, id, 'developer');
        if (i === 0) scoped = id;
      }
    });
    expect(searchIndexBehind(conn)).toContain('packages');
    conn.close();
    const run = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--scope', 'src/billing', '--limit', '1', '--explain']);
    expect(run.stderr).toContain('the search index does not cover every row of packages');
    // The limit's one pick (the builder's own five follow it).
    expect(run.doc.packages.map((p: any) => p.id)[0]).toBe(scoped);
    expect(run.doc.packages[0].components.scope).toBe(1);
  });
});

describe('rows written by another tool are indexed on the next read', () => {
  it('packages and reasoning inserted without this layer are found by the next assembly, and the watermark advances', () => {
    const project = track(makeProject());
    freshSession(project);
    const conn = openDatabase({ dbPath: project.dbPath });
    const id = writeTransaction(conn, () => {
      const file = writeArtifact(project, 'S', 'py.md', '# Written by the original tool\nidempotency keys for webhook replays\n');
      const pkg = insertPackage(conn, { sessionId: 'S', groupId: 'AUTH', scope: 'group', packageType: 'research', filePath: file, producerAgent: 'investigator', priority: 'low', summary: 'Webhook notes', sizeBytes: 10 });
      insertConsumer(conn, pkg, 'developer');
      insertReasoning(conn, { sessionId: 'S', groupId: 'AUTH', agentType: 'developer', agentId: null, iteration: 1, phase: 'approach', confidence: null, content: 'Replay webhooks with idempotency keys', referencesJson: null, redacted: false });
      return pkg;
    });
    expect(searchIndexBehind(conn)).toEqual(expect.arrayContaining(['packages', 'reasoning']));
    conn.close();
    const doc = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--task', 'idempotency of webhook replays', '--explain'], undefined, { record: true }).doc;
    expect(doc.packages[0].id).toBe(id);
    expect(doc.packages[0].components.relevance).toBe(1);
    expect(doc.packages[0].match).toEqual({ terms: ['webhook', 'idempotency', 'replays'], fields: ['summary', 'artifact'] });
    expect(doc.reasoning.entries.map((e: any) => e.content)).toContain('Replay webhooks with idempotency keys');
    const after = openDatabase({ dbPath: project.dbPath });
    expect(searchIndexBehind(after)).toEqual([]);
    expect(after.prepare("SELECT value FROM ca_meta WHERE key = 'search.packages.hi'").get()).toEqual({ value: String(id) });
    after.close();
  });

  it('dropping every ca_* object is harmless: the next open recreates them and the next recording call indexes everything again', () => {
    const project = track(copyIndexedFixture());
    const first = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--task', 'clock skew tolerance', '--explain']).doc;
    const conn = new Database(project.dbPath);
    // Every ca_* object but FTS5's own shadow tables (dropped with their table).
    const objects = (conn.prepare("SELECT type, name FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\'").all() as { type: string; name: string }[]).filter(
      (o) => !/^ca_fts_[a-z]+_(data|idx|content|docsize|config)$/.test(o.name),
    );
    for (const o of objects.filter((o) => o.type !== 'index')) conn.exec(`DROP TABLE IF EXISTS "${o.name}"`);
    for (const o of objects.filter((o) => o.type === 'index')) conn.exec(`DROP INDEX IF EXISTS "${o.name}"`);
    expect(conn.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'ca\\_%' ESCAPE '\\'").get()).toEqual({ n: 0 });
    conn.close();
    const again = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--task', 'clock skew tolerance', '--explain'], undefined, { record: true }).doc;
    expect(again.packages.map((p: any) => [p.id, p.score])).toEqual(first.packages.map((p: any) => [p.id, p.score]));
    expect(again.packages[0].components.relevance).toBe(1);
  });
});

describe('the index is derived data: damage to it never costs the block', () => {
  it.each([
    { name: 'ca_term_df dropped', sql: 'DROP TABLE ca_term_df' },
    { name: 'ca_package_paths dropped', sql: 'DROP TABLE ca_package_paths' },
    { name: 'ca_meta dropped', sql: 'DROP TABLE ca_meta' },
    { name: 'the watermarks deleted', sql: "DELETE FROM ca_meta WHERE key LIKE 'search.%'" },
  ])('$name: the next assembly rebuilds, with no row counted twice and the scope signal kept', ({ sql }) => {
    const project = track(makeProject());
    freshSession(project);
    const id = savePackage(project, 'global', 'research', 'low', 'p.md', 'Notes', 'Rotation of keys touches src/billing/rotate.ts');
    const conn = new Database(project.dbPath);
    conn.exec(sql);
    conn.close();
    const doc = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--task', 'rotation', '--scope', 'src/billing', '--explain'], undefined, { record: true }).doc;
    expect(doc.packages.find((p: any) => p.id === id).components).toMatchObject({ relevance: 1, scope: 1 });
    const after = new Database(project.dbPath, { readonly: true });
    expect(after.prepare("SELECT docs FROM ca_term_df WHERE source = 'packages' AND term = 'rotation'").get()).toEqual({ docs: 1 });
    after.close();
  });

  it('a corrupt full-text index: ranked without relevance, said on stderr, never the fallback block', () => {
    const project = track(copyIndexedFixture());
    assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer'], undefined, { record: true });
    const conn = new Database(project.dbPath);
    conn.unsafeMode(true); // FTS5's shadow tables are read-only otherwise
    conn.prepare("UPDATE ca_fts_packages_data SET block = x'00ff00ff00ff' WHERE id > 1").run();
    conn.close();
    const out = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--task', 'refresh token']);
    expect(out.doc.fallback).toBeUndefined();
    expect(out.doc.packages.length).toBeGreaterThan(0);
    expect(out.stderr).toMatch(/relevance unavailable|search index read failed/);
  });

  it('new rows from another tool are indexed within the budget too, oldest first, at least one batch per call', async () => {
    const { syncSearchIndex } = await import('../skills/bazinga-db/scripts/lib/repo/searchIndex.ts');
    const project = track(makeProject());
    freshSession(project);
    const conn = openDatabase({ dbPath: project.dbPath });
    writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: project.root, artifactBytes: 100 }));
    writeTransaction(conn, () => {
      for (let i = 0; i < 12_000; i++) {
        insertReasoning(conn, { sessionId: 'S', groupId: 'AUTH', agentType: 'developer', agentId: null, iteration: 1, phase: 'approach', confidence: null, content: `step ${i}`, referencesJson: null, redacted: false });
      }
    });
    let t = 0;
    const first = writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: project.root, artifactBytes: 100, budgetMs: 0, clock: () => (t += 1) }));
    expect(first.reasoning).toBe(5000);
    expect(first.backlog).toBe(7000);
    const rest = writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: project.root, artifactBytes: 100 }));
    expect(rest).toMatchObject({ reasoning: 7000, backlog: 0 });
    conn.close();
  });
});

describe('relevance on the bundled fixture', () => {
  it('explicit, implicit and error queries are recorded in the document', () => {
    const project = track(copyIndexedFixture());
    const explicit = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--task', 'refresh token reuse returns 500']).doc;
    expect(explicit.query).toMatchObject({ source: 'explicit', text: 'refresh token reuse returns 500', scope: [], scope_source: 'none' });
    const implicit = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1']).doc;
    expect(implicit.query.source).toBe('implicit');
    expect(implicit.query.text).toContain('JWT authentication');
    // The group's own clause of the session's requirements, not the CART group's.
    expect(implicit.query.text).toContain('Add JWT auth');
    expect(implicit.query.text).not.toContain('offline cart');
    // On a retry the group's latest failures summary is part of the implicit task.
    expect(implicit.query.text).toContain('refresh reuse undetected');
    const first = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer']).doc;
    expect(first.query.text).not.toContain('refresh reuse undetected');
    const error = assemble(project, ['--session', S1, '--group', 'CART', '--agent', 'developer', '--error', 'Exceeded timeout of 7000 ms for a hook']).doc;
    expect(error.error_patterns[0]).toMatchObject({ error_type: 'JestTimeout', matched_error: true, relevance: 1 });
  });

  it('--task, --error and --scope are redacted wherever they are echoed', () => {
    const project = track(copyIndexedFixture());
    const token = 'ghp_' + 'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8';
    const out = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--task', `deploy with ${token}`, '--error', `401 for ${token}`, '--scope', `src/${token}`]);
    expect(out.stdout).not.toContain(token.slice(4, 20));
    expect(out.doc.query.terms.join(' ')).not.toMatch(/redacted/i);
  });

  it('a paraphrased error still finds its pattern first; an unrelated one is not marked as matched', () => {
    const project = track(copyIndexedFixture());
    const doc = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--error', "module 'jose' could not be found from src/auth/index.ts"]).doc;
    expect(doc.error_patterns[0].error_type).toBe('ModuleNotFound');
    expect(doc.error_patterns[0].matched_error).toBe(true);
    const none = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--error', 'zzz qqq']).doc;
    expect(none.error_patterns.every((p: any) => p.matched_error === false && p.relevance === 0)).toBe(true);
  });

  it('--scope gives the scope signal by path segment; without it the group component path is the scope', () => {
    const project = track(makeProject());
    freshSession(project);
    const inScope = savePackage(project, 'global', 'research', 'low', 'g1.md', 'Session notes', 'Touched src/cart/sync.ts and src/cart/queue.ts');
    const outScope = savePackage(project, 'global', 'research', 'low', 'g2.md', 'Session notes', 'Touched src/cartography/map.ts');
    const doc = assemble(project, ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--scope', 'src/cart', '--explain']).doc;
    const scopeOf = (id: number) => doc.packages.find((p: any) => p.id === id)?.components.scope;
    expect(scopeOf(inScope)).toBe(1);
    expect(scopeOf(outScope)).toBe(0);
    expect(doc.query).toMatchObject({ scope: ['src/cart'], scope_source: 'explicit' });
    const implicit = assemble(project, ['--session', 'S', '--group', 'CART', '--agent', 'developer']).doc;
    expect(implicit.query).toMatchObject({ scope: ['src/cart'], scope_source: 'group' });
  });
});

describe("a group's implicit query is its own task", () => {
  const words = (doc: any) => new Set<string>(doc.query.terms);
  const CART_WORDS = ['offline', 'cart', 'shop', 'app'];

  it('on the fixture: AUTH gets its clause of the requirements, CART its own, a session-wide spawn both; the JSON and the report show it', () => {
    const project = track(copyIndexedFixture());
    const auth = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer']).doc;
    expect(auth.query.source).toBe('implicit');
    expect(auth.query.text).toBe('JWT authentication\nAdd JWT auth');
    for (const w of CART_WORDS) expect(words(auth).has(w), w).toBe(false);
    const cart = assemble(project, ['--session', S1, '--group', 'CART', '--agent', 'developer']).doc;
    expect(cart.query.text).toBe('Offline cart sync\nand an offline cart to the shop app');
    expect(words(cart).has('jwt')).toBe(false);
    const session = assemble(project, ['--session', S1, '--group', 'global', '--agent', 'developer']).doc;
    expect(session.query.text).toBe('Add JWT auth and an offline cart to the shop app');
    for (const w of ['jwt', 'auth', ...CART_WORDS]) expect(words(session).has(w), w).toBe(true);
    // The report's query line of a recorded AUTH spawn: the group's words, none of CART's.
    assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--format', 'json'], undefined, { record: true });
    const run = capturingIo(['--project-root', project.root, '--db', project.dbPath, '--session', S1, '--format', 'markdown'], { cwd: project.root, now: '2025-12-02T12:00:00Z' });
    expect(runReport(run.io)).toBe(0);
    const line = run.out().split('\n').find((l) => l.startsWith('- query: implicit'));
    // `add` is a task's verb of change, never asked for.
    expect(line).toBe('- query: implicit (jwt, authentication, auth); scope none');
  });

  it('on a session written through bazinga-db: a CART package no longer matches an AUTH spawn by CART words, and an AUTH package leads', () => {
    const project = track(makeProject());
    db(project, 'create-session', 'S', 'parallel', 'Add JWT login with refresh token rotation, and an offline cart for the shop app that syncs orders on reconnect.');
    db(project, 'create-task-group', 'AUTH', 'S', 'JWT authentication', 'in_progress');
    db(project, 'create-task-group', 'CART', 'S', 'Offline cart sync', 'in_progress');
    const cartNotes = savePackage(project, 'global', 'research', 'high', 'cart.md', 'Offline cart for the shop app: queue orders, sync on reconnect', '# Cart\n\nThe shop app keeps an offline cart in IndexedDB.\n');
    const authNotes = savePackage(project, 'global', 'research', 'medium', 'auth.md', 'Refresh token rotation notes', '# Tokens\n\nRotate the refresh token on every use.\n');
    const spawn = (group: string) => assemble(project, ['--session', 'S', '--group', group, '--agent', 'developer', '--explain']).doc;
    const relevanceOf = (doc: any, id: number) => doc.packages.find((p: any) => p.id === id)?.components.relevance;
    const auth = spawn('AUTH');
    for (const w of CART_WORDS) expect(words(auth).has(w), w).toBe(false);
    expect(relevanceOf(auth, cartNotes)).toBe(0);
    expect(auth.packages.map((p: any) => p.id)).toEqual([authNotes, cartNotes]);
    const cart = spawn('CART');
    expect(words(cart).has('jwt')).toBe(false);
    expect(relevanceOf(cart, authNotes)).toBe(0);
    expect(cart.packages[0].id).toBe(cartNotes);
    // Session-wide, both packages match the query.
    const session = spawn('global');
    expect(relevanceOf(session, cartNotes)).toBeGreaterThan(0);
    expect(relevanceOf(session, authNotes)).toBeGreaterThan(0);
  });

  it("a retry's feedback without a task (--error, or a params file's qa_feedback) is queried with the group's own task", () => {
    const project = track(copyIndexedFixture());
    const feedback = 'expired token gives 500 not 401';
    const flags = assemble(project, ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--error', feedback]).doc;
    expect(flags.query).toMatchObject({ source: 'explicit', text: `${feedback}\nJWT authentication\nAdd JWT auth` });
    const params = path.join(project.root, 'bazinga', 'params_developer_AUTH.json');
    fs.writeFileSync(params, JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'AUTH', qa_feedback: feedback }));
    const fromFile = assemble(project, ['--params-file', params]).doc;
    expect(fromFile.query.text).toContain(feedback);
    expect(fromFile.query.text).toContain('JWT authentication');
    for (const w of CART_WORDS) expect(words(fromFile).has(w), w).toBe(false);
    // With the task the params file gives, the query is that task and the feedback.
    fs.writeFileSync(params, JSON.stringify({ agent_type: 'developer', session_id: S1, group_id: 'AUTH', task_title: 'Fix token expiry', task_requirements: 'Expired tokens answer 401', qa_feedback: feedback }));
    expect(assemble(project, ['--params-file', params]).doc.query.text).toBe(`${feedback}\nFix token expiry\n\nExpired tokens answer 401`);
  });
});

describe('the real command', () => {
  it('assemble --task --explain prints relevance and matched terms; the markdown block is unchanged in form', () => {
    const project = track(copyIndexedFixture());
    const bin = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');
    const r = spawnSync(process.execPath, ['--import', 'tsx', bin, '--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--now', '2025-12-02T12:00:00Z', '--dry-run', '--task', 'refresh token reuse returns 500', '--format', 'json', '--explain'], { encoding: 'utf8', cwd: REPO_ROOT });
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.packages[0]).toMatchObject({ id: 2, components: { relevance: 1 }, match: { fields: ['summary', 'artifact'] } });
    expect(doc.packages[0].match.terms).toEqual(expect.arrayContaining(['refresh', 'reuse', '500']));
  });
});

describe('every relevance key does something', () => {
  const base = ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--explain'];
  function store(project: Project) {
    freshSession(project);
    const ids = {
      bySummary: savePackage(project, 'AUTH', 'research', 'medium', 's.md', 'Webhook replay protection notes', '# Notes\n'),
      byPath: savePackage(project, 'AUTH', 'research', 'medium', 'webhook-replay.md', 'Some notes', '# Notes\n'),
      other: [1, 2, 3].map((i) => savePackage(project, 'AUTH', 'research', 'medium', `w${i}.md`, `webhook ${i}`, '# Notes\n')),
    };
    return ids;
  }

  it('relevance.max_query_terms caps the terms asked for', () => {
    const project = track(makeProject());
    store(project);
    const doc = assemble(project, [...base, '--task', 'alpha beta gamma delta'], { relevance: { max_query_terms: 2 } }).doc;
    expect(doc.query.terms).toEqual(['alpha', 'beta']);
  });

  it('relevance.max_postings drops the costliest terms first and records them', () => {
    const project = track(makeProject());
    const ids = store(project);
    // 'webhook' is in five packages, 'replay' in two: a budget of 2 keeps only 'replay'.
    const doc = assemble(project, [...base, '--task', 'webhook replay'], { relevance: { max_postings: 2 } }).doc;
    expect(doc.query.dropped_terms).toEqual(['webhook']);
    expect(doc.packages.filter((p: any) => p.components.relevance > 0).map((p: any) => p.id).sort()).toEqual([ids.bySummary, ids.byPath].sort());
    const all = assemble(project, [...base, '--task', 'webhook replay']).doc;
    expect(all.query.dropped_terms).toBeUndefined();
  });

  it('relevance.candidates is how many hits the first round reads', () => {
    const project = track(makeProject());
    store(project);
    // The paths signal off: it reads every package whose paths hold the task's words (webhook-replay.md) whatever the key.
    const few = assemble(project, [...base, '--task', 'webhook'], { relevance: { candidates: 1 }, ranking: { weights: { paths: 0 } } }).doc;
    const many = assemble(project, [...base, '--task', 'webhook'], { relevance: { candidates: 40 }, ranking: { weights: { paths: 0 } } }).doc;
    expect(many.query).toMatchObject({ fts_hits: 5, rounds: 1 });
    expect(few.query.fts_hits).toBeLessThan(5);
    expect(few.packages.map((p: any) => p.id)).toEqual(many.packages.map((p: any) => p.id));
  });

  it('relevance.column_weights decide between a match in the summary and one in the path', () => {
    const project = track(makeProject());
    const ids = store(project);
    const task = ['--task', 'replay', '--limit', '1'];
    const summaryFirst = assemble(project, [...base, ...task], { relevance: { column_weights: { summary: 1, artifact: 0.5, path: 0 } } }).doc;
    const pathFirst = assemble(project, [...base, ...task], { relevance: { column_weights: { summary: 0, artifact: 0.5, path: 1 } } }).doc;
    expect(summaryFirst.packages[0].id).toBe(ids.bySummary);
    expect(pathFirst.packages[0].id).toBe(ids.byPath);
  });

  it('relevance.reasoning_window lets an older entry under the scope compete', () => {
    const project = track(makeProject());
    freshSession(project);
    db(project, 'save-reasoning', 'S', 'AUTH', 'developer', 'approach', 'Touched src/payments/stripe.ts for the cookie flags', '--references', '["src/payments/stripe.ts"]');
    for (let i = 0; i < 6; i++) db(project, 'save-reasoning', 'S', 'AUTH', 'developer', 'approach', `Unrelated step ${i} in docs/readme`);
    const args = ['--session', 'S', '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--scope', 'src/payments', '--task', 'zzz'];
    const wide = assemble(project, args, { relevance: { reasoning_window: 10 } }).doc;
    const narrow = assemble(project, args, { relevance: { reasoning_window: 2 } }).doc;
    expect(wide.reasoning.entries.map((e: any) => e.content)).toContain('Touched src/payments/stripe.ts for the cookie flags');
    expect(narrow.reasoning.entries.map((e: any) => e.content)).not.toContain('Touched src/payments/stripe.ts for the cookie flags');
  });

  it('reasoning.weights: with --task, a relevant older entry beats the newest when relevance weighs; recency alone keeps the newest', () => {
    const project = track(copyIndexedFixture());
    const args = ['--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--task', 'RS256 signing keys'];
    const ids = (config: object) => (assemble(project, args, config).doc.reasoning.entries as any[]).map((e) => e.id).sort((a, b) => a - b);
    // Entry 1 (the developer's first understanding, "Need RS256 JWT …") is older than entries 3 and 5.
    expect(ids({ reasoning: { weights: { recency: 1, relevance: 2, scope: 1 } } })).toContain(1);
    expect(ids({ reasoning: { weights: { recency: 1, relevance: 0, scope: 0 } } })).not.toContain(1);
  });

  it('relevance.index_budget_ms bounds one call on a backlog; bazinga-db reads it (and artifact_index_bytes) from the project config', async () => {
    const { indexSettings } = await import('../skills/bazinga-db/scripts/lib/settings.ts');
    const { resetSearchIndex, syncSearchIndex } = await import('../skills/bazinga-db/scripts/lib/repo/searchIndex.ts');
    const project = track(makeProject());
    const cfg = path.join(project.root, 'bazinga', 'skills_config.json');
    expect(indexSettings(project.root)).toEqual({ artifactBytes: 16384, budgetMs: 1000 });
    fs.writeFileSync(cfg, JSON.stringify({ context_engineering: { relevance: { index_budget_ms: 0, artifact_index_bytes: 10 } } }));
    expect(indexSettings(project.root)).toEqual({ artifactBytes: 10, budgetMs: 0 });
    fs.writeFileSync(cfg, '{ not json');
    expect(indexSettings(project.root)).toEqual({ artifactBytes: 16384, budgetMs: 1000 });
    // Over its cap of 5 s: 5 s, here and in the assembler.
    fs.writeFileSync(cfg, JSON.stringify({ context_engineering: { relevance: { index_budget_ms: 9000 } } }));
    expect(indexSettings(project.root)).toEqual({ artifactBytes: 16384, budgetMs: 5000 });
    const { indexBudgetMs } = await import('../skills/context-assembler/scripts/lib/search.ts');
    const { parseConfig } = await import('../skills/context-assembler/scripts/lib/config.ts');
    expect(indexBudgetMs(parseConfig(fs.readFileSync(cfg, 'utf8'), cfg))).toBe(5000);
    expect(indexBudgetMs(parseConfig(JSON.stringify({ context_engineering: { relevance: { index_budget_ms: 250 } } }), cfg))).toBe(250);
    freshSession(project);
    const conn = openDatabase({ dbPath: project.dbPath });
    writeTransaction(conn, () => {
      for (let i = 0; i < 2500; i++) {
        const id = insertPackage(conn, { sessionId: 'S', groupId: 'AUTH', scope: 'group', packageType: 'research', filePath: `bazinga/artifacts/S/n${i}.md`, producerAgent: 'qa_expert', priority: 'low', summary: `note ${i}`, sizeBytes: null });
        insertConsumer(conn, id, 'developer');
      }
      resetSearchIndex(conn);
    });
    let t = 0;
    const clock = () => (t += 1);
    const first = writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: project.root, artifactBytes: 100, budgetMs: 0, clock }));
    expect(first.packages).toBe(1000);
    expect(first.backlog).toBeGreaterThan(0);
    // Newest first: the last package written is searchable after the first call.
    expect(conn.prepare("SELECT rowid FROM ca_fts_packages WHERE ca_fts_packages MATCH '\"2499\"'").all()).toEqual([{ rowid: 2500 }]);
    const rest = writeTransaction(conn, () => syncSearchIndex(conn, { projectRoot: project.root, artifactBytes: 100 }));
    expect(rest).toMatchObject({ packages: 1500, backlog: 0 });
    conn.close();
  });
});
