/**
 * @module PGlite driver: Postgres compiled to WebAssembly, embedded in the process. The default
 * store; data lives in a directory, or in memory when none is given (tests).
 */
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { Db, OpenDb } from './db.ts';
import { scopedChannel } from './listen.ts';

export async function openPglite(dataDir?: string): Promise<OpenDb> {
  const pg = await PGlite.create(dataDir);
  return {
    driver: 'pglite',
    async query(sql, params = []) {
      return (await pg.query(sql, params as unknown[])).rows as never[];
    },
    transaction(fn) {
      return pg.transaction((tx) => fn(transactionDb(tx)));
    },
    async exec(sql) {
      await pg.exec(sql);
    },
    async listen(channel, handler) {
      const [row] = (await pg.query<{ schema: string }>('SELECT current_schema() AS schema')).rows;
      // In-process: delivered as the notifying transaction commits, and never lost.
      await pg.listen(scopedChannel(channel, row!.schema), (payload) => handler.message(payload));
      handler.state(true);
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}

/** Inside a transaction a nested `transaction` simply joins the outer one. */
function transactionDb(tx: Transaction): Db {
  const db: Db = {
    async query(sql, params = []) {
      return (await tx.query(sql, params as unknown[])).rows as never[];
    },
    transaction: (fn) => fn(db),
    async exec(sql) {
      await tx.exec(sql);
    },
  };
  return db;
}
