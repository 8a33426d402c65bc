/** Process stdio helpers with no dependencies (safe to import before anything native loads). */
import fs from 'node:fs';

/** A reader that stops early (`| head`) closes the pipe; that is not an error of ours. */
export function exitQuietlyOnEpipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(Number(process.exitCode ?? 0));
    throw err;
  });
}

/**
 * Reads all of a piped stdin synchronously. A pipe may be non-blocking (EAGAIN while the previous
 * step is still writing), so wait briefly and read again until end of input. Undefined when
 * stdin is a terminal.
 */
export function readPipedStdin(): string | undefined {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(0, buffer, 0, buffer.length, null);
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
  }
  return Buffer.concat(chunks).toString('utf8');
}
