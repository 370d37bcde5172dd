/**
 * @module The quick starts of docs/sdk.md and the package READMEs run as written against a real server:
 * the TypeScript one with plain `node`, importing `@service/sdk` built by the package's own tsc config; the Python
 * one with `python3`. Both read SERVICE_API_KEY and SERVICE_BASE_URL, as the docs say.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LiveServer, startLiveServer } from './support/live-server.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const PORT = 19221;

/** The code of the fenced block that starts with `marker` (its first line). */
function snippet(file: string, marker: string): string {
  const text = readFileSync(resolve(ROOT, file), 'utf8');
  const start = text.indexOf(`${marker}\n`);
  if (start < 0) throw new Error(`${file} has no block starting with ${marker}`);
  const open = text.lastIndexOf('```', start);
  const end = text.indexOf('```', start);
  expect(text.slice(open, start)).toMatch(/^```(js|python)\n$/);
  return text.slice(start, end);
}

let live: LiveServer;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-quickstart-'));
  live = await startLiveServer({ port: PORT, env: { TRUST_PROXY: '1' } });
}, 120_000);

afterAll(async () => {
  await live?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, SERVICE_API_KEY: live.init.apiKey, SERVICE_BASE_URL: live.url });

describe('the quick starts, as written', () => {
  it('TypeScript: docs/sdk.md and the README show the same code, and it runs with node against the built package', { timeout: 120_000 }, () => {
    const code = snippet('packages/sdk/README.md', '// quickstart.mjs');
    expect(snippet('docs/sdk.md', '// quickstart.mjs')).toBe(code);

    const pkg = join(dir, 'node_modules', '@service', 'sdk');
    mkdirSync(pkg, { recursive: true });
    copyFileSync(resolve(ROOT, 'packages/sdk/package.json'), join(pkg, 'package.json'));
    const build = spawnSync(resolve(ROOT, 'node_modules/.bin/tsc'), ['-p', resolve(ROOT, 'packages/sdk/tsconfig.build.json'), '--outDir', join(pkg, 'dist')], {
      encoding: 'utf8',
    });
    expect(build.status, build.stdout + build.stderr).toBe(0);
    writeFileSync(join(dir, 'quickstart.mjs'), code);
    const run = spawnSync(process.execPath, ['quickstart.mjs'], { cwd: dir, env: env(), encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^finance: /);
    expect(run.stdout).toMatch(/\nrun run_\w+: \d+ output tokens\n/);
    expect(run.stdout).toMatch(/run run_\w+ is completed\n/);
    expect(run.stdout).toMatch(/\d+ of \d+ STU used this period \([\d.]+ %\)\n$/);
  });

  it('Python: docs/sdk.md and the README show the same code, and it runs with python3', { timeout: 120_000 }, () => {
    const code = snippet('packages/sdk-python/README.md', '# quickstart.py');
    expect(snippet('docs/sdk.md', '# quickstart.py')).toBe(code);
    writeFileSync(join(dir, 'quickstart.py'), code);
    const python = [process.env.PYTHON, 'python3', '/usr/bin/python3']
      .filter((c): c is string => Boolean(c))
      .find((c) => spawnSync(c, ['-c', 'import httpx'], { stdio: 'ignore' }).status === 0);
    expect(python, 'no python3 with httpx').toBeDefined();
    const run = spawnSync(python!, ['quickstart.py'], {
      cwd: dir,
      env: { ...env(), PYTHONPATH: resolve(ROOT, 'packages/sdk-python'), PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^finance: /);
    expect(run.stdout).toMatch(/\nrun run_\w+: \d+ output tokens\n/);
    expect(run.stdout).toMatch(/run run_\w+ is completed\n/);
    expect(run.stdout).toMatch(/\d+ of \d+ STU used this period \([\d.]+ %\)\n$/);
  });
});
