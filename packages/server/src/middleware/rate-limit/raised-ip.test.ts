/**
 * The operator's raised per-address ceiling, through the whole app: a workspace whose backend calls
 * from one address gets its own ceiling (here 100/min) once authenticated, while anonymous requests,
 * failed authentications and another workspace's callers from that address keep the default 60/min;
 * `X-RateLimit-*` shows the limit that binds. (Two instances on Redis: cli/ip-ceiling-two-servers.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateWorkspace } from '../../domain/workspaces/index.ts';
import type { OpenDb } from '../../store/db.ts';
import { openMemoryStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import { PER_IP } from './index.ts';

let db: OpenDb;
let raised: TestApp;
let plain: TestApp;
const CEILING = 100;

beforeAll(async () => {
  db = await openMemoryStore();
  raised = await createTestApp({ db, deps: { config: { trustProxy: 1 } } });
  plain = await createTestApp({ db });
  await updateWorkspace(db, raised.clock, raised.workspaceId, { ipRpmLimit: CEILING, rpmLimit: 5000 });
});
afterAll(async () => {
  for (const t of [raised, plain]) await t?.close();
  await db?.close();
});

function get(address: string, authorization?: string) {
  return raised.app.request('/usage/current', { headers: { 'x-forwarded-for': address, ...(authorization ? { authorization } : {}) } });
}

describe("a workspace's raised per-address ceiling", () => {
  it(`lets its key make ${CEILING} requests a minute from one address, then 429 with its own limit in the headers`, async () => {
    const address = '198.51.100.7';
    for (let i = 1; i <= CEILING; i++) {
      const res = await get(address, `Bearer ${raised.apiKey}`);
      expect(res.status, `request ${i}`).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(CEILING));
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(CEILING - i));
    }
    const over = await get(address, `Bearer ${raised.apiKey}`);
    expect(over.status).toBe(429);
    expect(over.headers.get('x-ratelimit-limit')).toBe(String(CEILING));
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await over.json()).toMatchObject({ error: 'rate_limit_exceeded' });
  });

  it('anonymous and failed-auth requests and another workspace from that address keep the default 60', async () => {
    const address = '198.51.100.8';
    for (let i = 0; i < PER_IP.limit; i++) expect((await get(address, `Bearer ${raised.apiKey}`)).status).toBe(200);
    for (const authorization of [undefined, `Bearer service_sk_live_${'x'.repeat(40)}`, `Bearer ${plain.apiKey}`]) {
      const res = await get(address, authorization);
      expect(res.status, authorization ?? 'anonymous').toBe(429);
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(PER_IP.limit));
      expect(await res.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    }
    // The raised workspace's key goes on.
    expect((await get(address, `Bearer ${raised.apiKey}`)).status).toBe(200);
  });

  it("the workspace's own ceiling binds when it is the lower one", async () => {
    const lower = await createTestApp({ db, deps: { config: { trustProxy: 1 } } });
    await updateWorkspace(db, lower.clock, lower.workspaceId, { ipRpmLimit: CEILING, rpmLimit: 80 });
    const res = await lower.app.request('/usage/current', { headers: { 'x-forwarded-for': '198.51.100.9', authorization: `Bearer ${lower.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('80');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('79');
  });

  it('back to the default (null): its key is held to 60 again', async () => {
    await updateWorkspace(db, raised.clock, raised.workspaceId, { ipRpmLimit: null });
    try {
      const address = '198.51.100.10';
      for (let i = 0; i < PER_IP.limit; i++) expect((await get(address, `Bearer ${raised.apiKey}`)).status).toBe(200);
      const over = await get(address, `Bearer ${raised.apiKey}`);
      expect(over.status).toBe(429);
      expect(over.headers.get('x-ratelimit-limit')).toBe(String(PER_IP.limit));
    } finally {
      await updateWorkspace(db, raised.clock, raised.workspaceId, { ipRpmLimit: CEILING });
    }
  });
});
