// The floor of an orchestrator call: a bare Node process that opens the database with
// better-sqlite3 (its addon by path, as the product opens it), runs the very statements one
// recorded call ran (bench/floor.ts records them, with their parameters, in order), commits its
// writes and closes the database as the call does (the close checkpoints the log into the file),
// and prints that call's output as a constant. No module of the product is loaded, nothing is
// ranked, redacted or rendered: what is left over the floor in a real call is this product's own
// work. A statement that fails makes the replay fail (exit 1): a replay that skipped work would
// look cheaper than the call.
//
// Every replay must find the database as the recording did, so after the timed part the child puts
// back the bytes its commit and close changed: before closing it reads, from the file, the pages
// the log's frames are about to overwrite; after closing (and printing) it writes them back and
// cuts the file to its old length. The time that bookkeeping took (reading the old pages, putting
// them back) is printed on stderr as `restore-ms N` and taken off the replay's time by the bench.
//
// Usage: node bench/floor-child.cjs <database> <trace.json>
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const Database = require('better-sqlite3');

const [dbPath, traceFile] = process.argv.slice(2);
const trace = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
const addon = path.join(path.dirname(require.resolve('better-sqlite3')), '..', 'build', 'Release', 'better_sqlite3.node');
const db = new Database(dbPath, { timeout: 5000, ...(fs.existsSync(addon) ? { nativeBinding: addon } : {}) });
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
// The restore below reads the old pages from the file before the close's checkpoint: no checkpoint
// may run before that (a call's writes are far below the 1,000 pages that would start one), and
// the database must be in WAL mode, as the product leaves it.
db.pragma('wal_autocheckpoint = 0');
if (db.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error(`${dbPath} is not in WAL mode: the replay could not be undone`);
const prepared = new Map();
let writing = false;
for (const { sql, method, args, rows } of trace.statements) {
  let st = prepared.get(sql);
  if (st === undefined) prepared.set(sql, (st = db.prepare(sql)));
  if (!writing && !st.readonly) {
    db.exec('BEGIN IMMEDIATE');
    writing = true;
  }
  const r = st[method](...args);
  if (method === 'iterate') {
    // As many rows as the call took (it may stop early), then the iterator is closed.
    let left = rows;
    if (left > 0) for (const _ of r) if (--left <= 0) break;
    r.return?.();
  }
}
if (writing) db.exec('COMMIT');

// Untimed: the pages the checkpoint at close will overwrite, as the file holds them now.
let spent = 0n;
let t = process.hrtime.bigint();
const oldPages = writing ? pagesAboutToChange(dbPath) : undefined;
spent += process.hrtime.bigint() - t;

db.close();
fs.writeSync(1, trace.output);

t = process.hrtime.bigint();
if (oldPages) restore(dbPath, oldPages);
spent += process.hrtime.bigint() - t;
process.stderr.write(`restore-ms ${(Number(spent) / 1e6).toFixed(3)}\n`);

/** The file's length and, for every page a frame of the log names, its bytes in the file now. */
function pagesAboutToChange(file) {
  const wal = fs.readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const fd = fs.openSync(file, 'r');
  try {
    const length = fs.fstatSync(fd).size;
    const pages = new Map();
    for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
      const page = wal.readUInt32BE(at);
      if (pages.has(page)) continue;
      const offset = (page - 1) * pageSize;
      const bytes = Buffer.alloc(pageSize);
      const read = offset < length ? fs.readSync(fd, bytes, 0, pageSize, offset) : 0;
      pages.set(page, read === pageSize ? bytes : undefined); // undefined: a page past the old end
    }
    return { length, pageSize, pages };
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the old pages back and cuts the file to its old length. */
function restore(file, { length, pageSize, pages }) {
  const fd = fs.openSync(file, 'r+');
  try {
    for (const [page, bytes] of pages) if (bytes) fs.writeSync(fd, bytes, 0, pageSize, (page - 1) * pageSize);
    fs.ftruncateSync(fd, length);
  } finally {
    fs.closeSync(fd);
  }
}
