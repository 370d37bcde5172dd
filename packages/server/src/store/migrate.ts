/**
 * @module Plain SQL migrations, applied in file-name order at start. Each file runs once, in its
 * own transaction; a lock keeps two instances starting together from applying the same file twice.
 */
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { OpenDb } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Applies every migration not yet recorded in `schema_migrations`; returns the names applied. */
export async function migrate(db: OpenDb, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(`${dir}${file}`, 'utf8');
    const done = await db.transaction(async (tx) => {
      // Per schema, so parallel test suites in separate schemas do not wait for each other.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('service-migrations:' || current_schema()))`);
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
