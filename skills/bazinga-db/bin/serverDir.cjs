// Where the warm assembler lives, and whether a process is it (plain JavaScript: the launcher
// uses it before anything is compiled; see warmServer.cjs).
//
// The folder of a user's servers is the first of these that is usable:
//   1. $XDG_RUNTIME_DIR/context-assembler/ where XDG_RUNTIME_DIR is an absolute path (a folder the
//      system makes for the user alone), else <tmpdir>/context-assembler-<uid>/;
//   2. $XDG_CACHE_HOME/context-assembler/run/ where XDG_CACHE_HOME is an absolute path, else
//      <home>/.cache/context-assembler/run/ (inside the user's home: nobody else can make it first).
// Usable means: a real folder (lstat: not a symbolic link) owned by this user with no permission
// for group or others, or not there yet and makeable (serve makes it, mode 0700). A first choice
// that is there and is not usable (another user's, a link, open to others, a file) is passed over,
// so nobody can keep the server from starting by making that folder first. Caller and server apply
// the same rule to the same folders, so they meet in the same one.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The folders the servers may live in, first choice first. */
function serverDirCandidates() {
  const runtime = process.env.XDG_RUNTIME_DIR;
  const first = runtime && path.isAbsolute(runtime) ? path.join(runtime, 'context-assembler') : path.join(os.tmpdir(), `context-assembler-${process.getuid()}`);
  const cache = process.env.XDG_CACHE_HOME;
  let home;
  try {
    home = os.homedir();
  } catch {
    home = undefined; // no home directory for this user: only the first choice
  }
  const second = cache && path.isAbsolute(cache) ? path.join(cache, 'context-assembler', 'run') : home ? path.join(home, '.cache', 'context-assembler', 'run') : undefined;
  return second === undefined ? [first] : [first, second];
}

/** Whether `dir` is this user's own real folder that no one else can enter (a socket is only trusted there). */
function privateDir(dir) {
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** Whether `dir` is not there and could be made: its nearest existing parent is a folder this user may write. */
function makeable(dir) {
  for (let at = dir; ; at = path.dirname(at)) {
    let st;
    try {
      st = fs.statSync(at);
    } catch (err) {
      if (err.code !== 'ENOENT' || path.dirname(at) === at) return false;
      continue;
    }
    if (at === dir || !st.isDirectory()) return false;
    try {
      fs.accessSync(at, fs.constants.W_OK | fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * The folder of this user's servers by the rule above, or {why} when no candidate is usable (each
 * named with what is wrong with it). Reads only.
 */
function chooseServerDir() {
  const refused = [];
  for (const dir of serverDirCandidates()) {
    if (privateDir(dir) || makeable(dir)) return { dir };
    refused.push(`${dir} ${describeUnusable(dir)}`);
  }
  return { why: `no folder for its socket: ${refused.join('; ')}` };
}

/** What is wrong with a candidate folder that is not usable. */
function describeUnusable(dir) {
  let st;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return 'cannot be made';
  }
  if (st.isSymbolicLink()) return 'is a symbolic link';
  if (!st.isDirectory()) return 'is not a folder';
  if (st.uid !== process.getuid()) return `belongs to another user (uid ${st.uid})`;
  return `is open to others (mode ${(st.mode & 0o777).toString(8)})`;
}

/**
 * Makes (mode 0700) and returns the folder of this user's servers by the rule above, or {why}: the
 * server's side of chooseServerDir. A candidate made meanwhile by someone else is checked like any
 * other (mkdir does not fail on a folder that is there; lstat then decides).
 */
function makeServerDir() {
  const refused = [];
  for (const dir of serverDirCandidates()) {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch {
      // checked below: not made, or something else is there
    }
    if (privateDir(dir)) return { dir };
    refused.push(`${dir} ${describeUnusable(dir)}`);
  }
  return { why: `no folder for its socket: ${refused.join('; ')}` };
}

/** The command line of process `pid`, its arguments joined by spaces (Linux: /proc; elsewhere ps), or undefined. */
function commandLineOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '').join(' ');
  } catch {
    if (process.platform === 'linux') return undefined;
  }
  const r = require('node:child_process').spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8', timeout: 1_000 });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

/** Whether process `pid` belongs to this user (Linux: the owner of /proc/<pid>; elsewhere ps), or undefined when that cannot be told. */
function ownedByMe(pid) {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  try {
    return fs.statSync(`/proc/${pid}`).uid === uid;
  } catch {
    if (process.platform === 'linux') return false;
  }
  const r = require('node:child_process').spawnSync('ps', ['-o', 'uid=', '-p', String(pid)], { encoding: 'utf8', timeout: 1_000 });
  return r.status === 0 && r.stdout.trim() !== '' ? Number(r.stdout.trim()) === uid : undefined;
}

/**
 * Whether `pid` runs a launcher's `serve` (its command line holds the launcher, context-assembler.cjs,
 * .mjs or the package's bin link `context-assembler`, followed by the argument `serve`) as this user: a pid file is trusted, and a process stopped, only for such a
 * process. A pid that a live unrelated process took over after the server died is not, nor another
 * user's process whatever its command line says.
 */
function isServer(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (ownedByMe(pid) === false) return false;
  const line = commandLineOf(pid);
  return line !== undefined && /(?:^|[\s/])context-assembler(?:\.[cm]js)? serve(?: |$)/.test(line);
}

/** Whether process `pid` is stopped (SIGSTOP, a debugger): it will not answer until someone resumes it. */
function isStopped(pid) {
  let state;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    if (process.platform === 'linux') return false;
    const r = require('node:child_process').spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8', timeout: 1_000 });
    state = r.status === 0 ? r.stdout.trim().slice(0, 1) : '';
  }
  return state === 'T' || state === 't';
}

module.exports = { chooseServerDir, isServer, isStopped, makeServerDir, privateDir, serverDirCandidates };
