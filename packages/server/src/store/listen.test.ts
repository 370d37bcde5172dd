/**
 * @module The PostgreSQL listener's acknowledgements (store/listen.ts): an instance that made a change waits until every
 * other instance's listener handled its notification, as each shows in pg_stat_activity. One connection listens on
 * every channel of its instance, so what it shows must say, for each channel, the version it handled last. Runs with
 * DATABASE_URL (CI).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { awaitListeners } from './listen.ts';
import type { OpenDb } from './db.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)('the listeners awaited on PostgreSQL', () => {
  let store: TestStore;
  /** Another instance of the same schema: its own pool and listener. */
  let other: OpenDb;
  const states: boolean[] = [];
  const heard: string[] = [];

  beforeAll(async () => {
    store = await testBackends()
      .find((b) => b.name === 'postgres')!
      .open();
    // Its listener, once cut, stays down (a reconnect would come after 10 minutes).
    other = await store.peer({ listenRetryMs: 600_000 });
    await other.listen!('test_keys', { message: (payload) => heard.push(`keys ${payload}`), state: (up) => states.push(up) });
    await other.listen!('test_usage', { message: (payload) => heard.push(`usage ${payload}`), state: () => {} });
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  const since = async () => (await store.db.query<{ now: Date }>('SELECT now() AS now'))[0]!.now;
  const notify = (channel: string, payload: string) => store.db.query(`SELECT pg_notify($1 || '.' || current_schema(), $2)`, [channel, payload]);

  it('waits for a listener that handled the version, and not past it', async () => {
    const at = await since();
    await notify('test_keys', '1');
    await awaitListeners(store.db, { channel: 'test_keys', version: 1, since: at, timeoutMs: 10_000 });
    expect(heard).toContain('keys 1');
    expect(states).toEqual([true]);
  });

  it("counts a listener as behind on a channel whose notification it has not handled, though it acknowledged another channel's since", async () => {
    await notify('test_usage', '7');
    await vi.waitFor(() => expect(heard).toContain('usage 7'));
    // The listener's last statement now acknowledges the usage channel. A version of the keys channel it never heard:
    // it is behind, and cut off once the wait is over (its instance then reads versions until it listens again).
    await awaitListeners(store.db, { channel: 'test_keys', version: 2, since: await since(), timeoutMs: 300 });
    await vi.waitFor(() => expect(states).toEqual([true, false]));
  });
});
