/**
 * @module Test helper: the store backends a suite should run on. PGlite (in memory) always;
 * PostgreSQL when DATABASE_URL is set, each opening in a fresh schema dropped at cleanup, so
 * suites running in parallel against the shared database never see each other's rows.
 */
import pg from 'pg';
import { randomBase62 } from '../random.ts';
import type { OpenDb } from './db.ts';
import { openStore } from './open.ts';
import { quoteIdent } from './postgres.ts';

export interface TestStore {
  db: OpenDb;
  cleanup(): Promise<void>;
}

export interface TestBackend {
  name: 'pglite' | 'postgres';
  open(): Promise<TestStore>;
}

export function testBackends(env: NodeJS.ProcessEnv = process.env): TestBackend[] {
  const backends: TestBackend[] = [{ name: 'pglite', open: openPgliteTestStore }];
  const url = env.DATABASE_URL;
  if (url) backends.push({ name: 'postgres', open: () => openPostgresTestStore(url) });
  return backends;
}

async function openPgliteTestStore(): Promise<TestStore> {
  const db = await openStore();
  return { db, cleanup: () => db.close() };
}

async function openPostgresTestStore(url: string): Promise<TestStore> {
  const schema = `test_${randomBase62(12).toLowerCase()}`;
  await adminQuery(url, `CREATE SCHEMA ${quoteIdent(schema)}`);
  const db = await openStore({ databaseUrl: url, schema });
  return {
    db,
    async cleanup() {
      await db.close();
      await adminQuery(url, `DROP SCHEMA ${quoteIdent(schema)} CASCADE`);
    },
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
