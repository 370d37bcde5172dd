/**
 * @module The `503` of an invocation whose conversation kept changing while it started (start_runs answered
 * `stale_history` every time the thread was read again): nothing was reserved and no run exists, so the answer
 * says to repeat the same request shortly (`Retry-After: 1`, `Retry-After-Ms: 1000`, `X-Should-Retry: true`).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { OpenDb } from '../store/db.ts';

let t: TestApp;
let store: OpenDb;
let starts = 0;

beforeEach(async () => {
  starts = 0;
  store = await openMemoryStore();
  // The store as the app sees it, except that start_runs always finds the caller's copy of the thread behind.
  const stale = new Proxy(store, {
    get(target, name, receiver) {
      if (name !== 'query') return Reflect.get(target, name, receiver);
      return async (sql: string, params?: readonly unknown[], options?: unknown) => {
        if (/\bstart_runs\s*\(/.test(sql)) {
          const runs = JSON.parse(params![0] as string) as unknown[];
          starts += runs.length;
          return [{ decisions: runs.map(() => ({ outcome: 'stale_history' })) }];
        }
        return (target.query as (...args: unknown[]) => Promise<unknown[]>)(sql, params, options);
      };
    },
  });
  t = await createTestApp({ db: stale });
});
afterEach(async () => {
  await t.close();
  await store.close();
});

describe('an invocation whose conversation keeps changing', () => {
  it('answers 503 service_unavailable with the retry hints of a request nothing was done for, and no run', async () => {
    const key = await t.keyWith('orchestrator:invoke', 'tenant:read');
    const res = await t.app.request('/v1/inference', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'req-stale' },
      body: JSON.stringify({ alias: 'Sonata', conversationId: 'renewal-dana', messages: [{ role: 'user', content: 'Where are we?' }] }),
    });
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['1', '1000', 'true']);
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: 'The conversation changed while this invocation started; retry.',
      requestId: 'req-stale',
    });
    // Read again a few times before giving up; nothing was written.
    expect(starts).toBeGreaterThan(1);
    expect(await store.query(`SELECT id FROM runs`)).toEqual([]);
  });
});
