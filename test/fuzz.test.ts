/**
 * Seeded fuzz over every script's arguments and the step documents: each of the assembler's steps
 * (zone, rank, pack, reasoning, consume, assemble), fetch and all bazinga-db
 * commands, run in process (the same runners the launchers call) on a copy of the v19 fixture,
 * with hostile flag values, unknown flags, stray positionals and piped documents that are broken,
 * truncated or of the wrong step; plus a few real processes through the launchers. Every run must
 * end (no hang: the test's timeout and a spawn timeout), print no stack trace, exit with a
 * documented code, and on failure end stderr with the one-line JSON error of references/errors.md.
 * The seed is fixed: a failure names its case and reproduces.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../skills/bazinga-db/scripts/lib/commands/index.ts';
import { runCli } from '../skills/bazinga-db/scripts/lib/cli.ts';
import { ERROR_CODES } from '../skills/bazinga-db/scripts/lib/errors.ts';
import { COMMON_FLAGS } from '../skills/context-assembler/scripts/lib/params.ts';
import { runScript, type ScriptSpec } from '../skills/context-assembler/scripts/lib/shell.ts';
import { runFetch } from '../skills/context-assembler/scripts/lib/fetchArtifact.ts';
import { copyFixture, REPO_ROOT, S1, type Project } from './helpers.ts';

/** A small seeded generator (mulberry32): the same cases on every run. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  return { next, pick, int: (n: number) => Math.floor(next() * n) };
}

/** Values a careless or hostile caller passes: empty, signs, huge, unicode, paths outside, devices, JSON scraps. */
const VALUES = [
  '', ' ', '0', '-1', '1', '2', '50', '51', '999999999999999999999', '1e309', 'NaN', 'true', 'null', '[]', '{}', '{"a":', '[1,',
  'developer', 'qa_expert', 'tech_lead', 'project_manager', 'AUTH', 'global', S1, 'no_such_session', 'opus', 'haiku', 'gpt-9',
  'minimal', 'full', 'markdown', 'json', 'xml', '2025-12-02T12:00:00Z', '2025-13-40', 'x'.repeat(5000), 'é漢字🙂', '\u0000', '\n\n',
  '../../etc/passwd', '/etc/passwd', '/dev/null', '/dev/zero', '/', '.', 'bazinga', 'bazinga/artifacts', '; rm -rf /', "' OR 1=1 --",
  'SELECT 1', 'SELECT * FROM sessions', 'password=hunter2', 'AKIAZ7Q4RW2LMX8NC5TB', '--session', '-h',
];

/** Values a real call would pass, for cases that reach past the parser. */
const PLAUSIBLE = [S1, 'AUTH', 'CART', 'global', 'developer', 'qa_expert', 'tech_lead', 'understanding', 'completion', '1', '2', '3', 'research', 'high', 'medium', 'in_progress', 'completed', 'bazinga/artifacts/x.md', '["qa_expert"]', 'a summary', 'testing'];

/** A stack trace line as Node prints one. */
const STACK = /^\s+at .+\(?.+:\d+:\d+\)?$/m;
const CODES = new Set<string>(ERROR_CODES);

/** The documented shape of a run: exit 0, 1 or 2; on failure the last stderr line is the JSON error (or, for the assembler, a fallback on exit 0). */
function checkRun(label: string, code: number, stdout: string, stderr: string): void {
  expect([0, 1, 2], `${label}: exit ${code}\n${stderr}`).toContain(code);
  expect(stderr, `${label}: a stack trace`).not.toMatch(STACK);
  expect(stdout, `${label}: a stack trace on stdout`).not.toMatch(STACK);
  if (code !== 0) {
    const last = stderr.trimEnd().split('\n').pop() ?? '';
    let error: { success?: unknown; error?: unknown; code?: unknown };
    try {
      error = JSON.parse(last) as typeof error;
    } catch {
      throw new Error(`${label}: exit ${code} without the one-line JSON error; stderr: ${stderr.slice(0, 300)}`);
    }
    expect(error.success, label).toBe(false);
    expect(typeof error.error, label).toBe('string');
    expect(CODES.has(String(error.code)), `${label}: code ${String(error.code)}`).toBe(true);
  } else {
    expect(stdout.length, `${label}: exit 0 with nothing on stdout`).toBeGreaterThan(0);
  }
}

let project: Project;
beforeAll(() => {
  project = copyFixture('ca-fuzz-');
});
afterAll(() => project.cleanup());

const STEP_SPECS: ScriptSpec[] = (['zone', 'rank', 'pack', 'reasoning', 'consume', 'assemble'] as const).map((step) => ({
  name: `${step}.ts`,
  step: step === 'assemble' ? 'consume' : step,
  defaultFormat: step === 'assemble' ? 'markdown' : 'json',
  readsStdin: step !== 'zone' && step !== 'assemble',
  summary: step,
}));

/** Arguments: mostly well-formed flags of the vocabulary with fuzzed values, some unknown flags and stray words. */
function fuzzArgv(r: ReturnType<typeof rng>, flags: readonly string[], base: string[]): string[] {
  const argv = [...base];
  for (let i = 0, n = r.int(6); i < n; i++) {
    const roll = r.next();
    if (roll < 0.75) {
      const flag = r.pick(flags);
      if (r.next() < 0.15) argv.push(`${flag}=${r.pick(VALUES)}`);
      else argv.push(flag, r.pick(VALUES));
    } else if (roll < 0.85) argv.push(r.pick(['--bogus', '--SESSION', '---', '--', '-x']));
    else argv.push(r.pick(VALUES));
  }
  // Never point a case at the real repository's files as its project.
  return argv;
}

/** A document for a step's stdin: a real one of an earlier step, broken in one of several ways. */
function fuzzDoc(r: ReturnType<typeof rng>, docs: string[]): string | undefined {
  const doc = r.pick(docs);
  switch (r.int(7)) {
    case 0:
      return undefined;
    case 1:
      return doc;
    case 2:
      return doc.slice(0, r.int(doc.length));
    case 3: {
      const v = JSON.parse(doc) as Record<string, unknown>;
      const keys = Object.keys(v);
      const key = r.pick(keys);
      v[key] = JSON.parse(r.pick(['null', '1', '"x"', '[]', '{}', '-5', 'true']));
      return JSON.stringify(v);
    }
    case 4: {
      const v = JSON.parse(doc) as Record<string, unknown>;
      delete v[r.pick(Object.keys(v))];
      return JSON.stringify(v);
    }
    case 5:
      return r.pick(['[]', '{}', 'null', '"text"', '{"fallback":true}', '{"disabled":true,"agent":"x"}', 'x'.repeat(10000)]);
    default:
      return JSON.stringify({ ...(JSON.parse(doc) as object), step: r.pick(['zone', 'rank', 'pack', 'reasoning', 'consume', 'nope']) });
  }
}

describe('fuzz, in process (seeded)', () => {
  it('every assembler step and fetch: 240 cases end with a documented exit and error shape, no stack trace', () => {
    const r = rng(1601);
    const flags = Object.keys(COMMON_FLAGS);
    const base = () => ['--project-root', project.root, '--now', '2025-12-02T12:00:00Z', '--dry-run'];
    // Real documents of each step, for the piped cases.
    const docs: string[] = [];
    for (const spec of STEP_SPECS.slice(0, 5)) {
      let out = '';
      const code = runScript(spec, {
        argv: [...base(), '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1'],
        cwd: project.root,
        env: {},
        stdout: (t) => (out += t),
        stderr: () => {},
        readStdin: () => docs[docs.length - 1],
        now: () => new Date('2025-12-02T12:00:00Z'),
      });
      expect(code).toBe(0);
      docs.push(out);
    }
    const exits = new Map<string, number>();
    const tally = (what: string, code: number) => exits.set(`${what} ${code}`, (exits.get(`${what} ${code}`) ?? 0) + 1);
    for (let i = 0; i < 240; i++) {
      const which = r.int(STEP_SPECS.length + 2);
      let out = '';
      let err = '';
      const io = {
        cwd: project.root,
        env: {},
        stdout: (t: string) => (out += t),
        stderr: (t: string) => (err += t),
        now: () => new Date('2025-12-02T12:00:00Z'),
      };
      if (which < STEP_SPECS.length) {
        const spec = STEP_SPECS[which] as ScriptSpec;
        const argv = fuzzArgv(r, flags, r.next() < 0.8 ? [...base(), '--session', S1, '--agent', 'developer'] : base());
        const stdin = spec.readsStdin ? fuzzDoc(r, docs) : undefined;
        const code = runScript(spec, { ...io, argv, readStdin: () => stdin });
        checkRun(`case ${i} ${spec.name} ${JSON.stringify(argv).slice(0, 200)} stdin=${JSON.stringify(stdin ?? null).slice(0, 80)}`, code, out, err);
        tally(out.includes('Fallback Mode') || out.includes('"fallback": true') ? 'step-fallback' : 'step', code);
      } else {
        // fetch's own flags; its id mostly one of the fixture's packages.
        const argv = fuzzArgv(r, ['--max-tokens', '--format', '--config'], [r.pick(['1', '2', '3', '4', '5', '0', '-3', 'x', '999999', '']), '--project-root', project.root]);
        const code = runFetch({ ...io, argv, readStdin: () => undefined });
        checkRun(`case ${i} fetch ${JSON.stringify(argv).slice(0, 200)}`, code, out, err);
        tally('fetch', code);
      }
    }
    // The cases reach every outcome: blocks, fallbacks, refused parameters, fetch's answers and errors.
    console.log('assembler fuzz outcomes:', Object.fromEntries([...exits].sort()));
    for (const outcome of ['step 0', 'step 2', 'fetch 0', 'fetch 1', 'fetch 2']) expect(exits.get(outcome) ?? 0, outcome).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('all bazinga-db commands: 300 cases end with a documented exit and error shape, no stack trace', () => {
    const r = rng(2602);
    const outcomes = new Map<number, number>();
    for (let i = 0; i < 300; i++) {
      const command = r.pick(COMMANDS);
      const flags = Object.keys(command.flags);
      // Half the cases well-formed up to their values: as many positionals as the synopsis names, plausible ones mostly.
      const required = (command.synopsis.split('[')[0]?.match(/</g) ?? []).length;
      const positionals = r.next() < 0.5
        ? Array.from({ length: required }, () => (r.next() < 0.7 ? r.pick(PLAUSIBLE) : r.pick(VALUES)))
        : Array.from({ length: r.int(5) }, () => r.pick(VALUES));
      const argv = ['--quiet', '--project-root', project.root, command.name, ...fuzzArgv(r, flags.length > 0 ? flags : ['--bogus'], positionals)];
      let out = '';
      let err = '';
      const code = runCli(argv, { cwd: project.root, env: {}, stdout: (t) => (out += t), stderr: (t) => (err += t) });
      checkRun(`case ${i} bazinga-db ${JSON.stringify(argv.slice(3)).slice(0, 200)}`, code, out, err);
      outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
    }
    console.log('bazinga-db fuzz exits:', Object.fromEntries(outcomes));
    for (const code of [0, 1, 2]) expect(outcomes.get(code) ?? 0, `exit ${code}`).toBeGreaterThanOrEqual(10);
    // The fuzzed writes left a database SQLite still calls sound.
    const check = spawnSync(process.execPath, ['-e', "const D=require('better-sqlite3');const d=new D(process.argv[1],{readonly:true});console.log(d.pragma('integrity_check',{simple:true}))", project.dbPath], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(check.stdout.trim()).toBe('ok');
  }, 120_000);
});

describe('fuzz, real processes through the launchers (seeded)', () => {
  it('12 launcher calls end within the spawn timeout with a documented exit and error shape', () => {
    const r = rng(3603);
    const bins = {
      ca: path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'),
      db: path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'),
    };
    expect(fs.existsSync(bins.ca) && fs.existsSync(bins.db)).toBe(true);
    for (let i = 0; i < 12; i++) {
      const db = i % 3 === 2;
      const argv = db
        ? ['--quiet', '--project-root', project.root, r.pick(COMMANDS).name, ...Array.from({ length: r.int(4) }, () => r.pick(VALUES))]
        : fuzzArgv(r, Object.keys(COMMON_FLAGS), [r.pick(['assemble', 'zone', 'fetch', 'help', 'nope']), '--project-root', project.root, '--session', S1, '--agent', 'qa_expert', '--dry-run']);
      const run = spawnSync(process.execPath, [db ? bins.db : bins.ca, ...argv], { cwd: project.root, encoding: 'utf8', timeout: 20_000, input: '' });
      expect(run.error, `case ${i} did not end: ${JSON.stringify(argv)}`).toBeUndefined();
      checkRun(`launcher case ${i} ${JSON.stringify(argv).slice(0, 200)}`, run.status ?? -1, run.stdout, run.stderr);
    }
  }, 300_000);
});
