// The warm assembler (plain JavaScript: the launcher uses it before anything is compiled).
//
// `context-assembler serve` keeps one process with the assembler loaded, per user and per build of
// its bundles, listening on a Unix socket in a folder only that user can enter:
// $XDG_RUNTIME_DIR/context-assembler/ where that is set, else <tmpdir>/context-assembler-<uid>/;
// the socket's name is made from the bundle's and this file's path, size and time and the Node
// runtime, so another build is another socket. The orchestrator's call, and the prompt hook of
// today's BAZINGA flow (its event sent along), then cost a Node start and one round trip.
//
// The exchange: the server greets every connection it accepts at once (a hello line with its
// pid), one caller at a time (another is refused while one is greeted); the caller sends its
// request only after the hello and assembles in its own process when none comes within HELLO_MS
// (no server, another build's, or one busy with another call: its event loop runs that call and
// accepts nobody meanwhile), so no caller waits behind another's request. Once the
// request is sent the server may record what it hands out: an answer is printed; a connection
// that ends without one (the server died) or no answer within ANSWER_MS (hung; it is killed when
// its command line shows it is this launcher's server) gives the fallback block, never a second
// assembly that would leave out what the server recorded. Windows: no server.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** How long a caller waits for the server's hello before it assembles itself. */
const HELLO_MS = 300;
/**
 * How long a caller waits for the answer once the request is sent: far more than a request takes
 * (at most 1.5 s waiting for a locked database, the index budget, the work), so that only a hung
 * server runs out of it.
 */
const ANSWER_MS = 10_000;
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

/** The folder of this user's servers. */
function serverDir() {
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) return path.join(runtime, 'context-assembler');
  return path.join(os.tmpdir(), `context-assembler-${process.getuid()}`);
}

/** A 52-bit FNV-1a of a short text (a name, not a secret: node:crypto is not worth its load here). */
function shortHash(text) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xfffffffffffffn;
  }
  return h.toString(16).padStart(13, '0');
}

/** The socket of the server for `bundle` (the assemble bundle's file), or undefined where there can be none. */
function socketPath(bundle) {
  if (!supported()) return undefined;
  try {
    // The bundle, and this file beside it (the protocol; the server runs a bundled copy of it).
    const protocol = path.join(path.dirname(bundle), '..', '..', 'bazinga-db', 'bin', 'warmServer.cjs');
    const id = [bundle, protocol].map((f) => {
      const st = fs.statSync(f);
      return `${fs.realpathSync(f)}|${st.size}|${st.mtimeMs}`;
    });
    const socket = path.join(serverDir(), `${shortHash(`${id.join('|')}|${process.version}|${process.arch}`)}.sock`);
    return socket.length <= MAX_SOCKET_PATH ? socket : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `dir` is this user's own folder that no one else can enter (a socket is only trusted there). */
function privateDir(dir) {
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
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

/** Whether a process holds `pid` (this user's or another's). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Whether `pid` runs `context-assembler.cjs serve` (on Linux, from its command line; elsewhere it
 * cannot be told, and false: no process is stopped on a guess).
 */
function isServer(pid) {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes('serve') && argv.some((a) => a.endsWith('context-assembler.cjs'));
  } catch {
    return false;
  }
}

/**
 * Stops the server `pid` of `socket`, which took a request and gave no answer: killed when it can
 * be told to be that server, and its socket and pid file removed either way (while the pid file
 * still names it), so that no later call waits on it.
 */
function stopServer(socket, pid) {
  if (Number.isInteger(pid) && isServer(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  const recorded = serverPidInFile(socket);
  if (recorded === undefined || recorded === pid) {
    fs.rmSync(socket, { force: true });
    fs.rmSync(`${socket}.pid`, { force: true });
  }
}

/**
 * One exchange with the server of `socket`: the hello within `helloMs`, then `request` (when
 * given), then the answer within `answerMs`. Resolves with {hello, answer} (answer undefined
 * without a request), or {hello: undefined} when no server greeted (none listens, or it is busy),
 * or {hello, lost: true} when the request was sent and the connection ended without a whole
 * answer, or {hello, timeout: true}.
 */
function exchange(socket, request, helloMs, answerMs) {
  return new Promise((resolve) => {
    let settled = false;
    let text = '';
    let hello;
    let timer;
    const done = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(value);
    };
    const conn = net.connect(socket);
    conn.setEncoding('utf8');
    conn.on('connect', () => {
      timer = setTimeout(() => done({ hello: undefined }), helloMs);
    });
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
      clearTimeout(timer);
      if (hello.hello !== true) return done({ hello: undefined });
      if (request === undefined) return done({ hello, answer: undefined });
      // An answer already arriving when the time is up gets one second more, once.
      timer = setTimeout(() => (text === '' ? done({ hello, timeout: true }) : (timer = setTimeout(() => done({ hello, timeout: true }), 1_000))), answerMs);
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

/** Whether a server's socket is in place at `socket` (it may still be busy, or dead), in a folder only this user can enter. */
function socketPresent(socket) {
  return socket !== undefined && privateDir(path.dirname(socket)) && fs.existsSync(socket);
}

/**
 * Whether a server for `bundle` runs here: 'present' (its socket is in place and the process its
 * pid file names lives), 'absent' (none, or a dead one's socket, which the next `serve` takes
 * over), 'impossible' (none can run: no Unix sockets for this user, a socket path too long, or a
 * folder of servers others can enter).
 */
function serverState(bundle) {
  const socket = socketPath(bundle);
  if (socket === undefined) return 'impossible';
  const dir = path.dirname(socket);
  if (fs.existsSync(dir) && !privateDir(dir)) return 'impossible';
  if (!fs.existsSync(socket)) return 'absent';
  const pid = serverPidInFile(socket);
  if (pid !== undefined) return alive(pid) ? 'present' : 'absent';
  // A socket without a pid file is a server still starting, unless it was left long ago.
  try {
    return Date.now() - fs.statSync(socket).mtimeMs < 10_000 ? 'present' : 'absent';
  } catch {
    return 'absent';
  }
}

/**
 * Asks the server of `bundle` to run one request ({script, argv, cwd, env, stdin?}), waiting
 * `answerMs` for the answer once it is sent (ANSWER_MS unless the script takes longer: the prompt
 * hook waits for another hook's lock on the same prompt). Resolves with its answer
 * ({code, stdout, stderr}); undefined when no server took the request (none, another build's,
 * busy, or it turned the request down): the caller assembles itself; or 'lost' when the server
 * took the request and gave no answer (it died, or hung: it is then stopped), and the caller prints
 * the fallback block, since the server may have recorded what it was handing out.
 */
async function askServer(bundle, request, answerMs = ANSWER_MS) {
  const socket = socketPath(bundle);
  if (!socketPresent(socket)) return undefined;
  const r = await exchange(socket, request, HELLO_MS, answerMs);
  if (r.hello === undefined) return undefined;
  if (r.timeout) stopServer(socket, r.hello.pid);
  if (r.timeout || r.lost) return 'lost';
  const a = r.answer;
  if (a === null || typeof a !== 'object' || a.declined === true) return undefined;
  if (typeof a.code !== 'number' || typeof a.stdout !== 'string' || typeof a.stderr !== 'string') return 'lost';
  return a;
}

/**
 * Serves `handle(request) → {code, stdout, stderr}` on the socket of `bundle`, one request at a
 * time, until no request came for `idleMs`, SIGTERM, or another server took the socket over.
 * Resolves with why it stopped ('running' at once when a live server answers on the socket).
 */
async function serve(bundle, handle, { idleMs, log }) {
  if (!supported()) return 'not supported on this platform (no Unix sockets for this user)';
  const socket = socketPath(bundle);
  if (socket === undefined) return 'no socket path (no bundle, or a path too long)';
  const dir = path.dirname(socket);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!privateDir(dir)) return `${dir} is not a folder only this user can enter`;
  if (fs.existsSync(socket)) {
    // A server that greets is running; one that does not may be busy with a call: left to serve
    // while its process lives. Only a dead one's socket is taken over.
    const probe = await exchange(socket, undefined, 1_000, 0);
    if (probe.hello !== undefined) return 'running';
    const pid = serverPidInFile(socket);
    if (pid !== undefined && alive(pid)) return 'running';
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

module.exports = { ANSWER_MS, HELLO_MS, SERVER_NODE_FLAGS, askServer, serve, serverDir, serverState, socketPath, startServer, privateDir };
