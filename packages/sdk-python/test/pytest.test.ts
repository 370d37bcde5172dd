/**
 * @module Runs the Python SDK's pytest suite (packages/sdk-python/tests) against the real server: starts
 * `service init` + `service serve` on a loopback port, an HTTPS receiver for webhook deliveries (each saved
 * as JSON for the Python side to verify), and passes them to pytest through SERVICE_TEST_* variables.
 * Needs a python3 with httpx and pytest (`.ci/run` installs python3-httpx and python3-pytest).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSelfSignedCertificate, type HttpsTestReceiver, startHttpsTestReceiver } from '@service/testing/https-receiver';
import { type LiveServer, startLiveServer } from '../../sdk/test/support/live-server.ts';

// Free ports, chosen by the system: the server's (port 0) and the Python loopback proxy's (0 too).
const PORT = 0;
const PROXY_PORT = 0;
const PACKAGE = resolve(import.meta.dirname, '..');

/** The first interpreter that has httpx and pytest: PYTHON, python3 on the PATH, then the system one. */
function python(): string | undefined {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => Boolean(c));
  return candidates.find((candidate) => spawnSync(candidate, ['-c', 'import httpx, pytest'], { stdio: 'ignore' }).status === 0);
}

let live: LiveServer;
/** A second admin, so that the async client logs in with its own TOTP code (each code is accepted once). */
let second: { email: string; password: string; totpSecret: string };
let receiver: HttpsTestReceiver;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-python-'));
  const certificate = createSelfSignedCertificate();
  writeFileSync(join(dir, 'receiver-ca.pem'), certificate.cert);
  let count = 0;
  receiver = await startHttpsTestReceiver(certificate, (request) => {
    count += 1;
    // Written under another name, then renamed: the tests read every `*.json` while deliveries arrive, and a file
    // created but not yet written read as empty (JSONDecodeError, seen once in CI).
    const file = join(dir, `delivery-${String(count).padStart(4, '0')}.json`);
    writeFileSync(`${file}.partial`, JSON.stringify({ body: request.body.toString('hex'), headers: request.headers }));
    renameSync(`${file}.partial`, file);
    return { status: 200 };
  });
  live = await startLiveServer({
    port: PORT,
    env: { TRUST_PROXY: '1', WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_POLL_MS: '100', NODE_EXTRA_CA_CERTS: join(dir, 'receiver-ca.pem') },
    setup: async (cli) => {
      await cli('plan', 'set', 'starter');
      second = JSON.parse(await cli('users', 'add', '--email', 'second.admin@example.com', '--role', 'admin', '--json')) as typeof second;
    },
  });
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await live?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** An interpreter with mypy, if there is one (Debian: `apt-get install mypy`; `.ci/run` installs it). */
function mypy(): string | undefined {
  const candidates = [process.env.PYTHON, 'python3', '/usr/bin/python3'].filter((c): c is string => Boolean(c));
  return candidates.find((candidate) => spawnSync(candidate, ['-m', 'mypy', '--version'], { stdio: 'ignore' }).status === 0);
}

describe('the Python SDK types', () => {
  const interpreter = mypy();
  it.skipIf(!interpreter)('pass mypy --strict (the generated models and operations included)', { timeout: 180_000 }, () => {
    // Incremental, with its cache in the system's temporary folder (not in the package; one per checkout): a run after
    // an earlier one re-reads only what changed (about 0.3 s of CPU instead of 10 for the standard library's stubs),
    // with the same result.
    const cacheDir = join(tmpdir(), `service-sdk-python-mypy-cache-${createHash('sha256').update(PACKAGE).digest('hex').slice(0, 12)}`);
    const result = spawnSync(interpreter!, ['-m', 'mypy', '--strict', '--cache-dir', cacheDir, 'service_sdk'], {
      cwd: PACKAGE,
      encoding: 'utf8',
    });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Success: no issues found/m);
  });
});

describe('the Python SDK (pytest) against the real server', () => {
  it('passes every test', { timeout: 300_000 }, async () => {
    const interpreter = python();
    expect(interpreter, 'no python3 with httpx and pytest: apt-get install python3-httpx python3-pytest').toBeDefined();
    const { admin, apiKey } = live.init;
    const result = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn(interpreter!, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {
        cwd: PACKAGE,
        env: {
          ...process.env,
          PYTHONDONTWRITEBYTECODE: '1',
          SERVICE_TEST_BASE_URL: live.url,
          SERVICE_TEST_API_KEY: apiKey,
          SERVICE_TEST_ADMIN_EMAIL: admin.email,
          SERVICE_TEST_ADMIN_PASSWORD: admin.password,
          SERVICE_TEST_ADMIN_TOTP_SECRET: admin.totpSecret,
          SERVICE_TEST_ADMIN2_EMAIL: second.email,
          SERVICE_TEST_ADMIN2_PASSWORD: second.password,
          SERVICE_TEST_ADMIN2_TOTP_SECRET: second.totpSecret,
          SERVICE_TEST_PROXY_PORT: String(PROXY_PORT),
          SERVICE_TEST_RECEIVER_URL: receiver.origin,
          SERVICE_TEST_DELIVERIES_DIR: dir,
        },
      });
      let output = '';
      child.stdout.on('data', (b: Buffer) => (output += b.toString()));
      child.stderr.on('data', (b: Buffer) => (output += b.toString()));
      child.once('close', (code) => done({ code, output }));
    });
    console.log(`pytest: ${result.output.trim().split('\n').at(-1)}`);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toMatch(/\b\d+ passed\b/);
    expect(result.output).not.toMatch(/skipped|error/i);
  });
});
