/**
 * npm run demo: assembles, on a temporary copy of the bundled v19 fixture (a database made by the
 * original BAZINGA tool), the context block each agent type would get for group AUTH of session
 * bazinga_20251201_090000, with a fixed --now so the output is the same on every run. The bundled
 * fixture is never modified.
 *
 * Usage: npm run demo (tsx scripts/demo.ts [--help])
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(repo, 'test', 'fixtures', 'bazinga-v19');
const assembler = path.join(repo, 'skills', 'context-assembler', 'bin', 'context-assembler.mjs');
const SESSION = 'bazinga_20251201_090000';
const NOW = '2025-12-02T12:00:00Z';

const HELP = `demo: the context block each agent type gets, on a temporary copy of the bundled v19 fixture
(group AUTH of session ${SESSION}, clock fixed at ${NOW}); the fixture is never modified.

Usage: npm run demo     (tsx scripts/demo.ts [--help])
`;
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  fs.writeSync(1, HELP);
  process.exit(0);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'context-assembler-demo-'));
fs.cpSync(fixture, root, { recursive: true });
fs.mkdirSync(path.join(root, '.claude'), { recursive: true });

function assemble(title: string, flags: string[]): void {
  const args = ['--session', SESSION, '--now', NOW, ...flags];
  const r = spawnSync(process.execPath, [assembler, '--project-root', root, ...args], { encoding: 'utf8' });
  console.log(`\n════ ${title}\n$ context-assembler ${args.join(' ')}\n`);
  process.stdout.write(r.stdout);
  if (r.status !== 0 || r.stderr.trim()) console.log(`(exit ${r.status}) ${r.stderr.trim()}`);
}

try {
  console.log(`Demo: a temporary copy of the v19 fixture at ${root}; clock fixed at ${NOW}.`);
  console.log('Each block is what the orchestrator pastes into the spawn prompt of that agent.');
  assemble('Developer retry (iteration 1) in group AUTH', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '1', '--dry-run']);
  assemble('Senior software engineer escalation', ['--group', 'AUTH', '--agent', 'senior_software_engineer', '--iteration', '1', '--dry-run']);
  assemble('QA expert handoff', ['--group', 'AUTH', '--agent', 'qa_expert', '--iteration', '1', '--dry-run']);
  assemble('Tech lead review', ['--group', 'AUTH', '--agent', 'tech_lead', '--iteration', '1', '--dry-run']);
  assemble('Investigator', ['--group', 'AUTH', '--agent', 'investigator', '--iteration', '1', '--dry-run']);
  assemble('Requirements engineer, session-wide', ['--agent', 'requirements_engineer', '--dry-run']);
  assemble('QA expert in group CART with the window 80 % full (Conservative zone)', [
    '--group', 'CART', '--agent', 'qa_expert', '--current-tokens', '136000', '--dry-run',
  ]);
  assemble('Developer, iteration 2, recorded: the packages are marked consumed', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2']);
  assemble('The same developer call again: iteration 2 already has them', ['--group', 'AUTH', '--agent', 'developer', '--iteration', '2', '--dry-run']);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
console.log('\nDone: the temporary copy was removed; the bundled fixture is unchanged.');
