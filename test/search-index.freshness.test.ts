/**
 * The freshness of the error-pattern and strategy index on real SQLite files: every change the
 * check (searchIndexBehind) claims to see is seen and caught up by the next sync, the changes it
 * does not see are harmless (the reads equal a freshly built index), the first build of a table
 * goes in batches, and an index of the old layout is rebuilt. Writes "by another tool" are plain
 * SQL on the file, with no code of this layer in between.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, writeTransaction, type DB } from '../skills/bazinga-db/scripts/lib/db.ts';
import { matchLearning, resetSearchIndex, searchIndexBehind, syncSearchIndex } from '../skills/bazinga-db/scripts/lib/repo/searchIndex.ts';
import { projectScope } from '../skills/bazinga-db/scripts/lib/repo/sessions.ts';
import { bazingaDbInProcess } from './inProcess.ts';
import { makeProject, type Project } from './helpers.ts';
import type { TextMatch } from '../skills/bazinga-db/scripts/lib/repo/textQuery.ts';

/** Per-term matches of single words, written here as the index's planner would write them (the tests look at the index itself). */
const asMatches = (ws: readonly string[]): TextMatch[] => ws.map((w) => `"${w}"` as TextMatch);
const words = (...ws: string[]): TextMatch[] => asMatches(ws);

const projects: Project[] = [];
afterEach(() => {
  for (const p of projects.splice(0)) p.cleanup();
});

function open(): { db: DB; project: Project } {
  const project = makeProject('ca-fresh-');
  projects.push(project);
  return { db: openDatabase({ dbPath: project.dbPath }), project };
}

const T0 = Date.parse('2025-12-01T10:00:00Z');
/** SQLite's datetime('now') format, `s` seconds after T0. */
const at = (s: number) => new Date(T0 + s * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** Another tool's INSERT of an error pattern (every column given, as the original writes them). */
function insertPattern(db: DB, hash: string, project: string, solution: string, lastSeen: string | null): void {
  db.prepare(
    `INSERT INTO error_patterns (pattern_hash, project_id, signature_json, solution, confidence, occurrences, lang, last_seen, created_at, ttl_days)
     VALUES (?, ?, ?, ?, 0.8, 1, NULL, COALESCE(?, datetime('now')), COALESCE(?, datetime('now')), 90)`,
  ).run(hash, project, JSON.stringify({ error_type: 'Error', message_pattern: `failure ${hash}`, context_hints: [] }), solution, lastSeen, lastSeen);
}

function insertStrategy(db: DB, id: string, project: string, insight: string, lastSeen: string): void {
  db.prepare(
    `INSERT INTO strategies (strategy_id, project_id, topic, insight, helpfulness, lang, framework, last_seen, created_at)
     VALUES (?, ?, 'testing', ?, 1, NULL, NULL, ?, ?)`,
  ).run(id, project, insight, lastSeen, lastSeen);
}

/** What an assembly does before it searches: sync when the check says the index is behind. */
function refresh(db: DB): string[] {
  const behind = searchIndexBehind(db);
  if (behind.length > 0) writeTransaction(db, () => syncSearchIndex(db, { projectRoot: null, artifactBytes: 0 }));
  return behind;
}

/** Ids matching one word, as the assembler asks (one MATCH per term), sorted. */
function matching(db: DB, part: 'patterns' | 'strategies', project: string, word: string): string[] {
  return [...(matchLearning(db, part, projectScope(project), words(word)).perTerm[0] ?? [])].sort();
}

let oracles = 0;
/** The same reads from an index built from scratch on a copy of the file. */
function fresh(db: DB, project: Project, read: (copy: DB) => unknown): unknown {
  const file = path.join(project.root, `oracle-${oracles++}.db`);
  db.prepare('VACUUM INTO ?').run(file);
  const copy = new Database(file);
  try {
    copy.transaction(() => {
      resetSearchIndex(copy);
      syncSearchIndex(copy, { projectRoot: null, artifactBytes: 0 });
    })();
    return read(copy);
  } finally {
    copy.close();
  }
}

/** Entries of the index (rowid and key), to see stale ones directly. */
function entries(db: DB, part: 'patterns' | 'strategies'): string[] {
  const sql =
    part === 'patterns'
      ? 'SELECT rowid AS r, pattern_hash AS id FROM ca_fts_patterns ORDER BY rowid'
      : 'SELECT rowid AS r, strategy_id AS id FROM ca_fts_strategies ORDER BY rowid';
  return (db.prepare(sql).all() as { r: number; id: string }[]).map((e) => `${e.r}:${e.id}`);
}

/** Source rows (rowid and key), what a current index holds entries for. */
function sources(db: DB, part: 'patterns' | 'strategies'): string[] {
  const sql =
    part === 'patterns' ? 'SELECT rowid AS r, pattern_hash AS id FROM error_patterns ORDER BY rowid' : 'SELECT rowid AS r, strategy_id AS id FROM strategies ORDER BY rowid';
  return (db.prepare(sql).all() as { r: number; id: string }[]).map((e) => `${e.r}:${e.id}`);
}

/** Four patterns a minute apart (h1 oldest), two strategies, indexed; the check then says current. */
function seeded(): { db: DB; project: Project } {
  const o = open();
  insertPattern(o.db, 'h1', 'p1', 'restart the alpha worker', at(0));
  insertPattern(o.db, 'h2', 'p1', 'pin the bravo version', at(60));
  insertPattern(o.db, 'h3', 'p1', 'clear the charlie cache', at(120));
  insertPattern(o.db, 'h4', 'p1', 'raise the delta timeout', at(180));
  insertStrategy(o.db, 's1', 'p1', 'freeze the echo clock', at(0));
  insertStrategy(o.db, 's2', 'p1', 'stub the foxtrot network', at(60));
  expect(refresh(o.db)).toEqual(['patterns', 'strategies']);
  expect(searchIndexBehind(o.db)).toEqual([]);
  return o;
}

describe('the check sees what another tool writes', () => {
  it('a pattern added by a raw INSERT (column default last_seen) is seen and found after the sync', () => {
    const { db } = seeded();
    insertPattern(db, 'h5', 'p1', 'rotate the golf keys', null);
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(searchIndexBehind(db)).toEqual([]);
    expect(matching(db, 'patterns', 'p1', 'golf')).toEqual(['h5']);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
  });

  it('a pattern added with an explicit past last_seen (not the newest) is seen by MAX(rowid)', () => {
    const { db } = seeded();
    insertPattern(db, 'h5', 'p1', 'rotate the golf keys', at(30));
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(matching(db, 'patterns', 'p1', 'golf')).toEqual(['h5']);
  });

  it('a pattern rewritten in place with last_seen moved forward: the new solution is found, the old one no more', () => {
    const { db } = seeded();
    db.prepare("UPDATE error_patterns SET occurrences = occurrences + 1, last_seen = ?, solution = 'reinstall the hotel toolchain' WHERE pattern_hash = 'h2'").run(at(240));
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(matching(db, 'patterns', 'p1', 'hotel')).toEqual(['h2']);
    expect(matching(db, 'patterns', 'p1', 'bravo')).toEqual([]);
  });

  it('a confidence update (only confidence and last_seen change) is seen: last_seen moved', () => {
    const { db } = seeded();
    db.prepare("UPDATE error_patterns SET confidence = 0.9, last_seen = ? WHERE pattern_hash = 'h1'").run(at(240));
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(searchIndexBehind(db)).toEqual([]);
  });

  it('within the second of the newest rows: a row joining them, or one of them rewritten with a new text, is seen', () => {
    const { db } = seeded();
    // h2 rewritten in the same second as h4, the newest (MAX(last_seen) does not move).
    db.prepare("UPDATE error_patterns SET occurrences = 2, last_seen = ?, solution = 'pin the india version' WHERE pattern_hash = 'h2'").run(at(180));
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(matching(db, 'patterns', 'p1', 'india')).toEqual(['h2']);
    // h2 again, still the same second, a longer solution.
    db.prepare("UPDATE error_patterns SET occurrences = 3, solution = 'pin the india version and the juliet lockfile' WHERE pattern_hash = 'h2'").run();
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(matching(db, 'patterns', 'p1', 'juliet')).toEqual(['h2']);
  });

  it('a same-second rewrite that leaves every indexed column as it was needs nothing and is not reported', () => {
    const { db } = seeded();
    db.prepare("UPDATE error_patterns SET occurrences = occurrences + 1, confidence = 0.95 WHERE pattern_hash = 'h4'").run();
    expect(searchIndexBehind(db)).toEqual([]);
  });

  it('a strategy added by a raw INSERT is seen and found after the sync', () => {
    const { db } = seeded();
    insertStrategy(db, 's3', 'p1', 'record the kilo traffic', at(300));
    expect(searchIndexBehind(db)).toEqual(['strategies']);
    refresh(db);
    expect(matching(db, 'strategies', 'p1', 'kilo')).toEqual(['s3']);
    expect(entries(db, 'strategies')).toEqual(sources(db, 'strategies'));
  });

  it('a strategy upserted in place (helpfulness and last_seen only, neither indexed) needs nothing and is not reported', () => {
    const { db } = seeded();
    db.prepare("UPDATE strategies SET helpfulness = helpfulness + 1, last_seen = ? WHERE strategy_id = 's1'").run(at(400));
    db.prepare("UPDATE strategies SET helpfulness = helpfulness + 1, last_seen = ? WHERE strategy_id = 's2'").run(at(400));
    expect(searchIndexBehind(db)).toEqual([]);
    expect(matching(db, 'strategies', 'p1', 'echo')).toEqual(['s1']);
  });

  it('the newest strategy rewritten in place with a new insight is seen', () => {
    const { db } = seeded();
    db.prepare("UPDATE strategies SET insight = 'stub the lima network' WHERE strategy_id = 's2'").run();
    expect(searchIndexBehind(db)).toEqual(['strategies']);
    refresh(db);
    expect(matching(db, 'strategies', 'p1', 'lima')).toEqual(['s2']);
    expect(matching(db, 'strategies', 'p1', 'foxtrot')).toEqual([]);
  });
});

describe('deletions', () => {
  it.each([
    ['the newest pattern (MAX(rowid))', "DELETE FROM error_patterns WHERE pattern_hash = 'h4'", 'delta'],
    ['the oldest pattern (MIN(last_seen)), as a TTL cleanup deletes it', `DELETE FROM error_patterns WHERE last_seen <= '${at(0)}'`, 'alpha'],
    ['a pattern of the newest second', "UPDATE error_patterns SET last_seen = (SELECT last_seen FROM error_patterns WHERE pattern_hash = 'h4') WHERE pattern_hash = 'h3'", 'charlie'],
  ])('%s: seen, and its entry is dropped by the sync', (_label, sql, word) => {
    const { db } = seeded();
    if (sql.startsWith('UPDATE')) {
      // Put h3 into the newest second first (seen and synced), then delete it.
      db.prepare(sql).run();
      refresh(db);
      db.prepare("DELETE FROM error_patterns WHERE pattern_hash = 'h3'").run();
    } else {
      db.prepare(sql).run();
    }
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(searchIndexBehind(db)).toEqual([]);
    expect(matching(db, 'patterns', 'p1', word)).toEqual([]);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
  });

  it('cleanup-error-patterns (this layer, in process) deletes expired patterns and its own sync drops their entries', () => {
    const { db, project } = seeded();
    db.prepare("UPDATE error_patterns SET last_seen = '2020-01-01 00:00:00' WHERE pattern_hash IN ('h1', 'h2')").run();
    db.prepare("UPDATE error_patterns SET last_seen = datetime('now') WHERE pattern_hash IN ('h3', 'h4')").run();
    refresh(db);
    db.close();
    const r = bazingaDbInProcess(project, ['cleanup-error-patterns', 'p1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).deleted_count).toBe(2);
    const after = openDatabase({ dbPath: project.dbPath });
    try {
      expect(searchIndexBehind(after)).toEqual([]);
      expect(entries(after, 'patterns')).toEqual(sources(after, 'patterns'));
      expect(entries(after, 'patterns')).toHaveLength(2);
    } finally {
      after.close();
    }
  });

  it("cleanup-error-patterns of one project that leaves another project's older row: its own sweep drops the entries", () => {
    const { db, project } = seeded();
    insertPattern(db, 'h5', 'p2', 'keep the golf replica', '2019-01-01 00:00:00');
    db.prepare("UPDATE error_patterns SET last_seen = datetime('now') WHERE pattern_hash IN ('h1', 'h3', 'h4')").run();
    db.prepare("UPDATE error_patterns SET last_seen = '2020-01-01 00:00:00' WHERE pattern_hash = 'h2'").run();
    refresh(db);
    db.close();
    const r = bazingaDbInProcess(project, ['cleanup-error-patterns', 'p1']);
    expect(JSON.parse(r.out).deleted_count).toBe(1);
    const after = openDatabase({ dbPath: project.dbPath });
    try {
      // The oldest row (p2's) is still there, so the freshness check alone could not see it.
      expect(entries(after, 'patterns')).toEqual(sources(after, 'patterns'));
      expect(entries(after, 'patterns')).toHaveLength(4);
    } finally {
      after.close();
    }
  });

  it('an index rebuilt by a release before this layout (its fingerprint key written after it) is rebuilt again', () => {
    const { db } = seeded();
    // What such a release leaves: entries numbered from 1, not by their rows, and its key.
    db.prepare("DELETE FROM error_patterns WHERE pattern_hash = 'h1'").run();
    db.prepare('DELETE FROM ca_fts_patterns').run();
    db.prepare("INSERT INTO ca_meta (key, value) VALUES ('search.patterns.fingerprint', '[3]') ON CONFLICT (key) DO UPDATE SET value = excluded.value").run();
    expect(searchIndexBehind(db)).toContain('patterns');
    refresh(db);
    expect(searchIndexBehind(db)).toEqual([]);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
    expect(matching(db, 'patterns', 'p1', 'charlie')).not.toEqual([]);
  });

  it.each([
    { name: 'in the same second: seen, the old entry replaced', lastSeen: at(180) },
    { name: 'with a past last_seen: seen (the newest second changed), the new row found', lastSeen: at(30) },
  ])('the newest pattern deleted and a new one inserted into its rowid $name', ({ lastSeen }) => {
    const { db } = seeded();
    db.prepare("DELETE FROM error_patterns WHERE pattern_hash = 'h4'").run();
    insertPattern(db, 'h9', 'p1', 'drain the mike queue', lastSeen);
    expect(db.prepare("SELECT rowid AS r FROM error_patterns WHERE pattern_hash = 'h9'").get()).toEqual({ r: 4 });
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    refresh(db);
    expect(matching(db, 'patterns', 'p1', 'mike')).toEqual(['h9']);
    expect(matching(db, 'patterns', 'p1', 'delta')).toEqual([]);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
  });

  it('the two newest strategies deleted and two new ones inserted into their rowids: seen, both found', () => {
    const { db } = seeded();
    db.prepare('DELETE FROM strategies').run();
    insertStrategy(db, 's7', 'p1', 'record the papa calls', at(600));
    insertStrategy(db, 's8', 'p1', 'replay the quebec calls', at(600));
    expect(db.prepare('SELECT MAX(rowid) AS r FROM strategies').get()).toEqual({ r: 2 });
    expect(searchIndexBehind(db)).toEqual(['strategies']);
    refresh(db);
    expect(matching(db, 'strategies', 'p1', 'calls')).toEqual(['s7', 's8']);
    expect(matching(db, 'strategies', 'p1', 'echo')).toEqual([]);
    expect(entries(db, 'strategies')).toEqual(sources(db, 'strategies'));
  });

  it('the newest strategy deleted, alone or replaced in its rowid: seen, and the entries follow the table', () => {
    const { db } = seeded();
    db.prepare("DELETE FROM strategies WHERE strategy_id = 's2'").run();
    expect(searchIndexBehind(db)).toEqual(['strategies']);
    refresh(db);
    expect(entries(db, 'strategies')).toEqual(sources(db, 'strategies'));
    insertStrategy(db, 's3', 'p1', 'replay the november fixtures', at(500));
    refresh(db);
    db.prepare("DELETE FROM strategies WHERE strategy_id = 's3'").run();
    insertStrategy(db, 's4', 'p1', 'split the oscar suite', at(500));
    expect(db.prepare("SELECT rowid AS r FROM strategies WHERE strategy_id = 's4'").get()).toEqual({ r: 2 });
    expect(searchIndexBehind(db)).toEqual(['strategies']);
    refresh(db);
    expect(matching(db, 'strategies', 'p1', 'oscar')).toEqual(['s4']);
    expect(matching(db, 'strategies', 'p1', 'november')).toEqual([]);
    expect(entries(db, 'strategies')).toEqual(sources(db, 'strategies'));
  });

  it('a deletion the check does not see (a pattern and a strategy in the middle) is harmless: the reads equal a fresh index', () => {
    const { db, project } = seeded();
    insertStrategy(db, 's3', 'p1', 'stub the foxtrot clock again', at(120));
    refresh(db);
    db.prepare("DELETE FROM error_patterns WHERE pattern_hash = 'h2'").run();
    db.prepare("DELETE FROM strategies WHERE strategy_id = 's2'").run();
    expect(searchIndexBehind(db)).toEqual([]);
    // The stale entries are still there...
    expect(entries(db, 'patterns')).toContain('2:h2');
    expect(entries(db, 'strategies')).toContain('2:s2');
    // ...and never read: matches and counts come from rows that exist.
    const read = (d: DB) => ({
      patterns: matchLearning(d, 'patterns', projectScope('p1'), words('bravo', 'the')),
      strategies: matchLearning(d, 'strategies', projectScope('p1'), words('foxtrot', 'the')),
    });
    const mine = read(db);
    expect(mine.patterns.perTerm[0]).toEqual([]);
    expect(mine.strategies.perTerm[0]).toEqual(['s3']);
    const sort = (r: ReturnType<typeof read>) => JSON.stringify(r, (_k, v) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? [...v].sort() : v));
    expect(sort(mine)).toBe(sort(fresh(db, project, read) as ReturnType<typeof read>));
  });
});

describe('building and migrating', () => {
  it('a large table is indexed newest first in batches within the budget, and the result equals a one-shot build', () => {
    const { db, project } = open();
    db.transaction(() => {
      for (let i = 0; i < 2500; i++) insertPattern(db, `h${i}`, i % 2 === 0 ? 'p1' : 'p2', `fix number w${i} of the papa family`, at(i));
    })();
    let t = 0;
    const first = writeTransaction(db, () => syncSearchIndex(db, { projectRoot: null, artifactBytes: 0, budgetMs: 0, clock: () => (t += 1) }));
    expect(first.patterns).toBe(1000);
    expect(first.backlog).toBe(1500);
    expect(matching(db, 'patterns', 'p1', 'w2498')).toEqual(['h2498']);
    expect(matching(db, 'patterns', 'p1', 'w0')).toEqual([]);
    expect(searchIndexBehind(db)).toEqual(['patterns']);
    // A pattern added meanwhile is indexed with the backlog.
    insertPattern(db, 'late', 'p1', 'quebec', at(5000));
    refresh(db);
    expect(searchIndexBehind(db)).toEqual([]);
    expect(matching(db, 'patterns', 'p1', 'quebec')).toEqual(['late']);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
    const read = (d: DB) => matchLearning(d, 'patterns', projectScope('p1'), words('papa', 'w0', 'w2499')).perTerm.map((ids) => [...ids].sort());
    expect(read(db)).toEqual(fresh(db, project, read));
  });

  it('an index of the old layout (whole-table fingerprint, entries with their own rowids) is rebuilt and its key dropped', () => {
    const { db } = seeded();
    writeTransaction(db, () => {
      db.prepare("DELETE FROM ca_meta WHERE key IN ('search.patterns.mark', 'search.strategies.mark')").run();
      db.prepare("INSERT INTO ca_meta (key, value) VALUES ('search.patterns.fingerprint', '[4,4,\"x\",4]')").run();
      db.prepare('DELETE FROM ca_fts_patterns').run();
      db.prepare("INSERT INTO ca_fts_patterns (rowid, signature, solution, pattern_hash, project_id) VALUES (77, 'x', 'restart the alpha worker', 'h1', 'p1')").run();
    });
    expect(searchIndexBehind(db)).toEqual(['patterns', 'strategies']);
    // Until it is rebuilt, the old entries are read by key.
    expect(matching(db, 'patterns', 'p1', 'alpha')).toEqual(['h1']);
    refresh(db);
    expect(entries(db, 'patterns')).toEqual(sources(db, 'patterns'));
    expect(db.prepare("SELECT COUNT(*) AS n FROM ca_meta WHERE key = 'search.patterns.fingerprint'").get()).toEqual({ n: 0 });
  });
});

describe('random histories of another tool: after each refresh the reads equal a freshly built index', () => {
  it('inserts, rewrites (in the same second or later), confidence and helpfulness updates, TTL cleanups, deletions', () => {
    const { db, project } = open();
    let x = 424242;
    const rand = (n: number) => (x = (x * 1103515245 + 12345) % 2147483648) % n;
    const words = ['amber', 'basil', 'cedar', 'delta', 'ember', 'fjord', 'gamma', 'heron'];
    const text = () => `${words[rand(8)]} ${words[rand(8)]} then ${words[rand(8)]}`;
    const projectsIds = ['p1', 'p2'];
    let clock = 0;
    let serial = 0;
    const anyRow = (table: string) => db.prepare(`SELECT rowid AS r FROM ${table} ORDER BY rowid LIMIT 1 OFFSET ?`).get(rand(Math.max(1, (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n))) as { r: number } | undefined;
    const ops: ((now: string) => void)[] = [
      (now) => insertPattern(db, `h${serial++}`, projectsIds[rand(2)] as string, text(), now),
      (now) => insertPattern(db, `h${serial++}`, projectsIds[rand(2)] as string, text(), now),
      (now) => {
        const row = anyRow('error_patterns');
        if (row) db.prepare('UPDATE error_patterns SET occurrences = occurrences + 1, last_seen = ?, solution = ? WHERE rowid = ?').run(now, rand(2) ? text() : 'same', row.r);
      },
      (now) => {
        const row = anyRow('error_patterns');
        if (row) db.prepare('UPDATE error_patterns SET confidence = ?, last_seen = ? WHERE rowid = ?').run(rand(10) / 10, now, row.r);
      },
      () => db.prepare('DELETE FROM error_patterns WHERE rowid = (SELECT MAX(rowid) FROM error_patterns)').run(),
      () => {
        // TTL cleanup: every row seen before some point (all of them equal TTLs, as both tools write).
        const row = db.prepare('SELECT last_seen AS s FROM error_patterns ORDER BY last_seen LIMIT 1 OFFSET ?').get(rand(3)) as { s: string } | undefined;
        if (row) db.prepare('DELETE FROM error_patterns WHERE last_seen <= ?').run(row.s);
      },
      () => {
        const row = anyRow('error_patterns');
        if (row) db.prepare('DELETE FROM error_patterns WHERE rowid = ?').run(row.r);
      },
      (now) => insertStrategy(db, `s${serial++}`, projectsIds[rand(2)] as string, text(), now),
      (now) => {
        const row = anyRow('strategies');
        if (row) db.prepare('UPDATE strategies SET helpfulness = helpfulness + 1, last_seen = ? WHERE rowid = ?').run(now, row.r);
      },
      () => db.prepare('DELETE FROM strategies WHERE rowid = (SELECT MAX(rowid) FROM strategies)').run(),
      () => {
        const row = anyRow('strategies');
        if (row) db.prepare('DELETE FROM strategies WHERE rowid = ?').run(row.r);
      },
    ];
    const read = (d: DB) =>
      projectsIds.map((p) => [
        matchLearning(d, 'patterns', projectScope(p), asMatches(words)),
        matchLearning(d, 'strategies', projectScope(p), asMatches(words)),
      ]).map((parts) => parts.map((m) => ({ total: m.total, perTerm: m.perTerm.map((ids) => [...ids].sort()) })));
    for (let i = 0; i < 12; i++) (ops[i % 2 === 0 ? 0 : 7] as (now: string) => void)(at(clock));
    refresh(db);
    for (let step = 0; step < 150; step++) {
      // Often the same second as the last write, sometimes the next, sometimes much later.
      clock += [0, 0, 1, 60][rand(4)] as number;
      const n = 1 + rand(3);
      for (let k = 0; k < n; k++) (ops[rand(ops.length)] as (now: string) => void)(at(clock));
      refresh(db);
      expect(read(db), `step ${step}`).toEqual(fresh(db, project, read));
    }
  });
});
