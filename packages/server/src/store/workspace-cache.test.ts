/**
 * The workspace cache on a real store: reads that find a workspace missing together share one load (a burst of
 * invocations after a change reads the row once, not once per invocation), and a change heard while that load runs
 * makes the next read load again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { notify } from './listen.ts';
import { createWorkspaceCache } from './workspace-cache.ts';

describe.each(testBackends())('workspace cache on $name', ({ open }) => {
  let store: TestStore;

  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  it('reads that find the workspace missing together share one load; a change heard meanwhile is not missed', async () => {
    const channel = `service_cache_test_${Math.floor(Math.random() * 1e9)}`;
    let loads = 0;
    let release: () => void = () => {};
    let gate = Promise.resolve();
    const cache = createWorkspaceCache({
      db: store.db,
      channel,
      version: () => 0,
      load: async (db, workspaceId) => {
        loads += 1;
        const n = loads;
        await gate;
        const [row] = await db.query<{ n: number }>(`SELECT $1::int AS n`, [n]);
        return `${workspaceId}:${row!.n}`;
      },
    });
    expect(await cache.read('wksp_a')).toBe('wksp_a:1');
    expect(await cache.read('wksp_a')).toBe('wksp_a:1');
    expect(loads).toBe(1);
    // Ten reads at once of a workspace not held: one load.
    gate = new Promise<void>((resolve) => (release = resolve));
    const burst = Array.from({ length: 10 }, () => cache.read('wksp_c'));
    await expect.poll(() => loads).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(loads).toBe(2);
    // A change of it heard while that load runs: the reads after it load again, they do not join the load under way.
    await notify(store.db, channel, 'wksp_c');
    const later: Promise<string>[] = [];
    await expect
      .poll(() => {
        later.push(cache.read('wksp_c'));
        return loads;
      })
      .toBe(3);
    release();
    expect(new Set(await Promise.all(burst))).toEqual(new Set(['wksp_c:2']));
    expect(await later.at(-1)).toBe('wksp_c:3');
  });
});
