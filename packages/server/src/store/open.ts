/**
 * @module Opens the configured store (PostgreSQL when a URL is given, else embedded PGlite) and
 * brings its schema up to date.
 */
import type { OpenDb } from './db.ts';
import { migrate } from './migrate.ts';
import { openPglite } from './pglite.ts';
import { openPgliteWorker } from './pglite-worker.ts';
import { openPostgres } from './postgres.ts';

interface StoreOptions {
  /** PostgreSQL connection string; when set, PGlite is not used. */
  databaseUrl?: string | undefined;
  /** The LISTEN connection's URL when the pool's goes through a pooler in transaction mode (DATABASE_LISTEN_URL). */
  databaseListenUrl?: string | undefined;
  /** PGlite data directory; in memory when absent. */
  dataDir?: string | undefined;
  /** Connections of the PostgreSQL pool (DATABASE_POOL_SIZE); 10 when absent. */
  poolSize?: number | undefined;
  /** PostgreSQL schema to work in (tests). */
  schema?: string | undefined;
  /** First reconnect delay of PostgreSQL's LISTEN connection (tests hold it down with a long one). */
  listenRetryMs?: number | undefined;
  /**
   * PGlite in a worker thread of its own (store/pglite-worker.ts), as `service serve` runs it; else
   * in this thread (the one-off commands, tests). Unused with PostgreSQL.
   */
  thread?: 'worker' | 'main' | undefined;
  /** With `thread: 'worker'`: called if the worker thread ends on its own. */
  onWorkerExit?: ((err: Error) => void) | undefined;
}

export async function openStore(options: StoreOptions = {}): Promise<OpenDb> {
  const db = options.databaseUrl
    ? await openPostgres({
        url: options.databaseUrl,
        ...(options.databaseListenUrl ? { listenUrl: options.databaseListenUrl } : {}),
        ...(options.poolSize ? { max: options.poolSize } : {}),
        ...(options.schema ? { schema: options.schema } : {}),
        ...(options.listenRetryMs ? { listenRetryMs: options.listenRetryMs } : {}),
      })
    : options.thread === 'worker'
      ? await openPgliteWorker(options.dataDir, options.onWorkerExit ? { onExit: options.onWorkerExit } : {})
      : await openPglite(options.dataDir);
  return migrated(db);
}

/** `db` with its schema brought up to date; closed when a migration fails. */
export async function migrated(db: OpenDb): Promise<OpenDb> {
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
