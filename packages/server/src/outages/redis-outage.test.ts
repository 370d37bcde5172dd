/**
 * A Redis outage, with a `redis-server` of the test's own on a spare port: while it is stopped the
 * rate-limited routes answer 503 service_unavailable with Retry-After and the request id, /readyz
 * answers 503 naming redis, and the health route keeps answering; once it is started again everything
 * recovers by itself, without restarting the app.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, createRedisLimiter } from '../rate-limits/index.ts';
import { until } from '@service/testing/cli-processes';
import { createTestApp, type TestApp } from '@service/testing/app';

const PORT = 19150 + Math.floor(Math.random() * 40);

describe('Redis outage', () => {
  let dir: string;
  let redisServer: ChildProcess | undefined;
  let t: TestApp;
  let redis: ReturnType<typeof connectRedis>;

  async function startRedis(): Promise<void> {
    redisServer = spawn('redis-server', ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await until(() => accepts(PORT), 'redis-server to listen', 20_000);
  }

  async function stopRedis(): Promise<void> {
    const server = redisServer!;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
    redisServer = undefined;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redis-outage-'));
    await startRedis();
    redis = connectRedis(`redis://127.0.0.1:${PORT}`);
    t = await createTestApp({ deps: { limiter: createRedisLimiter({ redis, prefix: 'outage:' }), redis } });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await t?.close();
    redisServer?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const agents = () => t.app.request('/v1/agents', { headers: { authorization: `Bearer ${t.apiKey}` } });

  it('fails closed with 503 while Redis is down and recovers on its own', { timeout: 120_000 }, async () => {
    expect((await agents()).status).toBe(200);
    expect((await t.app.request('/readyz')).status).toBe(200);

    await stopRedis();

    const refused = await agents();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'service_unavailable', requestId: refused.headers.get('x-request-id') });
    expect(JSON.stringify(body)).not.toContain(String(PORT));

    const ready = await t.app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ error: 'service_unavailable', failing: ['redis'], checks: { store: 'ok', redis: 'failing' } });
    expect((await t.app.request('/healthz')).status).toBe(200);

    await startRedis();

    // The client reconnects by itself: no restart of the app.
    await until(async () => (await t.app.request('/readyz')).status === 200, '/readyz to recover', 60_000, 250);
    await until(async () => (await agents()).status === 200, 'the API to recover', 30_000, 250);
  });
});

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
