import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The reliability suite's figures (packages/cli/test/reliability) end every run's log as one table.
    reporters: ['default', './packages/cli/test/reliability/reliability-reporter.ts'],
  },
});
