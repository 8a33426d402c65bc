/**
 * The report's file stays where it is meant to be: no symbolic link inside the project is followed
 * (bazinga/, bazinga/reports/, any folder between the root and the file, --out's too), nor one at
 * the file itself; --out's own folders outside the project are the user's and are followed. Each
 * case on real links in temporary folders, on a copy of the v19 fixture, checking the error (one
 * line, REFUSED, naming the path), that nothing was written anywhere (the link's target unchanged
 * or empty), and what was written when it may be. One case runs the launcher as a real process; one
 * swaps a folder for a link between the checks and the write (bazinga-db projectWrite.ts).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { replaceFileInFolder, writeFileInProject } from '../skills/bazinga-db/scripts/lib/projectWrite.ts';
import { REPO_ROOT, S1, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';
import { report } from './reportSeed.ts';

/** Every file, folder and link under `dir` (relative; links listed, not followed), sorted: what a write left there. */
function tree(dir: string, prefix = ''): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => [path.join(prefix, e.name), ...(e.isDirectory() ? tree(path.join(dir, e.name), path.join(prefix, e.name)) : [])])
    .sort();
}

/** The one error line a refused run ends stderr with. */
function errorOf(r: { code: number; out: string; err: string }): { error: string; code: string } {
  const lines = r.err.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

let p: Project;
let outside: string;
beforeEach(() => {
  p = copyIndexedFixture('ca-report-links-');
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-report-outside-'));
});
afterEach(() => {
  p.cleanup();
  fs.rmSync(outside, { recursive: true, force: true });
});

describe('the default path: no link between the project root and the file', () => {
  it('bazinga/reports a link out of the project: refused naming it, exit 1, nothing written there or anywhere', () => {
    fs.symlinkSync(outside, path.join(p.root, 'bazinga', 'reports'));
    const before = tree(p.root);
    const r = report(p, ['--session', S1, '--format', 'html']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(errorOf(r)).toEqual({
      success: false,
      code: 'REFUSED',
      error: `report not written: ${path.join(p.root, 'bazinga', 'reports')} is a symbolic link inside the project ${fs.realpathSync(p.root)}, and no link there is followed`,
    });
    expect(tree(outside)).toEqual([]);
    expect(tree(p.root)).toEqual(before);
    expect(fs.lstatSync(path.join(p.root, 'bazinga', 'reports')).isSymbolicLink()).toBe(true);
  });

  it('bazinga/ itself a link (the database read through it): the report is refused at bazinga/', () => {
    const real = path.join(outside, 'bazinga');
    fs.renameSync(path.join(p.root, 'bazinga'), real);
    fs.symlinkSync(real, path.join(p.root, 'bazinga'));
    const before = tree(real);
    const r = report(p, ['--session', S1, '--format', 'html']);
    expect(r.code).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'REFUSED', error: `report not written: ${path.join(p.root, 'bazinga')} is a symbolic link inside the project ${fs.realpathSync(p.root)}, and no link there is followed` });
    expect(tree(real)).toEqual(before);
    // The same database reports on stdout: reading through the link is the user's setup.
    expect(report(p, ['--session', S1, '--format', 'json']).code).toBe(0);
  });

  it('the file itself a link (to a file outside, or to nothing): refused, the target unchanged or never made, the link kept', () => {
    const reports = path.join(p.root, 'bazinga', 'reports');
    fs.mkdirSync(reports);
    const file = path.join(reports, `${S1}.html`);
    const victim = path.join(outside, 'victim.txt');
    fs.writeFileSync(victim, 'keep me\n');
    fs.symlinkSync(victim, file);
    const r = report(p, ['--session', S1, '--format', 'html']);
    expect(r.code).toBe(1);
    expect(errorOf(r)).toMatchObject({ code: 'REFUSED', error: `report not written: ${file} is a symbolic link, and a file is never written through one (name the file it points to instead)` });
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(fs.readlinkSync(file)).toBe(victim);
    fs.rmSync(file);
    const absent = path.join(outside, 'absent.html');
    fs.symlinkSync(absent, file);
    expect(report(p, ['--session', S1, '--format', 'html']).code).toBe(1);
    expect(fs.existsSync(absent)).toBe(false);
    expect(tree(outside)).toEqual(['victim.txt']);
    expect(tree(reports)).toEqual([`${S1}.html`]);
  });

  it('a folder or a FIFO at the file\'s name is refused by what it is; a regular file there is replaced whole, 0600, no temporary file left; a missing bazinga/reports is made', () => {
    const reports = path.join(p.root, 'bazinga', 'reports');
    const first = report(p, ['--session', S1, '--format', 'html']);
    expect(first.code, first.err).toBe(0);
    expect(fs.lstatSync(reports).isDirectory()).toBe(true);
    fs.rmSync(path.join(reports, `${S1}.html`));
    fs.mkdirSync(path.join(reports, `${S1}.html`));
    const r = report(p, ['--session', S1, '--format', 'html']);
    expect(r.code).toBe(1);
    expect(errorOf(r).error).toBe(`report not written: ${path.join(reports, `${S1}.html`)} is a directory, not a regular file`);
    fs.rmdirSync(path.join(reports, `${S1}.html`));
    expect(spawnSync('mkfifo', [path.join(reports, `${S1}.html`)]).status).toBe(0);
    const fifo = report(p, ['--session', S1, '--format', 'html']);
    expect(fifo.code).toBe(1);
    expect(errorOf(fifo).error).toBe(`report not written: ${path.join(reports, `${S1}.html`)} is a FIFO, not a regular file`);
    fs.rmSync(path.join(reports, `${S1}.html`));
    fs.writeFileSync(path.join(reports, `${S1}.html`), 'x'.repeat(100_000));
    const ok = report(p, ['--session', S1, '--format', 'html']);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toBe(`${path.join(reports, `${S1}.html`)}\n`);
    const page = fs.readFileSync(path.join(reports, `${S1}.html`), 'utf8');
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(page).not.toContain('xxxx');
    expect(fs.statSync(path.join(reports, `${S1}.html`)).mode & 0o777).toBe(0o600);
    expect(tree(reports)).toEqual([`${S1}.html`]);
  });
});

describe('--out: where the user says, never through a link they did not name', () => {
  it('a path inside the project through a link there is refused, for markdown and HTML alike; nothing written; a `..` is applied to the path as written', () => {
    fs.symlinkSync(outside, path.join(p.root, 'bazinga', 'reports'));
    fs.symlinkSync(outside, path.join(p.root, 'notes'));
    for (const [out, link] of [
      ['bazinga/reports/today.md', 'bazinga/reports'],
      ['notes/today.html', 'notes'],
      ['notes/deeper/today.html', 'notes'],
    ] as const) {
      for (const format of ['markdown', 'html']) {
        const r = report(p, ['--session', S1, '--format', format, '--out', out]);
        expect(r.code, `${format} ${out}`).toBe(1);
        expect(errorOf(r).error).toBe(`report not written: ${path.join(p.root, link)} is a symbolic link inside the project ${fs.realpathSync(p.root)}, and no link there is followed`);
      }
    }
    expect(tree(outside)).toEqual([]);
    // A `..` is applied to the path as written: it never steps back out of a link.
    const r = report(p, ['--session', S1, '--out', 'notes/../r.md']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${path.join(p.root, 'r.md')}\n`);
    expect(fs.readFileSync(path.join(p.root, 'r.md'), 'utf8')).toContain('## Success metrics');
    expect(tree(outside)).toEqual([]);
  });

  it('folders outside the project that the user names are followed, links among them too; the file itself a link is refused there too (the user names its target instead)', () => {
    const target = path.join(outside, 'target');
    fs.mkdirSync(target);
    const named = path.join(outside, 'named-link');
    fs.symlinkSync(target, named);
    const r = report(p, ['--session', S1, '--format', 'html', '--out', path.join(named, 'new', 'r.html')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${path.join(named, 'new', 'r.html')}\n`);
    expect(fs.lstatSync(path.join(target, 'new')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(target, 'new', 'r.html'), 'utf8')).toContain('<!DOCTYPE html>');
    expect(tree(target)).toEqual(['new', path.join('new', 'r.html')]);
    const victim = path.join(outside, 'victim.md');
    fs.writeFileSync(victim, 'keep me\n');
    const link = path.join(named, 'report.md');
    fs.symlinkSync(victim, link);
    const refused = report(p, ['--session', S1, '--out', link]);
    expect(refused.code).toBe(1);
    expect(errorOf(refused).error).toBe(`report not written: ${link} is a symbolic link, and a file is never written through one (name the file it points to instead)`);
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me\n');
    const direct = report(p, ['--session', S1, '--out', victim]);
    expect(direct.code, direct.err).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toContain('## Success metrics');
    expect(fs.readlinkSync(link)).toBe(victim);
  });

  it('a link outside the project that leads into it meets the rule there: a link inside on its way is refused; one to nothing is refused, nothing made', () => {
    fs.mkdirSync(path.join(outside, 'elsewhere'));
    fs.symlinkSync(path.join(outside, 'elsewhere'), path.join(p.root, 'bazinga', 'reports'));
    fs.symlinkSync(path.join(p.root, 'bazinga'), path.join(outside, 'into'));
    const r = report(p, ['--session', S1, '--out', path.join(outside, 'into', 'reports', 'r.md')]);
    expect(r.code).toBe(1);
    expect(errorOf(r).error).toBe(`report not written: ${path.join(outside, 'into', 'reports')} (${path.join(fs.realpathSync(p.root), 'bazinga', 'reports')}) is a symbolic link inside the project ${fs.realpathSync(p.root)}, and no link there is followed`);
    fs.symlinkSync('gone/deeper', path.join(outside, 'dangling'));
    const d = report(p, ['--session', S1, '--out', path.join(outside, 'dangling', 'r.md')]);
    expect(d.code).toBe(1);
    expect(errorOf(d).error).toBe(`report not written: ${path.join(fs.realpathSync(outside), 'gone')} does not exist (a symbolic link leads there)`);
    expect(tree(path.join(outside, 'elsewhere'))).toEqual([]);
    expect(fs.existsSync(path.join(outside, 'gone'))).toBe(false);
    // A relative link outside, with a `..` in its target, is followed where it leads.
    fs.mkdirSync(path.join(outside, 'elsewhere', 'sub'));
    fs.symlinkSync('../elsewhere/sub/..', path.join(outside, 'elsewhere', 'up'));
    const ok = report(p, ['--session', S1, '--out', path.join(outside, 'elsewhere', 'up', 'r.md')]);
    expect(ok.code, ok.err).toBe(0);
    expect(tree(path.join(outside, 'elsewhere'))).toEqual(['r.md', 'sub', 'up']);
  });

  it('a folder on the way that is a file: refused by what it is', () => {
    fs.writeFileSync(path.join(outside, 'plain'), 'x');
    const r = report(p, ['--session', S1, '--out', path.join(outside, 'plain', 'r.md')]);
    expect(r.code).toBe(1);
    expect(errorOf(r).error).toBe(`report not written: ${path.join(outside, 'plain')} is a file, not a folder`);
  });
});

describe('a folder swapped for a link after the checks', () => {
  it('the temporary file lands elsewhere, is seen to by what the kernel opened, removed, and REFUSED thrown: nothing left in either place', () => {
    const folder = path.join(p.root, 'bazinga', 'reports');
    fs.mkdirSync(folder);
    const realFolder = fs.realpathSync(folder);
    // What the walk found real is now a link out of the project (the race, run in order).
    fs.renameSync(folder, path.join(p.root, 'bazinga', 'moved'));
    fs.symlinkSync(outside, folder);
    expect(() => replaceFileInFolder(realFolder, 'r.html', 'secret report', { mode: 0o600, shown: path.join(folder, 'r.html'), what: 'report' })).toThrow(
      `report not written: ${path.join(folder, 'r.html')} changed while it was written: its folder ${realFolder} now leads to ${fs.realpathSync(outside)}`,
    );
    expect(tree(outside)).toEqual([]);
    expect(tree(path.join(p.root, 'bazinga', 'moved'))).toEqual([]);
  });

  it('writeFileInProject resolves the project root once: a project root reached through a link (its parents are outside it) is written into', () => {
    const alias = path.join(outside, 'alias');
    fs.symlinkSync(p.root, alias);
    writeFileInProject(path.join(alias, 'bazinga', 'reports', 'x.md'), 'text\n', { projectRoot: alias, mode: 0o600, what: 'report' });
    expect(fs.readFileSync(path.join(p.root, 'bazinga', 'reports', 'x.md'), 'utf8')).toBe('text\n');
  });
});

describe('--out with a long file name: any name the file system takes is written, a longer one refused naming the path', () => {
  // NAME_MAX on Linux and macOS: 255 bytes a name (a character of é is two).
  it.each([
    { name: 'a 250-character name', file: `${'r'.repeat(247)}.md` },
    { name: 'a name of exactly 255 bytes', file: `${'r'.repeat(252)}.md` },
    { name: 'a name of 255 bytes in 130 characters', file: `${'é'.repeat(125)}rr.md` },
  ])('$name: written whole, no temporary file left beside it', ({ file }) => {
    const folder = path.join(p.root, 'long');
    const r = report(p, ['--session', S1, '--out', path.join('long', file)]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`${path.join(folder, file)}\n`);
    expect(fs.readFileSync(path.join(folder, file), 'utf8')).toContain('## Success metrics');
    expect(tree(folder)).toEqual([file]);
  });

  it.each([
    { name: 'a file name of 256 bytes', out: (dir: string) => path.join(dir, `${'r'.repeat(253)}.md`), why: 'its file name is 256 bytes' },
    { name: 'a file name of 256 bytes in 130 characters', out: (dir: string) => path.join(dir, `${'é'.repeat(126)}r.md`), why: 'its file name is 256 bytes' },
    { name: 'a folder name of 300 bytes', out: (dir: string) => path.join(dir, 'f'.repeat(300), 'r.md'), why: `the folder name '${'f'.repeat(300)}' is 300 bytes` },
  ])('$name: VALIDATION in one line naming the path, exit 1, nothing made', ({ out, why }) => {
    const before = tree(p.root);
    const target = out(path.join(p.root, 'long'));
    const r = report(p, ['--session', S1, '--out', target]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(errorOf(r)).toEqual({ success: false, code: 'VALIDATION', error: `report not written: ${target}: ${why}, and a name may have at most 255` });
    expect(tree(p.root)).toEqual(before);
  });
});

describe('as a real process', () => {
  it('the launcher refuses bazinga/reports linked out of the project: exit 1, one error line naming it, nothing written', () => {
    fs.symlinkSync(outside, path.join(p.root, 'bazinga', 'reports'));
    const launcher = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
    const r = spawnSync(process.execPath, [launcher, 'report', '--project-root', p.root, '--session', S1, '--format', 'html'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const last = JSON.parse(r.stderr.trim().split('\n').pop() as string);
    expect(last).toMatchObject({ success: false, code: 'REFUSED' });
    expect(last.error).toContain(`${path.join(p.root, 'bazinga', 'reports')} is a symbolic link inside the project`);
    expect(tree(outside)).toEqual([]);
  });

  it('the launcher writes --out with a 250-character file name: exit 0, its path printed, the report there and nothing else', () => {
    const launcher = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');
    const file = path.join(outside, `${'r'.repeat(245)}.html`);
    const r = spawnSync(process.execPath, [launcher, 'report', '--project-root', p.root, '--session', S1, '--format', 'html', '--out', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${file}\n`);
    expect(fs.readFileSync(file, 'utf8').startsWith('<!DOCTYPE html>')).toBe(true);
    expect(tree(outside)).toEqual([path.basename(file)]);
  });
});
