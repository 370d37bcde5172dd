/**
 * @module PostgreSQL driver over `pg`, for several server instances sharing one database.
 * An optional schema isolates a tenant of the database (tests use one schema per suite).
 *
 * The pool's connections are handed out fairly: a statement or a transaction takes one of `max` turns before it
 * takes a connection, and the turns go to the waiting parties in turn (store/fair-queue.ts), not in arrival order,
 * so one workspace's flood does not stand between another's statement and the database.
 *
 * Behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`), DATABASE_URL's connections are
 * server sessions lent for one transaction at a time, so nothing may outlive a transaction: the LISTEN connection
 * goes to `listenUrl` instead (store/pooler.ts checks that it hears), and statements are not named (a statement
 * prepared on one server session is unknown to the next).
 */
import pg from 'pg';
import { asTx, type OpenDb, type Tx } from './db.ts';
import { FairQueue, storeParty } from './fair-queue.ts';
import { awaitListeners, createPgListener } from './listen.ts';

/** Connections of the pool when none is asked for (DATABASE_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

interface PostgresOptions {
  url: string;
  /**
   * The LISTEN connection's URL when `url` goes through a pooler in transaction mode (DATABASE_LISTEN_URL); `url`
   * when absent. When it differs from `url`, statements are not named (prepared statements do not outlive a
   * transaction there).
   */
  listenUrl?: string;
  /** Every connection gets `search_path = <schema>`; the schema must exist. */
  schema?: string;
  max?: number;
  /** First reconnect delay of the LISTEN connection (store/listen.ts). */
  listenRetryMs?: number;
}

export async function openPostgres(options: PostgresOptions): Promise<OpenDb> {
  const searchPath = options.schema ? { options: `-c search_path=${quoteIdent(options.schema)}` } : {};
  const pool = new pg.Pool({ connectionString: options.url, max: options.max ?? DEFAULT_POOL_SIZE, ...searchPath });
  // Its own connection, opened by the first `listen` (a one-off CLI command never opens it).
  let listener: ReturnType<typeof createPgListener> | undefined;
  // An idle client that loses its connection emits 'error'; without a listener that kills the process.
  pool.on('error', () => {});
  // Fail at start, not on the first request, when the database is unreachable.
  await pool.query('SELECT 1');
  const turns = fairTurns(options.max ?? DEFAULT_POOL_SIZE);
  const listenUrl = options.listenUrl ?? options.url;
  const named = listenUrl === options.url;
  const store: OpenDb = {
    driver: 'postgres',
    query: (sql, params = [], options) =>
      turns.take(async () => {
        if (options?.name && named) return (await pool.query({ name: options.name, text: sql, values: params as unknown[] })).rows;
        return (await pool.query(sql, params as unknown[])).rows;
      }),
    transaction: (fn) => turns.take(() => runTransaction(pool, fn, named)),
    exec: (sql) =>
      turns.take(async () => {
        await pool.query(sql);
      }),
    listen(channel, handler) {
      listener ??= createPgListener({ url: listenUrl, ...searchPath, ...(options.listenRetryMs ? { retryMs: options.listenRetryMs } : {}) });
      return listener.listen(channel, handler);
    },
    awaitListeners(channel, version, since, timeoutMs) {
      return awaitListeners(store, { channel, version, since, timeoutMs });
    },
    queued: () => turns.waiting() + pool.waitingCount,
    async close() {
      await listener?.close();
      await pool.end();
    },
  };
  return store;
}

/** `max` turns at the pool, handed to the waiting parties in turn. */
function fairTurns(max: number): { take<T>(work: () => Promise<T>): Promise<T>; waiting(): number } {
  let taken = 0;
  const waiting = new FairQueue<() => void>();
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else taken -= 1;
  };
  return {
    async take(work) {
      if (taken < max) taken += 1;
      else await new Promise<void>((resolve) => waiting.push(storeParty(), resolve));
      try {
        return await work();
      } finally {
        release();
      }
    },
    waiting: () => waiting.size,
  };
}

async function runTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>, named: boolean): Promise<T> {
  const client = await pool.connect();
  // While a client is out of the pool the pool does not listen for its errors, and the driver reports a lost
  // connection (a restart, a failover, a terminated backend) as an `error` event of the client: without a listener
  // that event is thrown, an uncaught exception that ends the process. Here it fails this transaction alone (its
  // next statement rejects), and the lost client is not given back to the pool.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost ??= err;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await fn(clientDb(client, named));
    await client.query('COMMIT');
    return result;
  } catch (err) {
    if (!lost) await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    // A lost client keeps the listener: the driver may report the same loss twice (the socket's error, then its end).
    if (!lost) client.removeListener('error', onError);
    client.release(lost);
  }
}

function clientDb(client: pg.PoolClient, named: boolean): Tx {
  return asTx({
    async query(sql, params = [], options) {
      if (options?.name && named) return (await client.query({ name: options.name, text: sql, values: params as unknown[] })).rows;
      return (await client.query(sql, params as unknown[])).rows;
    },
    async exec(sql) {
      await client.query(sql);
    },
  });
}

/** Double-quoted identifier; schema names come from our own code, but quote them anyway. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
