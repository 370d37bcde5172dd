/**
 * Once per test run, before any suite: the migrated PGlite data directory that suites spawning the
 * CLI copy into their data directories (packages/server/src/store/testing.ts `seedDataDir`).
 * Workers inherit the environment, so they find it through `SERVICE_TEST_PGLITE_TEMPLATE`.
 */
import { PGLITE_TEMPLATE_ENV, pgliteTemplate } from './packages/server/src/store/testing.ts';

export default async function setup(): Promise<void> {
  process.env[PGLITE_TEMPLATE_ENV] = await pgliteTemplate();
}
