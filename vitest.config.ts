import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Tests spawn real processes and open real SQLite files; give them room on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A warm assembler running on this machine (context-assembler serve) would otherwise answer
    // the launchers' calls; test/warm-server.test.ts runs its own.
    env: { CONTEXT_ASSEMBLER_NO_SERVER: '1' },
  },
});
