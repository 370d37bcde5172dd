/**
 * The worker's statements are the background party's in the store's fair queue (store/fair-queue.ts), whoever
 * woke it: a wake-up from inside a workspace's request (a ping that queued an event) does not make the worker's
 * claims wait in that workspace's queue, behind its flood.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { createTestApp, type TestApp } from '@service/testing/app';
import type { Db } from '../store/db.ts';
import { asStoreParty, BACKGROUND_PARTY, storeParty } from '../store/fair-queue.ts';
import { startWorker } from './index.ts';

describe.each(testBackends())('the worker as the background party on $name', ({ open }) => {
  let store: TestStore;
  let t: TestApp;

  beforeAll(async () => {
    store = await open();
    t = await createTestApp({ db: store.db });
  });
  afterAll(async () => {
    await t?.close();
    await store?.cleanup();
  });

  it("claims as the background party when a workspace's request wakes it", async () => {
    const parties: string[] = [];
    const db: Db = {
      ...store.db,
      query: (sql, params, options) => {
        parties.push(storeParty());
        return store.db.query(sql, params, options);
      },
      transaction: (fn) => {
        parties.push(storeParty());
        return store.db.transaction(fn);
      },
    };
    // A long poll: only the wake-up below ticks (after the first tick, waited for first).
    const worker = startWorker({ db, clock: t.clock, secretBox: t.services.webhooks.secretBox, policy: { allowList: [] }, pollMs: 60_000 });
    try {
      await expect.poll(() => parties.length).toBeGreaterThan(0);
      await worker.idle();
      parties.length = 0;
      asStoreParty(`ws:${t.workspaceId}`, () => worker.wake());
      await expect.poll(() => parties.length).toBeGreaterThan(0);
      await worker.idle();
      expect(new Set(parties)).toEqual(new Set([BACKGROUND_PARTY]));
    } finally {
      await worker.stop();
    }
  });
});
