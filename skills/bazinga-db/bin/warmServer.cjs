// The warm assembler (plain JavaScript: the launcher uses it before anything is compiled).
//
// `context-assembler serve` keeps one process with the assembler loaded, per user and per build of
// its bundle, listening on a Unix socket in a folder only that user can enter
// (<tmpdir>/context-assembler-<uid>/<key>.sock, the key made from the bundle's path, size and time
// and the Node runtime). The orchestrator's call then costs a Node start and one round trip: the
// launcher of `assemble` finds the socket, hands over its arguments, working directory and
// environment, and prints what comes back. Where there is no server, or it does not answer, or
// it was started from another build of the bundle, the launcher assembles in its own process as
// always. The server answers one request at a time and exits when idle for a while or when its
// bundle changes; the plugin's SessionStart hook starts it.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

/** The folder of this user's servers. */
function serverDir() {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return path.join(os.tmpdir(), `context-assembler-${uid}`);
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

/** The socket of the server for `bundle` (the assemble bundle's file), or undefined when it cannot be named. */
function socketPath(bundle) {
  try {
    const st = fs.statSync(bundle);
    return path.join(serverDir(), `${shortHash(`${fs.realpathSync(bundle)}|${st.size}|${st.mtimeMs}|${process.version}|${process.arch}`)}.sock`);
  } catch {
    return undefined;
  }
}

/** Whether `dir` is this user's own folder that no one else can enter (a socket is only trusted there). */
function privateDir(dir) {
  try {
    const st = fs.lstatSync(dir);
    const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Asks the server of `bundle` to run one request ({argv, cwd, env}); resolves with its answer
 * ({code, stdout, stderr}) or undefined (no server, not this build's, an error, or no answer
 * within `timeoutMs`): the caller then assembles itself.
 */
function askServer(bundle, request, timeoutMs) {
  const socket = socketPath(bundle);
  if (socket === undefined || !privateDir(path.dirname(socket)) || !fs.existsSync(socket)) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let settled = false;
    let answer = '';
    const done = (value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      conn.destroy();
      resolve(value);
    };
    const conn = net.connect(socket);
    const timer = setTimeout(() => done(undefined), timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.end(JSON.stringify(request) + '\n'));
    conn.on('data', (chunk) => (answer += chunk));
    conn.on('error', () => done(undefined));
    conn.on('end', () => {
      try {
        const r = JSON.parse(answer);
        done(typeof r.code === 'number' && typeof r.stdout === 'string' && typeof r.stderr === 'string' ? r : undefined);
      } catch {
        done(undefined);
      }
    });
  });
}

/**
 * Serves `handle(request) → {code, stdout, stderr}` on the socket of `bundle`, one request at a
 * time, until no request came for `idleMs` or the bundle changed. Resolves with why it stopped;
 * 'running' at once when a live server already holds the socket.
 */
function serve(bundle, handle, { idleMs, log }) {
  const socket = socketPath(bundle);
  if (socket === undefined) return Promise.resolve('no bundle');
  const dir = path.dirname(socket);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!privateDir(dir)) return Promise.resolve(`${dir} is not a folder only this user can enter`);
  return new Promise((resolve) => {
    const probe = net.connect(socket);
    probe.on('connect', () => {
      probe.destroy();
      resolve('running');
    });
    probe.on('error', () => {
      fs.rmSync(socket, { force: true }); // a dead server's socket
      listen();
    });
    function listen() {
      let idle;
      const stop = (why) => {
        clearTimeout(idle);
        server.close();
        fs.rmSync(socket, { force: true });
        resolve(why);
      };
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => stop('idle'), idleMs);
      };
      const server = net.createServer({ allowHalfOpen: true }, (conn) => {
        let text = '';
        conn.setEncoding('utf8');
        conn.on('error', () => {});
        conn.on('data', (chunk) => (text += chunk));
        conn.on('end', () => {
          arm();
          // Another build of the bundle (an install or a rebuild since): the caller assembles itself.
          if (socketPath(bundle) !== socket) {
            conn.end('{}');
            stop('bundle changed');
            return;
          }
          let reply;
          try {
            reply = handle(JSON.parse(text));
          } catch (err) {
            log(`request failed: ${err && err.message}`);
            reply = undefined;
          }
          conn.end(reply === undefined ? '{}' : JSON.stringify(reply));
        });
      });
      server.on('error', (err) => stop(`socket error: ${err.message}`));
      server.listen(socket, () => {
        fs.chmodSync(socket, 0o600);
        arm();
      });
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(signal, () => stop(signal));
    }
  });
}

module.exports = { askServer, serve, socketPath, serverDir, privateDir };
