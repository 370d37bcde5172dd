/**
 * A secret sealed under another key (the store was initialised with one SECRET_KEY, or the key file,
 * and the server runs with another) cannot be opened. Signing in then answers `503
 * service_unavailable`, never a bare 500, and the server's log line names the cause and the command
 * that repairs it (`service secret-key rotate`); `serve` says so at start too, and `/readyz` answers not
 * ready (`secrets`), so a load balancer does not send sign-ins there. Real processes, real HTTP, embedded store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../domain/sessions/totp.ts';
import { cliProcesses, type CliProcesses, until } from '@service/testing/cli-processes';

const SEALING_KEY = 'the-key-the-store-was-sealed-with-000000001';
const OTHER_KEY = 'another-key-this-instance-was-started-with-02';

describe('a store sealed under another SECRET_KEY', () => {
  let dir: string;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'SECRET_KEY', 'OLD_SECRET_KEY', 'METRICS_PORT', 'LOG_LEVEL', 'LOG_FORMAT'])
    delete env[name];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wrong-secret-key-'));
  });
  let cli: CliProcesses | undefined;
  afterAll(() => {
    cli?.killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 at login and logs the cause with the repair command', { timeout: 240_000 }, async () => {
    const init = JSON.parse(await cliProcesses(dir, { ...env, SECRET_KEY: SEALING_KEY }).run('init', '--json')) as {
      admin: { email: string; password: string; totpSecret: string };
    };
    cli = cliProcesses(dir, { ...env, SECRET_KEY: OTHER_KEY });
    const server = await cli.serve();
    // Said at start already, before anyone signs in.
    expect(server.output()).toMatch(
      /WARNING: A secret stored sealed cannot be opened with this SECRET_KEY.*service secret-key rotate.*found in users\.totp_secret/,
    );
    // Not ready: a load balancer keeps traffic away; the body is the contract's, and names no key.
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect([ready.headers.get('retry-after'), ready.headers.get('x-should-retry')]).toEqual(['5', 'true']);
    const readiness = (await ready.json()) as Record<string, unknown>;
    expect(readiness).toEqual({
      error: 'service_unavailable',
      message: "Not ready: stored secrets do not open under this instance's key.",
      requestId: ready.headers.get('x-request-id'),
      failing: ['secrets'],
      checks: { store: 'ok', redis: 'not_configured', secrets: 'failing', admission: 'ok' },
    });
    expect(JSON.stringify(readiness)).not.toContain(OTHER_KEY);
    // Liveness is unaffected: the process serves.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    const res = await fetch(`${server.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: init.admin.email, password: init.admin.password, totpCode: totpCode(init.admin.totpSecret, new Date()) }),
    });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string; requestId: string; message: string };
    expect(body).toMatchObject({ error: 'service_unavailable', requestId: expect.any(String) });
    expect(JSON.stringify(body)).not.toMatch(/SECRET_KEY|secret-key|sealed/);

    await until(() => server.output().includes(body.requestId), 'the log line of the request');
    const line = server
      .output()
      .split('\n')
      .map((text) => (text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined))
      .find((entry) => entry?.level === 'error' && entry.requestId === body.requestId);
    expect(line).toBeDefined();
    expect(line!.msg).toMatch(/cannot be opened with this SECRET_KEY/);
    expect(line!.msg).toContain('service secret-key rotate');
    expect(JSON.stringify(line)).not.toContain(OTHER_KEY);
    expect(JSON.stringify(line)).not.toContain(SEALING_KEY);
  });
});
