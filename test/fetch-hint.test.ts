/**
 * The block's `### Left out` names the command that prints a package it left out, and that command,
 * run as an agent runs it (a shell in the project, nothing added), prints the package: real
 * processes through the launcher, on a copy of the v19 fixture.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, S1, envWithoutRootHints, type Project } from './helpers.ts';
import { copyIndexedFixture } from './inProcess.ts';

const LAUNCHER = path.join(REPO_ROOT, 'skills', 'context-assembler', 'bin', 'context-assembler.cjs');

describe('the fetch hint of a block', () => {
  let p: Project;
  beforeAll(() => {
    p = copyIndexedFixture('ca-fetch-hint-');
  });
  afterAll(() => p.cleanup());

  it('names a command an agent can run, and that command prints the package left out', () => {
    const env = { ...envWithoutRootHints(), CLAUDE_PROJECT_DIR: p.root };
    const block = spawnSync(process.execPath, [LAUNCHER, '--session', S1, '--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--limit', '1', '--dry-run'], {
      cwd: p.root,
      env,
      encoding: 'utf8',
    });
    expect(block.status, block.stderr).toBe(0);
    const hint = /`([^`]+ fetch (\d+))` prints package (\d+)/.exec(block.stdout);
    expect(hint, block.stdout).not.toBeNull();
    const [, command, id, named] = hint as RegExpExecArray;
    expect(id).toBe(named);
    // The package left out, named among the most relevant left out.
    expect(block.stdout).toMatch(new RegExp(`Most relevant left out: [^\\n]*package ${id}\\b`));
    const run = spawnSync('/bin/sh', ['-c', command as string], { cwd: p.root, env, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const artifact = spawnSync(process.execPath, [path.join(REPO_ROOT, 'skills', 'bazinga-db', 'bin', 'bazinga-db.cjs'), '--quiet', 'query', 'SELECT file_path FROM context_packages WHERE id = ?', '--param', id as string], {
      cwd: p.root,
      env,
      encoding: 'utf8',
    });
    const file = (JSON.parse(artifact.stdout) as { file_path: string }[])[0]?.file_path as string;
    const firstLine = fs.readFileSync(path.join(p.root, file), 'utf8').split('\n').find((l) => l.trim() !== '') as string;
    expect(run.stdout).toContain(firstLine.trim());
  });
});
