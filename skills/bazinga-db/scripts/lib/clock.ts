/**
 * Milliseconds on a monotonic clock, for budgets and deadlines. process.hrtime rather than
 * `performance.now()`: the global `performance` loads node:perf_hooks on its first use, 1-2 ms of
 * every start (measured: 1.0-10 ms for that first access, against nothing for process.hrtime).
 */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}
