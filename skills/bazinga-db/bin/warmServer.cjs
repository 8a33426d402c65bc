// The warm assembler (plain JavaScript: the launcher uses it before anything is compiled).
//
// `context-assembler serve` keeps one process with the assembler loaded, per user and per build of
// its bundles, listening on a Unix socket in a folder only that user can enter (serverDir.cjs: the
// rule that picks it, so that no other user can make it first); the socket's name is made from the
// bundle's and the protocol files' path, size and time and the Node runtime, so another build is
// another socket. The orchestrator's call, and the prompt hook of today's BAZINGA flow (its event
// sent along), then cost a Node start and one round trip.
//
// The exchange: the server greets every connection it accepts at once (a hello line with its
// pid), one caller at a time (another is refused while one is greeted); the caller sends its
// request only after the hello and assembles in its own process when none comes within the hello's wait
// (no server, another build's, or one busy with another call: its event loop runs that call and
// accepts nobody meanwhile), so no caller waits behind another's request. The whole answer must
// arrive within ANSWER_DEADLINE_MS of the connection (the server cuts its own waits to fit:
// serverTimes). A server that took the request and gave no usable answer in time (hung,
// stopped, dead, or failed part way) is stopped when it can be told to be this launcher's server,
// and the caller runs the request in its own process after all, under the request's key: each
// request carries a key of the caller's making, the server records its delivery under that key, and
// the caller's own run takes the place of whatever the server recorded (the context-assembler's
// record.ts), so a delivery is recorded once, by the run whose block was printed. Windows: no server.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { chooseServerDir, isServer, isStopped, makeServerDir } = require('./serverDir.cjs');

/**
 * How long a caller waits for the whole answer, from the connection: a request takes about 0.1 s
 * in the server, whose waits for locks and indexing are cut to fit (serverRunLimits), so only a
 * server that hung (or a machine too loaded for it to help) runs out of it; the caller then
 * assembles itself, and the spawn still gets its block within 2 s of silence.
 * CONTEXT_ASSEMBLER_SERVER_WAIT_MS sets another (serverTimes): on a machine slower than the one
 * these were measured on, where the server's answers do not come in time and each call pays the
 * deadline before it assembles itself, a longer one lets the server help again.
 */
const ANSWER_DEADLINE_MS = 1_000;
/**
 * The deadlines CONTEXT_ASSEMBLER_SERVER_WAIT_MS may set (ms): below 100 the greeting's wait is too
 * short for any server to be used; above 60 s a hung server would outlast the hook's own limit.
 */
const SERVER_WAIT_RANGE_MS = [100, 60_000];
/** The share of the answer deadline a caller waits for the server's hello (300 ms of 1 s). */
const HELLO_SHARE = 0.3;
/**
 * The shares of the answer deadline one request may spend in the server waiting for the
 * database's locks (the whole wait of its connection) and indexing a backlog (300 and 250 ms of
 * 1 s), so that its answer, fallback included, arrives in time; the prompt hook's request does not
 * wait for another hook's lock on the same prompt (the server declines it, and the caller waits in
 * its own process).
 */
const RUN_SHARES = { busyBudget: 0.3, indexBudget: 0.25 };

/**
 * The times of one exchange under `env` (the caller's: the server reads them from the request's
 * env, so both sides agree): the answer deadline (ANSWER_DEADLINE_MS, or a positive integer in
 * CONTEXT_ASSEMBLER_SERVER_WAIT_MS from 100 to 60000; anything else is ignored: the launcher never fails on it), the
 * hello's wait, and the server's limits of one run.
 */
function serverTimes(env = process.env) {
  const raw = env.CONTEXT_ASSEMBLER_SERVER_WAIT_MS;
  const n = typeof raw === 'string' && /^[0-9]{1,6}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  const set = n >= SERVER_WAIT_RANGE_MS[0] && n <= SERVER_WAIT_RANGE_MS[1] ? n : undefined;
  const answerMs = set ?? ANSWER_DEADLINE_MS;
  return {
    answerMs,
    helloMs: Math.round(answerMs * HELLO_SHARE),
    runLimits: { busyBudgetMs: Math.round(answerMs * RUN_SHARES.busyBudget), indexBudgetMs: Math.round(answerMs * RUN_SHARES.indexBudget), promptLockWaitMs: 0 },
  };
}

/**
 * Unix socket paths longer than 103 bytes are not portable (108 on Linux, 104 on macOS); the
 * server binds under `<socket>.<pid>` first, so the socket's own path leaves room for a pid.
 */
const MAX_SOCKET_PATH = 95;

/**
 * Node flags of the server process: a young generation of 1 MB semi-spaces instead of V8's
 * default 16 MB ones. Each call allocates a few megabytes that die with it; with the default the
 * server's peak RSS was 104-114 MB over 63 recording calls at 100k packages, with this flag 85-91 MB,
 * at the same time per call (measured on this machine: 98-103 ms a call either way). V8 fixes the
 * heap's layout at start, so the flag must be on the command line (setFlagsFromString is too late).
 */
const SERVER_NODE_FLAGS = ['--max-semi-space-size=1'];

/**
 * Starts `launcher serve` (the context-assembler launcher) as a detached process with the server's
 * Node flags, in `cwd`, not waited for: the SessionStart hook and a prompt hook that found no
 * server call this. A second one for the same build finds the first answering and stops.
 */
function startServer(launcher, cwd) {
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, launcher, 'serve'], { cwd, detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
}

const supported = () => process.platform !== 'win32' && typeof process.getuid === 'function';

/** A 52-bit FNV-1a of a short text (a name, not a secret: node:crypto is not worth its load here). */
function shortHash(text) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xfffffffffffffn;
  }
  return h.toString(16).padStart(13, '0');
}

/**
 * The socket of the server for `bundle` (the assemble bundle's file): {socket}, or {why} where
 * there can be none (no Unix sockets for this user, no bundle, no usable folder, a path too long).
 */
function socketOf(bundle) {
  if (!supported()) return { why: 'this platform gives no Unix sockets to this user' };
  let id;
  try {
    // The bundle, and the protocol beside it (the server runs bundled copies of these files).
    const bin = path.join(path.dirname(bundle), '..', '..', 'bazinga-db', 'bin');
    id = [bundle, path.join(bin, 'warmServer.cjs'), path.join(bin, 'serverDir.cjs')].map((f) => {
      const st = fs.statSync(f);
      return `${fs.realpathSync(f)}|${st.size}|${st.mtimeMs}`;
    });
  } catch {
    return { why: 'no prebuilt bundle' };
  }
  const place = chooseServerDir();
  if (place.dir === undefined) return { why: place.why };
  const socket = path.join(place.dir, `${shortHash(`${id.join('|')}|${process.version}|${process.arch}`)}.sock`);
  return socket.length <= MAX_SOCKET_PATH ? { socket } : { why: `its socket's path would be longer than ${MAX_SOCKET_PATH} bytes (${socket})` };
}

/** The socket of the server for `bundle`, or undefined where there can be none. */
function socketPath(bundle) {
  return socketOf(bundle).socket;
}

/** The pid in the server's pid file, if any. */
function serverPidInFile(socket) {
  try {
    const pid = Number(fs.readFileSync(`${socket}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stops the server `pid` of `socket`, which gave no answer: killed when it can be told to be this
 * launcher's server (never a process on a guess), and its socket and pid file removed either way
 * (while the pid file still names it), so that no later call waits on it. Returns whether it was killed.
 */
function stopServer(socket, pid) {
  let killed = false;
  if (isServer(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed = true;
    } catch {
      // gone meanwhile
    }
  }
  const recorded = serverPidInFile(socket);
  if (recorded === undefined || recorded === pid) {
    fs.rmSync(socket, { force: true });
    fs.rmSync(`${socket}.pid`, { force: true });
  }
  return killed;
}

/**
 * One exchange with the server of `socket`: the hello within `helloMs`, then `request` (when
 * given), the whole answer within `deadlineMs` of the connection (both clocks start at once).
 * Resolves with {hello, answer} (answer undefined without a request), or {hello: undefined} when
 * no server greeted (none listens, or it is busy or stopped), or {hello, lost: true} when the
 * request was sent and the connection ended without a whole answer, or {hello, timeout: true}.
 */
function exchange(socket, request, helloMs, deadlineMs) {
  return new Promise((resolve) => {
    let settled = false;
    let text = '';
    let hello;
    const done = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(helloTimer);
      clearTimeout(deadline);
      conn.destroy();
      resolve(value);
    };
    const conn = net.connect(socket);
    conn.setEncoding('utf8');
    const helloTimer = setTimeout(() => done({ hello: undefined }), helloMs);
    const deadline = setTimeout(() => done(hello === undefined ? { hello: undefined } : { hello, timeout: true }), deadlineMs);
    conn.on('data', (chunk) => {
      text += chunk;
      if (hello !== undefined) return;
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      try {
        hello = JSON.parse(text.slice(0, nl));
      } catch {
        hello = {};
      }
      text = text.slice(nl + 1);
      clearTimeout(helloTimer);
      if (hello === null || hello.hello !== true) {
        hello = undefined;
        return done({ hello: undefined });
      }
      if (request === undefined) return done({ hello, answer: undefined });
      conn.end(JSON.stringify(request) + '\n');
    });
    conn.on('error', () => done(hello === undefined || request === undefined ? { hello: undefined } : { hello, lost: true }));
    conn.on('end', () => {
      if (hello === undefined || request === undefined) return done({ hello: undefined });
      try {
        done({ hello, answer: JSON.parse(text) });
      } catch {
        done({ hello, lost: true });
      }
    });
  });
}

/** Whether a server's socket is in place at `socket` (it may still be busy, or dead). */
function socketPresent(socket) {
  return socket !== undefined && fs.existsSync(socket);
}

/**
 * Whether a server for `bundle` runs here: {state: 'present'} (its socket is in place and its pid
 * file names a live `serve` process), {state: 'absent'} (none, a dead one's socket, or a pid file
 * whose process is no server: the next `serve` takes the socket over), or {state: 'impossible',
 * why} (none can run: no Unix sockets for this user, no usable folder, a socket path too long).
 */
function serverStatus(bundle) {
  const where = socketOf(bundle);
  if (where.socket === undefined) return { state: 'impossible', why: where.why };
  const socket = where.socket;
  if (!fs.existsSync(socket)) return { state: 'absent' };
  const pid = serverPidInFile(socket);
  if (pid !== undefined) return { state: isServer(pid) ? 'present' : 'absent' };
  // A socket without a pid file is a server still starting, unless it was left long ago.
  try {
    return { state: Date.now() - fs.statSync(socket).mtimeMs < 10_000 ? 'present' : 'absent' };
  } catch {
    return { state: 'absent' };
  }
}

/** serverStatus(bundle).state. */
function serverState(bundle) {
  return serverStatus(bundle).state;
}

/**
 * Asks the server of `bundle` to run one request ({script, argv, cwd, env, key, stdin?}). Resolves
 * with its answer ({code, stdout, stderr}); undefined when no server took the request (none,
 * another build's, busy, or it turned the request down): the caller runs it itself; or
 * {unanswered: why} when the server took the request and gave no usable answer within
 * ANSWER_DEADLINE_MS (it hung: it is stopped; it died; it failed part way): the caller runs it
 * itself under the request's key, which supersedes what the server may have recorded. A server
 * that does not greet because it is stopped is stopped for good, so no later call waits on it.
 */
async function askServer(bundle, request) {
  const socket = socketPath(bundle);
  if (!socketPresent(socket)) return undefined;
  const times = serverTimes(request.env);
  const r = await exchange(socket, request, times.helloMs, times.answerMs);
  if (r.hello === undefined) {
    const pid = serverPidInFile(socket);
    if (pid !== undefined && isStopped(pid) && isServer(pid)) stopServer(socket, pid);
    return undefined;
  }
  if (r.timeout) {
    const killed = stopServer(socket, r.hello.pid);
    return { unanswered: `no answer within ${times.answerMs} ms (${killed ? 'the server was stopped' : 'its socket was removed'})` };
  }
  if (r.lost) return { unanswered: 'the connection ended without an answer (the server died)' };
  const a = r.answer;
  if (a === null || typeof a !== 'object' || a.declined === true) return undefined;
  if (typeof a.code !== 'number' || typeof a.stdout !== 'string' || typeof a.stderr !== 'string') return { unanswered: 'the server failed part way' };
  return a;
}

/**
 * Serves `handle(request) → {code, stdout, stderr}` on the socket of `bundle`, one request at a
 * time, until no request came for `idleMs`, SIGTERM, or another server took the socket over.
 * Resolves with why it stopped ('running' at once when a live server answers on the socket).
 */
async function serve(bundle, handle, { idleMs, log }) {
  if (!supported()) return 'not supported on this platform (no Unix sockets for this user)';
  const made = makeServerDir();
  if (made.dir === undefined) return made.why;
  const where = socketOf(bundle);
  if (where.socket === undefined) return where.why;
  const socket = where.socket;
  if (path.dirname(socket) !== made.dir) return `the folder of its socket changed while it started (${made.dir}, then ${path.dirname(socket)})`;
  if (fs.existsSync(socket)) {
    // A server that greets is running; one that does not may be busy with a call: left to serve
    // while its pid file names a live `serve` that is not stopped. A dead or stopped one's socket is
    // taken over, and so is one whose pid file names a process that is no server (the pid reused).
    const probe = await exchange(socket, undefined, 1_000, 1_000);
    if (probe.hello !== undefined) return 'running';
    const pid = serverPidInFile(socket);
    if (pid !== undefined && isServer(pid) && !isStopped(pid)) return 'running';
    fs.rmSync(socket, { force: true });
    fs.rmSync(`${socket}.pid`, { force: true });
  }
  // Bound under a name of its own, then renamed into place: two servers starting at once cannot
  // remove each other's socket (the one renamed last is reached; the other finds it gone and stops).
  const own = `${socket}.${process.pid}`;
  fs.rmSync(own, { force: true });
  const server = net.createServer({ allowHalfOpen: true });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(own, resolve);
  });
  fs.chmodSync(own, 0o600);
  fs.renameSync(own, socket);
  const ino = fs.statSync(socket).ino;
  fs.writeFileSync(`${socket}.pid`, String(process.pid), { mode: 0o600 });
  const ours = () => {
    try {
      return fs.statSync(socket).ino === ino;
    } catch {
      return false;
    }
  };
  return new Promise((resolve) => {
    let idle;
    const stop = (why) => {
      clearTimeout(idle);
      server.close();
      if (ours()) {
        fs.rmSync(socket, { force: true });
        fs.rmSync(`${socket}.pid`, { force: true });
      }
      resolve(why);
    };
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => stop(ours() ? 'idle' : 'socket taken over'), idleMs);
    };
    // The one caller greeted and not yet gone: only one at a time is greeted, so no greeted caller
    // ever waits behind another's request (the others are refused and assemble themselves).
    let active;
    server.on('connection', (conn) => {
      let text = '';
      conn.on('error', () => {});
      if (active !== undefined) {
        conn.destroy();
        return;
      }
      active = conn;
      conn.on('close', () => {
        if (active === conn) active = undefined;
      });
      conn.setEncoding('utf8');
      // Greeted at once: a caller sends its request only after this (see exchange).
      conn.write(JSON.stringify({ hello: true, pid: process.pid }) + '\n');
      arm();
      conn.on('data', (chunk) => (text += chunk));
      conn.on('end', () => {
        let request;
        try {
          request = JSON.parse(text);
        } catch {
          request = undefined; // a probe, or a caller that gave up before it asked
        }
        if (request === undefined) {
          conn.end();
          return;
        }
        // Declined (a request it cannot use): the caller assembles itself. Failed after it began (it
        // may have recorded): the caller prints the fallback block.
        let reply;
        try {
          reply = handle(request);
          reply = reply === undefined ? { declined: true } : reply;
        } catch (err) {
          log(`request failed: ${err && err.message}`);
          reply = { failed: true };
        }
        conn.end(JSON.stringify(reply));
        if (!ours()) conn.once('close', () => stop('socket taken over'));
      });
    });
    server.on('error', (err) => stop(`socket error: ${err.message}`));
    arm();
    // Two servers started at once: the one whose socket was renamed over stops within half a
    // minute rather than idling out its hour (it is not asked any more).
    const watch = setInterval(() => {
      if (!ours() && active === undefined) stop('socket taken over');
    }, 30_000);
    watch.unref();
    server.once('close', () => clearInterval(watch));
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(signal, () => stop(signal));
  });
}

module.exports = { ANSWER_DEADLINE_MS, SERVER_NODE_FLAGS, askServer, serve, serverState, serverStatus, serverTimes, socketPath, startServer };
