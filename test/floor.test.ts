/**
 * Never less than the builder: a later spawn is given again what an earlier one got (consumption
 * records delivery; only --more leaves out what this spawn was given), consumer lists rank a
 * package up instead of hiding it, the limit never passes over the group's failures for a package
 * of lower priority, what today's BAZINGA prompt builder would show is in the block or named in
 * `### Left out` with why, the work under review is always there, and a summary the store cut
 * keeps its artifact's conclusion. Real SQLite files (copies of the v19 fixture), the scripts in
 * process, one real process for the fixture's re-spawn.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ASSEMBLE } from '../skills/context-assembler/scripts/lib/main.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { runReport } from '../skills/context-assembler/scripts/lib/report/run.ts';
import { builderEstimate, builderFloor, floorLeftOut, type FloorRows } from '../skills/context-assembler/scripts/lib/core/floor.ts';
import { keepFailuresAbove, type Candidate } from '../skills/context-assembler/scripts/lib/core/rank.ts';
import { conclusionOf, withConclusion } from '../skills/context-assembler/scripts/lib/core/text.ts';
import { DEFAULT_CONFIG } from '../skills/context-assembler/scripts/lib/config.ts';
import type { AssemblyDoc, RankedPackage } from '../skills/context-assembler/scripts/lib/contract.ts';
import { REPO_ROOT, S1, copyFixture, runScript as runProcess, writeArtifact, type Project } from './helpers.ts';
import { bazingaDbInProcess, capturingIo } from './inProcess.ts';

const NOW = '2025-12-02T12:00:00Z';
const ASSEMBLE_TS = path.join(REPO_ROOT, 'skills', 'context-assembler', 'scripts', 'assemble.ts');

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});
function fixture(): Project {
  const p = copyFixture('ca-floor-');
  projects.push(p);
  return p;
}

function assemble(p: Project, args: readonly string[], config?: unknown): { code: number; out: string; err: string } {
  const extra: string[] = [];
  if (config !== undefined) {
    const file = path.join(p.root, 'bazinga', 'floor-config.json');
    fs.writeFileSync(file, JSON.stringify({ context_engineering: config }));
    extra.push('--config', file);
  }
  const c = capturingIo(['--project-root', p.root, '--session', S1, '--now', NOW, ...extra, ...args], { cwd: p.root });
  const code = runScript(ASSEMBLE, c.io);
  return { code, out: c.out(), err: c.err() };
}
const json = (r: { out: string }) => JSON.parse(r.out) as AssemblyDoc;
const packageIds = (doc: AssemblyDoc) => (doc.packages ?? []).map((p) => p.id);

function savePackage(p: Project, group: string, type: string, consumers: string[], priority: string, summary: string, name: string): number {
  const file = writeArtifact(p, S1, name, `# ${name}\n\n${summary}\n`);
  const r = bazingaDbInProcess(p, ['save-context-package', S1, group, type, file, 'developer', JSON.stringify(consumers), priority, summary]);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out).package_id as number;
}

describe('a later spawn is never given less: consumption records delivery', () => {
  it('on the v19 fixture, a re-spawn after one new package keeps packages 2, 3 and 4 beside it (real processes)', () => {
    const p = fixture();
    const args = ['--project-root', p.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--now', NOW, '--format', 'json'];
    const first = runProcess(ASSEMBLE_TS, args);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.consumption).toBe('recorded');
    const newId = savePackage(p, 'AUTH', 'research', ['developer'], 'medium', 'Refresh tokens must rotate on every use', 'new-research.md');
    const second = runProcess(ASSEMBLE_TS, args);
    expect(second.code, second.stderr).toBe(0);
    expect(packageIds(second.json)).toEqual(expect.arrayContaining([2, 3, 4, newId]));
    expect((second.json as AssemblyDoc).excluded?.filter((e) => e.reason === 'consumed')).toEqual([]);
  });

  it('the +N more line names a runnable command that gives this spawn what its block did not (--more <the ids it was given>)', () => {
    const p = fixture();
    const base = ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--format', 'json'];
    // A limit of 1: the floor still pins the builder's packages, so the line appears only past them.
    for (let i = 0; i < 6; i++) savePackage(p, 'AUTH', 'research', ['developer'], 'low', `Note ${i} on token storage`, `note-${i}.md`);
    const first = json(assemble(p, base));
    const given = packageIds(first);
    expect(first.overflow_count).toBeGreaterThan(0);
    const md = assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--dry-run']).out;
    const line = /📦 \+\d+ more packages available: `(.+ assemble --session bazinga_20251201_090000 --group AUTH --agent developer --iteration 1 --model sonnet --more ([\d,]+))`/.exec(md);
    expect(line, md).not.toBeNull();
    expect((line?.[2] ?? '').split(',').map(Number).sort()).toEqual([...given].sort());
    const more = json(assemble(p, [...base, '--more', given.join(',')]));
    expect(packageIds(more).filter((id) => given.includes(id))).toEqual([]);
    expect(packageIds(more).length).toBeGreaterThan(0);
    expect((more.excluded ?? []).filter((e) => e.reason === 'consumed').map((e) => e.id).sort()).toEqual([...given].sort());
    // Another spawn of the same agent at the same iteration (its own block recorded) still gets everything, and its more.
    expect(json(assemble(p, base)).packages?.map((x) => x.id).sort()).toEqual([...given].sort());
    // The command as printed, run by a shell: exit 0, and the block of what was not given.
    const cmd = (line?.[1] ?? '').replace(/^context-assembler /, `npx tsx ${ASSEMBLE_TS} `);
    const run = spawnSync('/bin/sh', ['-c', `${cmd} --project-root '${p.root}' --now ${NOW} --dry-run --format json`], { encoding: 'utf8', cwd: REPO_ROOT });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).packages.map((x: { id: number }) => x.id)).toEqual(packageIds(more));
  });
});

describe('a package with an empty summary', () => {
  it('is no candidate (the prompt builder skips it too): never counted in the +N more line, never left out as emptied by redaction', () => {
    const p = fixture();
    const file = writeArtifact(p, S1, 'empty.md', '# empty\n');
    const r = bazingaDbInProcess(p, ['save-context-package', S1, 'AUTH', 'research', file, 'developer', '["developer"]', 'high', 'to be emptied']);
    expect(r.code, r.err).toBe(0);
    const id = JSON.parse(r.out).package_id as number;
    // As another writer may leave it (BAZINGA's builder skips it: `if summary`).
    const db = new Database(p.dbPath);
    db.prepare("UPDATE context_packages SET summary = '' WHERE id = ?").run(id);
    db.close();
    const doc = json(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--format', 'json', '--dry-run', '--limit', '10']));
    expect(packageIds(doc)).not.toContain(id);
    expect((doc.excluded ?? []).map((e) => e.id)).not.toContain(id);
    expect(doc.total_available).toBe(4);
    expect(doc.overflow_count).toBe(0);
  });
});

describe('consumer lists rank up, never hide', () => {
  it("a package saved for the developers reaches the tech lead; one naming the agent ranks above its twin that does not", () => {
    const p = fixture();
    // Package 2 (CRITICAL failures, AUTH) names the developer and the senior engineer only.
    const tl = json(assemble(p, ['--group', 'AUTH', '--agent', 'tech_lead', '--format', 'json', '--dry-run']));
    expect(packageIds(tl)).toContain(2);
    const named = savePackage(p, 'CART', 'research', ['qa_expert'], 'low', 'Twin note on sync', 'twin-a.md');
    const other = savePackage(p, 'CART', 'research', ['tech_lead'], 'low', 'Twin note on sync', 'twin-b.md');
    const order = (weight: number) =>
      (json(assemble(p, ['--group', 'CART', '--agent', 'qa_expert', '--format', 'json', '--dry-run', '--limit', '10'], { ranking: { weights: { designated: weight } } })).packages ?? [])
        .map((x) => x.id)
        .filter((id) => id === named || id === other);
    // ranking.weights.designated: with it the named twin leads; without it the newer one does.
    expect(order(1)).toEqual([named, other]);
    expect(order(0)).toEqual([other, named]);
  });
});

describe('the limit never cuts the group\u2019s failures while it keeps a package of lower priority', () => {
  const pkg = (id: number, priority: string, type: string, group: string | null, created = '2025-12-01 10:00:00'): Candidate => ({
    id, priority, package_type: type, file_path: `f${id}`, summary: `s${id}`, group_id: group, created_at: created, consumed: false,
  });
  const ranked = (c: Candidate, score: number): RankedPackage => ({ id: c.id, priority: c.priority, package_type: c.package_type, file_path: c.file_path, summary: c.summary, group_id: c.group_id, created_at: c.created_at, score });
  const input = { group: 'AUTH', agent: 'developer', nowMs: Date.parse(NOW), config: DEFAULT_CONFIG, explain: false, limit: 3 };
  it.each([
    {
      name: 'a critical failure left out while a low note is shown is added after the selection',
      selected: [pkg(1, 'high', 'research', 'AUTH'), pkg(2, 'low', 'research', 'AUTH')],
      failures: [pkg(3, 'critical', 'failures', 'AUTH')],
      expected: [1, 2, 3],
      out: [],
    },
    {
      name: 'two failures, the higher priority first, then the newer',
      selected: [pkg(1, 'medium', 'research', 'AUTH'), pkg(2, 'low', 'research', 'AUTH')],
      failures: [pkg(5, 'high', 'failures', 'AUTH', '2025-12-02 10:00:00'), pkg(3, 'critical', 'failures', 'AUTH'), pkg(6, 'high', 'failures', 'AUTH', '2025-12-03 10:00:00')],
      expected: [1, 2, 3, 6, 5],
      out: [],
    },
    { name: 'a failure of no higher priority than every package shown is not added', selected: [pkg(1, 'high', 'research', 'AUTH')], failures: [pkg(3, 'high', 'failures', 'AUTH')], expected: [1], out: [] },
    { name: "another group's failure is not added", selected: [pkg(1, 'low', 'research', 'AUTH')], failures: [pkg(3, 'critical', 'failures', 'CART')], expected: [1], out: [] },
  ])('$name', ({ selected, failures, expected, out }) => {
    // The failures start out excluded for the limit: those added are no longer.
    const r = keepFailuresAbove({ selected: selected.map((c, i) => ranked(c, 10 - i)), excluded: failures.map((f) => ({ kind: 'package' as const, id: f.id, reason: 'limit' as const })) }, failures, input);
    expect(r.selected.map((x) => x.id)).toEqual(expected);
    expect(r.excluded.map((e) => e.id).filter((id) => !failures.some((f) => f.id === id) || expected.includes(id as number))).toEqual(out);
    expect(r.excluded.filter((e) => expected.includes(e.id as number))).toEqual([]);
  });

  it('in a crowded group whose task text matches low notes, the critical failure stays in the developer\u2019s block', () => {
    const p = fixture();
    for (let i = 0; i < 8; i++) savePackage(p, 'AUTH', 'research', ['developer'], 'low', `Token refresh rotation detail ${i}`, `rot-${i}.md`);
    const doc = json(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--format', 'json', '--dry-run', '--task', 'token refresh rotation detail', '--limit', '2']));
    expect(packageIds(doc)).toContain(2);
  });
});

describe("the builder's section is the floor", () => {
  const rows: FloorRows = {
    packages: [
      { id: 1, priority: 'critical', file_path: 'bazinga/artifacts/S/a.md', summary: 'x'.repeat(150) },
      { id: 2, priority: 'high', file_path: 'bazinga/artifacts/S/b.md', summary: '' },
      { id: 3, priority: 'high', file_path: 'bazinga/artifacts/S/c.md', summary: 'y'.repeat(150) },
      { id: 4, priority: 'low', file_path: 'bazinga/artifacts/S/d.md', summary: 'z'.repeat(150) },
    ],
    reasoning: [{ id: 9, agent_type: 'developer', reasoning_phase: 'completion', content: 'done '.repeat(20) }],
    error_patterns: [{ pattern_hash: 'ab'.repeat(32), project_id: 'p', signature_json: '{"error_type": "TypeError"}', solution: 'fix' }],
  };
  it.each([
    { name: 'the builder estimate: characters / 3.85 + 2 %, short texts a quarter', text: 'a'.repeat(385), expected: 102 },
    { name: 'a text under 10 characters', text: 'abcdefgh', expected: 2 },
    { name: 'an empty text', text: '', expected: 0 },
  ])('$name', ({ text, expected }) => expect(builderEstimate(text)).toBe(expected));

  it.each([
    // sonnet × developer: 630 tokens; each package line is about 54 tokens; no reasoning for the developer.
    { name: 'developer on sonnet: packages with a summary, no reasoning, the pattern', model: 'sonnet', agent: 'developer', expected: { packages: [1, 3, 4], reasoning: [], error_patterns: ['ab'.repeat(32)] } },
    { name: 'qa_expert is shown reasoning', model: 'sonnet', agent: 'qa_expert', expected: { packages: [1, 3, 4], reasoning: [9], error_patterns: ['ab'.repeat(32)] } },
  ])('$name', ({ model, agent, expected }) => {
    const floor = builderFloor(rows, model, agent);
    expect(floor).toEqual(expected);
  });

  // Five packages whose summaries the builder cuts at 200: lines of 65 (critical) and 64 tokens, the pattern's 17.
  const long = { ...rows, packages: [1, 2, 3, 4, 5].map((id) => ({ id, priority: id === 1 ? 'critical' : 'high', file_path: `bazinga/artifacts/S/${'abcde'[id - 1]}.md`, summary: 'x'.repeat(300) })) };
  it.each([
    // haiku × developer: int(900 × 0.35) = 315 tokens: four lines (257), the fifth passes it and is skipped, the pattern fits (274).
    { name: 'haiku: the section budget binds, the next line that fits is still taken', model: 'haiku', expected: { packages: [1, 2, 3, 4], reasoning: [], error_patterns: ['ab'.repeat(32)] } },
    // sonnet × developer: 630 tokens, everything fits.
    { name: 'sonnet: everything fits', model: 'sonnet', expected: { packages: [1, 2, 3, 4, 5], reasoning: [], error_patterns: ['ab'.repeat(32)] } },
  ])('$name', ({ model, expected }) => {
    const floor = builderFloor(long, model, 'developer');
    expect(floor).toEqual(expected);
  });

  it("a full model id is sonnet's to the builder (its lookup is exact): the floor uses sonnet's budget, not haiku's", () => {
    const p = fixture();
    for (let i = 0; i < 5; i++) savePackage(p, 'AUTH', 'research', ['developer'], 'critical', `${'Long research note on token storage and rotation. '.repeat(4)}${i}`, `long-${i}.md`);
    const floorOf = (model: string) => json(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--format', 'json', '--dry-run', '--model', model])).floor?.packages ?? [];
    // haiku's 315 tokens hold fewer of these 200-character lines than sonnet's 630.
    expect(floorOf('haiku').length).toBeLessThan(floorOf('sonnet').length);
    expect(floorOf('claude-haiku-4-5')).toEqual(floorOf('sonnet'));
  });

  it('the tech lead gets every package and the reasoning the builder lists for the group (v19 fixture)', () => {
    const p = fixture();
    const doc = json(assemble(p, ['--group', 'AUTH', '--agent', 'tech_lead', '--format', 'json', '--dry-run']));
    expect(doc.floor?.packages).toEqual([2, 1, 3, 4]);
    expect(floorLeftOut(doc)).toEqual([]);
    for (const id of doc.floor?.reasoning ?? []) expect((doc.reasoning?.entries ?? []).map((e) => e.id)).toContain(id);
  });

  it("QA's block holds the developer's completion (the work under review) whatever the task text ranks", () => {
    const p = fixture();
    const doc = json(assemble(p, ['--group', 'AUTH', '--agent', 'qa_expert', '--format', 'json', '--dry-run', '--task', 'offline cart sync worker', '--reasoning-level', 'minimal']));
    expect(doc.floor?.under_review.reasoning).toEqual([3]);
    expect((doc.reasoning?.entries ?? []).map((e) => e.id)).toContain(3);
  });

  it('in a zone that reads nothing, the block names what the builder would show and why', () => {
    const p = fixture();
    const out = assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--current-tokens', '150000', '--dry-run']).out;
    expect(out).toContain('Wrap-up');
    expect(out).toMatch(/- Also in BAZINGA's own context section, not shown here: package 2, package 1, package 3, package 4, error pattern [0-9a-f]{12} \(for the zone: Wrap-up at 88\.2 % of the window\)/);
  });

  it('the report lists what the builder would have shown and what the block did not hold', () => {
    const p = fixture();
    expect(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1']).code).toBe(0);
    expect(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--current-tokens', '150000']).code).toBe(0);
    const c = capturingIo(['--project-root', p.root, '--now', NOW, '--session', S1, '--format', 'markdown'], { cwd: p.root });
    expect(runReport(c.io)).toBe(0);
    expect(c.out()).toContain("- BAZINGA's own section: 5 items, all in the block");
    // Each of them on a line of its own: its id, the reason in words, and what it is.
    expect(c.out()).toMatch(
      /- BAZINGA's own section: 5 items, 5 not in the block\n {2}- package 2 · not shown in the Wrap-up zone: critical failures: 3 auth tests fail[^\n]*\n {2}- package 1 · not shown in the Wrap-up zone: high research: [^\n]*\n {2}- package 3 · [^\n]*\n {2}- package 4 · [^\n]*\n {2}- error pattern [0-9a-f]{12} · not shown in the Wrap-up zone: ModuleNotFound: Cannot find module/,
    );
  });
});

describe('a long report keeps its conclusion', () => {
  const head = 'Research into refresh token rotation for the React Native client covering jose library behaviour, SecureStore limits on Android, clock skew handling between the device and the API, and the order in which tokens are replaced';
  const stored = `${head.slice(0, 197)}...`;
  it.each([
    { name: 'head, mark and the conclusion when both fit', stored, conclusion: 'Conclusion: rotation must run before every refresh.', max: 400, expected: /^Research into .* and the order \[…\] Conclusion: rotation must run before every refresh\.$/ },
    { name: 'a summary the store did not cut is shortened as before', stored: 'Short summary.', conclusion: 'Conclusion: x.', max: 400, expected: /^Short summary\.$/ },
    { name: 'no conclusion: the stored head and the mark', stored, conclusion: null, max: 400, expected: /^Research into .* \[…\]$/ },
    { name: 'a small cap keeps the head and the conclusion\u2019s last words', stored, conclusion: 'We weighed many options. Conclusion: rotation must run before every refresh.', max: 120, expected: /^Research into .* \[…\] .*before every refresh\.$/ },
  ])('$name', ({ stored: s, conclusion, max, expected }) => {
    const shown = withConclusion(s, conclusion, max);
    expect(shown).toMatch(expected);
    expect(Array.from(shown).length).toBeLessThanOrEqual(max);
  });

  it.each([
    { name: 'the last paragraph of prose', tail: '# T\n\nIntro.\n\n```\nnpm test\n```\n\nConclusion: rotate first.\n', expected: 'Conclusion: rotate first.' },
    { name: 'headings and tables skipped', tail: 'Body text here.\n\n| a | b |\n## Next\n', expected: 'Body text here.' },
    { name: 'nothing but code', tail: '```\nx\n```\n', expected: null },
    { name: 'a binary file (control characters)', tail: 'Conclusion: fine.\u0000\u001b[0m', expected: null },
    { name: 'invalid UTF-8, decoded', tail: 'Conclusion: fine \uFFFD here.', expected: null },
    { name: 'the end of a key block the window cut (no BEGIN line)', tail: 'MIIEowIBAAKCAQEA\nznhI9WkDXyovU0Xvt1AWTB\n-----END RSA PRIVATE KEY-----\n', expected: null },
    { name: 'an encoded blob', tail: 'The token is c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0 for now.', expected: null },
    { name: 'too few words to be prose', tail: 'Intro.\n\nOK\n', expected: null },
  ])('conclusionOf: $name', ({ tail, expected }) => expect(conclusionOf(tail)).toBe(expected));

  it('conclusionOf: a window that starts inside the file leaves its partial first line out', () => {
    // `password=hunter2…` lost its key to the window: only whole lines are read.
    expect(conclusionOf('unter2secretvalue and more words here\nConclusion: rotation must run before every refresh.', true)).toBe('Conclusion: rotation must run before every refresh.');
    expect(conclusionOf('unter2secretvalue and more words here', true)).toBeNull();
  });

  it('a long artifact whose end is a private key gives no conclusion, in any redaction mode', () => {
    const p = fixture();
    const key = ['-----BEGIN RSA PRIVATE KEY-----', ...Array.from({ length: 60 }, (_, i) => `MIIEowIBAAKCAQEA${String(i).padStart(4, '0')}znhI9WkDXyovU0Xvt1AWTB32Pk4suX2`), '-----END RSA PRIVATE KEY-----'].join('\n');
    const file = writeArtifact(p, S1, 'keyed.md', `# Notes\n\nConclusion: rotate first.\n\n${key}\n`);
    const long = `${head} when a refresh races a logout from another device and the server must decide which token wins`;
    expect(bazingaDbInProcess(p, ['save-context-package', S1, 'AUTH', 'research', file, 'developer', '["developer"]', 'high', long]).code).toBe(0);
    for (const mode of ['pattern_only', 'both']) {
      const out = assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--dry-run'], { redaction_mode: mode }).out;
      expect(out).not.toContain('PRIVATE KEY');
      expect(out).not.toContain('znhI9Wk');
      expect(out).toMatch(/and the order \[…\]\n/);
    }
  });

  it("the block shows a cut summary's conclusion from its artifact (saved through bazinga-db as BAZINGA saves it)", () => {
    const p = fixture();
    const file = writeArtifact(p, S1, 'long.md', `# Rotation\n\nMany words about the trade-offs.\n\nConclusion: rotation must run before every refresh.\n`);
    const long = `${head} when a refresh races a logout from another device and the server must decide which token wins`;
    const r = bazingaDbInProcess(p, ['save-context-package', S1, 'AUTH', 'research', file, 'developer', '["developer"]', 'high', long]);
    expect(r.code, r.err).toBe(0);
    const out = assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--dry-run']).out;
    expect(out).toMatch(/ \[…\] Conclusion: rotation must run before every refresh\./);
  });
});

describe('an explicit --limit caps the builder\'s packages too', () => {
  it("the packages the builder would show beyond it are named as left out for the limit; without --limit they are all in the block", () => {
    const p = fixture();
    const all = json(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--format', 'json', '--dry-run']));
    const floor = all.floor?.packages ?? [];
    expect(floor.length).toBeGreaterThan(1);
    for (const id of floor) expect(packageIds(all)).toContain(id);
    const one = json(assemble(p, ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--format', 'json', '--dry-run', '--limit', '1', '--task', 'token refresh rotation']));
    const shown = packageIds(one);
    // The group's critical failure report is kept beyond a limit (keptFailures), nothing else is.
    const kept = shown.filter((id) => id !== 2);
    expect(kept.length).toBeLessThanOrEqual(1);
    const limited = new Set((one.excluded ?? []).filter((e) => e.kind === 'package' && e.reason === 'limit').map((e) => e.id));
    for (const id of floor) expect(shown.includes(id) || limited.has(id), `floor package ${id} shown or left out for the limit`).toBe(true);
  });
});
