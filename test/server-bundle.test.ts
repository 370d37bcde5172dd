/**
 * The deployable server bundle (scripts/build-server-bundle.ts) as an operator uses it: built (from the test run's
 * fresh server build), copied out of the repository into an empty temporary folder keeping its symbolic links, and
 * started there with `node service.mjs serve` on the embedded store (the test run's migrated template, as other suites),
 * with no environment but PATH and HOME. Its first start's credentials then call the API; SIGTERM stops it cleanly. The
 * Dockerfile runs the same folder the same way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { CLI_BUILD_ENV } from '@service/testing/cli-processes';
import { seedDataDir } from '@service/testing/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServerBundle } from '../scripts/build-server-bundle.ts';

const BUNDLE = join(import.meta.dirname, '..', 'packages', 'server', '.test-bundle');

let copy: string;
let child: ChildProcess | undefined;
let url: string;
let output = '';

/** Every symbolic link under `dir` with the path it resolves to. */
function links(dir: string): { link: string; target: string }[] {
  const found: { link: string; target: string }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) found.push({ link: path, target: realpathSync(path) });
    else if (entry.isDirectory()) found.push(...links(path));
  }
  return found;
}

beforeAll(async () => {
  const built = process.env[CLI_BUILD_ENV];
  await buildServerBundle(BUNDLE, built ? { serverBuild: dirname(built) } : {});
  copy = mkdtempSync(join(tmpdir(), 'server-bundle-'));
  // As `cp -a` copies it: links stay links, relative as written.
  cpSync(BUNDLE, copy, { recursive: true, verbatimSymlinks: true });
  // The test run's migrated, empty store (as every suite that spawns the server starts from), in the bundle's default
  // data directory: `serve` still reads the bundle's migrations against it, and its first start still makes the first
  // workspace, without the CPU of migrating from nothing while the other suites run.
  seedDataDir(join(copy, 'data'));
  child = spawn(process.execPath, ['service.mjs', 'serve', '--port', '0'], { cwd: copy, env: { PATH: dirname(process.execPath), HOME: copy } });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  url = await new Promise<string>((resolve, reject) => {
    child!.stdout!.on('data', () => {
      const match = /Listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child!.once('exit', (code, signal) => reject(new Error(`service.mjs serve exited (${code ?? signal}): ${output}`)));
  });
}, 240_000);

afterAll(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('the server bundle, copied out of the repository', () => {
  it('holds the entry, the compiled server with its store files, the panel and production dependencies only', () => {
    for (const file of ['service.mjs', 'package.json', 'server/cli.js', 'server/pglite-thread.js', 'panel/index.html'])
      expect(lstatSync(join(copy, file)).isFile()).toBe(true);
    expect(readdirSync(join(copy, 'server', 'migrations')).some((name) => name.endsWith('.sql'))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'));
    expect(manifest.scripts).toEqual({ start: 'node service.mjs serve' });
    expect(Object.keys(manifest.dependencies)).toContain('@electric-sql/pglite');
    expect(manifest.devDependencies).toBeUndefined();
    const installed = readdirSync(join(copy, 'node_modules'));
    for (const dev of ['vitest', 'tsx', 'typescript', 'fast-check', '@service']) expect(installed).not.toContain(dev);
    // PGlite's WebAssembly and data files.
    const pglite = realpathSync(join(copy, 'node_modules', '@electric-sql', 'pglite'));
    expect(readdirSync(join(pglite, 'dist')).filter((name) => /\.(wasm|data)$/.test(name)).length).toBeGreaterThan(0);
  });

  it('links only inside itself', () => {
    const outside = links(copy).filter(({ target }) => !target.startsWith(realpathSync(copy) + sep));
    expect(outside).toEqual([]);
  });

  it('serves /healthz', async () => {
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it("answers an API call with the first start's key, and refuses one without", async () => {
    const { apiKey } = JSON.parse(readFileSync(join(copy, 'data', 'first-start-credentials.json'), 'utf8'));
    const response = await fetch(`${url}/usage/current`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await response.json()).toMatchObject({ consumedStu: 0, level: 'green' });
    const refused = await fetch(`${url}/usage/current`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'missing_bearer' });
  });

  it('serves the panel from its own folder', async () => {
    const response = await fetch(`${url}/panel/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('stops cleanly on SIGTERM', async () => {
    const exited = new Promise<[number | null, string | null]>((resolve) => child!.once('exit', (code, signal) => resolve([code, signal])));
    child!.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(output).toContain('Stopping.');
  });
});
