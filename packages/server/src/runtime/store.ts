/**
 * @module Opening the configured store from the CLI: PostgreSQL when DATABASE_URL is set,
 * otherwise embedded PGlite under the data directory, behind the data-directory lock.
 */
import { join } from 'node:path';
import type { ServerConfig } from '../config.ts';
import type { OpenDb } from '../store/db.ts';
import { openStore } from '../store/open.ts';
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
    const db = await openStore({ databaseUrl: config.databaseUrl });
    return { db, description: 'PostgreSQL (DATABASE_URL)', close: () => db.close() };
  }
  await restrictDataDir(config.dataDir);
  const lock = await lockDataDir(config.dataDir, command);
  try {
    // PGlite's own files live in a subdirectory, beside the lock file.
    const db = await openStore({ dataDir: join(config.dataDir, 'pglite') });
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
