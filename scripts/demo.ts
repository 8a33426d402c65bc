/**
 * npm run demo: assembles, on a temporary copy of the bundled v19 fixture (a database made by the
 * original BAZINGA tool), the context block each agent type would get for group AUTH of session
 * bazinga_20251201_090000, with a fixed --now so the output is the same on every run; then records
 * the rest of the session and writes its report (demo-report/report.html, kept). The bundled
 * fixture is never modified.
 *
 * Usage: npm run demo (tsx scripts/demo.ts [--help])
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(repo, 'test', 'fixtures', 'bazinga-v19');
const assembler = path.join(repo, 'skills', 'context-assembler', 'bin', 'context-assembler.mjs');
/** Where the demo leaves the session's HTML report (outside the temporary copy, which is removed). */
const REPORT = path.join(repo, 'demo-report', 'report.html');
const SESSION = 'bazinga_20251201_090000';
const NOW = '2025-12-02T12:00:00Z';

const HELP = `demo: the context block each agent type gets, on a temporary copy of the bundled v19 fixture
(group AUTH of session ${SESSION}, clock fixed at ${NOW}); then the rest of the session recorded and its
report written to demo-report/report.html; the fixture is never modified.

Usage: npm run demo     (tsx scripts/demo.ts [--help])
`;
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  fs.writeSync(1, HELP);
  process.exit(0);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'context-assembler-demo-'));
fs.cpSync(fixture, root, { recursive: true });
fs.mkdirSync(path.join(root, '.claude'), { recursive: true });

function assemble(title: string, flags: string[]): void {
  const args = ['--session', SESSION, '--now', NOW, ...flags];
  const r = spawnSync(process.execPath, [assembler, '--project-root', root, ...args], { encoding: 'utf8' });
  console.log(`\n════ ${title}\n$ context-assembler ${args.join(' ')}\n`);
  process.stdout.write(r.stdout);
  if (r.status !== 0 || r.stderr.trim()) console.log(`(exit ${r.status}) ${r.stderr.trim()}`);
}

/** The group's review outcome, written as BAZINGA's own `update-task-group` writes it (a command of its CLI this product does not carry). */
function reviewOutcome(group: string, revisions: number, lastReview: 'APPROVED' | 'CHANGES_REQUESTED'): void {
  const db = new Database(path.join(root, 'bazinga', 'bazinga.db'));
  try {
    db.prepare("UPDATE task_groups SET revision_count = ?, last_review_status = ?, status = 'in_progress', updated_at = datetime('now') WHERE id = ? AND session_id = ?").run(revisions, lastReview, group, SESSION);
  } finally {
    db.close();
  }
}

/** One recording call, its block not printed (the report shows what it got). */
function record(flags: string[]): void {
  const r = spawnSync(process.execPath, [assembler, '--project-root', root, '--session', SESSION, '--now', NOW, ...flags], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`assemble ${flags.join(' ')} failed: ${r.stderr.trim()}`);
}

/**
 * The rest of the session as the orchestrator drives it (QA fails the developer's work, the retry,
 * QA and the tech lead again; a QA spawn of group CART with the window 80 % full), each call
 * recording what it hands out; then the session's report: its metrics here, the whole of it as
 * one HTML file kept after the demo.
 */
function recordSession(): void {
  console.log('\n════ The rest of the session, recorded (blocks not printed), then its report');
  // The developer's iteration 2 above was recorded; QA reviews it and sends it back.
  record(['--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '2']);
  reviewOutcome('AUTH', 3, 'CHANGES_REQUESTED');
  record(['--group', 'AUTH', '--agent', 'developer', '--iteration', '3', '--error', "Cannot find module '@/utils' at src/auth/refresh.ts line 3"]);
  record(['--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '3']);
  record(['--group', 'AUTH', '--agent', 'tech_lead', '--iteration', '3']);
  reviewOutcome('AUTH', 3, 'APPROVED');
  record(['--group', 'CART', '--agent', 'developer', '--iteration', '0']);
  record(['--group', 'CART', '--agent', 'qa_expert', '--iteration', '0', '--current-tokens', '136000']);
  const md = spawnSync(process.execPath, [assembler, 'report', '--project-root', root, '--session', SESSION, '--now', NOW], { encoding: 'utf8' });
  const metrics = md.stdout.split('\n## Session')[0] as string;
  console.log(`\n$ context-assembler report --session ${SESSION}   (its first section)\n\n${metrics.trim()}`);
  const html = spawnSync(process.execPath, [assembler, 'report', '--project-root', root, '--session', SESSION, '--now', NOW, '--format', 'html', '--out', REPORT], { encoding: 'utf8' });
  if (html.status !== 0) throw new Error(`report --format html failed: ${html.stderr.trim()}`);
  console.log(`\nThe session's report, one self-contained HTML file (open it in any browser): ${REPORT}`);
}

/** The words the blocks below use, once. */
const GLOSSARY = `A session is one run of the BAZINGA orchestrator on a request; its work is split into task groups
(AUTH, CART), each developed, tested and reviewed by agents it spawns; a group's iteration counts the
times its work went back to the developer. A context package is a report an agent left for the
others (research, a failure, a decision). The zone says how full the orchestrator's own context
window is: the fuller, the smaller the block (Conservative shows only the most important items).`;

/** The search index of the copy, built as the plugin's SessionStart hook builds it, so every block ranks by relevance. */
function buildIndex(): void {
  const cli = path.join(repo, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
  const r = spawnSync(process.execPath, [cli, '--quiet', '--project-root', root, 'index-search'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bazinga-db index-search failed: ${r.stderr.trim()}`);
}

try {
  console.log(`Demo: a temporary copy of the v19 fixture at ${root}; clock fixed at ${NOW}.`);
  console.log(`\n${GLOSSARY}\n`);
  buildIndex();
  console.log('Its search index is built first (bazinga-db index-search, as the plugin does at session start).');
  console.log("Each block is what that agent reads as its context (today's BAZINGA: in place of its prompt builder's context section).");
  assemble('Developer retry (iteration 1) in group AUTH', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--dry-run']);
  assemble('Senior software engineer escalation', ['--group', 'AUTH', '--agent', 'senior_software_engineer', '--iteration', '1', '--dry-run']);
  assemble('QA expert handoff', ['--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1', '--dry-run']);
  assemble('Tech lead review', ['--group', 'AUTH', '--agent', 'tech_lead', '--iteration', '1', '--dry-run']);
  assemble('Investigator', ['--group', 'AUTH', '--agent', 'investigator', '--iteration', '1', '--dry-run']);
  assemble('Requirements engineer, session-wide', ['--agent', 'requirements_engineer', '--dry-run']);
  assemble('QA expert in group CART with the window 80 % full (Conservative zone)', [
    '--group', 'CART', '--agent', 'qa_expert', '--current-tokens', '136000', '--dry-run',
  ]);
  assemble('Developer, iteration 2, recorded: the packages are marked consumed', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2']);
  assemble('The same developer call again: iteration 2 already has them', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--dry-run']);
  recordSession();
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
console.log('\nDone: the temporary copy was removed; the bundled fixture is unchanged.');
