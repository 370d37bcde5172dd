/**
 * @module PGlite driver: Postgres compiled to WebAssembly, embedded in the process. The default
 * store; data lives in a directory, or in memory when none is given (tests).
 *
 * One instance can also hold several stores, one schema each (`pgliteSchemaStore`): starting an
 * instance costs seconds of CPU, a schema a tenth of one, so test suites share one instance per
 * process. Each store's statements run under its own `search_path`, switched only when the
 * previous statement came from another schema.
 */
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { asTx, type OpenDb, type Tx } from './db.ts';
import { scopedChannel } from './listen.ts';
import { type PreparedQuery, preparedStatements } from './pglite-prepared.ts';
import { quoteIdent } from './postgres.ts';

export async function openPglite(dataDir?: string): Promise<OpenDb> {
  const pg = await PGlite.create(dataDir);
  const prepared = preparedStatements(pg);
  return {
    driver: 'pglite',
    async query(sql, params = [], options) {
      // A named statement: parsed once (store/pglite-prepared.ts).
      if (options?.name !== undefined) return (await prepared(options.name, sql, params)) as never[];
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
    async copyOut(query) {
      const { blob } = await pg.query(`COPY (${query}) TO '/dev/blob'`);
      return new Uint8Array(blob ? await blob.arrayBuffer() : new ArrayBuffer(0));
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}

/** One PGlite instance shared by the stores of several schemas. */
export interface SharedPglite {
  readonly pg: PGlite;
  /** The schema the instance's `search_path` is set to now. */
  current: string | undefined;
  /** Serialises statements, so a schema switch and the statement it is for are never split. */
  tail: Promise<unknown>;
  /** The instance's prepared statements (each store names its own after its schema). */
  readonly prepared: PreparedQuery;
}

export function sharePglite(pg: PGlite): SharedPglite {
  return { pg, current: undefined, tail: Promise.resolve(), prepared: preparedStatements(pg) };
}

/**
 * A store in `schema` (which must exist) of a shared instance. `close` stops its listeners and
 * runs `onClose` (dropping the schema, say); the instance stays open for the other schemas.
 */
export function pgliteSchemaStore(shared: SharedPglite, schema: string, onClose: () => Promise<void> = async () => {}): OpenDb {
  const { pg } = shared;
  const unlisten: Array<() => Promise<void>> = [];
  let closed = false;
  // Statements of every schema take turns; inside a transaction its own handle is used, as PGlite
  // itself already holds every other statement until the transaction ends.
  const inSchema = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = shared.tail.then(async () => {
      if (closed) throw new Error(`the store of schema ${schema} is closed`);
      if (shared.current !== schema) {
        await pg.exec(`SET search_path TO ${quoteIdent(schema)}`);
        shared.current = schema;
      }
      return fn();
    });
    shared.tail = run.catch(() => {});
    return run;
  };
  return {
    driver: 'pglite',
    query: (sql, params = [], options) =>
      inSchema(async () =>
        options?.name !== undefined
          ? ((await shared.prepared(`${schema}.${options.name}`, sql, params)) as never[])
          : ((await pg.query(sql, params as unknown[])).rows as never[]),
      ),
    transaction: (fn) => inSchema(() => pg.transaction((tx) => fn(transactionDb(tx)))),
    exec: (sql) => inSchema(() => pg.exec(sql).then(() => {})),
    async listen(channel, handler) {
      const scoped = scopedChannel(channel, schema);
      const callback = (payload: string) => handler.message(payload);
      await pg.listen(scoped, callback);
      // Not the function listen returns: it UNLISTENs the unquoted name, which a dot in it breaks.
      unlisten.push(() => pg.unlisten(scoped, callback));
      handler.state(true);
    },
    async close() {
      if (closed) return;
      await inSchema(async () => {});
      closed = true;
      for (const stop of unlisten) await stop();
      await onClose();
    },
  };
}

/** A PGlite transaction as the store's `Tx`. */
function transactionDb(tx: Transaction): Tx {
  return asTx({
    async query(sql, params = []) {
      return (await tx.query(sql, params as unknown[])).rows as never[];
    },
    async exec(sql) {
      await tx.exec(sql);
    },
  });
}
