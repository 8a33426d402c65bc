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
  return freshBundleIgnoringEnv(dist, script);
}

function freshBundleIgnoringEnv(dist, script) {
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

/** True when every bundle of the skill in `skillDir` is built and at least as new as its sources (the bootstrap hook asks). */
function bundlesFresh(skillDir) {
  const dist = path.join(skillDir, 'dist');
  try {
    const { entries } = JSON.parse(fs.readFileSync(path.join(dist, 'inputs.json'), 'utf8'));
    const scripts = Object.keys(entries ?? {});
    return scripts.length > 0 && scripts.every((script) => freshBundleIgnoringEnv(dist, script) !== undefined);
  } catch {
    return false;
  }
}

/**
 * Where the V8 code cache of `bundle` lives: beside it, in dist/.code-cache/, one file per bundle
 * and runtime: the name carries this Node's version and architecture and a hash of its V8 options
 * (node flags and NODE_OPTIONS: V8 refuses a cache made under other flags, and two runtimes would
 * otherwise keep replacing each other's file). Whether the file fits the bundle is checked by its
 * content (see readCodeCache), not by the name.
 */
function codeCachePath(bundle) {
  const name = path.basename(bundle);
  const options = digest(Buffer.from(`${process.execArgv.join(' ')}|${process.env.NODE_OPTIONS ?? ''}`)).toString('hex').slice(0, 8);
  return { dir: path.join(path.dirname(bundle), '.code-cache'), file: `${name}-${process.version}-${process.arch}-${options}.bin` };
}

/**
 * V8 checks a cache's version, flags and source length, not its bytes: a damaged file can crash
 * the process, and a cache of an edited bundle of the same length would run the old code. So the
 * file starts with the digest of the bundle's source it was made from and the digest of the cache
 * itself (integrity, not secrecy: whoever can write the cache can write the bundle), and a cache
 * whose digests do not match is not used. (node:crypto costs nothing extra: the bundles load it
 * anyway; hashing the 200 KB source takes under 1 ms. V8's own check, the
 * --verify-snapshot-checksum flag, would need node:v8, about 10 % of a Node start to load.)
 */
const DIGEST_BYTES = 20;
const digest = (bytes) => require('node:crypto').createHash('sha1').update(bytes).digest();

/** The cache in `file` when it was made from `sourceDigest` and is whole; otherwise undefined. */
function readCodeCache(file, sourceDigest) {
  if (file.length <= 2 * DIGEST_BYTES || !file.subarray(0, DIGEST_BYTES).equals(sourceDigest)) return undefined;
  const payload = file.subarray(2 * DIGEST_BYTES);
  return digest(payload).equals(file.subarray(DIGEST_BYTES, 2 * DIGEST_BYTES)) ? payload : undefined;
}

/**
 * A cache this much smaller than its bundle's source was written by a run that compiled little of
 * it (a fallback block, an early error): a later full run writes it again. Measured on the
 * assembler's bundle of 207 KB: 245 KB after a real assembly, 132 KB after one that stopped early.
 */
const THIN_CACHE = 0.9;

/**
 * Runs a CommonJS bundle as require() would (module wrapper, a require of its own real path),
 * with the compiled code V8 kept from an earlier run: compiling the 200 KB bundle and its functions
 * on every start cost about a tenth of an orchestrator call (measured through the launcher: 235 →
 * 208 ms, node -e 0 92 ms). The cache is written at the exit of a successful run (exit 0, not
 * --help) that had none, or whose cache did not fit or was thin, so it holds every function that
 * run compiled; where the folder cannot be written (a read-only install) the bundle simply
 * compiles each time. CONTEXT_ASSEMBLER_NO_CODE_CACHE=1 turns it off.
 */
function runWithCodeCache(bundle, trace) {
  const vm = require('node:vm');
  bundle = fs.realpathSync(bundle);
  const useCache = process.env.CONTEXT_ASSEMBLER_NO_CODE_CACHE !== '1';
  const where = useCache ? codeCachePath(bundle) : undefined;
  const bytes = fs.readFileSync(bundle);
  // What a cache file must have been made from: read against it, and written with it.
  const sourceDigest = where ? digest(bytes) : undefined;
  let cachedData;
  let unfit = false;
  if (where) {
    let file;
    try {
      file = fs.readFileSync(path.join(where.dir, where.file));
    } catch {
      // none yet (or unreadable): compile, and write one at exit
    }
    if (file !== undefined) {
      cachedData = readCodeCache(file, sourceDigest);
      unfit = cachedData === undefined;
    }
  }
  let source = bytes.toString('utf8');
  if (source.startsWith('#!')) source = `//${source.slice(2)}`; // the shebang, kept as a comment (same length, same lines)
  const script = new vm.Script(module_.wrap(source), { filename: bundle, cachedData });
  const accepted = cachedData !== undefined && !script.cachedDataRejected;
  const thin = accepted && cachedData.length < THIN_CACHE * bytes.length;
  trace(`${path.basename(bundle)} (bundle), code cache ${!where ? 'off' : thin ? 'used (thin)' : accepted ? 'used' : cachedData === undefined && !unfit ? 'absent' : 'refused'}`);
  // Written from a run that did its work: one that failed or printed help compiled little of it.
  const helpOnly = process.argv.includes('--help') || process.argv.includes('-h');
  if (where && (!accepted || thin) && !helpOnly) {
    process.once('exit', (code) => code === 0 && !launchFellBack && ranComplete() && writeCodeCache(where, script, sourceDigest, trace));
  }
  const mod = { exports: {}, filename: bundle, id: bundle, loaded: false };
  script.runInThisContext().call(mod.exports, mod.exports, module_.createRequire(bundle), mod, bundle, path.dirname(bundle));
}

/** Set when the launcher printed its own fallback (a dependency missing): that run compiled nothing worth keeping. */
let launchFellBack = false;
/**
 * Whether the script said it did its work (skills/bazinga-db/scripts/lib/runComplete.ts sets this
 * symbol): a run that printed a fallback, an error or help, or a hook that found nothing to do,
 * compiled little of the bundle, and its cache would be thin.
 */
const ranComplete = () => globalThis[Symbol.for('context-assembler.run-complete')] === true;

/** Writes the code cache (to a temporary name, then renamed: a reader never sees half a file); failures are ignored. */
function writeCodeCache(where, script, sourceDigest, trace) {
  try {
    fs.mkdirSync(where.dir, { recursive: true });
    fs.accessSync(where.dir, fs.constants.W_OK);
    // One file per bundle and runtime, replaced in place when the bundle changes: nothing piles up
    // (a cache of another Node or other flags is that runtime's, and stays).
    const payload = script.createCachedData();
    require('./writeFile.cjs').writeFileAtomically(path.join(where.dir, where.file), Buffer.concat([sourceDigest, digest(payload), payload]));
    trace(`code cache written: ${where.file}`);
  } catch (err) {
    trace(`code cache not written: ${err.message}`);
  }
}

/**
 * Writes all of `text` to `fd` (a pipe the reader drains slowly may refuse part of it for a
 * moment); false when the reader is gone (EPIPE), which is not an error of ours.
 */
function writeAll(fd, text) {
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(fs.writeSync(fd, bytes));
    } catch (err) {
      if (err.code === 'EPIPE') return false;
      if (err.code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
  return true;
}

/**
 * The stdin a launcher read before it ran its script in-process (a warm assembler did not take the
 * request): the script's readPipedStdin takes it from here (the pipe is drained): {text, bytes}, or
 * {failed: true} when reading failed part way.
 */
const HANDED_STDIN = Symbol.for('context-assembler.stdin');
/**
 * What the launcher found of a warm assembler for this build: 'present' (its process lives),
 * 'absent' (none, or a dead one's socket: one may be started), 'impossible' (no server can run
 * here: Windows, no folder only this user can enter, a socket path too long; SERVER_WHY says why);
 * unset when it did not look.
 */
const SERVER_SEEN = Symbol.for('context-assembler.server');
const SERVER_WHY = Symbol.for('context-assembler.server-why');
/**
 * Set when the warm assembler took this call's request and gave no usable answer, and the script
 * runs here after all: {key, supersedes: true}, the request's key, under which the server may have
 * recorded a delivery that this run's record takes the place of (the scripts read it).
 */
const DELIVERY = Symbol.for('context-assembler.delivery');

/**
 * A key for one request, of the caller's making: unique among the calls of a project (time, pid
 * and randomness; it names a request, it guards nothing).
 */
function requestKey() {
  return `${Date.now().toString(36)}-${process.pid.toString(36)}-${process.hrtime.bigint().toString(36).slice(-6)}-${Math.random().toString(36).slice(2, 12)}`;
}

/** The cap of a piped document (as STDIN_MAX_BYTES in the scripts' stdio.ts). */
const STDIN_MAX_BYTES = 16_777_216;

/**
 * All of stdin, when it is a pipe, a socket or a regular file within `maxBytes` (at most
 * `maxBytes` + 1 bytes are read, to tell it held more): {text, bytes}, {failed: true} when a read
 * failed part way; undefined when it is left to the script (a terminal, a character device, a
 * regular file over the cap: the script refuses those with their own messages).
 */
function readAllStdin(maxBytes) {
  let st;
  try {
    st = fs.fstatSync(0);
  } catch {
    return undefined;
  }
  if (process.stdin.isTTY || !(st.isFIFO() || st.isSocket() || (st.isFile() && st.size <= maxBytes))) return undefined;
  const chunks = [];
  let total = 0;
  const buffer = Buffer.alloc(65536);
  while (total <= maxBytes) {
    let n;
    try {
      n = fs.readSync(0, buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
    } catch (err) {
      if (err.code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (err.code === 'EOF') break;
      return { failed: true };
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
    total += n;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), bytes: total };
}

/**
 * Runs `script` of the skill in `skillDir`. When a dependency is missing, calls
 * `onMissing(packageName, installCommand)` instead of throwing (it should exit). With `warm`
 * ({stdin?}), the warm assembler (warmServer.cjs, the server of the assemble bundle) runs the
 * script when one runs for this build (CONTEXT_ASSEMBLER_NO_SERVER=1 or --help: never); with
 * `stdin` the launcher reads stdin first and sends it along (handed to the script when it runs here
 * after all). Each request carries a key of the launcher's making. When the server took the request
 * and gave no usable answer in time (hung: it is stopped; died; failed part way), the script runs
 * here after all, told the key (DELIVERY): its record of the delivery takes the place of whatever
 * the server recorded, so the spawn gets a block and the delivery is recorded once.
 */
async function launch(skillDir, script, options, onMissing) {
  if (typeof options === 'function') [options, onMissing] = [{}, options];
  // CONTEXT_ASSEMBLER_LAUNCH_TRACE=1: which file runs, and how, on stderr.
  const trace = process.env.CONTEXT_ASSEMBLER_LAUNCH_TRACE === '1' ? (m) => process.stderr.write(`launch: ${m}\n`) : () => {};
  try {
    const dist = path.join(skillDir, 'dist');
    const bundle = freshBundle(dist, script);
    const args = process.argv.slice(2);
    const asks = bundle !== undefined && options.warm && process.env.CONTEXT_ASSEMBLER_NO_SERVER !== '1' && !args.some((a) => a === '--help' || a === '-h');
    const serverBundle = !asks ? undefined : script === 'assemble' ? bundle : freshBundle(dist, 'assemble');
    if (serverBundle !== undefined) {
      const warm = require('./warmServer.cjs');
      const request = { script, argv: args, cwd: process.cwd(), env: process.env, key: requestKey() };
      let sendable = true;
      if (options.warm.stdin) {
        const read = readAllStdin(STDIN_MAX_BYTES);
        if (read !== undefined) globalThis[HANDED_STDIN] = read;
        // What the script would refuse (over the cap, unreadable) it refuses itself, in this process.
        sendable = read === undefined ? process.stdin.isTTY === true : !read.failed && read.bytes <= STDIN_MAX_BYTES;
        if (sendable) request.stdin = read?.text ?? '';
      }
      const answer = sendable ? await warm.askServer(serverBundle, request) : undefined;
      if (answer?.unanswered !== undefined) {
        trace(`the warm assembler took the call and gave no answer: ${answer.unanswered}`);
        process.stderr.write(`⚠ context-assembler: the warm assembler gave no answer (${answer.unanswered}); the call runs in its own process\n`);
        globalThis[DELIVERY] = { key: request.key, supersedes: true };
      } else if (answer !== undefined) {
        trace(`${path.basename(bundle)} answered by the warm assembler`);
        // In the order a call of its own writes them: warnings as they arise, then the output.
        writeAll(2, answer.stderr);
        writeAll(1, answer.stdout);
        process.exitCode = answer.code;
        return;
      }
      // The script runs here after all: whether it may start a server (the prompt hook does), or
      // must say that none can run.
      const status = warm.serverStatus(serverBundle);
      globalThis[SERVER_SEEN] = status.state;
      if (status.why !== undefined) globalThis[SERVER_WHY] = status.why;
    }
    if (bundle !== undefined) {
      if (bundle.endsWith('.cjs')) runWithCodeCache(bundle, trace);
      else {
        trace(`${path.basename(bundle)} (bundle, ES module)`);
        // Node 22.1+ keeps V8's compiled code of ES modules between runs (absent on Node 20).
        module_.enableCompileCache?.();
        await import(pathToFileURL(bundle).href);
      }
      return;
    }
    const source = path.join(skillDir, 'scripts', `${script}.ts`);
    trace(`${path.relative(skillDir, source)} (source through tsx: ${process.env.CONTEXT_ASSEMBLER_NO_BUNDLE === '1' ? 'CONTEXT_ASSEMBLER_NO_BUNDLE=1' : 'no bundle, or a source newer than it'})`);
    const { register } = await import('tsx/esm/api');
    register();
    await import(pathToFileURL(source).href);
  } catch (err) {
    const name = missingPackage(err);
    if (name === undefined) throw err;
    launchFellBack = true;
    onMissing(name, installCommand(dependencyRoot(skillDir)));
  }
}

module.exports = { bundlesFresh, dependencyRoot, installCommand, missingPackage, launch };
