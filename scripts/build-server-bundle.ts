/**
 * @module The deployable server bundle: one folder that runs with plain `node` and nothing else, copied anywhere.
 *
 *   pnpm build:server-bundle [--out DIR]     (default dist-server/; `--help`)
 *
 *   service.mjs       the entry: `node service.mjs serve` (every `service` command: `node service.mjs --help`)
 *   server/           the compiled server (scripts/build-server.ts: cli.js, the store's pglite-thread.js, migrations/, functions/)
 *   panel/            the built panel, served at /panel
 *   node_modules/     the server's production dependencies only, at the lockfile's versions (`pnpm deploy --prod`),
 *                     PGlite's WebAssembly and data files included
 *   package.json      those dependencies, pinned
 *
 * The folder holds everything it needs: copy it (keeping its symbolic links: `cp -a`, `tar`, `rsync -a`, Docker's COPY)
 * to a machine with Node 22.12+ or 24, and `node service.mjs serve` there. Settings are the server's (docs/operations.md);
 * the embedded store's data goes to `./data` under the folder it is started in unless DATA_DIR says otherwise. The
 * Dockerfile builds this and runs it. test/server-bundle.test.ts builds it, copies it out of the repository and starts it.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildServer } from './build-server.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PANEL = join(ROOT, 'packages/panel');
export const DEFAULT_OUT = join(ROOT, 'dist-server');

/** The bundle's entry: the `service` command line of the compiled server. */
const ENTRY = `#!/usr/bin/env node
// The Agent Invocation Service: \`node service.mjs serve\` starts the server; \`node service.mjs --help\` lists the commands.
import { main } from './server/cli.js';

main();
`;

/** A bundle that cannot be built where it was asked for. */
export class BundleError extends Error {}

export interface BundleOptions {
  /** A fresh build of the server (a folder as scripts/build-server.ts writes it) to copy instead of building again. */
  serverBuild?: string;
  /** Progress lines; none when absent. */
  say?: (line: string) => void;
}

/** Builds the bundle into `out` (emptied first). Resolves with `out`. */
export async function buildServerBundle(out: string, options: BundleOptions = {}): Promise<string> {
  const say = options.say ?? (() => {});
  // Emptied first: only an earlier bundle, never a folder of something else (`--out .` would be the checkout).
  if (existsSync(out) && readdirSync(out).length > 0 && !existsSync(join(out, 'service.mjs'))) {
    throw new BundleError(`${out} is not empty and holds no earlier bundle (no service.mjs): choose an empty or new folder with --out.`);
  }
  rmSync(out, { recursive: true, force: true });
  say(`production dependencies of @service/server into ${relative(ROOT, out) || out}/node_modules (pnpm deploy --prod)`);
  // From the store, as the lockfile pins them; the network only for a package the store lacks.
  execFileSync('pnpm', ['--filter', '@service/server', 'deploy', '--prod', '--prefer-offline', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  // The deploy copies the package's own files too (its TypeScript sources): the bundle runs the compiled server instead.
  for (const entry of readdirSync(out)) if (entry !== 'node_modules' && entry !== 'package.json') rmSync(join(out, entry), { recursive: true, force: true });
  const deployed = JSON.parse(readFileSync(join(out, 'package.json'), 'utf8'));
  const manifest = {
    name: '@service/server-bundle',
    version: deployed.version,
    private: true,
    type: 'module',
    description: 'The Agent Invocation Service, self-contained: node service.mjs serve',
    engines: deployed.engines,
    scripts: { start: 'node service.mjs serve' },
    dependencies: deployed.dependencies,
  };
  writeFileSync(join(out, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  const server = join(out, 'server');
  if (options.serverBuild) {
    say(`the compiled server from ${relative(ROOT, options.serverBuild)}`);
    cpSync(options.serverBuild, server, { recursive: true });
  } else {
    say('the compiled server (esbuild)');
    await buildServer(server, { quiet: true });
  }

  if (!existsSync(join(PANEL, 'dist', 'index.html'))) {
    say('the panel (vite build)');
    execFileSync(join(PANEL, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'warn'], { cwd: PANEL, stdio: 'inherit' });
  }
  say('the panel from packages/panel/dist');
  cpSync(join(PANEL, 'dist'), join(out, 'panel'), { recursive: true });

  writeFileSync(join(out, 'service.mjs'), ENTRY, { mode: 0o755 });
  return out;
}

/** The bytes of the files under `dir`, symbolic links not followed (what `du` counts, roughly). */
export function sizeOf(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += sizeOf(path);
    else if (entry.isFile()) bytes += statSync(path).size;
  }
  return bytes;
}

const HELP = `Usage: pnpm build:server-bundle [--out DIR]

Builds the deployable server bundle into DIR (default dist-server/, emptied first): service.mjs, the compiled
server, the built panel and the production dependencies only. Copy the folder anywhere (keeping its symbolic
links: cp -a, tar, rsync -a) and run \`node service.mjs serve\` there (Node 22.12+ or 24). docs/operations.md,
"A deployable bundle".`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let values: { out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (err) {
    process.stderr.write(`build:server-bundle: ${(err as Error).message}\n\n${HELP}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    process.exit(0);
  }
  const started = performance.now();
  const out = await buildServerBundle(values.out ? resolve(values.out) : DEFAULT_OUT, { say: (line) => process.stdout.write(`bundle: ${line}\n`) }).catch(
    (err: unknown) => {
      if (!(err instanceof BundleError)) throw err;
      process.stderr.write(`build:server-bundle: ${err.message}\n`);
      process.exit(2);
    },
  );
  const mib = (sizeOf(out) / 2 ** 20).toFixed(0);
  process.stdout.write(
    `bundle: ${out} (${mib} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s; run it with: cd ${out} && node service.mjs serve\n`,
  );
}
