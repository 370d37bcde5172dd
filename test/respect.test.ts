/**
 * @module End-to-end journeys over real HTTP: the server is started the way an operator starts it
 * (`service init`, then `service serve` on a fresh data directory), and Redocly Respect runs the Arazzo
 * workflows of arazzo/journeys.arazzo.yaml against it — once directly, and once through
 * `prism proxy --errors`, so that an independent tool also judges every real response against the contract.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDataDir } from '@service/testing/store';
import { cliCommand, runInProcess } from '@service/testing/cli-processes';
import { freePort, startPrism, type Prism } from './support/prism.ts';

const ROOT = resolve(import.meta.dirname, '..');
// The server under test runs on its own embedded store: DATABASE_URL (set in CI) would point every `init`
// at the one shared database, which other suites use too.
const SERVER_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL' && name !== 'REDIS_URL'));

let dataDir: string;
let server: ChildProcess | undefined;
let baseUrl: string;
let apiKey: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'service-e2e-'));
  seedDataDir(dataDir);
  // `init` in this process (the CLI minus the process); the server is a real one.
  const init = await runInProcess(['init', '--json', '--data-dir', dataDir], SERVER_ENV);
  expect(init.status, init.stderr).toBe(0);
  apiKey = (JSON.parse(init.stdout) as { apiKey: string }).apiKey;
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [...cliCommand('serve'), 'serve', '--port', String(port), '--data-dir', dataDir], {
    cwd: ROOT,
    env: SERVER_ENV,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(server, /Listening on/);
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((done) => server!.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

describe('Arazzo journeys (Redocly Respect) against a running server', () => {
  it('passes every workflow', { timeout: 120_000 }, async () => {
    const result = await respect(baseUrl);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/Workflows: 4 passed, 4 total/);
  });

  it('passes through prism proxy --errors, which validates every request and response', { timeout: 120_000 }, async () => {
    let prism: Prism | undefined;
    try {
      prism = await startPrism(['proxy', 'generated/openapi.yaml', baseUrl, '--errors']);
      const result = await respect(prism.baseUrl, ['--skip', 'refusedWithoutCredential']);
      expect(result.code, result.output).toBe(0);
      expect(result.output).toMatch(/Workflows: 3 passed, 3 total/);
    } finally {
      await prism?.stop();
    }
  });
});

function respect(serverUrl: string, extra: string[] = []) {
  return run(resolve(ROOT, 'node_modules/.bin/redocly'), [
    'respect',
    'arazzo/journeys.arazzo.yaml',
    '--server',
    `service=${serverUrl}`,
    '--input',
    `apiKey=${apiKey}`,
    ...extra,
  ]);
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...SERVER_ENV, NO_COLOR: '1' } });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (b: Buffer) => ((stdout += b.toString()), (output += b.toString())));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, output }));
  });
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((done, fail) => {
    let log = '';
    const onData = (b: Buffer) => {
      log += b.toString();
      if (pattern.test(log)) done();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => fail(new Error(`server exited with ${code}:\n${log}`)));
  });
}
