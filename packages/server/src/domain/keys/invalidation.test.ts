import { describe, expect, it } from 'vitest';
import { asTx, type Db } from '../../store/db.ts';
import type { ListenHandler } from '../../store/listen.ts';
import { KEYS_CHANNEL, KeyInvalidation } from './invalidation.ts';

/** A store whose LISTEN the test drives by hand. */
function fakeStore() {
  const handlers: ListenHandler[] = [];
  const db: Db = {
    query: async () => [],
    transaction: (fn) => fn(asTx(db)),
    exec: async () => {},
    listen: async (channel, handler) => {
      expect(channel).toBe(KEYS_CHANNEL);
      handlers.push(handler);
    },
  };
  return { db, handler: () => handlers[0]! };
}

describe('key cache invalidation', () => {
  it('trusts hits only while listening, and drops the cache when the listener goes down and when it is back', async () => {
    let cleared = 0;
    const invalidation = new KeyInvalidation(() => {
      cleared += 1;
    });
    const store = fakeStore();
    await invalidation.start(store.db);
    expect(invalidation.listening).toBe(false); // until the listener says it listens
    store.handler().state(true);
    expect(invalidation.listening).toBe(true);
    expect(cleared).toBe(1);
    const before = invalidation.generation;
    store.handler().state(false);
    expect(invalidation.listening).toBe(false);
    expect(cleared).toBe(2);
    store.handler().state(true); // reconnected: whatever was cached meanwhile goes
    expect(cleared).toBe(3);
    expect(invalidation.generation).toBeGreaterThan(before);
  });

  it('drops the cache on every notification and lets a change answer once its version was heard', async () => {
    let cleared = 0;
    const invalidation = new KeyInvalidation(() => {
      cleared += 1;
    });
    const store = fakeStore();
    await invalidation.start(store.db);
    store.handler().state(true);
    let settled = false;
    const settling = invalidation.settle(store.db, 7, new Date()).then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    store.handler().message('6'); // an older change: not yet
    await Promise.resolve();
    expect(settled).toBe(false);
    store.handler().message('7');
    await settling;
    expect(settled).toBe(true);
    expect(invalidation.listening).toBe(true);
    expect(cleared).toBe(4); // start, the settle itself, and both notifications
  });

  it('answers a change at once while not listening (hits read the version then)', async () => {
    const invalidation = new KeyInvalidation(() => {});
    const store = fakeStore();
    await invalidation.start(store.db);
    await invalidation.settle(store.db, 3, new Date());
    expect(invalidation.listening).toBe(false);
  });
});
