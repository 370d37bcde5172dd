/**
 * @module Copying the embedded store into PostgreSQL (`service store copy`): every table of the source's
 * schema, in the order of its foreign keys (a table after every table it refers to), each with one
 * `COPY … FROM STDIN` on the target fed in chunks of the source's pages, all in one transaction on the
 * target; its own triggers held off meanwhile (the counters of `run_counts` are copied, not counted again),
 * its sequences set to the source's, and each table's row count compared before the commit.
 *
 * The target's schema comes from the migrations, not from the source: it is migrated first, by the same
 * code, so both are at the same version. The migration bookkeeping (`schema_migrations`,
 * `schema_functions`) is compared, not copied; any other table of the source that the target lacks stops
 * the copy before anything is written.
 */
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Db } from './db.ts';
import { quoteIdent } from './postgres.ts';

/** The migrations' own records: the target has its own, which must list the same migrations. */
export const MIGRATION_TABLES = ['schema_migrations', 'schema_functions'] as const;

/**
 * The tables the migrations themselves write rows into (a singleton the code updates): a freshly migrated
 * target has rows there, which the source's replace. A test checks that a migrated store has rows nowhere else.
 */
export const MIGRATION_SEEDED_TABLES = ['api_key_revocations'] as const;

/** Pages of the source read per chunk (8 KiB each): about 8 MiB of rows held at a time. */
const CHUNK_PAGES = 1024;

/** One table to copy: its columns in order (generated ones left out) and its size in pages. */
export interface TablePlan {
  table: string;
  columns: string[];
  pages: number;
}

/** A table's rows in the source and, once copied, in the target. */
export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** The source's store: statements, and the text COPY of a query (the embedded store's `copyOut`). */
type Source = Db & { copyOut(query: string): Promise<Uint8Array> };

export class CopyRefused extends Error {
  override readonly name = 'CopyRefused';
}

interface Reference {
  table: string;
  references: string;
}

/**
 * `tables` ordered so that each comes after every table it refers to (a reference to itself needs
 * nothing: one COPY checks its rows together). Throws on a cycle, which no order can copy.
 */
export function foreignKeyOrder(tables: readonly string[], references: readonly Reference[]): string[] {
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (table: string, path: string[]) => {
    if (state.get(table) === 'done') return;
    if (state.get(table) === 'visiting') throw new CopyRefused(`The foreign keys form a cycle (${[...path, table].join(' → ')}): no order copies them.`);
    state.set(table, 'visiting');
    for (const ref of references)
      if (ref.table === table && ref.references !== table && tables.includes(ref.references)) visit(ref.references, [...path, table]);
    state.set(table, 'done');
    order.push(table);
  };
  for (const table of [...tables].sort()) visit(table, []);
  return order;
}

/** The tables of the source's schema to copy, in foreign-key order; the migration tables left out. */
export async function copyPlan(source: Db): Promise<TablePlan[]> {
  const tables = (await source.query<{ table: string }>(`SELECT tablename AS table FROM pg_tables WHERE schemaname = current_schema()`))
    .map((row) => row.table)
    .filter((table) => !(MIGRATION_TABLES as readonly string[]).includes(table));
  const references = await source.query<Reference>(
    `SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS references
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema()`,
  );
  const columns = await source.query<{ table: string; column: string }>(
    `SELECT table_name AS table, column_name AS column FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position`,
  );
  const pages = await source.query<{ table: string; pages: number }>(
    `SELECT c.relname AS table, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
  );
  return foreignKeyOrder(tables, references).map((table) => ({
    table,
    columns: columns.filter((c) => c.table === table).map((c) => c.column),
    pages: pages.find((p) => p.table === table)?.pages ?? 0,
  }));
}

/** What the target holds before anything is written: its tables that have rows, and the migrations it recorded. */
export async function targetContents(target: pg.ClientBase): Promise<{ tablesWithRows: string[]; migrations: string[] }> {
  const { rows: tables } = await target.query<{ table: string }>(`SELECT tablename AS table FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`);
  const tablesWithRows: string[] = [];
  for (const { table } of tables) {
    if ((MIGRATION_TABLES as readonly string[]).includes(table) || (MIGRATION_SEEDED_TABLES as readonly string[]).includes(table)) continue;
    const { rows } = await target.query(`SELECT 1 FROM ${quoteIdent(table)} LIMIT 1`);
    if (rows.length > 0) tablesWithRows.push(table);
  }
  const migrations = tables.some((t) => t.table === 'schema_migrations')
    ? (await target.query<{ version: string }>(`SELECT version FROM schema_migrations ORDER BY version`)).rows.map((row) => row.version)
    : [];
  return { tablesWithRows, migrations };
}

/** The migrations a store recorded, in order. */
export async function migrationsOf(db: Db): Promise<string[]> {
  return (await db.query<{ version: string }>(`SELECT version FROM schema_migrations ORDER BY version`)).map((row) => row.version);
}

/** Why `target` cannot take `source`'s rows, or undefined: it holds rows, or migrations the source does not know. */
export function refusal(target: { tablesWithRows: string[]; migrations: string[] }, sourceMigrations: readonly string[]): string | undefined {
  if (target.tablesWithRows.length > 0) {
    const shown = target.tablesWithRows.slice(0, 5).join(', ') + (target.tablesWithRows.length > 5 ? `, and ${target.tablesWithRows.length - 5} more` : '');
    return `The target database is not empty (rows in ${shown}); nothing was written. Copy into a new, empty database.`;
  }
  const unknown = target.migrations.filter((version) => !sourceMigrations.includes(version));
  if (unknown.length > 0)
    return `The target's schema is newer than this service's (migration ${unknown[0]}); nothing was written. Copy with the same version of the service.`;
  return undefined;
}

/**
 * Copies every table of `plan` from `source` into `target` (migrated to the same version, with no rows)
 * in one transaction, then sets its sequences to the source's and compares each table's rows; on any
 * difference or failure the transaction is rolled back and nothing stays written.
 */
export async function copyTables(source: Source, target: pg.ClientBase, plan: readonly TablePlan[], say: (line: string) => void): Promise<TableCount[]> {
  const targetTables = new Set(
    (await target.query<{ table: string }>(`SELECT tablename AS table FROM pg_tables WHERE schemaname = current_schema()`)).rows.map((r) => r.table),
  );
  const missing = plan.filter((t) => !targetTables.has(t.table)).map((t) => t.table);
  if (missing.length > 0)
    throw new CopyRefused(`The target's schema has no table ${missing.join(', ')} (a table outside the migrations?); nothing was written.`);
  await target.query('BEGIN');
  try {
    // A server started on the target meanwhile would have written its first workspace: checked again under the transaction.
    const again = await targetContents(target);
    if (again.tablesWithRows.length > 0) throw new CopyRefused(refusal(again, again.migrations)!);
    for (const { table } of plan) await target.query(`ALTER TABLE ${quoteIdent(table)} DISABLE TRIGGER USER`);
    for (const table of MIGRATION_SEEDED_TABLES) await target.query(`DELETE FROM ${quoteIdent(table)}`);
    const copied = new Map<string, number>();
    for (const [index, table] of plan.entries()) {
      const started = Date.now();
      const rows = await copyTable(source, target, table, (page) => say(`  ${table.table}: ${page} of ${table.pages} pages`));
      copied.set(table.table, rows);
      say(`[${index + 1}/${plan.length}] ${table.table}: ${rows} rows (${Date.now() - started} ms)`);
    }
    for (const { table } of plan) await target.query(`ALTER TABLE ${quoteIdent(table)} ENABLE TRIGGER USER`);
    await copySequences(source, target);
    const counts: TableCount[] = [];
    for (const { table } of plan) {
      const count = `SELECT count(*)::int AS n FROM ${quoteIdent(table)}`;
      const [inSource] = await source.query<{ n: number }>(count);
      const { rows: inTarget } = await target.query<{ n: number }>(count);
      counts.push({ table, source: inSource!.n, target: inTarget[0]!.n });
    }
    const differ = counts.filter((c) => c.source !== c.target || c.source !== copied.get(c.table));
    if (differ.length > 0)
      throw new CopyRefused(
        `Row counts differ after the copy (${differ.map((c) => `${c.table}: ${c.source} → ${c.target}`).join(', ')}); rolled back, nothing was written.`,
      );
    await target.query('COMMIT');
    return counts;
  } catch (err) {
    await target.query('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** One table, one COPY on the target, fed a chunk of the source's pages at a time (a range scan on `ctid`). */
async function copyTable(source: Source, target: pg.ClientBase, plan: TablePlan, progress: (page: number) => void): Promise<number> {
  const columns = plan.columns.map(quoteIdent).join(', ');
  const stream = target.query(copyFrom(`COPY ${quoteIdent(plan.table)} (${columns}) FROM STDIN`));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', reject);
  });
  // A refusal of the target (a row it rejects) ends the stream: every wait below ends with it.
  done.catch(() => {});
  try {
    // `pages` was measured before: the last chunk is open-ended, so rows past it are read too.
    for (let page = 0; ; page += CHUNK_PAGES) {
      const last = page + CHUNK_PAGES >= plan.pages;
      const range = last ? `ctid >= '(${page},0)'::tid` : `ctid >= '(${page},0)'::tid AND ctid < '(${page + CHUNK_PAGES},0)'::tid`;
      const chunk = await source.copyOut(`SELECT ${columns} FROM ${quoteIdent(plan.table)} WHERE ${range}`);
      if (chunk.length > 0 && !stream.write(chunk)) await Promise.race([new Promise((resolve) => stream.once('drain', resolve)), done]);
      if (last) break;
      progress(page + CHUNK_PAGES);
    }
  } finally {
    stream.end();
  }
  await done;
  return stream.rowCount;
}

/** Each sequence of the target set to where the source's stands. */
async function copySequences(source: Db, target: pg.ClientBase): Promise<void> {
  const sequences = await source.query<{ name: string }>(`SELECT sequencename AS name FROM pg_sequences WHERE schemaname = current_schema()`);
  for (const { name } of sequences) {
    const [state] = await source.query<{ last: string; called: boolean }>(`SELECT last_value::text AS last, is_called AS called FROM ${quoteIdent(name)}`);
    await target.query(`SELECT setval($1::regclass, $2::bigint, $3)`, [quoteIdent(name), state!.last, state!.called]);
  }
}
