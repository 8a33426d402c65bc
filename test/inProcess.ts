/** bazinga-db run in the test's own process (no Node start per call), on a project's database. */
import { runCli } from '../skills/bazinga-db/scripts/lib/cli.ts';
import type { Project } from './helpers.ts';

export function bazingaDbInProcess(project: Project, args: readonly string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const code = runCli(['--quiet', '--db', project.dbPath, '--project-root', project.root, ...args], {
    cwd: project.root,
    env: {},
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  return { code, out, err };
}
