/**
 * The launchers' V8 code cache (skills/bazinga-db/bin/launch.cjs), in real processes on a built
 * copy of both skills: written by the first successful run and used by the next ones with the same
 * output, never written by --help or a failed run, checked against the bundle's content (an edited
 * bundle never runs an old cache), refused when damaged or cut short (and then replaced), written again
 * when a run that stopped early left it thin, and a folder that
 * cannot be written only means compiling every time.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, REPO_ROOT, S1, type Project } from './helpers.ts';

let tree: string;
let project: Project;
let cacheDir: string;

beforeAll(() => {
  tree = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-launcher-'));
  fs.cpSync(path.join(REPO_ROOT, 'skills'), path.join(tree, 'skills'), {
    recursive: true,
    filter: (src) => !/[\\/](dist|node_modules)([\\/]|$)/.test(path.relative(REPO_ROOT, src)),
  });
  fs.mkdirSync(path.join(tree, 'scripts'));
  fs.copyFileSync(path.join(REPO_ROOT, 'scripts', 'build.mjs'), path.join(tree, 'scripts', 'build.mjs'));
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(tree, 'package.json'));
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(tree, 'node_modules'), 'dir');
  const built = spawnSync(process.execPath, [path.join(tree, 'scripts', 'build.mjs')], { cwd: tree, encoding: 'utf8' });
  expect(built.status, built.stderr).toBe(0);
  cacheDir = path.join(tree, 'skills', 'context-assembler', 'dist', '.code-cache');
  project = copyFixture('ca-launcher-project-');
}, 120_000);

afterAll(() => {
  fs.rmSync(tree, { recursive: true, force: true });
  project.cleanup();
});

/** One orchestrator call through the launcher, with its trace lines. */
function call(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [path.join(tree, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs'), ...args], {
    cwd: project.root,
    env: { ...process.env, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1', ...env },
    encoding: 'utf8',
  });
  const trace = r.stderr.split('\n').filter((l) => l.startsWith('launch: '));
  return { code: r.status, stdout: r.stdout, trace };
}

const ASSEMBLE = ['--project-root', '', '--session', S1, '--agent', 'qa_expert', '--group', 'AUTH', '--iteration', '1', '--dry-run', '--format', 'json', '--now', '2025-12-02T00:00:00Z'];
const assembleArgs = () => ASSEMBLE.map((a, i) => (i === 1 ? project.root : a));
const cacheFiles = () => (fs.existsSync(cacheDir) ? fs.readdirSync(cacheDir).sort() : []);

describe('the code cache of a bundle', () => {
  it('is not written by --help or by a run that failed; the first successful run writes it, the next ones use it and print the same', () => {
    expect(call(['assemble', '--help']).trace).toEqual(['launch: assemble.cjs (bundle), code cache absent']);
    expect(call(['--session', S1, '--agent', 'qa_expert', '--iteration', 'x']).code).toBe(2);
    expect(cacheFiles()).toEqual([]);

    const first = call(assembleArgs());
    expect(first.code).toBe(0);
    expect(first.trace[0]).toBe('launch: assemble.cjs (bundle), code cache absent');
    expect(first.trace[1]).toMatch(/^launch: code cache written: assemble\.cjs-v[\d.]+-\w+-[0-9a-f]{8}\.bin$/);
    expect(cacheFiles()).toHaveLength(1);

    const second = call(assembleArgs());
    expect(second.trace).toEqual(['launch: assemble.cjs (bundle), code cache used']);
    expect(second.stdout).toBe(first.stdout);
    expect(JSON.parse(second.stdout).step).toBe('consume');
  });

  it('CONTEXT_ASSEMBLER_NO_CODE_CACHE=1 neither reads nor writes it', () => {
    const before = cacheFiles();
    const r = call(assembleArgs(), { CONTEXT_ASSEMBLER_NO_CODE_CACHE: '1' });
    expect(r.code).toBe(0);
    expect(r.trace).toEqual(['launch: assemble.cjs (bundle), code cache off']);
    expect(cacheFiles()).toEqual(before);
  });

  it('a damaged cache is refused, the bundle compiled, and the cache written again', () => {
    const [name] = cacheFiles() as [string];
    const good = fs.readFileSync(path.join(cacheDir, name));
    fs.writeFileSync(path.join(cacheDir, name), Buffer.concat([good.subarray(0, 64), Buffer.alloc(good.length - 64, 7)]));
    const r = call(assembleArgs());
    expect(r.code).toBe(0);
    expect(r.trace[0]).toBe('launch: assemble.cjs (bundle), code cache refused');
    expect(r.trace[1]).toBe(`launch: code cache written: ${name}`);
    // Cut short (an interrupted copy): refused the same way.
    fs.writeFileSync(path.join(cacheDir, name), good.subarray(0, good.length >> 1));
    const cut = call(assembleArgs());
    expect([cut.code, cut.trace[0]]).toEqual([0, 'launch: assemble.cjs (bundle), code cache refused']);
    expect(call(assembleArgs()).trace).toEqual(['launch: assemble.cjs (bundle), code cache used']);
  });

  it('an edited bundle never runs the old cache, even at the same length and modification time', () => {
    const bundle = path.join(tree, 'skills', 'context-assembler', 'dist', 'assemble.cjs');
    const before = fs.statSync(bundle);
    const text = fs.readFileSync(bundle, 'utf8');
    expect(text).toContain('Usage:');
    // Same length, other code: V8 itself would take the old cache (of the source it checks only the length).
    fs.writeFileSync(bundle, text.replace('Usage:', 'USAGE:'));
    fs.utimesSync(bundle, before.atime, before.mtime);
    expect([fs.statSync(bundle).size, Math.round(fs.statSync(bundle).mtimeMs)]).toEqual([before.size, Math.round(before.mtimeMs)]);
    const help = call(['assemble', '--help']);
    expect(help.trace).toEqual(['launch: assemble.cjs (bundle), code cache refused']);
    expect(help.stdout).toContain('USAGE:');
    const r = call(assembleArgs());
    expect(r.code).toBe(0);
    expect(r.trace[0]).toBe('launch: assemble.cjs (bundle), code cache refused');
    expect(r.trace[1]).toMatch(/^launch: code cache written: /);
    expect(call(assembleArgs()).trace).toEqual(['launch: assemble.cjs (bundle), code cache used']);
    expect(cacheFiles()).toHaveLength(1);
  });

  it('a run that did not do its work (a fallback block) writes no cache; a thin one is written again by the next full run', () => {
    fs.rmSync(cacheDir, { recursive: true, force: true });
    const early = call(['--project-root', path.join(tree, 'no-such-project'), '--session', S1, '--agent', 'qa_expert']);
    expect(early.code).toBe(0);
    expect(early.stdout).toContain('Fallback Mode');
    expect(early.trace).toEqual(['launch: assemble.cjs (bundle), code cache absent']);
    expect(cacheFiles()).toEqual([]);
    // A thin cache, as an older launcher could leave: the bundle compiled but none of its functions run.
    const bundle = fs.realpathSync(path.join(tree, 'skills', 'context-assembler', 'dist', 'assemble.cjs'));
    const bytes = fs.readFileSync(bundle);
    const payload = new vm.Script(Module.wrap(`//${bytes.toString('utf8').slice(2)}`), { filename: bundle }).createCachedData();
    const sha1 = (b: Buffer) => crypto.createHash('sha1').update(b).digest();
    const name = `assemble.cjs-${process.version}-${process.arch}-${sha1(Buffer.from('|')).toString('hex').slice(0, 8)}.bin`;
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(path.join(cacheDir, name), Buffer.concat([sha1(bytes), sha1(payload), payload]));
    const full = call(assembleArgs());
    expect(full.trace).toEqual(['launch: assemble.cjs (bundle), code cache used (thin)', `launch: code cache written: ${name}`]);
    expect(call(assembleArgs()).trace).toEqual(['launch: assemble.cjs (bundle), code cache used']);
  });

  it('where the cache folder cannot be made, the call still succeeds and says the cache was not written', () => {
    fs.rmSync(cacheDir, { recursive: true, force: true });
    fs.writeFileSync(cacheDir, 'not a folder');
    try {
      const r = call(assembleArgs());
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).step).toBe('consume');
      expect(r.trace[1]).toMatch(/^launch: code cache not written: /);
    } finally {
      fs.rmSync(cacheDir, { force: true });
    }
  });

  it('bazinga-db runs through the same launcher and caches its own bundle beside it', () => {
    const bin = path.join(tree, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs');
    const run = () =>
      spawnSync(process.execPath, [bin, '--project-root', project.root, 'list-sessions'], {
        cwd: project.root,
        env: { ...process.env, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1' },
        encoding: 'utf8',
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stderr).toContain('launch: bazinga-db.cjs (bundle), code cache absent');
    const second = run();
    expect(second.stderr).toContain('launch: bazinga-db.cjs (bundle), code cache used');
    expect(second.stdout).toBe(first.stdout);
  });
});

describe("better-sqlite3's JavaScript bundled in", () => {
  /**
   * A copy of the built skills whose node_modules holds every package of this repository but a
   * better-sqlite3 of `version` (its native addon the real one; its JavaScript the real one behind
   * an entry that says on stderr that it was loaded).
   */
  function installWith(version: string): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-launcher-sqlite-'));
    fs.cpSync(path.join(tree, 'skills'), path.join(root, 'skills'), { recursive: true, preserveTimestamps: true, filter: (src) => !src.includes('.code-cache') });
    const modules = path.join(root, 'node_modules');
    fs.mkdirSync(modules);
    const real = path.join(REPO_ROOT, 'node_modules');
    for (const name of fs.readdirSync(real)) {
      if (name !== 'better-sqlite3') fs.symlinkSync(path.join(real, name), path.join(modules, name));
    }
    const pkg = path.join(modules, 'better-sqlite3');
    fs.mkdirSync(path.join(pkg, 'lib'), { recursive: true });
    const manifest = JSON.parse(fs.readFileSync(path.join(real, 'better-sqlite3', 'package.json'), 'utf8'));
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ ...manifest, version }));
    fs.symlinkSync(path.join(real, 'better-sqlite3', 'build'), path.join(pkg, 'build'));
    fs.writeFileSync(
      path.join(pkg, 'lib', 'index.js'),
      `process.stderr.write('installed better-sqlite3 JavaScript\\n');\nmodule.exports = require(${JSON.stringify(path.join(real, 'better-sqlite3', 'lib', 'index.js'))});\n`,
    );
    return root;
  }

  it.each([
    { name: 'the version bundled installed: the bundled JavaScript runs', same: true },
    { name: 'another version installed (node_modules changed after the build): the installed JavaScript runs', same: false },
  ])('$name', ({ same }) => {
    const bundled = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')).version as string;
    const root = installWith(same ? bundled : '0.0.0-other');
    try {
      const r = spawnSync(process.execPath, [path.join(root, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'), '--project-root', project.root, 'list-sessions'], {
        cwd: project.root,
        env: { ...process.env, CONTEXT_ASSEMBLER_LAUNCH_TRACE: '1' },
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain('launch: bazinga-db.cjs (bundle)');
      expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
      expect(r.stderr.includes('installed better-sqlite3 JavaScript')).toBe(!same);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
