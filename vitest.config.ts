import { defineConfig } from 'vitest/config';

// One test run for the whole workspace: package suites plus the cross-package suites in test/.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites that share PostgreSQL / Redis / ports must not trample each other.
    fileParallelism: true,
    pool: 'forks',
    globalSetup: ['vitest.global-setup.ts'],
  },
});
