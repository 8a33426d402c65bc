/**
 * A session with known figures for the report's tests (report.test.ts, report.browser.test.ts), on
 * a copy of the v19 fixture, made the way the orchestrator makes one: recording assemblies (in
 * process: the scripts' own runScript), BAZINGA's task-group fields moved as its agents move them,
 * a package carrying a planted secret that no agent is given, a Conservative-zone call that
 * records nothing, a call whose Tier 1 alone is past its budget (an overrun), a fallback (a claim
 * that fails), and an error pattern seen twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { ASSEMBLE } from '../skills/context-assembler/scripts/lib/main.ts';
import { runReport } from '../skills/context-assembler/scripts/lib/report/run.ts';
import { runScript } from '../skills/context-assembler/scripts/lib/shell.ts';
import { S1, type Project } from './helpers.ts';
import { bazingaDbInProcess, capturingIo } from './inProcess.ts';

export const NOW = '2025-12-02T12:00:00Z';
/** A key that looks like a live AWS secret: planted where the report would show it. */
export const SECRET = 'AKIAIOSFODNN7EXAMPLE';
export const SECRET_VALUE = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

export function assemble(p: Project, args: readonly string[]): { code: number; out: string; err: string } {
  const c = capturingIo(['--project-root', p.root, '--session', S1, '--now', NOW, '--format', 'json', ...args], { cwd: p.root });
  const code = runScript(ASSEMBLE, c.io);
  return { code, out: c.out(), err: c.err() };
}

export function report(p: Project, args: readonly string[]): { code: number; out: string; err: string } {
  const c = capturingIo(['--project-root', p.root, '--now', NOW, ...args], { cwd: p.root });
  const code = runReport(c.io);
  return { code, out: c.out(), err: c.err() };
}

export function rows(p: Project, sql = 'SELECT * FROM ca_assemblies ORDER BY id'): Record<string, unknown>[] {
  const db = new Database(p.dbPath, { readonly: true });
  try {
    return db.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

export function exec(p: Project, sql: string, ...params: unknown[]): void {
  const db = new Database(p.dbPath);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** Seeds the session (S1 of the fixture copy `p`); see the file's comment. */
export function seedReportSession(p: Project): void {
  // A never-delivered package carrying a planted secret, in group CART.
  fs.writeFileSync(path.join(p.root, 'bazinga', 'artifacts', S1, 'secret-notes.md'), '# notes\n');
  const saved = bazingaDbInProcess(p, ['save-context-package', S1, 'CART', 'research', `bazinga/artifacts/${S1}/secret-notes.md`, 'requirements_engineer', '["tech_lead"]', 'low', `Staging access: aws_access_key_id=${SECRET} aws_secret_access_key=${SECRET_VALUE}`]);
  expect(saved.code, saved.err).toBe(0);
  // The session as the orchestrator drove it: QA failed AUTH once, then the retry.
  for (const [agent, iteration] of [['developer', 1], ['qa_expert', 1]] as const) expect(assemble(p, ['--group', 'AUTH', '--agent', agent, '--iteration', String(iteration)]).code).toBe(0);
  exec(p, "UPDATE task_groups SET revision_count = 1, last_review_status = 'CHANGES_REQUESTED', qa_attempts = 1, status = 'in_progress' WHERE id = 'AUTH' AND session_id = ?", S1);
  exec(p, "UPDATE task_groups SET status = 'in_progress' WHERE id = 'CART' AND session_id = ?", S1);
  for (const [agent, iteration] of [['developer', 2], ['qa_expert', 2], ['tech_lead', 2]] as const) expect(assemble(p, ['--group', 'AUTH', '--agent', agent, '--iteration', String(iteration)]).code).toBe(0);
  // CART: a Conservative-zone call (it records nothing), an overrun (a budget share of almost
  // nothing for QA: Tier 1 alone is past it), and a fallback (a claim that fails).
  expect(assemble(p, ['--group', 'CART', '--agent', 'developer', '--iteration', '0', '--current-tokens', '136000']).code).toBe(0);
  const config = path.join(p.root, 'bazinga', 'skills_config.json');
  const original = fs.existsSync(config) ? fs.readFileSync(config) : undefined;
  fs.writeFileSync(config, JSON.stringify({ context_engineering: { context_budget_share: { qa_expert: 0.0005 } } }));
  const overrun = assemble(p, ['--group', 'CART', '--agent', 'qa_expert', '--iteration', '0']);
  if (original === undefined) fs.rmSync(config);
  else fs.writeFileSync(config, original);
  expect(overrun.code, overrun.err).toBe(0);
  expect(JSON.parse(overrun.out).truncation.overrun, 'the QA call overran its budget').toBeGreaterThan(0);
  exec(p, "CREATE TRIGGER fail_claim BEFORE INSERT ON consumption_scope WHEN NEW.agent_type = 'tech_lead' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END");
  expect(JSON.parse(assemble(p, ['--group', 'CART', '--agent', 'tech_lead', '--iteration', '0']).out)).toMatchObject({ fallback: true });
  exec(p, 'DROP TRIGGER fail_claim');
  // One error pattern of the project seen twice.
  exec(p, "UPDATE error_patterns SET occurrences = 2 WHERE pattern_hash = (SELECT pattern_hash FROM error_patterns WHERE project_id = 'acme-shop' ORDER BY pattern_hash LIMIT 1)");
}
