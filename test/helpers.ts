/**
 * Test helpers: temporary project folders (fresh or copied from the v19 fixture), and running the
 * bazinga-db CLI as a real process.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The v19 fixture made by the original tool, bundled (a byte-identical copy of shared/fixtures/bazinga-v19). */
export const FIXTURE_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'bazinga-v19');
export const BAZINGA_DB_SCRIPT = path.join(REPO_ROOT, 'skills', 'bazinga-db', 'scripts', 'bazinga-db.ts');

/** The two sessions of the fixture. */
export const S1 = 'bazinga_20251201_090000';
export const S2 = 'bazinga_20251203_140000';

export interface Project {
  root: string;
  dbPath: string;
  cleanup(): void;
}

/** This process's environment without the variables that name a project root: only a test's flags choose the project. */
export function envWithoutRootHints(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.CLAUDE_PROJECT_DIR;
  delete env.BAZINGA_ROOT;
  return env;
}

/** A temporary project folder with `.claude/` and `bazinga/` (no database yet). */
export function makeProject(prefix = 'ca-test-'): Project {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
  fs.mkdirSync(path.join(root, 'bazinga', 'artifacts'), { recursive: true });
  return { root, dbPath: path.join(root, 'bazinga', 'bazinga.db'), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A temporary copy of the v19 fixture (database and artifacts). */
export function copyFixture(prefix = 'ca-fixture-'): Project {
  const project = makeProject(prefix);
  fs.cpSync(path.join(FIXTURE_DIR, 'bazinga'), path.join(project.root, 'bazinga'), { recursive: true });
  return project;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Parsed stdout (undefined when stdout is empty). */
  json: any;
  /** Parsed last line of stderr, when it is a JSON object. */
  error: any;
}

/** The result of one run from its exit code and output (shared by the process and in-process runners). */
export function toResult(code: number | null, stdout: string, stderr: string): RunResult {
  const lastLine = stderr.trimEnd().split('\n').pop() ?? '';
  let error: unknown;
  try {
    error = lastLine.startsWith('{') ? JSON.parse(lastLine) : undefined;
  } catch {
    error = undefined;
  }
  return { code: code ?? -1, stdout, stderr, json: stdout.trim() ? JSON.parse(stdout) : undefined, error };
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
}

/** Runs a tsx script as a real process, synchronously. */
export function runScript(script: string, args: readonly string[], opts: RunOptions = {}): RunResult {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? { ...process.env },
    input: opts.input ?? '',
    encoding: 'utf8',
  });
  return toResult(r.status, r.stdout, r.stderr);
}

/** Runs a tsx script as a real process, asynchronously (for concurrency tests). */
export function runScriptAsync(script: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: opts.env ?? { ...process.env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve(toResult(code, stdout, stderr)));
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs bazinga-db with `--quiet --db <project db> --project-root <project root>` before `args`. */
export function bazingaDb(project: Project, args: readonly string[], opts: RunOptions = {}): RunResult {
  return runScript(BAZINGA_DB_SCRIPT, ['--quiet', '--db', project.dbPath, '--project-root', project.root, ...args], opts);
}

export function bazingaDbAsync(project: Project, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return runScriptAsync(BAZINGA_DB_SCRIPT, ['--quiet', '--db', project.dbPath, '--project-root', project.root, ...args], opts);
}

/** Writes an artifact file under `bazinga/artifacts/<session>/` and returns its project-relative path. */
export function writeArtifact(project: Project, sessionId: string, name: string, content = `# ${name}\n`): string {
  const dir = path.join(project.root, 'bazinga', 'artifacts', sessionId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), content);
  return `bazinga/artifacts/${sessionId}/${name}`;
}

/**
 * `shown` is `original` shortened to at most `max` characters with its structure kept (shorten):
 * a beginning and an end of it, each on a whole word, around one " […] ".
 */
export function expectShortened(original: string, shown: string, max: number): void {
  expect(Array.from(shown).length).toBeLessThanOrEqual(max);
  const parts = shown.split(' […] ');
  expect(parts.length, shown).toBe(2);
  const [head, tail] = parts as [string, string];
  expect(original.startsWith(head), `${head} begins ${original.slice(0, 40)}`).toBe(true);
  expect(original.endsWith(tail), `${tail} ends the text`).toBe(true);
  expect([' ', undefined]).toContain(original[head.length]);
  expect(original[original.length - tail.length - 1]).toBe(' ');
  expect(head.length).toBeGreaterThan(0);
  expect(tail.length).toBeGreaterThan(0);
}

/**
 * Takes this layer's objects back to how a v11 writer left them: no ca_pattern_faults or v12
 * indexes, the capture ledger's old column, ca_schema 11 (a connection of the caller's; the schema
 * tests' starting state for what v12 restores).
 */
export function downgradeExtensionsToV11(db: { exec(sql: string): unknown; prepare(sql: string): { run(...params: unknown[]): unknown } }): void {
  db.exec(`DROP TABLE ca_pattern_faults; DROP INDEX ca_idx_patterns_shown_all; DROP INDEX ca_idx_strategies_shown_all;
    DROP TABLE ca_captures; CREATE TABLE ca_captures (id INTEGER PRIMARY KEY AUTOINCREMENT, project_id TEXT NOT NULL, session_id TEXT NOT NULL,
      group_id TEXT NOT NULL, failure_ref TEXT NOT NULL, refs TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(refs)), fail_iteration INTEGER,
      outcome TEXT NOT NULL CHECK(outcome IN ('passed', 'failed')), pattern_hash TEXT NOT NULL,
      operation TEXT NOT NULL CHECK(operation IN ('created', 'raised', 'lowered', 'no-solution', 'unknown-failed')), solution_ref TEXT,
      created_at TEXT NOT NULL, UNIQUE(session_id, group_id, failure_ref))`);
  db.prepare("UPDATE ca_meta SET value = '11' WHERE key = 'ca_schema'").run();
}
