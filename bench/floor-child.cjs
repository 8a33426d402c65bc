// The floor of an orchestrator call: a bare Node process that opens the database with
// better-sqlite3, runs the very statements one recorded call ran (bench/floor.ts records them, with
// their parameters, in order), and prints that call's output as a constant. No module of the
// product is loaded, nothing is ranked, redacted or rendered: what is left over the floor in a real
// call is this product's own work. Writes run in one transaction that is rolled back, so every
// replay finds the database as the recording did (a rollback skips the WAL append a commit makes:
// the floor is, if anything, a little low). A statement that fails makes the replay fail (exit 1):
// a replay that skipped work would look cheaper than the call.
//
// Usage: node bench/floor-child.cjs <database> <trace.json>
'use strict';
const fs = require('node:fs');
const Database = require('better-sqlite3');

const [dbPath, traceFile] = process.argv.slice(2);
const trace = JSON.parse(fs.readFileSync(traceFile, 'utf8'));
const db = new Database(dbPath, { timeout: 5000 });
db.pragma('foreign_keys = ON');
db.pragma('synchronous = NORMAL');
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
if (writing) db.exec('ROLLBACK');
db.close();
process.stdout.write(trace.output);
