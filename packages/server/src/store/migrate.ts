/**
 * @module Plain SQL migrations, applied in file-name order at start. Each file runs once, in its
 * own transaction; a lock keeps two instances starting together from applying the same file twice,
 * or from creating the table that records them twice.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { OpenDb, Tx } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * `fn` in a transaction that first takes the migration lock (`pg_advisory_xact_lock`, released at
 * its commit or rollback). Per schema, so parallel test suites in separate schemas do not wait for
 * each other.
 */
function underLock<T>(db: OpenDb, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('service-migrations:' || current_schema()))`);
    return fn(tx);
  });
}

/** Applies every migration not yet recorded in `schema_migrations`; returns the names applied. */
export async function migrate(db: OpenDb, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  // Under the lock too: instances starting together on an empty store would race to create it.
  await underLock(db, (tx) =>
    tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`),
  );
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(`${dir}${file}`, 'utf8');
    const done = await underLock(db, async (tx) => {
      const seen = await tx.query(`SELECT 1 FROM schema_migrations WHERE version = $1`, [file]);
      if (seen.length > 0) return false;
      await tx.exec(sql);
      await tx.query(`INSERT INTO schema_migrations (version) VALUES ($1)`, [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}
