/**
 * Which queue of the store's (store/fair-queue.ts) a request's statements wait in before its party is known: the
 * reads that authenticate it (an API key not verified on this instance yet, a session) are the unauthenticated
 * requests' until authentication names the workspace, never the background's, where the delivery worker's claims
 * wait: a flood of unknown credentials must not delay every workspace's deliveries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { openMemoryStore } from '@service/testing/store';
import type { OpenDb } from '../../store/db.ts';
import { storeParty, UNAUTHENTICATED_PARTY, workspaceParty } from '../../store/fair-queue.ts';

describe("a request's store party", () => {
  let base: OpenDb;
  let t: TestApp;
  const seen: { sql: string; party: string }[] = [];

  beforeAll(async () => {
    base = await openMemoryStore();
    const db: OpenDb = {
      ...base,
      query(sql, params, options) {
        seen.push({ sql, party: storeParty() });
        return base.query(sql, params, options);
      },
    };
    // Admission control on, as serve configures it (the test app has none unless asked).
    t = await createTestApp({ db, deps: { admission: { maxInFlight: 64, maxStoreQueue: 0 } } });
  });
  afterAll(async () => {
    await t?.close();
    await base?.close();
  });

  it("verifies an unknown API key and a session as the unauthenticated requests', then runs as the workspace's", async () => {
    seen.length = 0;
    // A key of the right shape that this store never issued: its lookup reads the store.
    const forged = `${t.apiKey.slice(0, -4)}${t.apiKey.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const unknown = await t.app.request('/usage/current', { headers: { authorization: `Bearer ${forged}` } });
    expect(unknown.status).toBe(401);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((s) => s.party))).toEqual(new Set([UNAUTHENTICATED_PARTY]));

    const admin = await t.login();
    seen.length = 0;
    const runs = await t.app.request('/runs?limit=1', { headers: { cookie: admin.cookie } });
    expect(runs.status).toBe(200);
    const parties = seen.map((s) => s.party);
    expect(parties.length).toBeGreaterThan(1);
    // The session's read first, then the route's as the workspace's.
    expect(parties[0]).toBe(UNAUTHENTICATED_PARTY);
    expect(parties.at(-1)).toBe(workspaceParty(t.workspaceId));
    expect(parties).not.toContain('');
  });
});
