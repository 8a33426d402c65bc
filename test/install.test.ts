/**
 * scripts/install.ts, run as a real process (`node scripts/install.mjs <project> --no-deps`) into
 * temporary BAZINGA projects: what it creates, backing up a foreign bazinga-db skill, idempotence
 * (a second run changes no byte), --dry-run, removal of files an earlier install shipped, the
 * installed skills running from another working directory, and bad usage.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_DIR, REPO_ROOT, S1, S2, makeProject, type Project } from './helpers.ts';
import { planInstall } from '../scripts/install.ts';

const INSTALLER = path.join(REPO_ROOT, 'scripts', 'install.mjs');
const MANIFEST = '.claude/skills/.context-assembler-install.json';
const SKILLS = ['context-assembler', 'bazinga-db'] as const;

/** Children get no inherited project hints; a test adds what it needs. */
const BASE_ENV: NodeJS.ProcessEnv = { ...process.env };
delete BASE_ENV.CLAUDE_PROJECT_DIR;
delete BASE_ENV.BAZINGA_ROOT;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function node(args: readonly string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const r = spawnSync(process.execPath, args, {
    cwd: opts.cwd ?? REPO_ROOT,
    env: opts.env ?? BASE_ENV,
    encoding: 'utf8',
    timeout: 120_000, // hang guard only
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const install = (...args: string[]) => node([INSTALLER, ...args]);

/** Every entry under `root` (symlinks not followed): files by content hash and mode, links by target. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(dir, d.name);
      const rel = path.relative(root, abs).split(path.sep).join('/');
      if (d.isSymbolicLink()) out.set(rel, `link ${fs.readlinkSync(abs)}`);
      else if (d.isDirectory()) {
        out.set(rel, 'dir');
        walk(abs);
      } else {
        const hash = crypto.createHash('sha256').update(fs.readFileSync(abs)).digest('hex');
        out.set(rel, `file ${(fs.statSync(abs).mode & 0o777).toString(8)} ${hash}`);
      }
    }
  };
  walk(root);
  return out;
}

/** The files a bundle folder ships (relative, posix). */
function bundleFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath ?? d.path, d.name)).split(path.sep).join('/'))
    .filter((f) => !f.includes('.code-cache/'))
    .sort();
}

/** Every file the installer ships, as project-relative targets. */
function shippedTargets(): string[] {
  const targets: string[] = [];
  for (const skill of SKILLS) for (const f of bundleFiles(path.join(REPO_ROOT, 'skills', skill))) targets.push(`.claude/skills/${skill}/${f}`);
  for (const f of bundleFiles(path.join(REPO_ROOT, 'references')).filter((name) => name.endsWith('.md'))) targets.push(`.claude/references/${f}`);
  return targets.sort();
}

function makeWritable(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, d.name);
    if (d.isDirectory()) makeWritable(abs);
    else if (d.isFile()) fs.chmodSync(abs, 0o644);
  }
}

const read = (p: string) => fs.readFileSync(p);
const readJson = (p: string): any => JSON.parse(fs.readFileSync(p, 'utf8'));

const projects: Project[] = [];
function project(): Project {
  const p = makeProject('ca-install-');
  projects.push(p);
  return p;
}
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

describe('install into a fresh project', () => {
  it('creates both skills, the references, the runtime package.json, the manifest and the default config', () => {
    const p = project();
    const r = install(p.root, '--no-deps');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Installing into .*: \d+ change\(s\), 0 file\(s\) unchanged/);

    for (const skill of SKILLS) {
      const installed = path.join(p.root, '.claude', 'skills', skill, 'SKILL.md');
      expect(read(installed).equals(read(path.join(REPO_ROOT, 'skills', skill, 'SKILL.md')))).toBe(true);
    }
    // Every shipped file arrived byte-identical, launchers still executable.
    for (const target of shippedTargets()) {
      const source = target.startsWith('.claude/references/')
        ? path.join(REPO_ROOT, 'references', target.slice('.claude/references/'.length))
        : path.join(REPO_ROOT, 'skills', target.slice('.claude/skills/'.length));
      expect(read(path.join(p.root, target)).equals(read(source)), target).toBe(true);
    }
    for (const skill of SKILLS) {
      expect(fs.statSync(path.join(p.root, '.claude', 'skills', skill, 'bin', `${skill}.cjs`)).mode & 0o111).not.toBe(0);
    }
    // A launcher's code cache in the source tree is this machine's: never shipped.
    const cacheDir = path.join(REPO_ROOT, 'skills', 'context-assembler', 'dist', '.code-cache');
    const cached = path.join(cacheDir, `zz-install-test-${process.pid}.bin`);
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(cached, 'a cache');
    try {
      const targets = planInstall(p.root, 'stamp').map((a) => a.target);
      expect(targets.some((t) => t.includes('/dist/assemble.cjs'))).toBe(true);
      expect(targets.filter((t) => t.includes('.code-cache'))).toEqual([]);
    } finally {
      fs.rmSync(cached, { force: true });
    }

    const refs = fs.readdirSync(path.join(p.root, '.claude', 'references')).sort();
    expect(refs).toEqual(fs.readdirSync(path.join(REPO_ROOT, 'references')).filter((f) => f.endsWith('.md')).sort());
    expect(refs.length).toBeGreaterThan(0);
    for (const f of refs) expect(f).toMatch(/\.md$/);

    // The installed SKILL.md links (../../references/…) resolve in the installed layout too.
    for (const skill of SKILLS) {
      const dir = path.join(p.root, '.claude', 'skills', skill);
      const text = fs.readFileSync(path.join(dir, 'SKILL.md'), 'utf8').replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\((\.\.?\/[^)#\s]+)/g)) expect(fs.existsSync(path.resolve(dir, m[1] as string)), m[1]).toBe(true);
    }

    const runtime = readJson(path.join(p.root, '.claude', 'skills', 'package.json'));
    const pkg = readJson(path.join(REPO_ROOT, 'package.json'));
    expect(runtime.type).toBe('module');
    // The bundle's runtime dependencies, without esbuild (it builds the bundles in the source repository only).
    const { esbuild: _builder, ...runtimeDeps } = pkg.dependencies;
    expect(runtime.dependencies).toEqual(runtimeDeps);
    expect(Object.keys(runtime.dependencies).sort()).toEqual(['better-sqlite3', 'js-tiktoken', 'tsx']);
    expect(runtime.devDependencies).toBeUndefined();

    const manifest = readJson(path.join(p.root, MANIFEST));
    expect(manifest.version).toBe(pkg.version);
    expect(manifest.files).toEqual(shippedTargets());

    const config = path.join(p.root, 'bazinga', 'skills_config.json');
    expect(read(config).equals(read(path.join(REPO_ROOT, 'bazinga', 'skills_config.json')))).toBe(true);

    // Nothing half-written is left behind.
    expect([...snapshot(p.root).keys()].filter((k) => /\.tmp-\d+$/.test(k))).toEqual([]);
  });

  it('leaves an existing bazinga/skills_config.json byte-identical', () => {
    const p = project();
    const config = path.join(p.root, 'bazinga', 'skills_config.json');
    const mine = Buffer.from('{\n  "context_engineering": { "enable_context_assembler": false }\n}\n');
    fs.writeFileSync(config, mine);
    const r = install(p.root, '--no-deps');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('bazinga/skills_config.json');
    expect(read(config).equals(mine)).toBe(true);
  });
});

describe('a foreign bazinga-db skill (the original tool)', () => {
  it('backs up its SKILL.md under .claude/skills-backup/<stamp>/ and keeps its scripts/bazinga_db.py', () => {
    const p = project();
    const dir = path.join(p.root, '.claude', 'skills', 'bazinga-db');
    fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true });
    const originalSkill = Buffer.from(
      '---\nname: bazinga-db\ndescription: Database operations for BAZINGA (original Python tool)\n---\n\n```bash\npython3 .claude/skills/bazinga-db/scripts/bazinga_db.py --quiet list-sessions\n```\n',
    );
    const originalPy = Buffer.from('#!/usr/bin/env python3\nprint("bazinga_db")\n');
    fs.writeFileSync(path.join(dir, 'SKILL.md'), originalSkill);
    fs.writeFileSync(path.join(dir, 'scripts', 'bazinga_db.py'), originalPy);

    const r = install(p.root, '--no-deps');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/update\s+\.claude\/skills\/bazinga-db\/SKILL\.md\s+\(previous file kept at \.claude\/skills-backup\/\d{8}T\d{6}Z\/skills\/bazinga-db\/SKILL\.md\)/);

    const stamps = fs.readdirSync(path.join(p.root, '.claude', 'skills-backup'));
    expect(stamps).toHaveLength(1);
    expect(stamps[0]).toMatch(/^\d{8}T\d{6}Z$/);
    const backupRoot = path.join(p.root, '.claude', 'skills-backup', stamps[0] as string);
    expect(read(path.join(backupRoot, 'skills', 'bazinga-db', 'SKILL.md')).equals(originalSkill)).toBe(true);
    // Only the overwritten file is backed up.
    expect([...snapshot(backupRoot).entries()].filter(([, v]) => v.startsWith('file')).map(([k]) => k)).toEqual(['skills/bazinga-db/SKILL.md']);

    expect(read(path.join(dir, 'SKILL.md')).equals(read(path.join(REPO_ROOT, 'skills', 'bazinga-db', 'SKILL.md')))).toBe(true);
    expect(read(path.join(dir, 'scripts', 'bazinga_db.py')).equals(originalPy)).toBe(true);
    expect(readJson(path.join(p.root, MANIFEST)).files).not.toContain('.claude/skills/bazinga-db/scripts/bazinga_db.py');

    // Reinstalling backs up nothing more: the file is now the installer's own.
    const again = install(p.root, '--no-deps');
    expect(again.code).toBe(0);
    expect(fs.readdirSync(path.join(p.root, '.claude', 'skills-backup'))).toEqual(stamps);
    expect(read(path.join(dir, 'scripts', 'bazinga_db.py')).equals(originalPy)).toBe(true);
  });
});

describe('idempotence', () => {
  it('a second run reports 0 changes and leaves every file byte-identical', () => {
    const p = project();
    expect(install(p.root, '--no-deps').code).toBe(0);
    const before = snapshot(p.root);
    const r = install(p.root, '--no-deps');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/: 0 change\(s\), \d+ file\(s\) unchanged/);
    expect(r.stdout).not.toMatch(/^\s+(create|update|remove|write)\s/m);
    expect(snapshot(p.root)).toEqual(before);
  });
});

describe('--dry-run', () => {
  it('writes nothing on a fresh project and lists the planned files, which a real install then writes', () => {
    const p = project();
    const before = snapshot(p.root);
    const r = install(p.root, '--dry-run', '--no-deps');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Would install into /);
    expect(snapshot(p.root)).toEqual(before);

    const planned = [...r.stdout.matchAll(/^\s+would (?:create|write)\s+(\S+)/gm)].map((m) => m[1] as string).sort();
    const expected = [...shippedTargets(), '.claude/skills/package.json', 'bazinga/skills_config.json', MANIFEST].sort();
    expect(planned).toEqual(expected);

    expect(install(p.root, '--no-deps').code).toBe(0);
    const written = [...snapshot(p.root).entries()]
      .filter(([k, v]) => v.startsWith('file') && !before.has(k))
      .map(([k]) => k)
      .sort();
    expect(written).toEqual(expected);
  });
});

describe('files no longer shipped', () => {
  it('a file in the manifest of an earlier install but no longer shipped is removed on reinstall', () => {
    const p = project();
    expect(install(p.root, '--no-deps').code).toBe(0);
    const obsolete = '.claude/skills/context-assembler/scripts/lib/obsolete.ts';
    const manifestPath = path.join(p.root, MANIFEST);
    const manifest = readJson(manifestPath);
    manifest.files = [...manifest.files, obsolete].sort();
    fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
    fs.writeFileSync(path.join(p.root, obsolete), 'export const old = 1;\n');
    // A user's own file beside it, never listed in a manifest, stays.
    const own = path.join(p.root, '.claude', 'skills', 'context-assembler', 'scripts', 'lib', 'mine.ts');
    fs.writeFileSync(own, 'export const mine = 1;\n');

    const r = install(p.root, '--no-deps');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`remove\\s+${obsolete.replace(/[.]/g, '\\.')}\\s+\\(no longer shipped\\)`));
    expect(fs.existsSync(path.join(p.root, obsolete))).toBe(false);
    expect(fs.existsSync(own)).toBe(true);
    expect(readJson(manifestPath).files).toEqual(shippedTargets());

    const third = install(p.root, '--no-deps');
    expect(third.stdout).toMatch(/: 0 change\(s\)/);
  });
});

describe('the installed skills run from another working directory', () => {
  it('context-assembler assembles and bazinga-db lists the fixture sessions with cwd = os.tmpdir()', () => {
    const p = project();
    expect(install(p.root, '--no-deps').code).toBe(0);
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(p.root, '.claude', 'skills', 'node_modules'), 'dir');
    fs.cpSync(path.join(FIXTURE_DIR, 'bazinga'), path.join(p.root, 'bazinga'), { recursive: true });
    makeWritable(path.join(p.root, 'bazinga')); // the fixture may be checked out read-only
    const env = { ...BASE_ENV, CLAUDE_PROJECT_DIR: p.root };
    const cwd = os.tmpdir();

    const ca = node(
      [
        path.join(p.root, '.claude', 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'),
        '--session',
        S1,
        '--group',
        'AUTH',
        '--agent',
        'developer',
        '--iteration',
        '1',
        '--now',
        '2025-12-02T12:00:00Z',
        '--dry-run',
      ],
      { cwd, env },
    );
    expect(ca.code, ca.stderr).toBe(0);
    expect(ca.stdout).toMatch(/^## Context for developer/);
    expect(ca.stdout).not.toContain('Fallback Mode');
    expect(ca.stdout).toMatch(/\(id 2; qa_expert, (?:<1 h|\d+ [hd]) ago\)/);

    const db = node([path.join(p.root, '.claude', 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'), '--quiet', 'list-sessions'], { cwd, env });
    expect(db.code, db.stderr).toBe(0);
    const sessions = JSON.parse(db.stdout) as { session_id: string }[];
    expect(sessions.map((s) => s.session_id).sort()).toEqual([S1, S2].sort());
  });
});

describe('a manifest never makes the installer delete files it cannot have written', () => {
  it('entries outside the two skills and the references (the database, ../) stay', () => {
    const p = project();
    expect(install(p.root, '--no-deps').code).toBe(0);
    fs.cpSync(path.join(FIXTURE_DIR, 'bazinga'), path.join(p.root, 'bazinga'), { recursive: true });
    makeWritable(path.join(p.root, 'bazinga'));
    const outside = path.join(path.dirname(p.root), `${path.basename(p.root)}-outside.txt`);
    fs.writeFileSync(outside, 'not yours\n');
    try {
      const mine = '.claude/skills/other-skill/SKILL.md';
      fs.mkdirSync(path.join(p.root, '.claude/skills/other-skill'), { recursive: true });
      fs.writeFileSync(path.join(p.root, mine), '---\nname: other-skill\n---\n');
      const manifestPath = path.join(p.root, MANIFEST);
      const manifest = readJson(manifestPath);
      const bad = ['bazinga/bazinga.db', `../${path.basename(outside)}`, '.claude/skills/context-assembler/../../../bazinga/skills_config.json', mine];
      manifest.files = [...manifest.files, ...bad];
      fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
      const before = snapshot(p.root);

      const r = install(p.root, '--no-deps');
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/remove/);
      expect(fs.existsSync(outside)).toBe(true);
      const after = snapshot(p.root);
      for (const rel of ['bazinga/bazinga.db', 'bazinga/skills_config.json', mine]) expect(after.get(rel), rel).toBe(before.get(rel));
      expect(readJson(manifestPath).files).toEqual(shippedTargets());
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });
});

/** True when `pkg` resolves from `dir` (for example through a node_modules in an ancestor folder). */
function resolvesFrom(dir: string, pkg: string): boolean {
  try {
    createRequire(path.join(dir, 'probe.js')).resolve(`${pkg}/package.json`);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(resolvesFrom(os.tmpdir(), 'tsx') || resolvesFrom(os.tmpdir(), 'better-sqlite3'))(
  'installed without (some of) the runtime dependencies',
  () => {
    /** A project with the skills installed (--no-deps), the fixture, and `.claude/skills/node_modules` holding only `packages`. */
    function installedWith(packages: readonly string[]): { p: Project; env: NodeJS.ProcessEnv; ca: string; db: string } {
      const p = project();
      expect(install(p.root, '--no-deps').code).toBe(0);
      fs.cpSync(path.join(FIXTURE_DIR, 'bazinga'), path.join(p.root, 'bazinga'), { recursive: true });
      makeWritable(path.join(p.root, 'bazinga'));
      if (packages.length > 0) {
        const nm = path.join(p.root, '.claude', 'skills', 'node_modules');
        fs.mkdirSync(nm);
        for (const pkg of packages) fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', pkg), path.join(nm, pkg), 'dir');
      }
      return {
        p,
        env: { ...BASE_ENV, CLAUDE_PROJECT_DIR: p.root },
        ca: path.join(p.root, '.claude', 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'),
        db: path.join(p.root, '.claude', 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'),
      };
    }
    const FALLBACK = ':warning: Context assembly encountered an error. Proceeding with minimal context.';

    // Without node_modules the source path (forced: no bundle) misses tsx first; with tsx but no
    // better-sqlite3 either path (bundle or source) misses better-sqlite3.
    it.each([
      ['no node_modules at all', [] as string[], 'tsx', { CONTEXT_ASSEMBLER_NO_BUNDLE: '1' }],
      ['tsx but no better-sqlite3', ['tsx'], 'better-sqlite3', {}],
    ])('%s: assembly falls back (exit 0), fetch/doctor/bazinga-db exit 1, each naming the fix in .claude/skills', (_label, packages, missing, extraEnv) => {
      const { p, env: baseEnv, ca, db } = installedWith(packages);
      const env = { ...baseEnv, ...extraEnv };
      const cwd = os.tmpdir();
      const fix = `cd "${path.join(p.root, '.claude', 'skills')}" && npm install --omit=dev`;

      const md = node([ca, '--session', S1, '--group', 'AUTH', '--agent', 'qa_expert', '--dry-run'], { cwd, env });
      expect(md.code, md.stderr).toBe(0);
      expect(md.stdout).toBe(`## Context for qa_expert\n\n${FALLBACK}\n\n**Fallback Mode**: Task and specialization context only. Context packages unavailable.\n`);
      expect(md.stderr).toContain('dependencies are missing');
      expect(md.stderr).toContain(missing);
      expect(md.stderr).toContain(fix);

      // --flag=value forms are read too.
      const js = node([ca, `--session=${S1}`, '--agent=tech_lead', '--format=json', '--dry-run'], { cwd, env });
      expect(js.code, js.stderr).toBe(0);
      expect(JSON.parse(js.stdout)).toEqual({ fallback: true, agent: 'tech_lead', error: 'dependencies are missing' });

      const f = node([ca, 'fetch', '2'], { cwd, env });
      expect(f.code).toBe(1);
      expect(f.stdout).toBe('');
      expect(f.stderr).toContain(fix);

      // doctor: without tsx only the launcher can speak (stderr); with tsx it prints its table,
      // with the missing module's row FAILed and its fix.
      const d = node([ca, 'doctor'], { cwd, env });
      expect(d.code).toBe(1);
      if (missing === 'tsx') {
        expect(d.stdout).toBe('');
        expect(d.stderr).toContain(fix);
      } else {
        expect(d.stdout).toMatch(new RegExp(`${missing}\\s+FAIL`));
        expect(d.stdout).toContain(`cd "${path.join(p.root, '.claude', 'skills')}"`);
      }

      const r = node([db, '--quiet', 'list-sessions'], { cwd, env });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const err = JSON.parse(r.stderr.trim().split('\n').pop() as string);
      expect(err.success).toBe(false);
      expect(err.error).toContain(missing);
      expect(err.error).toContain(fix);
    });
  },
);

describe('output to a closed pipe', () => {
  it('a reader that stops early does not crash the install, which still completes', async () => {
    const p = project();
    const child = spawn(process.execPath, [INSTALLER, p.root, '--no-deps'], { cwd: REPO_ROOT, env: BASE_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // closed before the child can write its first line
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
    expect(readJson(path.join(p.root, MANIFEST)).files).toEqual(shippedTargets());
    expect(install(p.root, '--no-deps').stdout).toMatch(/: 0 change\(s\)/);
  });
});

describe('bad usage', () => {
  it('no project → exit 2 with usage', () => {
    const r = install('--no-deps');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Expected exactly one <project-dir>');
    expect(r.stderr).toMatch(/Usage:/);
    expect(r.stdout).toBe('');
  });

  it('two projects → exit 2, neither touched', () => {
    const a = project();
    const b = project();
    const before = [snapshot(a.root), snapshot(b.root)];
    const r = install(a.root, b.root, '--no-deps');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Expected exactly one <project-dir>');
    expect([snapshot(a.root), snapshot(b.root)]).toEqual(before);
  });

  it('unknown flag → exit 2, nothing written', () => {
    const p = project();
    const before = snapshot(p.root);
    const r = install(p.root, '--force');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown flag --force');
    expect(snapshot(p.root)).toEqual(before);
  });

  it('missing directory → exit 1', () => {
    const p = project();
    const missing = path.join(p.root, 'does-not-exist');
    const r = install(missing, '--no-deps');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`Project directory not found: ${missing}`);
    expect(fs.existsSync(missing)).toBe(false);
  });
});
