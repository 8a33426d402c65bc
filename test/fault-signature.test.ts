/**
 * One fault, one signature (bazinga-db's faultSignature), on a corpus of real outputs this test
 * makes itself: small broken projects written here and run through the real tools (tsc, vitest,
 * Node, pytest, npm), each fault planted in several places, files, lines and values, labelled by
 * the fault class it was planted as before anything is signed. Every class must get one signature
 * of its own: the same for all its occurrences, shared with no other class. The rate of such
 * classes is printed and held to at least 90 %.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultSignature, normaliseFaultText } from '../skills/bazinga-db/scripts/lib/faultSignature.ts';
import { REPO_ROOT } from './helpers.ts';

interface Occurrence {
  fault: string;
  text: string;
}

let dir: string;
const corpus: Occurrence[] = [];

const write = (rel: string, text: string) => {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const run = (cmd: string, args: string[], cwd: string) => {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', CI: '1' }, timeout: 120_000 });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`;
};

/** tsc: an export renamed under three importers, a type mismatch in two files, a module that is not there from two folders. */
function tscCorpus(): void {
  const root = 'ts';
  write(`${root}/tsconfig.json`, JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'esnext', moduleResolution: 'bundler', target: 'es2022' }, include: ['src'] }));
  write(`${root}/src/services/notification.service.ts`, 'export function notifyUser(id: string): string {\n  return id;\n}\n');
  write(`${root}/src/app.ts`, "import { sendNotice } from './services/notification.service';\nexport const a = sendNotice;\n");
  write(`${root}/src/api/users.ts`, "\n\nimport { sendNotice } from '../services/notification.service';\nexport const b = sendNotice;\n");
  write(`${root}/src/api/deep/orders.ts`, "// orders\nimport { sendNotice } from '../../services/notification.service';\nexport const c = sendNotice;\n");
  write(`${root}/src/config.ts`, "export const port: number = 'eighty';\n");
  write(`${root}/src/api/limits.ts`, "\n\n\nexport const retries: number = 'three';\n");
  write(`${root}/src/shape.ts`, 'const o = { a: 1 };\nexport const m = (o as { a: number }).a + (o as { a: number; }).a;\nexport const x = o.missing;\n');
  write(`${root}/src/api/shape2.ts`, '\nconst o = { a: 2 };\n\nexport const y = o.missing;\n');
  write(`${root}/src/cache.ts`, "import { store } from './missing-store';\nexport const s = store;\n");
  write(`${root}/src/api/queue.ts`, "import { store } from '../lib/missing-store';\nexport const q = store;\n");
  const out = run(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], path.join(dir, root));
  const errors = out.split('\n').filter((l) => /error TS\d+/.test(l));
  for (const line of errors) {
    const fault = /TS2305/.test(line) ? 'tsc renamed export' : /TS2322/.test(line) ? 'tsc string to number' : /TS2307/.test(line) ? 'tsc missing module' : /TS2339/.test(line) ? 'tsc missing property' : `tsc other: ${line}`;
    corpus.push({ fault, text: line });
  }
  expect(errors.length, out).toBe(9);
}

/** vitest: one assertion failing with other values in three tests, and the same property read of undefined in two, in other places. */
function vitestCorpus(): void {
  const root = 'vt';
  write(`${root}/vitest.config.mjs`, 'export default { test: { include: ["*.test.mjs"] } };\n');
  write(
    `${root}/math.test.mjs`,
    `import { expect, it } from 'vitest';
const add = (a, b) => a + b;
it('adds two', () => { expect(add(2, 2)).toBe(5); });
it('adds one', () => {
  expect(add(1, 1)).toBe(3);
});
it('adds big', () => { expect(add(400, 20)).toBe(421); });
it('totals an order', () => { expect({ total: add(3, 4), items: 2 }).toEqual({ total: 8, items: 2 }); });
it('totals a cart', () => {
  expect({ total: add(10, 5), items: 2 }).toEqual({ total: 14, items: 2 });
});
`,
  );
  write(
    `${root}/user.test.mjs`,
    `import { it } from 'vitest';
const users = {};
it('reads a name', () => { return users.current.name; });

it('reads a name again', () => {
  const profile = users.profile;
  return profile.name;
});
`,
  );
  const out = run(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--root', '.'], path.join(dir, root));
  // One block per failed test, from its FAIL line to the next.
  const blocks = out.split(/\n(?= FAIL )/).filter((b) => /^ FAIL /.test(b));
  for (const b of blocks) {
    const fault = /deeply equal/.test(b) ? 'vitest toEqual' : /AssertionError/.test(b) ? 'vitest toBe' : /TypeError/.test(b) ? 'vitest read of undefined' : `vitest other: ${b.slice(0, 80)}`;
    corpus.push({ fault, text: b });
  }
  expect(blocks.length, out).toBe(7);
}

/** Node: the same uncaught TypeError from two scripts, and an Error whose message carries an id and a time, thrown twice. */
function nodeCorpus(): void {
  write('node/a.js', 'const cfg = undefined;\nconsole.log(cfg.port);\n');
  write('node/lib/b.js', '\n\nfunction load() {\n  const settings = undefined;\n  return settings.port;\n}\nload();\n');
  for (const f of ['node/a.js', 'node/lib/b.js']) corpus.push({ fault: 'node read port of undefined', text: run(process.execPath, [path.join(dir, f)], dir) });
  write('node/c.js', 'missingHelper(1);\n');
  write('node/lib/d.js', '\nfunction run() {\n  return missingHelper(2);\n}\nrun();\n');
  for (const f of ['node/c.js', 'node/lib/d.js']) corpus.push({ fault: 'node undefined function', text: run(process.execPath, [path.join(dir, f)], dir) });
  write('node/job.js', "const { randomUUID } = require('node:crypto');\nthrow new Error(`job ${randomUUID()} failed at ${new Date().toISOString()} after ${Math.floor(Math.random() * 1000)} ms`);\n");
  for (let i = 0; i < 2; i++) corpus.push({ fault: 'node job failed', text: run(process.execPath, [path.join(dir, 'node/job.js')], dir) });
}

/** pytest: a division by zero in two tests of two files. */
function pytestCorpus(): boolean {
  if (spawnSync('python3', ['-m', 'pytest', '--version']).status !== 0) return false;
  write('py/test_a.py', 'def test_ratio():\n    total = 0\n    assert 10 / total\n');
  write('py/sub/test_b.py', '\n\ndef test_share():\n    parts = 0\n    assert 7 / parts > 1\n');
  for (const f of ['py/test_a.py', 'py/sub/test_b.py']) corpus.push({ fault: 'pytest division by zero', text: run('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', f], dir) });
  write('py/test_c.py', 'def add(a, b):\n    return a + b\n\ndef test_two():\n    assert add(1, 1) == 3\n');
  write('py/sub/test_d.py', 'def add(a, b):\n    return a + b\n\n\ndef test_four():\n    assert add(2, 2) == 5\n');
  for (const f of ['py/test_c.py', 'py/sub/test_d.py']) corpus.push({ fault: 'pytest equality', text: run('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', f], dir) });
  return true;
}

/** npm: the same script missing in two projects; a package that does not exist, asked for twice. */
function npmCorpus(): void {
  for (const name of ['one', 'two']) {
    write(`npm-${name}/package.json`, JSON.stringify({ name: `p-${name}`, version: '1.0.0', scripts: { test: 'echo ok' } }));
    corpus.push({ fault: 'npm missing script', text: run('npm', ['run', 'build'], path.join(dir, `npm-${name}`)) });
  }
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-faults-'));
  tscCorpus();
  vitestCorpus();
  nodeCorpus();
  pytestCorpus();
  npmCorpus();
}, 240_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('one fault, one signature, on real outputs', () => {
  it('every planted fault class has one signature of its own (at least 90 % of classes; printed)', () => {
    const key = (o: Occurrence) => {
      const s = faultSignature(o.text);
      return `${s.error_type}\u0000${s.message_pattern}`;
    };
    const classes = new Map<string, Set<string>>();
    for (const o of corpus) {
      const set = classes.get(o.fault) ?? new Set<string>();
      set.add(key(o));
      classes.set(o.fault, set);
    }
    const owners = new Map<string, string[]>();
    for (const [fault, keys] of classes) for (const k of keys) owners.set(k, [...(owners.get(k) ?? []), fault]);
    const good = [...classes].filter(([fault, keys]) => keys.size === 1 && (owners.get([...keys][0] as string) ?? []).length === 1 && !fault.includes(' other: '));
    const rate = good.length / classes.size;
    const table = [...classes].map(([fault, keys]) => `${fault}: ${[...keys].map((k) => k.replace('\u0000', ' | ')).join(' ;; ')}`).join('\n');
    process.stdout.write(`fault signatures: ${good.length} of ${classes.size} classes with one signature of their own (${(rate * 100).toFixed(0)} %), ${corpus.length} occurrences\n${table}\n`);
    expect(corpus.length).toBeGreaterThanOrEqual(20);
    expect(rate, table).toBeGreaterThanOrEqual(0.9);
  });

  it('what varies is taken out; what names the fault stays', () => {
    expect(faultSignature("src/a/b.ts(21,10): error TS2305: Module '\"./services/notification.service\"' has no exported member 'sendNotice'.")).toEqual({
      tool: 'tsc',
      error_type: 'TS2305',
      message_pattern: "Module '\"notification.service\"' has no exported member 'sendNotice'.",
    });
    expect(normaliseFaultText('job 3f2b8c1e-1d2a-4c7b-9e8f-0a1b2c3d4e5f failed at 2025-12-02T12:00:00.123Z after 412 ms at 0x7ffd1234')).toBe('job ID failed at T after Nms at 0xN');
    // Different identifiers are different faults.
    expect(faultSignature("a.ts(1,1): error TS2305: Module '\"./x\"' has no exported member 'foo'.")).not.toEqual(faultSignature("a.ts(1,1): error TS2305: Module '\"./x\"' has no exported member 'bar'."));
  });
});
