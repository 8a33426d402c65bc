// The warm assembler (plain JavaScript: the launcher uses it before anything is compiled).
//
// `context-assembler serve` keeps one process with the assembler loaded, per user and per build of
// its bundles, listening on a Unix socket in a folder only that user can enter:
// $XDG_RUNTIME_DIR/context-assembler/ where that is set, else <tmpdir>/context-assembler-<uid>/;
// the socket's name is made from the bundle's and this file's path, size and time and the Node
// runtime, so another build is another socket. The orchestrator's call then costs a Node start
// and one round trip: the launcher of `assemble` hands over its arguments, working directory and
// environment and prints the answer. Where there is no server (or another build's, or Windows),
// or the server is busy with another call (it holds one connection at a time) or turns the request
// down (too little of its caller's wait left), the launcher assembles in its own process as always. A server that does not answer within ANSWER_MS is hung: it is killed
// and the call prints the fallback block (a hung server costs one call, never every call). The
// server answers one request at a time and stops when idle, on SIGTERM, or when its socket is
// taken over.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/**
 * How long a call waits for the answer. The server holds one connection at a time (another
 * caller is refused at once and assembles itself: nobody waits in a queue), and a request waits at
 * most 1.5 s for a locked database, so the server begins one only while START_MS of its caller's
 * wait are left: a healthy server always answers in time, and a call's timeout means a hung server.
 */
const ANSWER_MS = 5_000;
const START_MS = 2_500;
/**
 * Unix socket paths longer than 103 bytes are not portable (108 on Linux, 104 on macOS); the
 * server binds under `<socket>.<pid>` first, so the socket's own path leaves room for a pid.
 */
const MAX_SOCKET_PATH = 95;

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

/**
 * The pid the server of `socket` wrote, when that process is alive and is a server of this socket
 * (on Linux its command line says `serve`; elsewhere it cannot be told, and undefined is returned):
 * a stale pid file never names a process to stop.
 */
function serverPid(socket) {
  let pid;
  try {
    pid = Number(fs.readFileSync(`${socket}.pid`, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve') ? pid : undefined;
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
 * Stops the server of `socket`, which took a request and did not answer: killed when its pid can
 * be told to be that server's, and its socket and pid file removed either way (while they are the
 * ones read), so that no later call waits on it.
 */
function stopServer(socket) {
  const recorded = serverPidInFile(socket);
  const pid = serverPid(socket);
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (serverPidInFile(socket) === recorded) {
    fs.rmSync(socket, { force: true });
    fs.rmSync(`${socket}.pid`, { force: true });
  }
}

function serverPidInFile(socket) {
  try {
    return Number(fs.readFileSync(`${socket}.pid`, 'utf8').trim());
  } catch {
    return undefined;
  }
}

/**
 * Sends one request to the server of `socket`; resolves with the parsed answer, 'none' (no server
 * listens: the caller assembles itself) or 'timeout' (connected, no answer within `answerMs`).
 */
function exchange(socket, request, answerMs) {
  return new Promise((resolve) => {
    let settled = false;
    let answer = '';
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
    // An answer already arriving when the time is up wins: the timer waits on while data comes.
    const expire = () => (answer !== '' ? (timer = setTimeout(expire, 200)) : done('timeout'));
    conn.on('connect', () => {
      timer = setTimeout(expire, answerMs);
      conn.end(JSON.stringify(request) + '\n');
    });
    conn.on('data', (chunk) => (answer += chunk));
    conn.on('error', () => done('none'));
    conn.on('end', () => {
      try {
        done(JSON.parse(answer));
      } catch {
        done('none');
      }
    });
  });
}

/**
 * Asks the server of `bundle` to run one request ({argv, cwd, env}). Resolves with its answer
 * ({code, stdout, stderr}); 'timeout' when a server took the request and gave no answer within
 * ANSWER_MS (it is stopped; the caller prints the fallback block, since the server may have begun
 * the work); undefined when none answers (no server, another build's, a refusal): the caller
 * assembles itself.
 */
async function askServer(bundle, request) {
  const socket = socketPath(bundle);
  if (socket === undefined || !privateDir(path.dirname(socket)) || !fs.existsSync(socket)) return undefined;
  const r = await exchange(socket, { ...request, deadline: Date.now() + ANSWER_MS }, ANSWER_MS);
  if (r === 'timeout') {
    stopServer(socket);
    return 'timeout';
  }
  if (r === 'none' || typeof r.code !== 'number' || typeof r.stdout !== 'string' || typeof r.stderr !== 'string') return undefined;
  return r;
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
    const pong = await exchange(socket, { ping: true }, 1_000);
    if (pong !== 'none' && pong !== 'timeout' && pong.pong === true) return 'running';
    // Refused or silent: a server busy with a request refuses others, so one whose process lives
    // is left to serve; only a dead one's socket is taken over.
    const pid = serverPidInFile(socket);
    if (pid !== undefined && pid > 0 && alive(pid)) return 'running';
    fs.rmSync(socket, { force: true });
    fs.rmSync(`${socket}.pid`, { force: true });
  }
  // Bound under a name of its own, then renamed into place: two servers starting at once cannot
  // remove each other's socket (the one renamed last is reached; the other finds it gone and stops).
  const own = `${socket}.${process.pid}`;
  fs.rmSync(own, { force: true });
  const server = net.createServer({ allowHalfOpen: true });
  // One connection at a time: another caller is refused at once and assembles itself.
  server.maxConnections = 1;
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
    server.on('connection', (conn) => {
      let text = '';
      conn.setEncoding('utf8');
      conn.on('error', () => {});
      conn.on('data', (chunk) => (text += chunk));
      conn.on('end', () => {
        let request;
        try {
          request = JSON.parse(text);
        } catch {
          request = undefined;
        }
        arm();
        if (request && request.ping === true) {
          conn.end(JSON.stringify({ pong: true, pid: process.pid }));
          return;
        }
        // Queued too long behind other requests: its caller would give up before the answer came.
        if (!request || typeof request.deadline !== 'number' || request.deadline - Date.now() < START_MS) {
          conn.end('{}');
          return;
        }
        let reply;
        try {
          reply = request === undefined ? undefined : handle(request);
        } catch (err) {
          log(`request failed: ${err && err.message}`);
        }
        conn.end(reply === undefined ? '{}' : JSON.stringify(reply));
        if (!ours()) stop('socket taken over');
      });
    });
    server.on('error', (err) => stop(`socket error: ${err.message}`));
    arm();
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(signal, () => stop(signal));
  });
}

module.exports = { ANSWER_MS, askServer, serve, serverDir, socketPath, privateDir };
