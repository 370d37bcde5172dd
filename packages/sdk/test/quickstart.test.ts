/**
 * @module The SDKs used from another project, as docs/sdk.md tells a developer to: `pnpm pack:sdks` writes the
 * npm tarball and the Python wheel; a project in a temporary directory outside this repository installs them
 * (`npm install <tarball>`; `pip install <wheel>` in a `python3 -m venv --system-site-packages` venv, no index)
 * and runs the quick starts, taken from docs/sdk.md itself, against a real `service serve` whose first start on
 * an empty data directory wrote `data/first-start-credentials.json`, as after README's `pnpm start`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand } from '@service/testing/cli-processes';
import { seedDataDir } from '@service/testing/store';

const ROOT = resolve(import.meta.dirname, '../../..');
const PORT = 18710;

/** The code of the fenced block that starts with `marker` (its first line). */
function snippet(file: string, marker: string): string {
  const text = readFileSync(resolve(ROOT, file), 'utf8');
  const start = text.indexOf(`${marker}\n`);
  if (start < 0) throw new Error(`${file} has no block starting with ${marker}`);
  const open = text.lastIndexOf('```', start);
  const end = text.indexOf('```', start);
  expect(text.slice(open, start)).toMatch(/^```(js|python|sh)\n$/);
  return text.slice(start, end);
}

/** Runs a command to its end; fails the test with its output when it does not exit 0. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result = spawnSync(command, args, { ...options, encoding: 'utf8' });
  expect(result.status, `${command} ${args.join(' ')}: ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout;
}

/**
 * A python3 that makes a venv whose system site gives httpx (the wheel's one dependency, with no package index),
 * and one that builds the wheel (setuptools and wheel). Debian: python3-venv, python3-httpx, python3-setuptools,
 * python3-wheel.
 */
const PYTHONS = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => Boolean(c));
const has = (modules: string) => PYTHONS.find((c) => spawnSync(c, ['-c', `import ${modules}`], { stdio: 'ignore' }).status === 0);
const venvPython = has('venv, ensurepip, httpx');
const wheelPython = has('setuptools.build_meta, wheel');
const pythonMissing =
  venvPython === undefined
    ? 'no python3 with venv, ensurepip and httpx (apt-get install python3-venv python3-httpx)'
    : wheelPython === undefined
      ? 'no python3 with setuptools and wheel to build the wheel (apt-get install python3-setuptools python3-wheel)'
      : undefined;

let dir: string;
let packages: string;
let serverDir: string;
let server: ChildProcess | undefined;
let env: NodeJS.ProcessEnv;

/** `service serve` on an empty embedded store, as `pnpm start` runs it; resolves once it listens. */
function serve(): Promise<void> {
  const serverEnv: NodeJS.ProcessEnv = { ...process.env, TRUST_PROXY: '1' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'HOST', 'SECRET_KEY']) delete serverEnv[name];
  return new Promise((done, fail) => {
    // The server's build, as `pnpm start` runs it, on <serverDir>/data: the folder the quick start's lines read. Its
    // store is the test run's migrated, empty one (`seedDataDir`), as after creating it; the first start finds no workspace.
    seedDataDir(join(serverDir, 'data'));
    const args = [...cliCommand('serve'), 'serve', '--host', '127.0.0.1', '--port', String(PORT), '--data-dir', join(serverDir, 'data')];
    const child = spawn(process.execPath, args, { cwd: ROOT, env: serverEnv });
    server = child;
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Listening on/.test(output)) done();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => fail(new Error(`serve exited (${code ?? signal}): ${output}`)));
  });
}

/** `pnpm pack:sdks --out <dir>`: the same script as `pnpm build` runs. */
function pack(): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'scripts/pack-sdks.ts'), '--out', packages], { cwd: ROOT });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('close', (code) => (code === 0 ? done() : fail(new Error(`pack:sdks exited ${code}: ${output}`))));
  });
}

beforeAll(async () => {
  // Outside the repository: nothing here can resolve the workspace's node_modules or packages/.
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sdk-elsewhere-')));
  expect(dir.startsWith(ROOT)).toBe(false);
  packages = join(dir, 'dist-packages');
  serverDir = join(dir, 'service');
  mkdirSync(serverDir);
  await Promise.all([pack(), serve()]);

  // The shell lines of the quick start, as written, in the folder where `pnpm start` ran.
  const lines = snippet('docs/sdk.md', '# start the server, in this repository').split('\n');
  const exports = lines.filter((line) => line.startsWith('export SERVICE_'));
  expect(exports.map((line) => line.split('=')[0])).toEqual(['export SERVICE_API_KEY', 'export SERVICE_BASE_URL']);
  const shown = run('sh', ['-c', `${exports.join('\n')}\nprintf '%s\\n%s' "$SERVICE_API_KEY" "$SERVICE_BASE_URL"`], { cwd: serverDir });
  const [apiKey, baseUrl] = shown.split('\n');
  expect(apiKey).toMatch(/^service_sk_/);
  expect(baseUrl).toBe('http://127.0.0.1:8080');
  env = { ...process.env, SERVICE_API_KEY: apiKey, SERVICE_BASE_URL: `http://127.0.0.1:${PORT}` };
}, 180_000);

afterAll(async () => {
  const running = server;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((done) => running.once('exit', done));
    running.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What both quick starts print, whatever the language. */
function expectQuickStartOutput(stdout: string): void {
  expect(stdout).toMatch(/^finance: /);
  expect(stdout).toMatch(/\nrun run_\w+: \d+ output tokens\n/);
  expect(stdout).toMatch(/run run_\w+ is completed\n/);
  expect(stdout).toMatch(/\d+ of \d+ STU used this period \([\d.]+ %\)\n$/);
}

describe('the SDKs installed from their packed files into a project elsewhere', () => {
  it('TypeScript: npm installs the tarball (a copy, no workspace link), and the quick start of docs/sdk.md runs with node', { timeout: 120_000 }, () => {
    const code = snippet('docs/sdk.md', '// quickstart.mjs');
    expect(snippet('packages/sdk/README.md', '// quickstart.mjs')).toBe(code);
    const tarball = readdirSync(packages).find((name) => /^service-sdk-\d+\.\d+\.\d+\.tgz$/.test(name));
    expect(tarball, `pack:sdks wrote ${readdirSync(packages).join(', ')}`).toBeDefined();

    const project = join(dir, 'ts-project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'elsewhere', private: true, type: 'module' })}\n`);
    run('npm', ['install', '--no-audit', '--no-fund', join(packages, tarball!)], { cwd: project });
    const installed = join(project, 'node_modules/@service/sdk');
    expect(lstatSync(installed).isSymbolicLink()).toBe(false);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown> & {
      exports: Record<string, Record<string, string>>;
    };
    expect(JSON.stringify(manifest)).not.toMatch(/workspace:|catalog:/);
    expect(manifest).not.toHaveProperty('dependencies');
    for (const file of [manifest.main, manifest.types, manifest.exports['.']!.import, manifest.exports['.']!.types]) {
      expect(existsSync(join(installed, file as string)), `${file} is in the tarball`).toBe(true);
    }

    writeFileSync(join(project, 'quickstart.mjs'), code);
    expectQuickStartOutput(run(process.execPath, ['quickstart.mjs'], { cwd: project, env }));
  });

  it(pythonMissing
    ? `Python: skipped, ${pythonMissing}`
    : 'Python: pip installs the wheel into a venv (no index), and the quick start of docs/sdk.md runs with its python', { timeout: 120_000 }, (context) => {
    if (pythonMissing) return context.skip();
    const code = snippet('docs/sdk.md', '# quickstart.py');
    expect(snippet('packages/sdk-python/README.md', '# quickstart.py')).toBe(code);
    const wheel = readdirSync(packages).find((name) => /^service_sdk-\d+\.\d+\.\d+-py3-none-any\.whl$/.test(name));
    expect(wheel, `pack:sdks wrote ${readdirSync(packages).join(', ')}`).toBeDefined();
    expect(readdirSync(packages).some((name) => /^service[-_]sdk-\d+\.\d+\.\d+\.tar\.gz$/.test(name))).toBe(true);

    const project = join(dir, 'py-project');
    mkdirSync(project);
    const venv = join(project, '.venv');
    run(venvPython!, ['-m', 'venv', '--system-site-packages', venv], { cwd: project });
    const python = join(venv, 'bin/python');
    // No package index: httpx comes from the system site, as docs/sdk.md says for a machine without PyPI.
    const pipEnv = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1', PYTHONDONTWRITEBYTECODE: '1' };
    run(python, ['-m', 'pip', 'install', '--no-index', join(packages, wheel!)], { cwd: project, env: pipEnv });
    const location = run(python, ['-c', 'import service_sdk; print(service_sdk.__file__)'], { cwd: project, env: pipEnv });
    expect(location.startsWith(venv)).toBe(true);

    writeFileSync(join(project, 'quickstart.py'), code);
    expectQuickStartOutput(run(python, ['quickstart.py'], { cwd: project, env: { ...env, PYTHONDONTWRITEBYTECODE: '1' } }));
  });
});
