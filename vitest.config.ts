import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Tests spawn real processes and open real SQLite files; give them room on a shared 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
