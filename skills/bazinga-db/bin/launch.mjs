// Shared launcher logic of both skills (plain JavaScript: it runs before anything is compiled).
//
// A script runs from its prebuilt bundle (<skill>/dist/<script>.mjs, built by scripts/build.mjs at
// install) when the bundle is at least as new as every source file it was built from; otherwise
// from the TypeScript source through tsx (so edits take effect at once, and debugging with tsx
// keeps working). CONTEXT_ASSEMBLER_NO_BUNDLE=1 forces the source. Dependencies resolve from this
// file's location (the bundle's or the project's node_modules), never from the caller's cwd.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where the runtime dependencies belong: the nearest folder above `fromDir` with a package.json. */
export function dependencyRoot(fromDir) {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(fromDir, '..', '..', '..');
  }
}

/** The command that installs the dependencies in `root`. */
export function installCommand(root) {
  const lock = fs.existsSync(path.join(root, 'package-lock.json'));
  const bootstrap = fs.existsSync(path.join(root, 'hooks', 'bootstrap.mjs')) ? ' (or node hooks/bootstrap.mjs)' : '';
  return `cd "${root}" && npm ${lock ? 'ci' : 'install'} --omit=dev${bootstrap}`;
}

/** The name of the package a failed import could not find, when that is why it failed. */
export function missingPackage(err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' && err?.code !== 'MODULE_NOT_FOUND') return undefined;
  return /Cannot find (?:package|module) '([^']+)'/.exec(err.message ?? '')?.[1];
}

/** True when dist/<script>.mjs exists and no input it was built from changed since. */
function bundleIsFresh(bundle, inputsFile) {
  if (process.env.CONTEXT_ASSEMBLER_NO_BUNDLE === '1') return false;
  let built;
  try {
    built = fs.statSync(bundle).mtimeMs;
    const { inputs } = JSON.parse(fs.readFileSync(inputsFile, 'utf8'));
    const base = path.dirname(inputsFile);
    return inputs.every((rel) => fs.statSync(path.resolve(base, rel)).mtimeMs <= built);
  } catch {
    return false;
  }
}

/**
 * Runs `script` of the skill in `skillDir`. When a dependency is missing, calls
 * `onMissing(packageName, installCommand)` instead of throwing (it should exit).
 */
export async function launch(skillDir, script, onMissing) {
  const dist = path.join(skillDir, 'dist');
  const bundle = path.join(dist, `${script}.mjs`);
  try {
    if (bundleIsFresh(bundle, path.join(dist, 'inputs.json'))) {
      await import(pathToFileURL(bundle).href);
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
