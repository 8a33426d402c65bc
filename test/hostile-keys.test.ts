/**
 * JSON given by a caller with keys that name Object's own properties (`__proto__`, `constructor`,
 * `toString`): a memory's content is a VALIDATION error naming the field (was: DB_ERROR "Cannot
 * read properties of undefined"), a config reports the key as unknown and ignores it (was: a type
 * error for `constructor`, and `__proto__` could become the merged config's prototype).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../skills/context-assembler/scripts/lib/config.ts';
import { copyFixture, type Project } from './helpers.ts';
import { runBazingaDbInProcess } from './inProcess.ts';

let project: Project | undefined;
afterEach(() => project?.cleanup());

describe('save-memory --content with keys of Object', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('%s: VALIDATION naming the field, nothing stored', (key) => {
    project = copyFixture('ca-hostile-');
    const content = `{"${key}": {"lesson": "x"}, "lesson": "keep the fixture small"}`;
    const r = runBazingaDbInProcess(['--quiet', '--db', project.dbPath, '--project-root', project.root, 'save-memory', 'proj', 'learning', 'A lesson', '--content', content]);
    expect(r.code).toBe(1);
    expect(r.error).toEqual({
      success: false,
      code: 'VALIDATION',
      error: `content.${key} is not a learning field; the learning fields are: lesson, context, applicability, evidence`,
    });
    const listed = runBazingaDbInProcess(['--quiet', '--db', project.dbPath, '--project-root', project.root, 'get-memory', 'proj']);
    expect(JSON.stringify(listed.json ?? {})).not.toContain('keep the fixture small');
  });
});

describe('a config with keys of Object', () => {
  it.each(['__proto__', 'constructor', 'toString'])('%s: reported as unknown and ignored; the config is the defaults', (key) => {
    const warnings: string[] = [];
    // Written as text: an object literal would not hold an own __proto__ key.
    const config = parseConfig(`{"context_engineering": {"${key}": {"enable_fts5": false, "ranking": 1}}}`, 'c.json', (m) => warnings.push(m));
    expect(warnings).toEqual([`c.json: unknown key context_engineering.${key} (ignored)`]);
    expect(config.enable_fts5).toBe(true);
    expect(Object.getPrototypeOf(config)).toBe(Object.prototype);
    expect(config.ranking).toEqual(DEFAULT_CONFIG.ranking);
  });
});
