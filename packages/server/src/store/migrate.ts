/**
 * @module The store's schema, brought up to date at start, in two steps, each under one lock (so two
 * instances starting together never apply a file twice, nor create the tables that record them twice):
 *
 * 1. Migrations (`migrations/*.sql`): plain SQL, applied once each, in file-name order, each in its own
 *    transaction, recorded in `schema_migrations`. They change the schema; they are never edited once
 *    released.
 * 2. Functions (`functions/<name>.sql`): the one current text of each store function, a `CREATE OR
 *    REPLACE` statement, applied (in file-name order, in one transaction) whenever its text differs from
 *    the one last applied, whose SHA-256 `schema_functions` keeps (as Flyway's repeatable migrations).
 *    A function is changed by editing its file, never by a migration that carries a copy of it. A change
 *    of its arguments or result type needs a migration that drops the old one (and deletes its row of
 *    `schema_functions`) first, as `CREATE OR REPLACE` cannot change them. A function's text applied by
 *    code that knew a newer migration than this code is left alone (an older instance started during a
 *    rolling deploy does not put its text back).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { OpenDb, Tx } from './db.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const FUNCTIONS_DIR = fileURLToPath(new URL('./functions/', import.meta.url));

/** Where the two steps read their files (tests pass their own). */
export interface SchemaSources {
  migrations?: string;
  functions?: string;
}

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

/** The `.sql` files of `dir`, in file-name order. */
async function sqlFiles(dir: string): Promise<{ file: string; sql: string }[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  return Promise.all(files.map(async (file) => ({ file, sql: await readFile(`${dir}${file}`, 'utf8') })));
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, then every function whose text
 * changed; returns what it applied (`0519_schema_functions.sql`, `functions/finish_runs.sql`).
 */
export async function migrate(db: OpenDb, sources: SchemaSources = {}): Promise<string[]> {
  const migrations = await sqlFiles(sources.migrations ?? MIGRATIONS_DIR);
  const functions = await sqlFiles(sources.functions ?? FUNCTIONS_DIR);
  // Under the lock too: instances starting together on an empty store would race to create it.
  await underLock(db, (tx) =>
    tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`),
  );
  const applied: string[] = [];
  for (const { file, sql } of migrations) {
    const done = await underLock(db, async (tx) => {
      const seen = await tx.query(`SELECT 1 FROM schema_migrations WHERE version = $1`, [file]);
      if (seen.length > 0) return false;
      await tx.exec(sql);
      await tx.query(`INSERT INTO schema_migrations (version) VALUES ($1)`, [file]);
      return true;
    });
    if (done) applied.push(file);
  }
  if (functions.length === 0) return applied;
  const newest = migrations.at(-1)?.file ?? '';
  const replaced = await underLock(db, async (tx) => {
    const rows = await tx.query<{ name: string; sha256: string; migration: string }>(`SELECT name, sha256, migration FROM schema_functions`);
    const stored = new Map(rows.map((row) => [row.name, row]));
    const done: string[] = [];
    for (const { file, sql } of functions) {
      const name = file.slice(0, -'.sql'.length);
      const sha256 = createHash('sha256').update(sql).digest('hex');
      const last = stored.get(name);
      if (last && (last.sha256 === sha256 || last.migration > newest)) continue;
      await tx.exec(sql);
      await tx.query(
        `INSERT INTO schema_functions (name, sha256, migration) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, migration = EXCLUDED.migration, applied_at = now()`,
        [name, sha256, newest],
      );
      done.push(`functions/${file}`);
    }
    return done;
  });
  return [...applied, ...replaced];
}
