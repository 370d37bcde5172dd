/**
 * @module Test helper: the store backends a suite should run on. PGlite (in memory) always;
 * PostgreSQL when DATABASE_URL is set. Either way each store is a fresh schema, migrated and
 * dropped at cleanup, so suites never see each other's rows: on PostgreSQL a schema of the shared
 * database, on PGlite a schema of the one in-memory instance this test process starts (starting
 * an instance costs seconds of CPU; a schema about a tenth of a second).
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { randomBase62 } from '../../server/src/random.ts';
import { asTx, type Db, type OpenDb, type Tx } from '../../server/src/store/db.ts';
import { migrated, openStore } from '../../server/src/store/open.ts';
import { pgliteSchemaStore, type SharedPglite, sharePglite } from '../../server/src/store/pglite.ts';
import { quoteIdent } from '../../server/src/store/postgres.ts';

/** The server's store folder (its migrations and functions live there). */
const SERVER_STORE = new URL('../../server/src/store/', import.meta.url);

export interface TestStore {
  db: OpenDb;
  /**
   * Another connection to the same store, as a second instance of the service would open it
   * (PostgreSQL: its own pool on the same schema). PGlite is embedded in one process, so its
   * instances share the one handle. Closed by cleanup. `listenRetryMs`: its LISTEN connection's first
   * reconnect delay (a long one keeps a listener that was cut down).
   */
  peer(options?: { listenRetryMs?: number }): Promise<OpenDb>;
  cleanup(): Promise<void>;
}

export interface TestBackend {
  name: 'pglite' | 'postgres' | 'pglite-worker';
  open(): Promise<TestStore>;
}

export function testBackends(env: NodeJS.ProcessEnv = process.env): TestBackend[] {
  const backends: TestBackend[] = [{ name: 'pglite', open: openPgliteTestStore }];
  const url = env.DATABASE_URL;
  if (url) backends.push({ name: 'postgres', open: () => openPostgresTestStore(url) });
  return backends;
}

/**
 * The backends of the store's own suites: those of `testBackends`, and the embedded store in a worker
 * thread as `service serve` runs it (an instance of its own: a thread and seconds of CPU each, so
 * only the store's suites open it).
 */
export function storeTestBackends(env: NodeJS.ProcessEnv = process.env): TestBackend[] {
  return [...testBackends(env), { name: 'pglite-worker', open: () => openPgliteWorkerTestStore(env) }];
}

/**
 * PGlite in a worker thread, in a data directory of its own (a copy of the test run's migrated
 * template, or migrated afresh without one), removed at cleanup.
 */
export async function openPgliteWorkerTestStore(env: NodeJS.ProcessEnv = process.env): Promise<TestStore & { dataDir: string }> {
  const template = env[PGLITE_TEMPLATE_ENV];
  const dataDir = mkdtempSync(join(tmpdir(), 'pglite-worker-'));
  if (template) cpSync(template, dataDir, { recursive: true });
  const db = await openStore({ dataDir, thread: 'worker' });
  return {
    db,
    dataDir,
    peer: async () => db,
    async cleanup() {
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A statement that runs until a file `name` appears in the store's data directory (PGlite, whose
 * files are the directory's): a long statement a test ends when it chooses, without a timing.
 */
export function untilFileSql(name: string): string {
  return `DO $$ BEGIN WHILE pg_stat_file('${name}', true) IS NULL LOOP PERFORM pg_sleep(0.01); END LOOP; END $$`;
}

async function openPgliteTestStore(): Promise<TestStore> {
  const db = await openMemoryStore();
  return { db, peer: async () => db, cleanup: () => db.close() };
}

let shared: Promise<SharedPglite> | undefined;

/**
 * A fresh, migrated in-memory store: a new schema of this process's one PGlite instance, dropped
 * when the store is closed. What `openStore()` gives, minus the seconds of starting an instance.
 */
export async function openMemoryStore(): Promise<OpenDb> {
  shared ??= PGlite.create().then(sharePglite);
  const instance = await shared;
  const schema = `test_${randomBase62(12).toLowerCase()}`;
  await instance.pg.exec(`CREATE SCHEMA ${quoteIdent(schema)}`);
  return migrated(
    pgliteSchemaStore(instance, schema, async () => {
      await instance.pg.exec(`DROP SCHEMA ${quoteIdent(schema)} CASCADE`);
    }),
  );
}

async function openPostgresTestStore(url: string): Promise<TestStore> {
  const schema = `test_${randomBase62(12).toLowerCase()}`;
  await adminQuery(url, `CREATE SCHEMA ${quoteIdent(schema)}`);
  const db = await openStore({ databaseUrl: url, schema });
  const peers: OpenDb[] = [];
  return {
    db,
    async peer(options = {}) {
      const peer = await openStore({ databaseUrl: url, schema, ...options });
      peers.push(peer);
      return peer;
    },
    async cleanup() {
      for (const peer of peers) await peer.close();
      await db.close();
      await adminQuery(url, `DROP SCHEMA ${quoteIdent(schema)} CASCADE`);
    },
  };
}

/** Where the test run's migrated PGlite data directory is (set by the test run's global setup). */
export const PGLITE_TEMPLATE_ENV = 'SERVICE_TEST_PGLITE_TEMPLATE';

/**
 * A migrated, empty PGlite data directory for this version of the migrations, the functions and PGlite, made
 * once and kept in the system's temporary folder: a data directory copied from it starts in a
 * fraction of what creating one costs. Returns its path.
 */
export async function pgliteTemplate(): Promise<string> {
  // The server's migrations and functions (store/migrate.ts applies both), and the PGlite the server's store opens.
  const hash = createHash('sha256');
  // The installed PGlite's path names its version (pnpm's store layout).
  hash.update(createRequire(SERVER_STORE).resolve('@electric-sql/pglite'));
  for (const folder of ['migrations/', 'functions/']) {
    const dir = fileURLToPath(new URL(folder, SERVER_STORE));
    for (const file of readdirSync(dir).sort()) hash.update(folder + file).update(readFileSync(join(dir, file)));
  }
  const template = join(tmpdir(), `service-pglite-template-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(template)) return template;
  const building = `${template}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const db = await openStore({ dataDir: building });
  await db.close();
  try {
    renameSync(building, template);
  } catch {
    // Another run made it first.
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * Seeds the PGlite store of a service data directory (`<dataDir>/pglite`) from the test run's
 * template, unless it already exists or no template was made (outside the test run): the service
 * then opens a migrated, empty store, exactly as after its own first start, seconds sooner.
 */
export function seedDataDir(dataDir: string, env: NodeJS.ProcessEnv = process.env): void {
  const template = env[PGLITE_TEMPLATE_ENV];
  const target = join(dataDir, 'pglite');
  if (!template || existsSync(target)) return;
  cpSync(template, target, { recursive: true });
}

/** Runs one statement on its own connection (creating or dropping a schema or a database). */
export async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A database of its own beside `url`'s (`<prefix>_<random>`), for suites whose servers run as
 * processes on PostgreSQL: its URL, and `drop()` (forced: the servers may still be connected).
 */
export async function freshDatabase(url: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBase62(10).toLowerCase()}`;
  await adminQuery(url, `CREATE DATABASE ${quoteIdent(name)}`);
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { url: own.toString(), drop: () => adminQuery(url, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`) };
}

/**
 * The statements a store runs, for tests that bound the queries of a hot path: every statement
 * through `db` lands in `statements` (LISTEN passes through), `BEGIN` for each transaction and the
 * statements inside one indented by two spaces.
 */
export function countingDb(inner: OpenDb): { db: OpenDb; statements: string[] } {
  const statements: string[] = [];
  const record = (sql: string, inTransaction: boolean) => statements.push(`${inTransaction ? '  ' : ''}${sql.replace(/\s+/g, ' ').trim()}`);
  const wrapTx = (tx: Tx): Tx =>
    asTx({
      query: (sql, params, options) => {
        record(sql, true);
        return tx.query(sql, params, options);
      },
      exec: (sql) => {
        statements.push(sql);
        return tx.exec(sql);
      },
    });
  const wrap = (db: Db): Db => ({
    query: (sql, params, options) => {
      record(sql, false);
      return db.query(sql, params, options);
    },
    transaction: (fn) => {
      statements.push('BEGIN');
      return db.transaction((tx) => fn(wrapTx(tx)));
    },
    exec: (sql) => {
      statements.push(sql);
      return db.exec(sql);
    },
  });
  const db: OpenDb = {
    ...wrap(inner),
    driver: inner.driver,
    close: () => inner.close(),
    ...(inner.listen ? { listen: inner.listen.bind(inner) } : {}),
    ...(inner.awaitListeners ? { awaitListeners: inner.awaitListeners.bind(inner) } : {}),
  };
  return { db, statements };
}

/**
 * The money path's sums over the whole store (a test's schema): the ledger, the periods' consumption and the runs'
 * STU, which must stay equal, and what is still reserved anywhere (periods, windows, runs).
 */
export async function moneySums(db: Pick<OpenDb, 'query'>): Promise<{ ledger: number; period: number; runs: number; reserved: number }> {
  const [row] = await db.query<{ ledger: number; period: number; runs: number; reserved: number }>(
    `SELECT (SELECT COALESCE(sum(stu), 0)::float8 FROM usage_ledger) AS ledger,
            (SELECT COALESCE(sum(consumed_stu), 0)::float8 FROM usage_periods) AS period,
            (SELECT COALESCE(sum(stu), 0)::float8 FROM runs) AS runs,
            (SELECT COALESCE(sum(reserved_stu), 0)::float8 FROM usage_periods) + (SELECT COALESCE(sum(reserved_stu), 0)::float8 FROM usage_windows)
              + (SELECT COALESCE(sum(reserved_stu), 0)::float8 FROM runs) AS reserved`,
  );
  return { ledger: Number(row!.ledger), period: Number(row!.period), runs: Number(row!.runs), reserved: Number(row!.reserved) };
}

/**
 * Rows of `table` read so far in the transaction `tx`: by sequential scans, by bitmap scans (counted on the table) and
 * through its indexes (counted on each index), as `pg_stat_all_tables` adds them up. The backend's counters that are
 * not yet flushed, so only a difference within one transaction is that transaction's: how many rows a statement read.
 */
export async function rowsRead(tx: Tx, table: string): Promise<number> {
  const [row] = await tx.query<{ read: number }>(
    `SELECT (pg_stat_get_xact_tuples_returned($1::regclass) + pg_stat_get_xact_tuples_fetched($1::regclass)
             + (SELECT COALESCE(sum(pg_stat_get_xact_tuples_fetched(indexrelid)), 0) FROM pg_index WHERE indrelid = $1::regclass))::int AS read`,
    [table],
  );
  return row!.read;
}
