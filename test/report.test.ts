/**
 * The assembly record and the report (issue: every assembly on record). On real copies of the v19
 * fixture, in process (the scripts' own runScript / runReport) and a few real processes:
 *   - a recording assembly writes one record in the transaction of its consumption (a claim that
 *     fails leaves no record of a delivery, and the fallback is on record instead); one that
 *     delivers nothing, or runs in a zone that records nothing, leaves one too; dry runs, reads and
 *     steps write none; a file whose table is gone still records its consumption;
 *   - the report's JSON on a seeded session with known figures: the four metrics and how each is
 *     computed, timelines and verdicts, what each spawn got, packages never delivered, repeated
 *     failures, fallbacks; markdown and HTML carry the same values; a planted secret reaches none;
 *   - the HTML file: its content security policy, no script, under 2 MB for 1,000 assemblies;
 *   - bad flags named, exit codes, --help, a session that is not there.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAssembly, type AssemblyRecord } from '../skills/bazinga-db/scripts/lib/index.ts';
import { fakeAssemblies } from './fakeAssemblies.ts';
import { PRODUCT_VERSION } from '../skills/context-assembler/scripts/lib/record.ts';
import { runScript, type ScriptSpec } from '../skills/context-assembler/scripts/lib/shell.ts';
import { REPO_ROOT, S1, S2, type Project } from './helpers.ts';
import { capturingIo, copyIndexedFixture } from './inProcess.ts';
import { assemble, exec, NOW, report, rows, SECRET, SECRET_VALUE, seedReportSession } from './reportSeed.ts';


const RANK: ScriptSpec = { name: 'rank.ts', step: 'rank', defaultFormat: 'json', readsStdin: false, summary: '' };


describe('the assembly record', () => {
  let p: Project;
  beforeAll(() => {
    p = copyIndexedFixture('ca-record-');
  });
  afterAll(() => p.cleanup());

  it('a recording assembly writes one record beside its consumption: what was shown, left out, tokens by section, the query, its version', () => {
    const r = assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--task', 'refresh token rotation']);
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.consumption).toBe('recorded');
    const [rec, ...more] = rows(p);
    expect(more).toEqual([]);
    expect(rec).toMatchObject({ session_id: S1, group_id: 'AUTH', agent_type: 'developer', iteration: 2, source: 'assemble', outcome: 'recorded', reason: null, zone: 'Normal', purpose: doc.purpose, budget: doc.context_budget, used_tokens: doc.truncation.used, overrun: doc.truncation.overrun, prompt_tokens: null, version: PRODUCT_VERSION, created_at: new Date(NOW).toISOString() });
    expect(rec?.duration_ms as number).toBeGreaterThan(0);
    const detail = JSON.parse(rec?.detail as string);
    expect(detail.delivered).toEqual(doc.consumed);
    expect(detail.shown.filter((x: { kind: string }) => x.kind === 'package').map((x: { id: number }) => x.id)).toEqual(doc.packages.map((x: { id: number }) => x.id));
    expect(detail.shown.filter((x: { kind: string }) => x.kind === 'reasoning').map((x: { id: number }) => x.id)).toEqual(doc.reasoning.entries.map((x: { id: number }) => x.id));
    expect(detail.shown.filter((x: { kind: string }) => x.kind === 'error_pattern').length).toBe(doc.error_patterns.length);
    expect(detail.sections).toEqual({
      packages: doc.packages_tokens,
      reasoning: doc.reasoning.used_tokens,
      error_patterns: doc.error_patterns.reduce((a: number, e: { tokens: number }) => a + e.tokens, 0),
      strategies: doc.strategies.reduce((a: number, e: { tokens: number }) => a + e.tokens, 0),
      memories: 0,
    });
    expect(detail.sections.error_patterns).toBeGreaterThan(0);
    expect(detail.left_out.length).toBe(Math.min(doc.excluded.length, 50));
    expect(detail.query).toMatchObject({ source: 'explicit', terms: doc.query.terms });
    expect(detail.model).toBe(doc.request.model);
    // The consumption it records beside.
    const consumed = rows(p, "SELECT package_id FROM consumption_scope WHERE agent_type = 'developer' AND iteration = 2 ORDER BY package_id").map((x) => x.package_id);
    expect(consumed).toEqual([...doc.consumed].sort((a: number, b: number) => a - b));
  });

  it('dry runs, steps and reports write no record', () => {
    const before = rows(p).length;
    expect(assemble(p, ['--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '2', '--dry-run']).code).toBe(0);
    const c = capturingIo(['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '2'], { cwd: p.root });
    expect(runScript(RANK, c.io)).toBe(0);
    expect(report(p, ['--session', S1, '--format', 'json']).code).toBe(0);
    expect(rows(p).length).toBe(before);
  });

  it('a run that delivers nothing, and one in a zone that records nothing, leave a record each', () => {
    const before = rows(p).length;
    // The developer at iteration 2 asking for more again and again (naming what it was given), until every package of it was handed out.
    const outcomes: string[] = [];
    const given: number[] = [];
    while (outcomes.at(-1) !== 'nothing-delivered' && outcomes.length < 10) {
      const doc = JSON.parse(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2', ...(given.length > 0 ? ['--more', given.join(',')] : [])]).out);
      outcomes.push(doc.consumption);
      given.push(...doc.packages.map((x: { id: number }) => x.id));
    }
    expect(outcomes.at(-1)).toBe('nothing-delivered');
    expect(JSON.parse(assemble(p, ['--group', 'CART', '--agent', 'qa_expert', '--iteration', '1', '--current-tokens', '136000']).out).consumption).toBe('skipped-zone');
    expect(rows(p).slice(before).map((x) => [x.outcome, x.zone])).toEqual([...outcomes.map((o) => [o, 'Normal']), ['skipped-zone', 'Conservative']]);
  });

  it('a claim that fails leaves no record of a delivery: the fallback is on record instead, with its reason (redacted)', () => {
    const q = copyIndexedFixture('ca-record-fail-');
    try {
      exec(q, `CREATE TRIGGER fail_claim BEFORE INSERT ON consumption_scope BEGIN SELECT RAISE(ABORT, 'disk on fire password=${SECRET_VALUE}'); END`);
      const r = assemble(q, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ fallback: true });
      const recs = rows(q);
      expect(recs.map((x) => x.outcome)).toEqual(['fallback']);
      expect(recs[0]).toMatchObject({ agent_type: 'developer', iteration: 2, source: 'assemble', budget: null });
      expect(recs[0]?.reason).toContain('disk on fire');
      expect(recs[0]?.reason).not.toContain(SECRET_VALUE);
      expect(rows(q, 'SELECT * FROM consumption_scope WHERE iteration = 2')).toEqual([]);
    } finally {
      q.cleanup();
    }
  });

  it('a record that cannot be written never costs the consumption (an insert that fails, by a trigger of an outside tool)', () => {
    const q = copyIndexedFixture('ca-record-refused-');
    try {
      exec(q, "CREATE TRIGGER refuse_record BEFORE INSERT ON ca_assemblies BEGIN SELECT RAISE(ABORT, 'no records here'); END");
      const r = assemble(q, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out).consumption).toBe('recorded');
      expect(rows(q, 'SELECT * FROM consumption_scope WHERE iteration = 2').length).toBeGreaterThan(0);
      expect(rows(q)).toEqual([]);
    } finally {
      q.cleanup();
    }
  });
});

describe('report', () => {
  let p: Project;
  let json: any;
  beforeAll(() => {
    p = copyIndexedFixture('ca-report-');
    seedReportSession(p);
    const r = report(p, ['--session', S1, '--format', 'json']);
    expect(r.code, r.err).toBe(0);
    json = JSON.parse(r.out);
  });
  afterAll(() => p.cleanup());

  it('the four metrics, with how each is computed, on known figures', () => {
    const m = Object.fromEntries(json.metrics.map((x: { key: string }) => [x.key, x]));
    // AUTH: revision_count 1 → 2 iterations; CART: 0 → 1 (both started); S2's group is not in the report.
    expect(m.iterations_per_group).toMatchObject({ value: 1.5, met: true, numerator: 3, denominator: 2 });
    // No spawn went through the prompt hook: not computable, and why.
    expect(m.prompt_size).toMatchObject({ value: null, met: null });
    expect(m.prompt_size.missing).toContain('prompt hook');
    const s = json.sessions[0];
    expect(m.context_hits).toMatchObject({ numerator: s.packages_delivered, denominator: s.packages_total });
    expect(m.context_hits.value).toBeCloseTo((s.packages_delivered * 100) / s.packages_total, 2);
    // One per fault: the fixture's x.ts and y.ts "Cannot find module" rows are one fault seen twice
    // (one occurrence each), the seed's TypeError row was seen twice, JestTimeout once.
    const patterns = rows(p, "SELECT occurrences FROM error_patterns WHERE project_id = 'acme-shop'");
    expect(patterns).toHaveLength(4);
    expect(m.qa_failure_recurrence).toMatchObject({ numerator: 2, denominator: 3 });
    for (const x of json.metrics) expect(x.how.length).toBeGreaterThan(20);
  });

  it('per group a timeline with iterations and verdicts; per spawn what it got; never-delivered packages; repeated failures; the fallback', () => {
    const s = json.sessions[0];
    expect(s.record_kept).toBe(true);
    const auth = s.groups.find((g: { id: string }) => g.id === 'AUTH');
    expect(auth).toMatchObject({ iterations: 2, revision_count: 1, last_review_status: 'CHANGES_REQUESTED', qa_attempts: 1 });
    const authSpawns = s.spawns.filter((sp: { group_id: string }) => sp.group_id === 'AUTH');
    expect(authSpawns.map((sp: { agent: string; iteration: number; verdict: string }) => [sp.agent, sp.iteration, sp.verdict])).toEqual([
      ['developer', 1, 'CHANGES_REQUESTED'],
      ['qa_expert', 1, 'CHANGES_REQUESTED'],
      ['developer', 2, 'CHANGES_REQUESTED'],
      ['qa_expert', 2, 'CHANGES_REQUESTED'],
      ['tech_lead', 2, 'CHANGES_REQUESTED'],
    ]);
    expect(auth.spawns).toEqual(authSpawns.map((sp: { id: number }) => sp.id));
    for (const sp of authSpawns) {
      expect(sp.outcome).toBe('recorded');
      expect(sp.used_tokens).toBeLessThanOrEqual(sp.budget + sp.overrun);
      expect(sp.sections.packages).toBeGreaterThan(0);
    }
    const cart = s.spawns.filter((sp: { group_id: string }) => sp.group_id === 'CART');
    expect(cart.map((sp: { outcome: string }) => sp.outcome)).toEqual(['skipped-zone', 'recorded', 'fallback']);
    expect(cart[1].overrun).toBeGreaterThan(0);
    expect(s.fallbacks).toEqual([cart[2].id]);
    expect(cart[2].reason).toContain('disk on fire');
    const never = s.never_delivered.map((x: { id: number }) => x.id);
    expect(never.length).toBe(s.packages_total - s.packages_delivered);
    // What the Conservative-zone block showed counts as given, though it recorded no consumption.
    const shownInConservative = cart[0].shown.filter((x: { kind: string }) => x.kind === 'package').map((x: { id: number }) => x.id);
    expect(shownInConservative.length).toBeGreaterThan(0);
    for (const id of shownInConservative) expect(never).not.toContain(id);
    const planted = s.never_delivered.find((x: { file_path: string }) => x.file_path.includes('secret-notes'));
    expect(planted.summary).toContain('Staging access');
    expect(s.repeated_failures.map((f: { error_type: string; occurrences: number }) => [f.error_type, f.occurrences]).sort()).toEqual([
      ['ModuleNotFound', 2],
      ['TypeError', 2],
    ]);
    expect(JSON.stringify(json)).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(json)).not.toContain(SECRET);
  });

  it('what each spawn read: every item with its line from its row, its tier and tokens; left out with its reason in words; group counts from the records', () => {
    const s = json.sessions[0];
    const packages = new Map(rows(p, 'SELECT id, summary FROM context_packages').map((r) => [r.id as number, String(r.summary)]));
    const named = s.spawns.flatMap((sp: any) => [...sp.shown, ...sp.left_out, ...(sp.builder?.left_out ?? [])]);
    expect(named.length).toBeGreaterThan(10);
    for (const x of named) {
      expect(typeof x.title, `${x.kind} ${x.id}`).toBe('string');
      // A package's line holds its summary's opening words (the report shortens, never rewrites).
      if (x.kind === 'package') expect(x.title).toContain(String(packages.get(x.id)).slice(0, 20).replace(SECRET, '').trim().split(' ')[0]);
    }
    const reasoningTitle = named.find((x: any) => x.kind === 'reasoning')?.title as string;
    expect(reasoningTitle).toMatch(/^(developer|qa_expert|tech_lead|senior_software_engineer|investigator) [a-z]+/);
    const strategyTitle = named.find((x: any) => x.kind === 'strategy')?.title as string;
    expect(strategyTitle).toMatch(/^(methodology|implementation|architecture|general): /);

    const md = report(p, ['--session', S1]).out;
    expect(md).toContain('## How to read it');
    expect(md).toMatch(/- \*\*Tier 1\*\*: never cut/);
    // No reason is a bare word: each says why with the spawn's figures.
    expect(md).not.toMatch(/ · (budget|limit|zone|consumed|tier):/);
    const withLeft = s.spawns.find((sp: any) => sp.left_out.length > 0);
    expect(withLeft).toBeDefined();
    const first = withLeft.left_out[0];
    expect(md).toContain(`${first.kind === 'package' ? 'package' : first.kind.replace('_', ' ')} ${first.kind === 'error_pattern' ? String(first.id).slice(0, 12) : first.id} · `);
    for (const sp of s.spawns) for (const x of sp.shown) if (x.tier !== null) expect(md).toContain(` · Tier ${x.tier} · ${x.tokens} tokens: `);

    // Each shown item with where it came from and its standing, as its spawn was given it.
    const shownAll = s.spawns.flatMap((sp: any) => sp.shown);
    const contradicted = shownAll.find((x: any) => x.standing === 'contradicted');
    expect(contradicted).toMatchObject({ kind: 'reasoning', standing_by: expect.stringMatching(/^package \d+$/), provenance: expect.stringMatching(/^it\. \d+, (?:<1 h|\d+ [hd]) ago$/) });
    expect(md).toContain(`${contradicted.title} — ${contradicted.provenance} · contradicted by ${contradicted.standing_by}`);
    const pkg = shownAll.find((x: any) => x.kind === 'package' && x.standing === undefined);
    expect(pkg.provenance).toMatch(/^[a-z_]+, (?:<1 h|\d+ [hd]) ago$/);
    expect(md).toContain(`${pkg.title} — ${pkg.provenance} · unreviewed`);
    const pattern = shownAll.find((x: any) => x.kind === 'error_pattern');
    expect(pattern.provenance).toMatch(/(captured from a passing retry|saved by an agent, fix (unverified|passed \d+×|failed \d+×))/);
    expect(md).toContain(` — ${pattern.provenance}`);

    // The group table's counts agree with the spawns it lists.
    for (const g of s.groups) {
      const mine = s.spawns.filter((sp: any) => sp.group_id === g.id);
      expect(Object.values(g.spawns_by_agent).reduce((a: number, n: any) => a + n, 0)).toBe(mine.length);
      for (const agent of new Set(mine.map((sp: any) => sp.agent))) expect(g.spawns_by_agent[agent as string]).toBe(mine.filter((sp: any) => sp.agent === agent).length);
    }

    // The tokens chart's scale follows the blocks, not a budget many times their size.
    const html = report(p, ['--session', S1, '--format', 'html', '--out', path.join(p.root, 'read.html')]);
    expect(html.code, html.err).toBe(0);
    const page = fs.readFileSync(path.join(p.root, 'read.html'), 'utf8');
    const top = Number(/data-chart="tokens" data-top="(\d+)"/.exec(page)?.[1]);
    const withBudget = s.spawns.filter((sp: any) => sp.budget !== null && sp.used_tokens !== null);
    const largest = Math.max(...withBudget.map((sp: any) => sp.used_tokens));
    expect(top).toBeGreaterThanOrEqual(largest);
    const largestBudget = Math.max(...withBudget.map((sp: any) => sp.budget));
    expect(top).toBeLessThanOrEqual(Math.ceil(largestBudget <= 2 * largest ? largestBudget * 1.05 : largest * 1.15));
    expect(page).toContain('<dt>Tier 1</dt>');
    // The page names every item of every spawn: with its line, or by id when its row is gone.
    const escHtml = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
    for (const sp of s.spawns) {
      for (const x of [...sp.shown, ...sp.left_out]) {
        if (x.title !== null) expect(page).toContain(escHtml(x.title));
        else expect(page).toContain(String(x.kind === 'error_pattern' ? String(x.id).slice(0, 12) : x.id));
      }
    }
  });

  it('markdown and HTML carry the same values; neither holds the planted secret', () => {
    const md = report(p, ['--session', S1]);
    expect(md.code).toBe(0);
    for (const m of json.metrics) {
      const value = m.value === null ? `not computable: ${m.missing}` : `${m.value}${m.unit === '%' ? ' %' : ''} (${m.figures})`;
      expect(md.out).toContain(`| ${m.name} | ${value} | ${m.target} | ${m.met === null ? 'n/a' : m.met ? 'met' : 'not met'} |`);
    }
    for (const sp of json.sessions[0].spawns.filter((x: { group_id: string | null }) => x.group_id !== null)) {
      expect(md.out).toContain(`| ${sp.id} | ${sp.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')} | ${sp.agent} | ${sp.iteration} | ${sp.verdict} | ${sp.outcome} |`);
    }
    expect(md.out).toContain('### Packages never delivered');
    expect(md.out).toContain('disk on fire');
    const out = path.join(p.root, 'out.html');
    const h = report(p, ['--session', S1, '--format', 'html', '--out', out]);
    expect(h.code, h.err).toBe(0);
    expect(h.out.trim()).toBe(out);
    const html = fs.readFileSync(out, 'utf8');
    for (const m of json.metrics) expect(html).toContain(`data-metric="${m.key}"><td>${m.name}</td><td class="n" data-value="${m.value ?? ''}"`);
    for (const sp of json.sessions[0].spawns) expect(html).toContain(`data-spawn="${sp.id}"`);
    for (const text of [md.out, html]) {
      expect(text).not.toContain(SECRET_VALUE);
      expect(text).not.toContain(SECRET);
    }
    expect(html).toContain('http-equiv="Content-Security-Policy" content="default-src \'none\';');
    expect(html).not.toMatch(/<script|<link|<iframe|<img|url\(|@import|https?:\/\//i);
  });

  it('the default HTML path is the project\'s bazinga/reports/; --last N reports the newest N sessions', () => {
    const h = report(p, ['--format', 'html', '--last', '2']);
    expect(h.code, h.err).toBe(0);
    expect(h.out.trim()).toBe(path.join(p.root, 'bazinga', 'reports', `${S2}-and-1-earlier.html`));
    const both = JSON.parse(report(p, ['--last', '2', '--format', 'json']).out);
    expect(both.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([S2, S1]);
    // No session named: the newest.
    expect(JSON.parse(report(p, ['--format', 'json']).out).sessions.map((s: { session_id: string }) => s.session_id)).toEqual([S2]);
  });

  it('bad input: each flag named with the value and what is allowed; a missing session; --help', () => {
    const cases: [string[], number, string][] = [
      [['--format', 'pdf'], 2, "--format must be one of markdown, json, html, got 'pdf'"],
      [['--last', '0'], 2, '--last'],
      [['--last', '101'], 2, "--last must be between 1 and 100, got '101'"],
      [['--session', S1, '--last', '2'], 2, '--session and --last exclude each other'],
      [['--now', 'yesterday'], 2, "--now must be an ISO 8601 time such as 2025-12-02T12:00:00Z, got 'yesterday'"],
      [['--session', 'nope'], 1, `session 'nope' is not in`],
      [['--bogus'], 2, '--bogus'],
    ];
    for (const [args, code, message] of cases) {
      const r = report(p, args);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.out).toBe('');
      expect(JSON.parse(r.err.trim().split('\n').pop() as string)).toMatchObject({ success: false, error: expect.stringContaining(message) });
    }
    const help = report(p, ['--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toMatch(/^report: /);
  });

  it('an old database (no writer of this version opened it) reports what BAZINGA\'s tables hold and says the record is missing', () => {
    const q = copyIndexedFixture('ca-report-old-');
    try {
      exec(q, 'DROP TABLE ca_assemblies');
      const r = JSON.parse(report(q, ['--session', S1, '--format', 'json']).out);
      expect(r.sessions[0]).toMatchObject({ record_kept: false, spawns: [] });
      expect(r.metrics.find((m: { key: string }) => m.key === 'prompt_size').missing).toContain('the database holds no assembly record');
      expect(r.metrics.find((m: { key: string }) => m.key === 'context_hits').value).not.toBeNull();
      expect(report(q, ['--session', S1]).out).toContain('The database holds no assembly record');
    } finally {
      q.cleanup();
    }
  });

  it('1,000 assemblies: the HTML file stays under 2 MB, self-contained', () => {
    const q = copyIndexedFixture('ca-report-big-');
    try {
      const db = new Database(q.dbPath);
      db.transaction(() => {
        for (const r of fakeAssemblies(1000, S1, PRODUCT_VERSION)) insertAssembly(db, r as unknown as AssemblyRecord);
      })();
      db.close();
      const out = path.join(q.root, 'big.html');
      expect(report(q, ['--session', S1, '--format', 'html', '--out', out]).code).toBe(0);
      const size = fs.statSync(out).size;
      expect(size).toBeLessThan(2 * 1024 * 1024);
      expect(fs.readFileSync(out, 'utf8').match(/data-spawn="/g)?.length).toBe(1000);
    } finally {
      q.cleanup();
    }
  });
});

describe('report: what is stored cannot reach the page as markup or a secret', () => {
  it('ids holding a token (session, project, group) are redacted in every format and the file name; figures stored as text never become markup', () => {
    const q = copyIndexedFixture('ca-report-hostile-');
    const token = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    const session = `sess-${token}`;
    try {
      exec(q, "INSERT INTO sessions (session_id, start_time, mode, original_requirements, status, metadata) VALUES (?, '2025-12-02 10:00:00', 'simple', 'x', 'active', ?)", session, JSON.stringify({ project_id: `proj-${token}` }));
      exec(q, "INSERT INTO task_groups (id, session_id, name, status) VALUES (?, ?, ?, 'in_progress')", `G-${token}`, session, `</td><script>alert(1)</script> ${token}`);
      exec(q, `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, reason, purpose, zone, usage_pct, budget, used_tokens, overrun, prompt_tokens, duration_ms, version, detail)
               VALUES ('2025-12-02T12:00:00.000Z', ?, ?, 'developer', '<i>it</i>', 'assemble', 'recorded', NULL, 'implementation', 'Normal', 1.5, '<b>9</b>', 10, 0, NULL, 3.2, '0.1.0', ?)`,
        session, `G-${token}`, JSON.stringify({ sections: { packages: '<meta http-equiv="refresh" content="0;url=https://example.invalid/leak">', reasoning: 0, error_patterns: 0, strategies: 0, memories: 0 }, shown: [{ kind: 'package', id: `<img src=x> ${token}`, tier: 1, tokens: 5 }], left_out: [], left_out_counts: {}, query: { source: 'explicit', terms: [token], scope: [], scope_source: 'none' }, delivered: [], model: 'sonnet' }));
      const html = report(q, ['--session', session, '--format', 'html']);
      expect(html.code, html.err).toBe(0);
      const file = html.out.trim();
      expect(path.basename(file)).toMatch(/^sess-.*-[0-9a-f]{8}\.html$/);
      expect(fs.existsSync(file)).toBe(true);
      const json = path.join(q.root, 'r.json');
      expect(report(q, ['--session', session, '--format', 'json', '--out', json]).code).toBe(0);
      for (const text of [fs.readFileSync(file, 'utf8'), fs.readFileSync(json, 'utf8'), file]) {
        expect(text).not.toContain(token);
      }
      const page = fs.readFileSync(file, 'utf8');
      expect(page).not.toMatch(/<script|<meta http-equiv="refresh"|<img|<i>it|<b>9/);
      expect(page).toContain('&lt;/td&gt;&lt;script&gt;');
      // The project's own id (redacted in the page) still finds its error patterns.
      exec(q, "INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days) VALUES ('p1', ?, '{}', 's', 0.9, 3, NULL, '2025-12-01 09:00:00', '2025-12-01 09:00:00', 90), ('p2', ?, '{}', 's', 0.9, 1, NULL, '2025-12-01 09:00:00', '2025-12-01 09:00:00', 90)", `proj-${token}`, `proj-${token}`);
      const metrics = JSON.parse(report(q, ['--session', session, '--format', 'json']).out).metrics;
      expect(metrics.find((m: { key: string }) => m.key === 'qa_failure_recurrence')).toMatchObject({ value: 50, numerator: 1, denominator: 2 });
    } finally {
      q.cleanup();
    }
  });

  it('a detail that is not the shape this version writes is left out, never fatal; a hook record that delivered nothing is no fallback', () => {
    const q = copyIndexedFixture('ca-report-shapes-');
    try {
      for (const [outcome, detail] of [['recorded', 'null'], ['recorded', '{"shown": {}, "query": {"terms": "x"}, "sections": 5}'], ['nothing-delivered', '{}']] as const) {
        exec(q, `INSERT INTO ca_assemblies (created_at, session_id, group_id, agent_type, iteration, source, outcome, duration_ms, version, detail) VALUES ('2025-12-02T12:00:00.000Z', ?, 'AUTH', 'developer', 1, 'prompt-hook', ?, 1, '0.1.0', ?)`, S1, outcome, detail);
      }
      const r = report(q, ['--session', S1, '--format', 'json']);
      expect(r.code, r.err).toBe(0);
      const s = JSON.parse(r.out).sessions[0];
      expect(s.spawns.map((sp: { shown: unknown[]; query: unknown }) => [sp.shown, sp.query])).toEqual([[[], null], [[], { source: '', terms: [], scope: [], scope_source: '' }], [[], null]]);
      expect(s.fallbacks).toEqual([]);
      expect(report(q, ['--session', S1, '--format', 'html', '--out', path.join(q.root, 'x.html')]).code).toBe(0);
    } finally {
      q.cleanup();
    }
  });

  it('--out never names the database; a session id that is not a safe file name gets a hash, so two ids never share a file', () => {
    const q = copyIndexedFixture('ca-report-out-');
    try {
      const r = report(q, ['--session', S1, '--out', q.dbPath]);
      expect(r.code).toBe(2);
      expect(JSON.parse(r.err.trim())).toMatchObject({ success: false, error: expect.stringContaining('--out must not name the database') });
      for (const id of ['a/b', 'a_b']) exec(q, "INSERT INTO sessions (session_id, start_time, mode, original_requirements, status) VALUES (?, '2025-12-02 10:00:00', 'simple', 'x', 'active')", id);
      const a = report(q, ['--session', 'a/b', '--format', 'html']).out.trim();
      const b = report(q, ['--session', 'a_b', '--format', 'html']).out.trim();
      expect(path.basename(b)).toBe('a_b.html');
      expect(path.basename(a)).toMatch(/^a_b-[0-9a-f]{8}\.html$/);
    } finally {
      q.cleanup();
    }
  });

  it('the product\'s version is the one package.json and the plugin manifest give', () => {
    expect(PRODUCT_VERSION).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version);
    expect(PRODUCT_VERSION).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, '.claude-plugin', 'plugin.json'), 'utf8')).version);
  });
});

describe('report as a real process', () => {
  it('the launcher runs it: --help, and the markdown of the fixture (read-only: the file is not changed)', () => {
    const q = copyIndexedFixture('ca-report-proc-');
    try {
      const launcher = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
      const help = spawnSync(process.execPath, [launcher, 'report', '--help'], { encoding: 'utf8' });
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(/^report: /);
      const before = fs.readFileSync(q.dbPath);
      const r = spawnSync(process.execPath, [launcher, 'report', '--project-root', q.root, '--session', S1], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('## Success metrics');
      expect(fs.readFileSync(q.dbPath).equals(before)).toBe(true);
    } finally {
      q.cleanup();
    }
  });
});
