/**
 * `service init` is atomic: concurrent first starts, on two connections to the same store (two
 * processes), create exactly one workspace; the others are refused with AlreadyInitialised.
 * PGlite, and PostgreSQL when DATABASE_URL is set.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../clock.ts';
import { testBackends, type TestStore } from '@service/testing/store';
import { AlreadyInitialised, initWorkspace } from './init.ts';
import { createSecretBox, ephemeralSecretKey } from '../webhooks/secret-box.ts';

describe.each(testBackends())('init on $name', ({ open }) => {
  let store: TestStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.cleanup();
  });

  it('four concurrent inits create one workspace; the others are refused with its id', async () => {
    const dbs = [store.db, await store.peer(), store.db, await store.peer()];
    const outcomes = await Promise.allSettled(
      dbs.map((db, i) =>
        initWorkspace(db, systemClock, { adminEmail: `admin${i}@example.com`, firstOnly: true, secretBox: createSecretBox(ephemeralSecretKey()) }),
      ),
    );
    const created = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(created).toHaveLength(1);
    const workspaces = await store.db.query<{ id: string }>(`SELECT id FROM workspaces`);
    expect(workspaces).toEqual([{ id: created[0]!.workspaceId }]);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      expect(o.reason).toBeInstanceOf(AlreadyInitialised);
      expect((o.reason as AlreadyInitialised).workspaceId).toBe(created[0]!.workspaceId);
    }
    expect(await store.db.query(`SELECT count(*)::int AS n FROM users`)).toEqual([{ n: 1 }]);
  });
});
