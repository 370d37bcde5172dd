/**
 * Migrations applied by several instances starting together on an empty store (`serve --workers N`
 * on a fresh PostgreSQL database): each waits for the migration lock, so every start succeeds and
 * each file is applied once. Before the lock covered the creation of `schema_migrations`, the
 * instances raced to create it and some failed (`duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../random.ts';
import type { OpenDb } from './db.ts';
import { migrate } from './migrate.ts';
import { openStore } from './open.ts';
import { openPglite } from './pglite.ts';
import { quoteIdent } from './postgres.ts';
import { adminQuery } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;
/** Instances starting together: enough that the race, when there is one, is lost by some. */
const INSTANCES = 12;

describe.skipIf(!DATABASE_URL)('migrations on an empty PostgreSQL schema', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await adminQuery(DATABASE_URL!, `DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  });

  it.each([1, 2, 3])('%i: instances opening the store together all start, and each file is applied once', async () => {
    const schema = `test_${randomBase62(12).toLowerCase()}`;
    schemas.push(schema);
    await adminQuery(DATABASE_URL!, `CREATE SCHEMA ${quoteIdent(schema)}`);
    const opened = await Promise.allSettled(Array.from({ length: INSTANCES }, () => openStore({ databaseUrl: DATABASE_URL!, schema })));
    const stores = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    try {
      expect(opened.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))).toEqual([]);
      const [store] = stores;
      const rows = await store!.query<{ version: string; n: number }>(`SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version`);
      expect(rows.length).toBeGreaterThan(10);
      expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    } finally {
      for (const store of stores) await store.close();
    }
  });
});

describe('migrations on an empty PGlite store', () => {
  let db: OpenDb | undefined;
  afterAll(async () => {
    await db?.close();
  });

  it('migrations started together on one store all succeed, and each file is applied once', async () => {
    db = await openPglite();
    const store = db;
    const applied = await Promise.all(Array.from({ length: 4 }, () => migrate(store)));
    const rows = await store.query<{ version: string }>(`SELECT version FROM schema_migrations ORDER BY version`);
    // Each file applied by exactly one of them.
    expect(applied.flat().sort()).toEqual(rows.map((r) => r.version));
  });
});
