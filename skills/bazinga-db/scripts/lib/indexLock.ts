/**
 * The lock of a whole-index run (`index-search`): the file `<db>.index-search.pid` holds the
 * running indexer's process id. One indexer at a time; a spawn that finds one running leaves the
 * backlog to it.
 */
import fs from 'node:fs';

export const indexLockOf = (dbPath: string) => `${dbPath}.index-search.pid`;

/** The live process holding the lock of `dbPath`'s indexer, or undefined (none, or a dead one's). */
export function indexerRunning(dbPath: string): number | undefined {
  let holder: number;
  try {
    holder = Number(fs.readFileSync(indexLockOf(dbPath), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(holder) || holder <= 0) return undefined;
  try {
    process.kill(holder, 0);
    return holder;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? holder : undefined;
  }
}

/** Takes the indexer's lock; false when another live indexer holds it. A dead holder's lock is taken over. */
export function takeIndexLock(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true; // a folder it cannot write: no lock to take, index anyway
      if (indexerRunning(file.slice(0, -'.index-search.pid'.length)) !== undefined) return false;
      fs.rmSync(file, { force: true });
    }
  }
  return false;
}
