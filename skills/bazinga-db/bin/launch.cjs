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
 * Where the V8 code cache of `bundle` lives: beside it, named after what the cache is only valid
 * for (the bundle's size and mtime, this Node's version and architecture), so a rebuilt bundle or
 * another Node never reads a cache that is not its own. V8 checks its own version and flags too,
 * but of the source only the length: the name is what keeps an edited bundle from running old code.
 */
function codeCachePath(bundle) {
  const { size, mtimeMs } = fs.statSync(bundle);
  const key = `${size}-${Math.round(mtimeMs)}-${process.version}-${process.arch}`;
  const name = path.basename(bundle);
  return { dir: path.join(path.dirname(bundle), '.code-cache'), prefix: `${name}-`, file: `${name}-${key}.bin` };
}

/**
 * Runs a CommonJS bundle as require() would (module wrapper, a require of its own path), with the
 * compiled code V8 kept from an earlier run: the bundle is about 200 KB, and compiling it and its
 * functions on every start cost about 8 ms of a call (measured: 227.8 → 219.6 ms, node -e 0
 * 110 ms). The cache is written once, at the exit of the first successful run (exit 0, not --help)
 * that had none (or whose cache V8 refused), so it holds every function that run compiled, which
 * is most of what the next runs need; where the folder cannot be written
 * (a read-only install) the bundle simply compiles each time. CONTEXT_ASSEMBLER_NO_CODE_CACHE=1
 * turns it off; CONTEXT_ASSEMBLER_LAUNCH_TRACE=1 says on stderr what was run and how.
 */
function runWithCodeCache(bundle) {
  const vm = require('node:vm');
  const trace = process.env.CONTEXT_ASSEMBLER_LAUNCH_TRACE === '1' ? (m) => process.stderr.write(`launch: ${m}\n`) : () => {};
  const useCache = process.env.CONTEXT_ASSEMBLER_NO_CODE_CACHE !== '1';
  const where = useCache ? codeCachePath(bundle) : undefined;
  let cachedData;
  let damaged = false;
  if (where) {
    try {
      cachedData = checkedPayload(fs.readFileSync(path.join(where.dir, where.file)));
      damaged = cachedData === undefined;
    } catch {
      // none yet (or unreadable): compile, and write one at exit
    }
  }
  let source = fs.readFileSync(bundle, 'utf8');
  if (source.startsWith('#!')) source = `//${source.slice(2)}`; // the shebang, kept as a comment (same length, same lines)
  const script = new vm.Script(module_.wrap(source), { filename: bundle, cachedData });
  const accepted = cachedData !== undefined && !script.cachedDataRejected;
  trace(`${path.basename(bundle)} (bundle), code cache ${!where ? 'off' : accepted ? 'used' : cachedData === undefined && !damaged ? 'absent' : 'refused'}`);
  // Written from a run that did its work: one that failed early or printed help compiled little of it.
  const helpOnly = process.argv.includes('--help') || process.argv.includes('-h');
  if (where && !accepted && !helpOnly) process.once('exit', (code) => code === 0 && writeCodeCache(where, script, trace));
  const mod = { exports: {}, filename: bundle, id: bundle, loaded: false };
  script.runInThisContext().call(mod.exports, mod.exports, module_.createRequire(bundle), mod, bundle, path.dirname(bundle));
}

/**
 * V8 checks a cache's version, flags and source length, not its bytes: a damaged file can crash
 * the process. So the file starts with a digest of the cache (integrity, not secrecy: whoever can
 * write the cache can write the bundle), and a cache whose digest does not match is not used.
 * (node:crypto costs nothing extra: the bundles load it anyway. V8's own check, the
 * --verify-snapshot-checksum flag, would need node:v8, about 10 % of a Node start to load.)
 */
const DIGEST_BYTES = 20;
const digest = (payload) => require('node:crypto').createHash('sha1').update(payload).digest();

/** The cache in a file the launcher wrote, or undefined when its digest does not match. */
function checkedPayload(file) {
  if (file.length <= DIGEST_BYTES) return undefined;
  const payload = file.subarray(DIGEST_BYTES);
  return digest(payload).equals(file.subarray(0, DIGEST_BYTES)) ? payload : undefined;
}

/** Writes the code cache (to a temporary name, then renamed: a reader never sees half a file); failures are ignored. */
function writeCodeCache(where, script, trace) {
  try {
    fs.mkdirSync(where.dir, { recursive: true });
    // The caches of earlier builds of this bundle are of no further use.
    for (const old of fs.readdirSync(where.dir)) if (old.startsWith(where.prefix) && old !== where.file) fs.rmSync(path.join(where.dir, old), { force: true });
    const tmp = path.join(where.dir, `${where.file}.${process.pid}.tmp`);
    const payload = script.createCachedData();
    fs.writeFileSync(tmp, Buffer.concat([digest(payload), payload]));
    fs.renameSync(tmp, path.join(where.dir, where.file));
    trace(`code cache written: ${where.file}`);
  } catch (err) {
    trace(`code cache not written: ${err.message}`);
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
      if (bundle.endsWith('.cjs')) runWithCodeCache(bundle);
      else {
        // Node 22.1+ keeps V8's compiled code of ES modules between runs (absent on Node 20).
        module_.enableCompileCache?.();
        await import(pathToFileURL(bundle).href);
      }
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
