/**
 * @module Opening the configured store from the CLI: PostgreSQL when DATABASE_URL is set,
 * otherwise embedded PGlite under the data directory, behind the data-directory lock. `serve` runs
 * PGlite in a worker thread of its own (store/pglite-worker.ts), so its statements never hold the
 * event loop; the one-off commands run it in their own thread (one caller, and no thread to start).
 */
import { join } from 'node:path';
import { ConfigError, type ServerConfig } from '../config.ts';
import type { OpenDb } from '../store/db.ts';
import { openStore } from '../store/open.ts';
import { assertListenHears, ListenUnheard } from '../store/pooler.ts';
import { restrictDataDir } from '../store/data-dir.ts';
import { lockDataDir } from './lock.ts';

export interface CliStore {
  db: OpenDb;
  /** Human description for start-up messages; never the connection string (it may hold a password). */
  description: string;
  close(): Promise<void>;
}

export async function openCliStore(config: ServerConfig, command: string): Promise<CliStore> {
  if (config.databaseUrl) {
    const separate = config.databaseListenUrl !== undefined && config.databaseListenUrl !== config.databaseUrl;
    const db = await openStore({ databaseUrl: config.databaseUrl, databaseListenUrl: config.databaseListenUrl, poolSize: config.databasePoolSize });
    // Only the server listens: it refuses to start when its LISTEN connection would not hear (store/pooler.ts).
    if (command === 'serve') {
      await assertListenHears(db, config.databaseListenUrl ?? config.databaseUrl, { separate }).catch(async (err: unknown) => {
        await db.close();
        throw err instanceof ListenUnheard ? new ConfigError(err.message) : err;
      });
    }
    const listenNote = separate ? '; LISTEN on DATABASE_LISTEN_URL, statements not prepared by name' : '';
    return { db, description: `PostgreSQL (DATABASE_URL, a pool of ${config.databasePoolSize} connections${listenNote})`, close: () => db.close() };
  }
  await restrictDataDir(config.dataDir);
  const lock = await lockDataDir(config.dataDir, command);
  try {
    // PGlite's own files live in a subdirectory, beside the lock file.
    const db = await openStore({
      dataDir: join(config.dataDir, 'pglite'),
      ...(command === 'serve' ? { thread: 'worker' as const, onWorkerExit: storeThreadLost } : {}),
    });
    // PGlite gives the files it creates mode 0666 whatever the umask: take group and other bits away
    // now and again at close (the 0700 directory keeps others out of files made in between).
    await restrictDataDir(config.dataDir);
    return {
      db,
      description: `embedded PGlite in ${config.dataDir}`,
      async close() {
        await db.close();
        await restrictDataDir(config.dataDir);
        await lock.release();
      },
    };
  } catch (err) {
    await lock.release();
    throw err;
  }
}

/**
 * The embedded store's thread ended on its own (PGlite failed inside): every statement now fails, and
 * the store cannot be reopened while this process holds the directory's lock, so the process ends
 * (as it would have with PGlite in its own thread) and its supervisor starts it again.
 */
function storeThreadLost(err: Error): void {
  process.stderr.write(`The embedded store's worker thread stopped (${err.message}); exiting.\n`);
  process.exit(1);
}
