/**
 * Where no warm assembler can run (no folder only this user can enter for its socket, a socket path
 * too long, no Unix sockets: the launcher finds why, warmServer.cjs serverStatus), every call
 * assembles in its own process. That is said on stderr once a day per project and reason, not on
 * every call: the project keeps a note of what it said (`bazinga/.context-assembler/no-server.json`),
 * which doctor shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomically } from '../../../bazinga-db/scripts/lib/index.ts';

/** What the note holds: the day (UTC) it was said, and why no server can run. */
export interface NoServerNote {
  day: string;
  why: string;
}

/** The note's file in a project. */
export function noServerNotePath(projectRoot: string): string {
  return path.join(projectRoot, 'bazinga', '.context-assembler', 'no-server.json');
}

/** The project's note, when there is a readable one. */
export function readNoServerNote(projectRoot: string): NoServerNote | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(noServerNotePath(projectRoot), 'utf8')) as Partial<NoServerNote>;
    return typeof v.day === 'string' && typeof v.why === 'string' ? { day: v.day, why: v.why } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Says on `stderr` that no warm assembler can run here (`why`), unless the project's note says it
 * was said today for the same reason; then keeps the note. A project without a bazinga/ folder, or
 * one whose note cannot be written, is told every time (nothing remembers it).
 */
export function sayNoServerOnce(projectRoot: string, why: string, stderr: (text: string) => void, now: Date): void {
  const day = now.toISOString().slice(0, 10);
  const note = readNoServerNote(projectRoot);
  if (note?.day === day && note.why === why) return;
  stderr(`⚠ context-assembler: no warm assembler can run here (${why}); every call assembles in its own process (said once a day; context-assembler doctor shows it)\n`);
  try {
    const file = noServerNotePath(projectRoot);
    if (!fs.statSync(path.join(projectRoot, 'bazinga')).isDirectory()) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    writeFileAtomically(file, JSON.stringify({ day, why }) + '\n', { mode: 0o600 });
  } catch {
    // not remembered: said again next time
  }
}
