/**
 * The secret corpus, and a fixed sample of every generated class of secret (test/secrets/classes.ts),
 * through every ingest command and every output path, on real SQLite files:
 * - ingest: each case through every bazinga-db command that stores text; afterwards neither the
 *   database file nor its write-ahead log holds any secret (a benign canary written the same
 *   way is found, so the scan can fail);
 * - emit: rows stored as the original tool stores them (unredacted) and an artifact holding the
 *   whole corpus are printed by every assembler output (markdown block, JSON, --explain, fetch,
 *   echoed --task/--error, warnings), the report (markdown, JSON, HTML) and every bazinga-db read;
 *   no secret reaches stdout/stderr or the report's file;
 * - fetch of each generated spelling as an artifact of its own (a whole file, as a reader saves it);
 * - redact-existing on such a database: counts, idempotence, no secret left in the file;
 * - the other way round, test results, counts, coverage and versions pass every path byte-identical.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../skills/context-assembler/scripts/lib/doctor.ts';
import { runFetch } from '../skills/context-assembler/scripts/lib/fetchArtifact.ts';
import { runReport } from '../skills/context-assembler/scripts/lib/report/run.ts';
import { runScript as runAssembler } from '../skills/context-assembler/scripts/lib/shell.ts';
import { makeProject, type Project } from './helpers.ts';
import { bazingaDbInProcess, capturingIo } from './inProcess.ts';
import fc from 'fast-check';
import { BENIGN_CASES, SECRET_CASES as CORPUS_CASES, type SecretCase } from './secrets/corpus.ts';
import { BENIGN_RESULTS, SECRET_CLASSES, sampleClass } from './secrets/classes.ts';

/** Spellings of each generated class pushed through the paths (a fixed sample: each costs commands and processes). */
const PER_CLASS = 6;
const GENERATED: SecretCase[] = Object.keys(SECRET_CLASSES).flatMap((name, i) =>
  sampleClass(name, PER_CLASS, 3700 + i).map((g, j) => ({ id: `generated-${name}-${j}`, family: g.family, text: g.text, secrets: g.secrets })),
);
const SECRET_CASES: readonly SecretCase[] = [...CORPUS_CASES, ...GENERATED];

const ALL_SECRETS = [...new Set(SECRET_CASES.flatMap((c) => c.secrets))];

/** Secrets found in a text (as written). */
const leaked = (text: string) => ALL_SECRETS.filter((s) => text.includes(s));

/** Secrets found in the database file and its WAL (bytes, as UTF-8). */
function leakedInFiles(dbPath: string): string[] {
  const bytes = [dbPath, `${dbPath}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f).toString('latin1'));
  return ALL_SECRETS.filter((s) => {
    const needle = Buffer.from(s, 'utf8').toString('latin1');
    return bytes.some((b) => b.includes(needle));
  });
}

const cli = bazingaDbInProcess;

function ok(project: Project, args: readonly string[]): any {
  const r = cli(project, args);
  if (r.code !== 0) throw new Error(`bazinga-db ${args[0]} exit ${r.code}: ${r.err}`);
  return JSON.parse(r.out);
}

const NOW = '2025-12-02T12:00:00Z';

function assemble(project: Project, args: readonly string[]): { out: string; err: string; code: number } {
  const run = capturingIo(['--project-root', project.root, '--db', project.dbPath, '--now', NOW, '--dry-run', ...args], { cwd: project.root, now: NOW });
  const code = runAssembler({ name: 'assemble.ts', step: 'consume', defaultFormat: 'markdown', readsStdin: false, summary: '' }, run.io);
  return { out: run.out(), err: run.err(), code };
}

describe('ingest: every command that stores text, every case', () => {
  let p: Project;
  let holder: Database.Database;
  const canary = 'canary-benign-7c1f2e9a';

  beforeAll(() => {
    p = makeProject('ca-secrets-ingest-');
    ok(p, ['create-session', 'S1', 'simple', `Build the shop ${canary}`]);
    // An open connection keeps the write-ahead log on disk for the scan below.
    holder = new Database(p.dbPath);
    holder.prepare('SELECT count(*) FROM sessions').get();
  });
  afterAll(() => {
    holder.close();
    p.cleanup();
  });

  it.each(SECRET_CASES.map((c, i) => [c.id, c, i] as const))('%s', (_id, c, i) => {
    const text = c.text;
    const json = JSON.stringify([text]);
    const session = `S-${i}`;
    // Fields that get a prefix keep the text on lines of its own: line-oriented layouts (.pgpass,
    // YAML blocks, command lines) are recognised where a line starts.
    const results = [
      ok(p, ['create-session', session, 'simple', text, '--metadata', JSON.stringify({ note: text }), '--initial_branch', `main\n${text}`]),
      ok(p, ['create-task-group', `G${i}`, session, text, '--component_path', text, '--specializations', '["typescript"]']),
      ok(p, ['save-context-package', 'S1', 'AUTH', 'research', 'bazinga/artifacts/S1/notes.md', 'developer', '["qa_expert"]', 'high', text]),
      ok(p, ['save-reasoning', 'S1', 'AUTH', 'developer', 'completion', text, '--references', json, '--agent_id', `dev\n${text}`]),
      ok(p, ['save-error-pattern', 'proj', 'Error', text, text, '--context_hints', json, '--stack_pattern', JSON.stringify([{ frame: text }]), '--lang', text]),
      ok(p, ['save-strategy', 'proj', 'implementation', text, '--lang', text, '--framework', text]),
    ];
    for (const r of results) expect(leaked(JSON.stringify(r))).toEqual([]);
    const saved = results.filter((r) => 'redacted' in r);
    expect(saved.every((r) => r.redacted === true)).toBe(true);
  });

  it('extract-strategies copies the stored (redacted) reasoning', () => {
    const out = ok(p, ['extract-strategies', 'S1', 'AUTH', 'proj']);
    // It takes the newest five completion/decisions/approach entries of the group.
    expect(out.extracted_count).toBe(5);
    expect(leaked(JSON.stringify(ok(p, ['get-strategies', 'proj', '--limit', '100'])))).toEqual([]);
  });

  it('the database file and its WAL hold none of the secrets; the canary written alongside is there', () => {
    expect(fs.existsSync(`${p.dbPath}-wal`)).toBe(true);
    expect(leakedInFiles(p.dbPath)).toEqual([]);
    const all = [p.dbPath, `${p.dbPath}-wal`].map((f) => fs.readFileSync(f).toString('latin1')).join('');
    expect(all).toContain(canary);
  });

  it('an identifier holding a secret is refused, naming the field and the rule but not the value', () => {
    const secret = 'ghp_' + 'Rt2Lm9Qx4Zc8Vn1Hd5Jf3Kp6Sa0Ge2Uo7Iy4T';
    const r = cli(p, ['save-strategy', `proj-${secret}`, 'general', 'x']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('project_id holds a secret (rule github_token)');
    expect(r.err).not.toContain(secret);
  });
});

/** Rows as the original tool writes them: summaries, reasoning, patterns and strategies unredacted. */
function seedUnredacted(p: Project, sessions: string[]): void {
  for (const s of sessions) ok(p, ['create-session', s, 'simple', 'Seed']);
  const db = new Database(p.dbPath);
  const insertPackage = db.prepare(
    `INSERT INTO context_packages (session_id, group_id, package_type, file_path, producer_agent, priority, summary, scope)
     VALUES (?, NULL, 'research', ?, 'requirements_engineer', 'critical', ?, 'global')`,
  );
  const insertConsumer = db.prepare(`INSERT INTO context_package_consumers (package_id, agent_type) VALUES (?, 'developer')`);
  const insertLog = db.prepare(
    `INSERT INTO orchestration_logs (session_id, agent_type, content, log_type, reasoning_phase, group_id, redacted) VALUES (?, 'requirements_engineer', ?, 'reasoning', 'completion', 'global', 0)`,
  );
  const insertPattern = db.prepare(
    `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences) VALUES (?, 'proj', ?, ?, 0.9, 3)`,
  );
  const insertStrategy = db.prepare(`INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness) VALUES (?, 'proj', 'implementation', ?, 5)`);
  db.transaction(() => {
    SECRET_CASES.forEach((c, i) => {
      const session = sessions[i % sessions.length] as string;
      const id = insertPackage.run(session, `bazinga/artifacts/${session}/corpus.md`, c.text).lastInsertRowid;
      insertConsumer.run(id);
      insertLog.run(session, c.text);
      insertPattern.run(`hash${i}`, JSON.stringify({ error_type: 'Error', message_pattern: c.text, context_hints: [c.text], stack_pattern: [] }), c.text);
      insertStrategy.run(`proj_implementation_${i}`, c.text);
    });
  })();
  db.close();
}

describe('emit: rows stored unredacted are never printed as stored', () => {
  let p: Project;
  const sessions = Array.from({ length: 8 }, (_, i) => `OLD${i}`);

  beforeAll(() => {
    p = makeProject('ca-secrets-emit-');
    seedUnredacted(p, sessions);
    for (const s of sessions) {
      fs.mkdirSync(path.join(p.root, 'bazinga', 'artifacts', s), { recursive: true });
      fs.writeFileSync(path.join(p.root, 'bazinga', 'artifacts', s, 'corpus.md'), SECRET_CASES.map((c) => c.text).join('\n\n'));
    }
  });
  afterAll(() => p.cleanup());

  it('the seed really holds the secrets (the checks below can fail)', () => {
    expect(leakedInFiles(p.dbPath).length).toBe(ALL_SECRETS.length);
  });

  it.each([
    ['markdown block', ['--format', 'markdown']],
    ['JSON document', ['--format', 'json']],
    ['--explain', ['--format', 'json', '--explain']],
    ['reasoning on', ['--format', 'markdown', '--include-reasoning', 'true', '--reasoning-level', 'full']],
  ])('%s', (_name, extra) => {
    for (const s of sessions) {
      const r = assemble(p, ['--session', s, '--agent', 'developer', '--model', 'opus', '--limit', '50', '--lang', 'typescript', ...extra]);
      expect(r.code).toBe(0);
      expect(leaked(r.out + r.err)).toEqual([]);
    }
  });

  it('the delivered block does show the packages (redacted), so the check above saw them', () => {
    const r = assemble(p, ['--session', sessions[0] as string, '--agent', 'developer', '--model', 'opus', '--limit', '50', '--format', 'json']);
    const doc = JSON.parse(r.out);
    expect(doc.packages.length).toBeGreaterThan(10);
    expect(JSON.stringify(doc.packages)).toContain('[REDACTED:');
  });

  it.each(SECRET_CASES.map((c) => [c.id, c] as const))('echoed --task/--error/--scope: %s', (_id, c) => {
    for (const format of ['markdown', 'json']) {
      const r = assemble(p, ['--session', 'OLD0', '--agent', 'developer', '--format', format, '--task', c.text, '--error', c.text, '--scope', c.text]);
      expect(leaked(r.out + r.err)).toEqual([]);
    }
  });

  it('fetch prints the artifact (the whole corpus) redacted, as text and JSON', () => {
    for (const format of ['text', 'json']) {
      const run = capturingIo(['1', '--project-root', p.root, '--db', p.dbPath, '--format', format], { cwd: p.root, now: NOW });
      const code = runFetch(run.io);
      const out = run.out();
      const err = run.err();
      expect(code).toBe(0);
      expect(out.length).toBeGreaterThan(10_000);
      expect(leaked(out + err)).toEqual([]);
    }
  });

  it('a warning on stderr is redacted too (a config key that is a secret)', () => {
    const secret = 'ghp_Zq3X9vL2mN8pR4tW7yB1cF6hJ0kS5dGaaaaa';
    const file = path.join(p.root, 'bazinga', 'skills_config.json');
    fs.writeFileSync(file, JSON.stringify({ context_engineering: { [secret]: 1 } }));
    try {
      const r = assemble(p, ['--session', 'OLD0', '--agent', 'developer']);
      expect(r.err).toContain('unknown key context_engineering.[REDACTED:github_token]');
      expect(r.err).not.toContain(secret);
    } finally {
      fs.rmSync(file);
    }
  });

  it.each(['markdown', 'json', 'html'])('the report (%s) prints none of them, and shows the packages redacted', (format) => {
    let shown = '';
    for (const s of sessions) {
      const out = path.join(p.root, `report-${s}.${format}`);
      const run = capturingIo(['--project-root', p.root, '--now', NOW, '--session', s, '--format', format, '--out', out], { cwd: p.root, now: NOW });
      expect(runReport(run.io), run.err()).toBe(0);
      const page = fs.readFileSync(out, 'utf8');
      expect(leaked(page + run.out() + run.err())).toEqual([]);
      shown += page;
    }
    expect(shown).toContain('REDACTED');
  });

  it.each([
    ['get-context-packages', ['get-context-packages', 'OLD0', 'global', 'developer', '50']],
    ['get-reasoning', ['get-reasoning', 'OLD0', '--limit', '500']],
    ['get-error-patterns', ['get-error-patterns', 'proj', '--limit', '1000']],
    ['get-strategies', ['get-strategies', 'proj', '--limit', '100']],
    ['query', ['query', 'SELECT summary, content FROM context_packages JOIN orchestration_logs USING (session_id)']],
  ])('bazinga-db %s prints no secret', (_name, args) => {
    const r = cli(p, args);
    expect(r.code).toBe(0);
    expect(r.out.length).toBeGreaterThan(100);
    expect(leaked(r.out + r.err)).toEqual([]);
  });
});

describe('fetch: each generated spelling as an artifact of its own', () => {
  let p: Project;
  const ids: { id: number; c: SecretCase }[] = [];

  beforeAll(() => {
    p = makeProject('ca-secrets-fetch-');
    ok(p, ['create-session', 'S1', 'simple', 'Fetch each artifact']);
    const dir = path.join(p.root, 'bazinga', 'artifacts', 'S1');
    fs.mkdirSync(dir, { recursive: true });
    GENERATED.forEach((c, i) => {
      fs.writeFileSync(path.join(dir, `case-${i}.md`), c.text + '\n');
      const saved = ok(p, ['save-context-package', 'S1', 'AUTH', 'research', `bazinga/artifacts/S1/case-${i}.md`, 'developer', '["qa_expert"]', 'high', `case ${i}`]);
      ids.push({ id: saved.package_id as number, c });
    });
  });
  afterAll(() => p.cleanup());

  it('the files really hold the secrets (the check below can fail)', () => {
    const files = fs.readdirSync(path.join(p.root, 'bazinga', 'artifacts', 'S1')).map((f) => fs.readFileSync(path.join(p.root, 'bazinga', 'artifacts', 'S1', f), 'utf8'));
    expect(GENERATED.every((c) => c.secrets.every((s) => files.some((f) => f.includes(s))))).toBe(true);
  });

  it('fetch prints none of them, as text and as JSON', () => {
    for (const { id, c } of ids) {
      for (const format of ['text', 'json']) {
        const run = capturingIo([String(id), '--project-root', p.root, '--db', p.dbPath, '--format', format], { cwd: p.root, now: NOW });
        expect(runFetch(run.io)).toBe(0);
        const left = c.secrets.filter((s) => (run.out() + run.err()).includes(s));
        expect(left, `${c.id} (${format}): ${run.out()}`).toEqual([]);
      }
    }
  });
});

/**
 * A text as a summary shows it: on one line (line breaks and runs of blanks as one blank) and, past
 * the summary's cap or the block's budget, cut with `...` or `[…]`. True when `shown` is `text` so laid out: no word changed.
 */
function shownAs(shown: string, text: string): boolean {
  const flat = (t: string) => t.replace(/\s+/g, ' ').trim();
  if (flat(shown) === flat(text)) return true;
  const cut = /(?:\.\.\.|\[…\]|…)$/.exec(shown);
  return cut !== null && flat(text).startsWith(flat(shown.slice(0, cut.index)));
}

describe('test results, counts, coverage and versions pass every path byte-identical', () => {
  let p: Project;
  const texts = [...BENIGN_CASES.filter((c) => c.family === 'results').map((c) => c.text), ...fc.sample(BENIGN_RESULTS, { numRuns: 30, seed: 37 })];

  beforeAll(() => {
    p = makeProject('ca-results-');
    ok(p, ['create-session', 'S1', 'simple', 'Results']);
    ok(p, ['create-task-group', 'QA', 'S1', 'Quality']);
    fs.mkdirSync(path.join(p.root, 'bazinga', 'artifacts', 'S1'), { recursive: true });
  });
  afterAll(() => p.cleanup());

  it('stored by save-context-package and save-reasoning as written, and printed back by bazinga-db query as stored', () => {
    texts.forEach((text, i) => {
      const saved = ok(p, ['save-context-package', 'S1', 'QA', 'research', `bazinga/artifacts/S1/r${i}.md`, 'qa_expert', '["tech_lead"]', 'high', text]);
      expect(saved.redacted).toBe(false);
      expect(ok(p, ['save-reasoning', 'S1', 'QA', 'qa_expert', 'completion', text]).redacted).toBe(false);
    });
    const rows = (sql: string) => (ok(p, ['query', sql]) as { rows?: Record<string, string>[] } | Record<string, string>[]);
    const values = (r: ReturnType<typeof rows>) => (Array.isArray(r) ? r : (r.rows ?? [])).map((row) => Object.values(row)[0]);
    // A package summary is stored on one line and cut at its length cap: its words are the text's.
    const summaries = values(rows('SELECT summary FROM context_packages ORDER BY id'));
    expect(summaries.length).toBe(texts.length);
    summaries.forEach((summary, i) => expect(shownAs(summary as string, texts[i] as string), summary).toBe(true));
    expect(values(rows("SELECT content FROM orchestration_logs WHERE log_type = 'reasoning' ORDER BY id"))).toEqual(texts);
  });

  it('fetch prints an artifact of them as written', () => {
    const text = texts.join('\n\n') + '\n';
    fs.writeFileSync(path.join(p.root, 'bazinga', 'artifacts', 'S1', 'results.md'), text);
    const saved = ok(p, ['save-context-package', 'S1', 'QA', 'research', 'bazinga/artifacts/S1/results.md', 'qa_expert', '["tech_lead"]', 'high', 'results']);
    const run = capturingIo([String(saved.package_id), '--project-root', p.root, '--db', p.dbPath, '--format', 'text'], { cwd: p.root, now: NOW });
    expect(runFetch(run.io)).toBe(0);
    expect(run.out()).toBe(text);
  });

  it('the assembled block shows them as written', () => {
    const r = assemble(p, ['--session', 'S1', '--group', 'QA', '--agent', 'tech_lead', '--model', 'opus', '--limit', '50', '--format', 'json']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('[REDACTED');
    const summaries = (JSON.parse(r.out) as { packages: { summary: string }[] }).packages.map((x) => x.summary);
    expect(summaries.length).toBeGreaterThan(10);
    for (const summary of summaries.filter((x) => x !== 'results')) expect(texts.some((t) => shownAs(summary, t)), summary).toBe(true);
  });
});

describe('redact-existing on a database written unredacted', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject('ca-secrets-existing-');
    seedUnredacted(p, ['OLD0']);
  });
  afterAll(() => p.cleanup());

  const doctor = async () => {
    let out = '';
    const code = await runDoctor(['--project-root', p.root, '--format', 'json'], { cwd: p.root, env: {}, stdout: (t) => (out += t), stderr: () => {} });
    return { code, check: (JSON.parse(out) as { checks: { check: string; status: string; detail: string; fix: string }[] }).checks.find((c) => c.check === 'secrets') };
  };

  it('doctor warns that rows hold unredacted text, naming the tables and the command', async () => {
    const { code, check } = await doctor();
    expect(code).toBe(0);
    expect(check).toMatchObject({ status: 'warn', fix: expect.stringContaining('bazinga-db redact-existing') });
    expect(check?.detail).toMatch(new RegExp(`^${4 * SECRET_CASES.length} rows hold text the redaction engine would remove \\(.*context_packages ${SECRET_CASES.length}`));
  });

  it('--dry-run counts per table and per rule and writes nothing', () => {
    const rows = () => JSON.stringify(ok(p, ['query', 'SELECT summary FROM context_packages ORDER BY id']));
    const before = rows();
    const out = ok(p, ['redact-existing', '--dry-run']);
    expect(out).toMatchObject({ success: true, dry_run: true, search_index_reset: false });
    expect(out.tables.context_packages).toEqual({ scanned: SECRET_CASES.length, changed: SECRET_CASES.length });
    expect(out.tables.orchestration_logs.changed).toBe(SECRET_CASES.length);
    expect(out.tables.error_patterns.changed).toBe(SECRET_CASES.length);
    expect(out.tables.strategies.changed).toBe(SECRET_CASES.length);
    expect(out.rules.password).toBeGreaterThan(10);
    expect(leakedInFiles(p.dbPath).length).toBe(ALL_SECRETS.length);
    expect(rows()).toBe(before);
  });

  it('redacts every row in one run, leaves no secret in the file or the WAL, and a second run changes nothing', () => {
    const out = ok(p, ['redact-existing']);
    expect(out.rows_changed).toBe(4 * SECRET_CASES.length);
    expect(out.search_index_reset).toBe(true);
    expect(leakedInFiles(p.dbPath)).toEqual([]);
    const db = new Database(p.dbPath, { readonly: true });
    const flags = db.prepare(`SELECT DISTINCT redacted FROM orchestration_logs`).all();
    const patterns = db.prepare(`SELECT signature_json FROM error_patterns`).all() as { signature_json: string }[];
    db.close();
    expect(flags).toEqual([{ redacted: 1 }]);
    for (const row of patterns) expect(() => JSON.parse(row.signature_json)).not.toThrow();
    expect(ok(p, ['redact-existing'])).toMatchObject({ rows_changed: 0, search_index_reset: false });
  });

  it('afterwards doctor finds nothing to redact', async () => {
    expect((await doctor()).check).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^no unredacted text in \d+ rows/) });
  });
});
