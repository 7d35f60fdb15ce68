import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The machine has two cores and e2e tests spawn daemons: keep the pool small.
    pool: 'forks',
    maxWorkers: 2,
    env: { NODE_ENV: 'test' },
  },
});
