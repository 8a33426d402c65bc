// The bench's timing process: a small plain-Node process that spawns each timed command and
// measures it, so that the cost of starting a child does not grow with the benchmark's own memory
// (fork copies the parent's page tables: from a 1–2 GB parent a spawn costs 100–250 ms more).
// Protocol (IPC): { id, file, args, cwd, env } → { id, ms, status, stdout, stderr, error }.
'use strict';
const { spawnSync } = require('node:child_process');

process.on('message', (m) => {
  const start = process.hrtime.bigint();
  const r = spawnSync(m.file, m.args, {
    cwd: m.cwd,
    env: m.env || process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  process.send({ id: m.id, ms, status: r.status, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error ? String(r.error) : null });
});
process.on('disconnect', () => process.exit(0));
