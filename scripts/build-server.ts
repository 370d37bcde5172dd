/**
 * @module The server's compiled build: `packages/server/dist/cli.js`, one ES module that plain `node`
 * runs (no transpiler at run time), the embedded store's worker thread `pglite-thread.js` beside it
 * (started by `service serve`), and the SQL migrations and functions.
 *
 *   pnpm build                    (every package; this script is the server's `build`)
 *   pnpm tsx scripts/build-server.ts --if-stale
 *
 * Bundled: the server's own sources and `generated/*.ts`. Not bundled: the packages in
 * node_modules (PGlite finds its WASM next to its own files, pino starts workers from its own
 * files), resolved at run time from packages/server as in development. The store reads its
 * migrations from `./migrations/` and its functions from `./functions/` beside the running module, so they are copied there. Type
 * checking stays with `pnpm lint:ts`; esbuild only strips types.
 *
 * `--if-stale` builds only when a source file (server, generated, this script, the lockfile) is
 * newer than the output, so `pnpm start` right after `pnpm install` on a fresh clone builds once.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVER = join(ROOT, 'packages/server');
const DIST = join(SERVER, 'dist');
const ENTRY = join(SERVER, 'src/cli.ts');
/** The embedded store's worker thread: its own entry, `pglite-thread.js` beside `cli.js` (store/pglite-worker.ts finds it there). */
const STORE_THREAD = join(SERVER, 'src/store/pglite-thread.ts');
const OUTFILE = join(DIST, 'cli.js');
const MIGRATIONS = join(SERVER, 'src/store/migrations');
const FUNCTIONS = join(SERVER, 'src/store/functions');

/** The newest modification time under `dir` (files only), skipping tests. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) latest = Math.max(latest, newest(path));
    else if (!entry.name.endsWith('.test.ts')) latest = Math.max(latest, statSync(path).mtimeMs);
  }
  return latest;
}

/** Whether the output is missing or older than anything it is built from. */
export function isStale(): boolean {
  if (!existsSync(OUTFILE)) return true;
  const built = statSync(OUTFILE).mtimeMs;
  const inputs = [newest(join(SERVER, 'src')), newest(join(ROOT, 'generated')), statSync(fileURLToPath(import.meta.url)).mtimeMs];
  for (const file of [join(ROOT, 'pnpm-lock.yaml'), join(SERVER, 'package.json')]) if (existsSync(file)) inputs.push(statSync(file).mtimeMs);
  return inputs.some((t) => t > built);
}

/**
 * Builds into `dist` (packages/server/dist by default; the test run builds its own copy beside it,
 * at the same depth, so packages and the panel resolve alike). Returns the built `cli.js`.
 */
export async function buildServer(dist = DIST, options: { quiet?: boolean } = {}): Promise<string> {
  const started = performance.now();
  const outfile = join(dist, 'cli.js');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  await build({
    entryPoints: { cli: ENTRY, 'pglite-thread': STORE_THREAD },
    outdir: dist,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    // Dependencies stay in node_modules: several of them load their own files at run time.
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  cpSync(MIGRATIONS, join(dist, 'migrations'), { recursive: true });
  cpSync(FUNCTIONS, join(dist, 'functions'), { recursive: true });
  if (!options.quiet) process.stdout.write(`built ${outfile.slice(ROOT.length)} in ${(performance.now() - started).toFixed(0)} ms\n`);
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
  await buildServer();
}
