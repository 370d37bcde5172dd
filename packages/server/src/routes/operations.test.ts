/**
 * Health routes: /healthz and /readyz answer without a credential and outside the rate limits; /readyz
 * names a failing dependency and the shutdown, with the spec's error body.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const refuseAll = {
  async hit(_key: string, limit: number) {
    return { allowed: false, limit, remaining: 0, resetAt: Math.ceil(Date.now() / 1000) + 60, retryAfterSec: 60 };
  },
};

describe('GET /healthz', () => {
  it('answers 200 { status: ok } without a credential, outside the rate limits, with a request id', async () => {
    t = await createTestApp({ deps: { limiter: refuseAll } });
    const res = await t.app.request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    // The same limiter refuses an API route: the health route is the exception.
    expect((await t.app.request('/v1/agents')).status).toBe(429);
  });
});

describe('GET /readyz', () => {
  it('answers 200 ready when the store answers and Redis is not configured', async () => {
    t = await createTestApp({ deps: { limiter: refuseAll } });
    const res = await t.app.request('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'not_configured' } });
  });

  it('answers 503 service_unavailable naming redis when Redis does not answer', async () => {
    t = await createTestApp({ deps: { redis: { ping: () => Promise.reject(new Error('ECONNREFUSED 10.0.0.7:6379')) } } });
    const res = await t.app.request('/readyz');
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['5', '5000', 'true']);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: 'service_unavailable', failing: ['redis'], checks: { store: 'ok', redis: 'failing' } });
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
    expect(JSON.stringify(body)).not.toContain('10.0.0.7');
  });

  it('answers 503 naming the store when it does not answer', async () => {
    t = await createTestApp();
    const broken = { ...t.db, query: () => Promise.reject(new Error('connection refused')) };
    const { createHealth } = await import('../domain/health/index.ts');
    const health = createHealth({ db: broken, redis: { ping: async () => 'PONG' } });
    expect(await health.readiness()).toEqual({ checks: { store: 'failing', redis: 'ok' }, failing: ['store'] });
  });

  it('answers 503 naming secrets when the start-up check found a sealed secret that does not open', async () => {
    t = await createTestApp();
    t.services.health.recordSealedSecrets(undefined);
    const ok = await t.app.request('/readyz');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ready', checks: { store: 'ok', redis: 'not_configured', secrets: 'ok' } });
    t.services.health.recordSealedSecrets('users.totp_secret');
    const res = await t.app.request('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: "Not ready: stored secrets do not open under this instance's key.",
      requestId: res.headers.get('x-request-id'),
      failing: ['secrets'],
      checks: { store: 'ok', redis: 'not_configured', secrets: 'failing' },
    });
  });

  it('answers 503 with shutdown once a graceful stop has begun', async () => {
    t = await createTestApp();
    t.services.health.beginShutdown();
    const res = await t.app.request('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'service_unavailable', failing: ['shutdown'] });
    // Liveness is unaffected: the process still serves.
    expect((await t.app.request('/healthz')).status).toBe(200);
  });
});
