/**
 * npm run demo: works on a temporary copy of the bundled v19 fixture (a database made by the
 * original BAZINGA tool) and shows what the bazinga-db layer answers for it. The bundled
 * fixture itself is never modified.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fixture = path.join(repo, 'test', 'fixtures', 'bazinga-v19');
const launcher = path.join(repo, 'skills', 'bazinga-db', 'bin', 'bazinga-db.mjs');
const S1 = 'bazinga_20251201_090000';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'context-assembler-demo-'));
fs.cpSync(fixture, root, { recursive: true });
fs.mkdirSync(path.join(root, '.claude'), { recursive: true });

function show(title: string, args: string[]): void {
  const r = spawnSync(process.execPath, [launcher, '--quiet', '--project-root', root, ...args], { encoding: 'utf8' });
  console.log(`\n## ${title}\n$ bazinga-db ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  console.log(r.status === 0 ? r.stdout.trimEnd() : `exit ${r.status}: ${r.stderr.trim()}`);
}

try {
  console.log(`Demo project: a temporary copy of the v19 fixture at ${root}`);
  show('Packages a developer retry (iteration 2) of group AUTH may see', [
    'get-context-packages', S1, 'AUTH', 'developer', '10', '--iteration', '2', '--with-total',
  ]);
  show('Reasoning left in group AUTH', ['get-reasoning', S1, '--group_id', 'AUTH', '--limit', '3']);
  show('Known error patterns of project acme-shop (confidence >= 0.7)', ['get-error-patterns', 'acme-shop']);
  show('Strategies for react-native', ['get-strategies', 'acme-shop', '--framework', 'react-native', '--limit', '3']);
  show('A QA handoff package whose summary carries a secret (redacted at ingest)', [
    'save-context-package', S1, 'CART', 'handoff', `bazinga/artifacts/${S1}/handoff_CART.md`, 'developer',
    '["qa_expert","tech_lead"]', 'high', 'Cart sync ready for QA; staging token=abcdefghijklmnopqrstuvwxyz012345',
  ]);
  show('Marking it consumed by qa_expert at iteration 1', ['mark-context-consumed', '8', 'qa_expert', '1']);
  show('Integrity of the copy afterwards', ['integrity-check']);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
console.log('\nDone: the temporary copy was removed; the bundled fixture is unchanged.');
