/**
 * Migrations applied by several instances starting together on an empty store (`serve --workers N`
 * on a fresh PostgreSQL database): each waits for the migration lock, so every start succeeds and
 * each file is applied once. Before the lock covered the creation of `schema_migrations`, the
 * instances raced to create it and some failed (`duplicate key value violates unique constraint
 * "pg_type_typname_nsp_index"`).
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { randomBase62 } from '../random.ts';
import type { OpenDb } from './db.ts';
import { migrate } from './migrate.ts';
import { openStore } from './open.ts';
import { openPglite } from './pglite.ts';
import { quoteIdent } from './postgres.ts';
import { adminQuery, openMemoryStore } from '@service/testing/store';

const DATABASE_URL = process.env.DATABASE_URL;
/** The server's store functions, in the order they are applied. */
const SERVER_FUNCTIONS = readdirSync(fileURLToPath(new URL('./functions/', import.meta.url)))
  .filter((file) => file.endsWith('.sql'))
  .sort();
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
    expect(
      applied
        .flat()
        .filter((name) => !name.startsWith('functions/'))
        .sort(),
    ).toEqual(rows.map((r) => r.version));
    expect(applied.flat().filter((name) => name.startsWith('functions/'))).toEqual(SERVER_FUNCTIONS.map((file) => `functions/${file}`));
  });

  it('leaves the close and the settlement one signature each, one jsonb argument, and none of the positional ones', async () => {
    const store = db!;
    const rows = await store.query<{ name: string; args: string }>(
      `SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p
        WHERE p.pronamespace = current_schema()::regnamespace AND p.proname IN ('finish_run', 'finish_run_logged', 'finish_runs', 'settle_runs', 'jsonb_text_array')
        ORDER BY 1, 2`,
    );
    expect(rows).toEqual([
      { name: 'finish_run', args: 'p jsonb' },
      { name: 'finish_runs', args: 'p jsonb' },
      { name: 'settle_runs', args: 'p jsonb' },
    ]);
  });
});

describe('store functions (store/functions/*.sql)', () => {
  const dirs: string[] = [];
  let db: OpenDb | undefined;
  afterAll(async () => {
    await db?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const folder = () => {
    const dir = `${mkdtempSync(join(tmpdir(), 'store-functions-'))}/`;
    dirs.push(dir);
    return dir;
  };

  it('applies a function when its text changed, not otherwise, and never the text of code that knew fewer migrations', async () => {
    db = await openMemoryStore();
    const store = db;
    const functions = folder();
    const define = (n: number) =>
      writeFileSync(`${functions}probe_fn.sql`, `CREATE OR REPLACE FUNCTION probe_fn() RETURNS int LANGUAGE sql AS $$ SELECT ${n} $$;`);
    const value = async () => (await store.query<{ v: number }>(`SELECT probe_fn() AS v`))[0]!.v;

    define(1);
    expect(await migrate(store, { functions })).toEqual(['functions/probe_fn.sql']);
    expect(await value()).toBe(1);
    // The same text: nothing to apply.
    expect(await migrate(store, { functions })).toEqual([]);
    // Its text changed: applied again.
    define(2);
    expect(await migrate(store, { functions })).toEqual(['functions/probe_fn.sql']);
    expect(await value()).toBe(2);
    // Code with a newer migration and a newer text applies both.
    const migrations = folder();
    cpSync(fileURLToPath(new URL('./migrations/', import.meta.url)), migrations, { recursive: true });
    writeFileSync(`${migrations}9999_later.sql`, 'SELECT 1;');
    define(3);
    expect(await migrate(store, { migrations, functions })).toEqual(['9999_later.sql', 'functions/probe_fn.sql']);
    expect(await value()).toBe(3);
    // Code that knows fewer migrations (an older instance started during a rolling deploy) leaves the newer text.
    define(2);
    expect(await migrate(store, { functions })).toEqual([]);
    expect(await value()).toBe(3);
    // The server's own functions are applied at open, and recorded.
    const rows = await store.query<{ name: string }>(`SELECT name FROM schema_functions ORDER BY name`);
    expect(rows.map((r) => r.name)).toEqual([...SERVER_FUNCTIONS.map((file) => file.slice(0, -'.sql'.length)), 'probe_fn'].sort());
  });
});
