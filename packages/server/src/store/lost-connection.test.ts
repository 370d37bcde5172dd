/**
 * A transaction's connection lost while the transaction holds it (PostgreSQL restarted, a failover, a backend
 * terminated) fails that transaction, and only it: the process goes on, and the pool serves the next statement
 * on a new connection. The driver reports a lost connection as an `error` event of its client, and a client taken
 * from the pool for a transaction has no listener of the pool's while it is out: an event without a listener is
 * thrown, an uncaught exception that ends the server. Runs when DATABASE_URL is set (CI).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery } from '@service/testing/store';
import { randomBase62 } from '../random.ts';
import type { OpenDb } from './db.ts';
import { openStore } from './open.ts';
import { quoteIdent } from './postgres.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe.skipIf(!DATABASE_URL)('a transaction whose connection is lost', () => {
  const schema = `test_${randomBase62(12).toLowerCase()}`;
  let db: OpenDb;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    await adminQuery(DATABASE_URL!, `CREATE SCHEMA ${quoteIdent(schema)}`);
    db = await openStore({ databaseUrl: DATABASE_URL!, schema });
    process.prependListener('uncaughtException', record);
  });

  afterAll(async () => {
    process.removeListener('uncaughtException', record);
    await db?.close().catch(() => {});
    await adminQuery(DATABASE_URL!, `DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  });

  it('fails that transaction, throws nothing uncaught, and the next statement is served', async () => {
    let terminated = false;
    const outcome = db.transaction(async (tx) => {
      const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // The backend ends between two statements of the transaction: no query of the client is waiting for it.
      await adminQuery(DATABASE_URL!, `SELECT pg_terminate_backend(${Number(row!.pid)})`);
      terminated = true;
      await new Promise((resolve) => setTimeout(resolve, 300));
      await tx.query('SELECT 1');
    });
    await expect(outcome).rejects.toThrow();
    expect(terminated).toBe(true);
    expect(uncaught).toEqual([]);
    expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
