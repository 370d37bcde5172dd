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
    // One process per worker runs many test files, so the costly parts are paid once per worker, not
    // per file: the embedded PostgreSQL (each test store is a fresh schema of the worker's one PGlite,
    // see @service/testing/store) and loading the server's modules. Suites clean up what they start.
    isolate: false,
    // Vitest's default is one worker less than the cores (one, on a 2-core machine), but most slow suites
    // wait (on spawned servers, on timers, on a browser) rather than compute: four overlap those waits.
    maxWorkers: 4,
    globalSetup: ['vitest.global-setup.ts'],
    // The server's build for the suites (vitest.global-setup.ts) is plain JavaScript: Node loads it as is, when a suite
    // runs a command in-process (`runInProcess` of @service/testing/cli-processes), instead of Vitest transforming it.
    server: { deps: { external: [/\/packages\/server\/\.test-build\//] } },
  },
});
