/** Process stdio helpers (safe to import before anything native loads: bazinga-db's library loads its driver lazily). */
import fs from 'node:fs';
import { invalid } from '../../../bazinga-db/scripts/lib/index.ts';

/** A reader that stops early (`| head`) closes the pipe; that is not an error of ours. */
export function exitQuietlyOnEpipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
    throw err;
  });
}

/**
 * The most a piped document may hold. A step's document is tens of kilobytes (a few hundred with
 * --explain), a hook's event about as much; a stdin past this is not one (`< /dev/zero`, a log).
 */
export const STDIN_MAX_BYTES = 16_777_216;

/** Where the launcher leaves the stdin it read (bazinga-db/bin/launch.cjs). */
const HANDED_STDIN = Symbol.for('context-assembler.stdin');

/**
 * Reads all of a piped stdin synchronously, at most `maxBytes`: a stdin holding more (a regular
 * file over the cap is refused on its size, before any read; anything else after `maxBytes` + 1
 * bytes) is a VALIDATION error naming stdin, what it is and the cap. A pipe may be non-blocking
 * (EAGAIN while the previous step is still writing), so wait briefly and read again until end of
 * input. Undefined when stdin is a terminal. Where the launcher already read it (to send it to the
 * warm assembler, which did not take it), what the launcher read.
 */
export function readPipedStdin(maxBytes = STDIN_MAX_BYTES): string | undefined {
  const tooLarge = (size: string) => invalid(`stdin: ${size}, over the cap of ${maxBytes} bytes for a piped document`);
  const handed = (globalThis as Record<symbol, unknown>)[HANDED_STDIN] as { text: string; bytes: number } | { failed: true } | undefined;
  if (handed !== undefined) {
    if ('failed' in handed) return undefined;
    if (handed.bytes > maxBytes) throw tooLarge(`more than ${maxBytes} bytes`);
    return handed.text;
  }
  if (process.stdin.isTTY) return undefined;
  let st: fs.Stats | undefined;
  try {
    st = fs.fstatSync(0);
  } catch {
    st = undefined;
  }
  if (st?.isFile() && st.size > maxBytes) throw tooLarge(`a file of ${st.size} bytes`);
  const chunks: Buffer[] = [];
  let total = 0;
  const buffer = Buffer.alloc(65536);
  while (total <= maxBytes) {
    let n: number;
    try {
      n = fs.readSync(0, buffer, 0, Math.min(buffer.length, maxBytes + 1 - total), null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        continue;
      }
      if (code === 'EOF') break;
      return undefined;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, n)));
    total += n;
  }
  if (total > maxBytes) throw tooLarge(`more than ${maxBytes} bytes${st?.isCharacterDevice() ? ' (a character device)' : ''}`);
  return Buffer.concat(chunks).toString('utf8');
}
