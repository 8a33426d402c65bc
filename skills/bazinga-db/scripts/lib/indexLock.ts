/**
 * The lock of a whole-index run (`index-search`): the file `<db>.index-search.pid` holds the
 * running indexer's process id, and the indexer touches it after every transaction. One indexer at
 * a time; a spawn that finds one running leaves the backlog to it. A lock counts only while it is
 * fresh (touched within LOCK_STALE_MS): an indexer killed without cleaning up (SIGTERM, OOM, a
 * container stop) leaves a lock that expires, even when its pid is reused by another process or
 * lingers as a zombie.
 */
import fs from 'node:fs';
import path from 'node:path';

const indexLockOf = (dbPath: string) => `${dbPath}.index-search.pid`;

/** How long a lock stays live without its indexer touching it (a transaction takes about 25 ms; a pause for spawns at most YIELD_STALE_MS). */
export const LOCK_STALE_MS = 30_000;

/** The process holding a live lock on `dbPath`'s indexer, or undefined (none, stale, or a dead holder's). */
export function indexerRunning(dbPath: string, nowMs = Date.now()): number | undefined {
  const file = indexLockOf(dbPath);
  let holder: number;
  let mtime: number;
  try {
    mtime = fs.statSync(file).mtimeMs;
    holder = Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (nowMs - mtime > LOCK_STALE_MS) return undefined;
  // Being written (created, its pid not yet in it): live while fresh.
  if (holder === 0) return -1;
  return alive(holder) ? holder : undefined;
}

/** Takes the lock of `dbPath`'s indexer; false when a live indexer holds it. A stale or dead holder's lock is taken over. */
export function takeIndexLock(dbPath: string): boolean {
  const file = indexLockOf(dbPath);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true; // a folder it cannot write: no lock to take, index anyway
      if (indexerRunning(dbPath) !== undefined) return false;
      fs.rmSync(file, { force: true });
    }
  }
  return false;
}

/** Marks the lock as held a while longer (after each transaction). */
export function touchIndexLock(dbPath: string): void {
  try {
    const now = new Date();
    fs.utimesSync(indexLockOf(dbPath), now, now);
  } catch {
    // gone or not ours to touch: the run goes on
  }
}

/** Removes the lock if it is still this process's (another indexer may have taken over a lock it judged stale). */
export function releaseIndexLock(dbPath: string): void {
  const file = indexLockOf(dbPath);
  try {
    if (Number(fs.readFileSync(file, 'utf8').trim()) === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // already gone
  }
}

/**
 * A spawn that finds the indexer running asks it to step aside: it writes the file
 * `<db>.index-search.yield.<pid>`, and while any such request is live (its process alive, the file
 * touched within YIELD_STALE_MS) the indexer starts no new transaction, so the spawn's own writes
 * (its claim, its caches) get the lock at once instead of racing the indexer's next transaction
 * for it. Each spawn has its own file, removed when it exits; a spawn killed before that leaves a
 * file that no longer counts (its process gone, or stale). While spawns keep asking, the index
 * waits: spawns are seconds apart, a request lasts one spawn.
 */
const YIELD_SUFFIX = '.index-search.yield.';

/** How long a request to step aside holds at most (a spawn takes a few hundred milliseconds). */
export const YIELD_STALE_MS = 2_000;

const asked = new Set<string>();

/** Asks the indexer of `dbPath` to start no transaction until this process exits (best effort). */
export function askIndexerToYield(dbPath: string): void {
  const file = `${dbPath}${YIELD_SUFFIX}${process.pid}`;
  try {
    fs.writeFileSync(file, '');
  } catch {
    return; // a folder it cannot write: the spawn waits its turn for the lock, as without the file
  }
  asked.add(file);
  if (!withdrawAtExit) {
    withdrawAtExit = true;
    process.once('exit', withdrawYieldRequests);
  }
}

let withdrawAtExit = false;

/** Withdraws this process's requests to step aside (at its exit; the warm assembler after each request). */
export function withdrawYieldRequests(): void {
  for (const file of asked) {
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // it expires on its own (YIELD_STALE_MS)
    }
  }
  asked.clear();
}

/** Whether a live spawn has asked the indexer of `dbPath` to step aside. */
export function indexerShouldYield(dbPath: string, nowMs = Date.now()): boolean {
  const dir = path.dirname(dbPath);
  const prefix = `${path.basename(dbPath)}${YIELD_SUFFIX}`;
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.startsWith(prefix));
  } catch {
    return false;
  }
  return names.some((name) => {
    const pid = Number(name.slice(prefix.length));
    const file = path.join(dir, name);
    try {
      if (nowMs - fs.statSync(file).mtimeMs > YIELD_STALE_MS || !alive(pid)) {
        fs.rmSync(file, { force: true }); // a request nobody holds any more
        return false;
      }
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether a process holds `pid` (EPERM: alive, another user's). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
