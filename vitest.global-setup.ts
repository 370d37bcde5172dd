/**
 * Once per test run, before any suite (workers inherit the environment it sets):
 * - the migrated PGlite data directory that suites spawning the CLI copy into their data directories
 *   (`SERVICE_TEST_PGLITE_TEMPLATE`; `seedDataDir` of `@service/testing/store`);
 * - the server's build, which those suites spawn (`SERVICE_TEST_CLI`; `cliCommand` of
 *   `@service/testing/cli-processes`): plain `node` on the bundle starts in about half the CPU of transpiling the sources
 *   in every process, and it is what `pnpm start` runs;
 * - the panel's build (`packages/panel/dist`, under a second), which the servers serve at `/panel`: built once here, so
 *   the suites test the panel as it is now and none rebuilds `dist/` (emptied, then written) while another's
 *   server serves from it (a page whose script vanished mid-load waited for its heading until the test timed out).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer } from './scripts/build-server.ts';
import { CLI_BUILD_ENV } from '@service/testing/cli-processes';
import { PGLITE_TEMPLATE_ENV, pgliteTemplate } from '@service/testing/store';

const TEST_BUILD = fileURLToPath(new URL('./packages/server/.test-build/', import.meta.url));
const PANEL_DIR = fileURLToPath(new URL('./packages/panel/', import.meta.url));

export default async function setup(): Promise<void> {
  process.env[CLI_BUILD_ENV] = await buildServer(TEST_BUILD, { quiet: true });
  process.env[PGLITE_TEMPLATE_ENV] = await pgliteTemplate();
  execFileSync(join(PANEL_DIR, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn'], { cwd: PANEL_DIR, stdio: 'pipe' });
}
