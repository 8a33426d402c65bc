// Shared launcher logic of both skills (plain JavaScript: it runs before anything is compiled).
//
// A script runs from its prebuilt bundle (<skill>/dist/<script>.cjs, or .mjs for doctor; built by
// scripts/build.mjs at install, named in dist/inputs.json) when the bundle is at least as new as
// every source file it was built from; otherwise from the TypeScript source through tsx (so edits
// take effect at once, and debugging with tsx keeps working). CONTEXT_ASSEMBLER_NO_BUNDLE=1 forces
// the source. Dependencies resolve from this file's location (the bundle's or the project's
// node_modules), never from the caller's cwd.
'use strict';
// CommonJS: an ES module entry costs Node's ESM loader (about 8 ms of every start, measured).
const fs = require('node:fs');
const module_ = require('node:module');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

/** Where the runtime dependencies belong: the nearest folder above `fromDir` with a package.json. */
function dependencyRoot(fromDir) {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(fromDir, '..', '..', '..');
  }
}

/** The command that installs the dependencies in `root`. */
function installCommand(root) {
  const lock = fs.existsSync(path.join(root, 'package-lock.json'));
  const bootstrap = fs.existsSync(path.join(root, 'hooks', 'bootstrap.mjs')) ? ' (or node hooks/bootstrap.mjs)' : '';
  return `cd "${root}" && npm ${lock ? 'ci' : 'install'} --omit=dev${bootstrap}`;
}

/** The name of the package a failed import could not find, when that is why it failed. */
function missingPackage(err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  return /Cannot find (?:package|module) '([^']+)'/.exec(err.message ?? '')?.[1];
}

/**
 * The bundle of `script` (dist/<entries[script]>) when no input it was built from changed since,
 * else undefined. The paths are joined, not path.resolve()d: resolving the 50-odd inputs cost about
 * 3 ms of the start-up, their stat calls well under 1 ms (measured).
 */
function freshBundle(dist, script) {
  if (process.env.CONTEXT_ASSEMBLER_NO_BUNDLE === '1') return undefined;
  try {
    const { entries, inputs } = JSON.parse(fs.readFileSync(path.join(dist, 'inputs.json'), 'utf8'));
    if (typeof entries?.[script] !== 'string') return undefined;
    const bundle = path.join(dist, entries[script]);
    const built = fs.statSync(bundle).mtimeMs;
    const base = dist + path.sep;
    for (const rel of inputs) if (!(fs.statSync(base + rel).mtimeMs <= built)) return undefined;
    return bundle;
  } catch {
    return undefined;
  }
}

/**
 * Runs `script` of the skill in `skillDir`. When a dependency is missing, calls
 * `onMissing(packageName, installCommand)` instead of throwing (it should exit).
 */
async function launch(skillDir, script, onMissing) {
  try {
    const bundle = freshBundle(path.join(skillDir, 'dist'), script);
    if (bundle !== undefined) {
      // Node 22.1+ keeps V8's compiled code between runs (a no-op where it does not exist, as on Node 20).
      module_.enableCompileCache?.();
      if (bundle.endsWith('.cjs')) require(bundle);
      else await import(pathToFileURL(bundle).href);
      return;
    }
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(path.join(skillDir, 'scripts', `${script}.ts`)).href);
  } catch (err) {
    const name = missingPackage(err);
    if (name === undefined) throw err;
    onMissing(name, installCommand(dependencyRoot(skillDir)));
  }
}

module.exports = { dependencyRoot, installCommand, missingPackage, launch };
