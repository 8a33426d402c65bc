#!/usr/bin/env node
// Launcher for the bazinga-db CLI that works from any working directory: it loads tsx from the
// bundle's own node_modules (resolved relative to this file, not the caller's cwd) and runs
// ../scripts/bazinga-db.ts with the caller's arguments.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A dependency that does not resolve: the CLI's JSON error line on stderr (with the fix), exit 1. */
function missingDependency(err) {
  const bin = path.dirname(fileURLToPath(import.meta.url));
  // .claude/skills/ of an installed project (its runtime package.json), else the bundle root.
  const candidates = [path.resolve(bin, '..', '..'), path.resolve(bin, '..', '..', '..')];
  const root = candidates.find((dir) => fs.existsSync(path.join(dir, 'package.json'))) ?? candidates[1];
  const lock = fs.existsSync(path.join(root, 'package-lock.json'));
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(err.message ?? '')?.[1] ?? err.code ?? 'unknown';
  const error = `dependencies are missing (${missing}); install them: cd "${root}" && npm ${lock ? 'ci' : 'install'} --omit=dev`;
  process.stderr.write(JSON.stringify({ success: false, error, code: 'DB_ERROR' }) + '\n');
  process.exit(1);
}

const isMissingPackage = (err) => err?.code === 'ERR_MODULE_NOT_FOUND' && /Cannot find package/.test(err.message ?? '');

let tsx;
try {
  tsx = await import('tsx/esm/api');
} catch (err) {
  missingDependency(err);
}
tsx.register();
try {
  await import('../scripts/bazinga-db.ts');
} catch (err) {
  if (!isMissingPackage(err)) throw err;
  missingDependency(err);
}
