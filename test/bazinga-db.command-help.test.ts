/**
 * `bazinga-db <command> --help` (or -h, anywhere after the command): that command's usage on
 * stdout, exit 0, and nothing run: no database opened or created. Every command, in process, on an
 * empty project.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../skills/bazinga-db/scripts/lib/commands/index.ts';
import { makeProject, type Project } from './helpers.ts';
import { bazingaDbInProcess } from './inProcess.ts';

describe('bazinga-db <command> --help', () => {
  let p: Project;
  beforeAll(() => {
    p = makeProject('ca-command-help-');
  });
  afterAll(() => p.cleanup());

  it.each(COMMANDS.map((c) => ({ name: c.name, synopsis: c.synopsis })))('$name --help prints its usage and runs nothing', ({ name, synopsis }) => {
    for (const args of [[name, '--help'], [name, 'some-argument', '-h']]) {
      const r = bazingaDbInProcess(p, args);
      expect(r.code, r.err).toBe(0);
      expect(r.out.split('\n')[0]).toBe(`Usage: bazinga-db [global flags] ${synopsis}`);
      expect(fs.existsSync(p.dbPath)).toBe(false);
    }
  });
});
