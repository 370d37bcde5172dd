import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction, type Db, type Tx } from './db.ts';
import { migrate } from './migrate.ts';
import { storeTestBackends, type TestStore } from '@service/testing/store';

describe.each(storeTestBackends())('store on $name', ({ open }) => {
  let store: TestStore;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  it('applies every migration at open and records it once', async () => {
    const rows = await store.db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toContain('0001_foundation.sql');
    // Running again applies nothing and changes nothing.
    expect(await migrate(store.db)).toEqual([]);
    const again = await store.db.query('SELECT version FROM schema_migrations');
    expect(again).toHaveLength(rows.length);
  });

  it('returns the same JavaScript values on both drivers', async () => {
    const at = new Date('2026-03-04T05:06:07.000Z');
    await store.db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, ['wksp_values', 'V', at]);
    const [row] = await store.db.query<{ id: string; created_at: Date; n: number; tags: string[] }>(
      `SELECT id, created_at, count(*) OVER ()::int AS n, ARRAY['a', 'b']::text[] AS tags FROM workspaces WHERE id = $1`,
      ['wksp_values'],
    );
    expect(row).toEqual({ id: 'wksp_values', created_at: at, n: 1, tags: ['a', 'b'] });
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    const now = new Date();
    await store.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_commit', 'C', $1)`, [now]);
    });
    await expect(
      store.db.transaction(async (tx) => {
        await tx.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_rollback', 'R', $1)`, [now]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const ids = await store.db.query<{ id: string }>(`SELECT id FROM workspaces WHERE id IN ('wksp_commit', 'wksp_rollback')`);
    expect(ids.map((r) => r.id)).toEqual(['wksp_commit']);
  });

  it('passes a transaction a Tx, not the store (no nested transaction, no listen); inTransaction joins a Tx and opens one on the store', async () => {
    const now = new Date();
    const insert = (db: Db | Tx, id: string) => db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, 'T', $2)`, [id, now]);
    await expect(
      store.db.transaction(async (tx) => {
        expect('transaction' in tx || 'listen' in tx).toBe(false);
        // @ts-expect-error a transaction's handle is not the store
        const notTheStore: Db = tx;
        void notTheStore;
        await inTransaction(tx, (joined) => insert(joined, 'wksp_joined'));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    // @ts-expect-error the store is not a transaction's handle
    const notATransaction: Tx = store.db;
    void notATransaction;
    await inTransaction(store.db, (own) => insert(own, 'wksp_own'));
    // The joined insert rolled back with the caller's transaction; the other committed in its own.
    const ids = await store.db.query<{ id: string }>(`SELECT id FROM workspaces WHERE id IN ('wksp_joined', 'wksp_own')`);
    expect(ids.map((r) => r.id)).toEqual(['wksp_own']);
  });

  it('enforces the constraints the domain relies on', async () => {
    const now = new Date();
    await store.db.query(`INSERT INTO workspaces (id, name, created_at) VALUES ('wksp_c', 'C', $1)`, [now]);
    const user = `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, 'x', $3)`;
    await store.db.query(user, ['usr_1', 'Admin@Example.com', now]);
    // Emails are unique without regard to case: login goes by email alone.
    await expect(store.db.query(user, ['usr_2', 'admin@example.com', now])).rejects.toThrow();
    // A role is one of the contract's.
    const member = `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ('wksp_c', 'usr_1', $1, $2)`;
    await expect(store.db.query(member, ['guest', now])).rejects.toThrow();
    await store.db.query(member, ['admin', now]);
    // One membership per user and workspace.
    await expect(store.db.query(member, ['member', now])).rejects.toThrow();
  });
});
