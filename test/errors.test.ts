/**
 * One error type for both skills: every declared code is documented once (references/errors.md),
 * each skill's SKILL.md error table names the codes that skill emits, and printError prints the
 * one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturingIo } from './inProcess.ts';
import { BazingaError, ERROR_CODES, invalid, printError, usage } from '../skills/bazinga-db/scripts/lib/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');

/** The rows of the code table in references/errors.md: code → [bazinga-db exit, context-assembler]. */
function documentedCodes(): Map<string, { db: string; assembler: string }> {
  const rows = new Map<string, { db: string; assembler: string }>();
  for (const line of read('references/errors.md').split('\n')) {
    const m = /^\| `([A-Z_]+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \|$/.exec(line);
    if (m) rows.set(m[1] as string, { db: (m[2] as string).trim(), assembler: (m[3] as string).trim() });
  }
  return rows;
}

describe('error codes', () => {
  it('references/errors.md documents exactly the declared codes', () => {
    expect([...documentedCodes().keys()].sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each([
    ['skills/bazinga-db/SKILL.md', 'db'],
    ['skills/context-assembler/SKILL.md', 'assembler'],
  ] as const)('%s names every code its skill emits', (file, side) => {
    const text = read(file);
    const emitted = [...documentedCodes()].filter(([, v]) => v[side] !== '—').map(([code]) => code);
    expect(emitted.length).toBeGreaterThan(3);
    expect(emitted.filter((code) => !text.includes(`\`${code}\``))).toEqual([]);
  });
});

describe('printError', () => {
  it('prints one compact JSON line with the code and extra keys, and returns the exit code', () => {
    const lines: string[] = [];
    const exit = printError((l) => lines.push(l), new BazingaError('VALIDATION', 'status must be one of a, b', { valid_statuses: ['a', 'b'] }));
    expect(exit).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0] as string)).toEqual({ success: false, error: 'status must be one of a, b', code: 'VALIDATION', valid_statuses: ['a', 'b'] });
  });

  it('USAGE exits 2; a caller may fix the exit (the assembler exits 2 on any bad flag)', () => {
    expect(printError(() => {}, usage('no command'))).toBe(2);
    expect(printError(() => {}, invalid('--limit must be between 1 and 50 (got 0)'), { exit: 2 })).toBe(2);
  });

  it('maps an error that is not a BazingaError: SQLite busy → BUSY, anything else → DB_ERROR', () => {
    const out: string[] = [];
    printError((l) => out.push(l), Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    printError((l) => out.push(l), new Error('disk I/O error'));
    expect(out.map((l) => JSON.parse(l).code)).toEqual(['BUSY', 'DB_ERROR']);
  });

  it('lets the caller rewrite the object first (redaction)', () => {
    const out: string[] = [];
    printError((l) => out.push(l), invalid('bad token ghp_x'), { present: (j) => ({ ...j, error: '[redacted]' }) });
    expect(JSON.parse(out[0] as string).error).toBe('[redacted]');
  });
});

describe('the shells report through the one error line', () => {
  const io = (argv: string[], cwd: string) => capturingIo(argv, { cwd, now: '2026-01-01T00:00:00Z' });

  it('fetch without a project root: NO_PROJECT_ROOT, exit 1 (not DB_ERROR)', async () => {
    const { runFetch } = await import('../skills/context-assembler/scripts/lib/fetchArtifact.ts');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-noroot-'));
    try {
      const r = io(['3'], dir);
      expect(runFetch(r.io)).toBe(1);
      expect(JSON.parse(r.err().trim().split('\n').pop() as string)).toMatchObject({ success: false, code: 'NO_PROJECT_ROOT' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fetch with a bad id: VALIDATION naming the field and the value, exit 2', async () => {
    const { runFetch } = await import('../skills/context-assembler/scripts/lib/fetchArtifact.ts');
    const r = io(['x1'], os.tmpdir());
    expect(runFetch(r.io)).toBe(2);
    expect(JSON.parse(r.err())).toEqual({ success: false, error: "package_id must be an integer, got 'x1'", code: 'VALIDATION' });
  });
});
