/**
 * Once per test run, before any suite: the migrated PGlite data directory that suites spawning the
 * CLI copy into their data directories (`seedDataDir` of `@service/testing/store`).
 * Workers inherit the environment, so they find it through `SERVICE_TEST_PGLITE_TEMPLATE`.
 */
import { PGLITE_TEMPLATE_ENV, pgliteTemplate } from '@service/testing/store';

export default async function setup(): Promise<void> {
  process.env[PGLITE_TEMPLATE_ENV] = await pgliteTemplate();
}
