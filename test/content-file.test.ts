/**
 * One containment rule for every content file (save-reasoning's and save-memory's --content-file):
 * inside the project root or the temp folder, else REFUSED; a path outside by its name is refused
 * before it is looked at, so the answer is the same whether a file exists there or not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFixture, S1, type Project } from './helpers.ts';
import { runBazingaDbInProcess } from './inProcess.ts';

let project: Project | undefined;
afterEach(() => project?.cleanup());

const COMMANDS = {
  'save-memory': (file: string) => ['save-memory', 'proj', 'learning', 'A lesson', '--content-file', file],
  'save-reasoning': (file: string) => ['save-reasoning', S1, 'AUTH', 'developer', 'risks', '--content-file', file],
};

describe.each(Object.entries(COMMANDS))('%s --content-file', (_name, args) => {
  const run = (file: string) => runBazingaDbInProcess(['--quiet', '--db', (project as Project).dbPath, '--project-root', (project as Project).root, ...args(file)]);

  it('outside the project and the temp folder: REFUSED, the same answer for a file that exists and one that does not', () => {
    project = copyFixture('ca-content-');
    const existing = run('/etc/passwd');
    const missing = run('/etc/no-such-file-here');
    expect(existing.code).toBe(1);
    expect(existing.error.code).toBe('REFUSED');
    expect(existing.error.error).toMatch(/^--content-file \/etc\/passwd lies outside the project root and the temp folder; --content-file reads only from inside /);
    expect(missing.error.code).toBe('REFUSED');
    expect(missing.error.error.replace('/etc/no-such-file-here', '/etc/passwd')).toBe(existing.error.error);
  });

  it('a file of the project named through a link to the project (an alias of its folder): read', () => {
    project = copyFixture('ca-content-');
    const alias = fs.mkdtempSync(path.join(os.homedir(), '.ca-alias-'));
    try {
      fs.symlinkSync(project.root, path.join(alias, 'proj'));
      fs.writeFileSync(path.join(project.root, 'note.json'), JSON.stringify({ lesson: 'Named through an alias' }));
      const r = run(path.join(alias, 'proj', 'note.json'));
      expect(r.code, r.stderr).toBe(0);
    } finally {
      fs.rmSync(alias, { recursive: true, force: true });
    }
  });

  it('inside the temp folder: read', () => {
    project = copyFixture('ca-content-');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ca-content-file-')), 'note.json');
    fs.writeFileSync(file, JSON.stringify({ lesson: 'Read from the temp folder' }));
    const r = run(file);
    expect(r.code, r.stderr).toBe(0);
    fs.rmSync(path.dirname(file), { recursive: true });
  });
});

describe("a piped document's request texts are redacted at the edge, like a request from flags", () => {
  it('a secret written into request.task and request.error of a document never reaches the query terms', async () => {
    const { runScript, REPO_ROOT: root } = await import('./helpers.ts');
    project = copyFixture('ca-piped-');
    const script = (name: string) => path.join(root, 'skills', 'context-assembler', 'scripts', name);
    const zone = runScript(script('zone.ts'), ['--project-root', project.root, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--now', '2025-12-02T12:00:00Z', '--format', 'json']);
    expect(zone.code, zone.stderr).toBe(0);
    const doc = zone.json;
    doc.request.task = 'fix login: password=hunter2 and the key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIj';
    doc.request.error = 'api_key=ZXCVBNMASDFGHJKL1234 failed';
    const rank = runScript(script('rank.ts'), ['--project-root', project.root, '--format', 'json'], { input: JSON.stringify(doc) });
    expect(rank.code, rank.stderr).toBe(0);
    const printed = JSON.stringify(rank.json.query);
    for (const piece of ['hunter2', 'zxcvbnmasdfghjkl1234', 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghij', 'AbCdEfGh']) expect(printed.toLowerCase()).not.toContain(piece.toLowerCase());
    expect(rank.json.query.terms).toContain('login');
  });
});
