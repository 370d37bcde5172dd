/**
 * @module Tests of the admission control through a small Hono app: past the in-flight or the store-queue bound a
 * request answers `503 service_unavailable` at once, with the retry hints of a request nothing was done for.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { AT_CAPACITY_MESSAGE, admission, type AdmissionRefusal } from './index.ts';

function buildApp(limits: { maxInFlight: number; maxStoreQueue: number }, storeQueue = 0) {
  const refused: AdmissionRefusal[] = [];
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const app = new Hono();
  app.use(admission(limits, { storeQueue: () => storeQueue, exempt: (path) => path === '/healthz', refused: (reason) => refused.push(reason) }));
  app.get('/hold', async (c) => {
    await held;
    return c.json({ ok: true });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  return { app, refused, release };
}

describe('admission', () => {
  it.each([
    ['in_flight', { maxInFlight: 1, maxStoreQueue: 0 }, 0],
    ['store_queue', { maxInFlight: 0, maxStoreQueue: 2 }, 2],
  ] as const)('past the %s bound: 503 with Retry-After 1, Retry-After-Ms 1000, X-Should-Retry true', async (reason, limits, queue) => {
    const { app, refused, release } = buildApp(limits, queue);
    const first = reason === 'in_flight' ? app.request('/hold') : undefined;
    const res = await app.request('/hold', { headers: { 'X-Request-Id': 'req-full' } });
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['1', '1000', 'true']);
    expect(res.headers.get('x-request-id')).toBe('req-full');
    expect(await res.json()).toEqual({ error: 'service_unavailable', message: AT_CAPACITY_MESSAGE, requestId: 'req-full' });
    expect(refused).toEqual([reason]);
    // Health routes are never refused.
    expect((await app.request('/healthz')).status).toBe(200);
    release();
    if (first) expect((await first).status).toBe(200);
  });
});
