/**
 * Once per test run, before any suite (workers inherit the environment it sets):
 * - the migrated PGlite data directory that suites spawning the CLI copy into their data directories
 *   (`SERVICE_TEST_PGLITE_TEMPLATE`; `seedDataDir` of `@service/testing/store`);
 * - the server's build, which those suites spawn (`SERVICE_TEST_CLI`; `cliCommand` of
 *   `@service/testing/cli-processes`): plain `node` on the bundle starts in about half the CPU of transpiling the sources
 *   in every process, and it is what `pnpm start` runs.
 */
import { fileURLToPath } from 'node:url';
import { buildServer } from './scripts/build-server.ts';
import { CLI_BUILD_ENV } from '@service/testing/cli-processes';
import { PGLITE_TEMPLATE_ENV, pgliteTemplate } from '@service/testing/store';

const TEST_BUILD = fileURLToPath(new URL('./packages/server/.test-build/', import.meta.url));

export default async function setup(): Promise<void> {
  process.env[CLI_BUILD_ENV] = await buildServer(TEST_BUILD, { quiet: true });
  process.env[PGLITE_TEMPLATE_ENV] = await pgliteTemplate();
}
