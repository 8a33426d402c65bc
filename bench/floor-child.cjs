// The floor of an orchestrator call: a bare Node process that opens the database with
// better-sqlite3, runs the very statements one recorded call ran (bench/floor.ts records them, with
// their parameters, in order), and prints that call's output as a constant. No module of the
// product is loaded, nothing is ranked, redacted or rendered: what is left over the floor in a real
// call is this product's own work. Writes run in one transaction that is rolled back, so every
// replay finds the database as the recording did.
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
  if (!writing && !/^\s*(WITH|SELECT)/i.test(sql)) {
    db.exec('BEGIN IMMEDIATE');
    writing = true;
  }
  let st = prepared.get(sql);
  if (st === undefined) prepared.set(sql, (st = db.prepare(sql)));
  try {
    const r = st[method](...args);
    if (method === 'iterate') {
      // As many rows as the call took (it may stop early), then the iterator is closed.
      let left = rows;
      for (const _ of r) if (--left <= 0) break;
    }
  } catch {
    // A write that conflicts with what the database already holds (it should not: writes roll back) is skipped.
  }
}
if (writing) db.exec('ROLLBACK');
db.close();
process.stdout.write(trace.output);
