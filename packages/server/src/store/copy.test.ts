/**
 * The copy's plan against the schema itself: every table of the store (generated/db.ts, from the
 * migrations) is copied, after the tables it refers to; a migrated store has rows only where the copy
 * expects the migrations to put them; a cycle of foreign keys and a table the target lacks are refused.
 * The copy end to end (the command, PostgreSQL, a server on the copy) is in cli/store-copy.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends, type TestStore } from '@service/testing/store';
import { CopyRefused, copyPlan, foreignKeyOrder, MIGRATION_SEEDED_TABLES, MIGRATION_TABLES } from './copy.ts';
import { quoteIdent } from './postgres.ts';

const DB_TS = fileURLToPath(new URL('../../../../generated/db.ts', import.meta.url));

/** The tables of the store, as generated/db.ts lists them. */
function generatedTables(): string[] {
  const text = readFileSync(DB_TS, 'utf8');
  const start = text.indexOf('export interface Tables {');
  const body = text.slice(start, text.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {2}([a-z_][a-z0-9_]*): \{$/gm)].map((m) => m[1]!);
}

describe('the store copy plan', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await testBackends()[0]!.open();
  });
  afterAll(() => store?.cleanup());

  it('copies every table of the schema but the migrations’ records, each after the tables it refers to', async () => {
    const plan = await copyPlan(store.db);
    const tables = generatedTables();
    expect(tables.length).toBeGreaterThan(30);
    const copied = plan.map((t) => t.table);
    expect([...copied].sort()).toEqual(tables.filter((t) => !(MIGRATION_TABLES as readonly string[]).includes(t)).sort());
    const references = await store.db.query<{ table: string; references: string }>(
      `SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS references FROM pg_constraint c
         JOIN pg_namespace n ON n.oid = c.connamespace WHERE c.contype = 'f' AND n.nspname = current_schema()`,
    );
    expect(references.length).toBeGreaterThan(20);
    for (const ref of references) if (ref.table !== ref.references) expect(copied.indexOf(ref.references)).toBeLessThan(copied.indexOf(ref.table));
    expect(plan.find((t) => t.table === 'runs')!.columns).toContain('seq');
  });

  it('a migrated store has rows only in the tables the copy replaces (MIGRATION_SEEDED_TABLES)', async () => {
    const withRows: string[] = [];
    for (const { table } of await copyPlan(store.db)) {
      const rows = await store.db.query(`SELECT 1 FROM ${quoteIdent(table)} LIMIT 1`);
      if (rows.length > 0) withRows.push(table);
    }
    expect(withRows).toEqual([...MIGRATION_SEEDED_TABLES]);
  });

  it('orders a chain, ignores a reference to itself, and refuses a cycle', () => {
    expect(
      foreignKeyOrder(
        ['c', 'b', 'a'],
        [
          { table: 'c', references: 'b' },
          { table: 'b', references: 'a' },
          { table: 'a', references: 'a' },
        ],
      ),
    ).toEqual(['a', 'b', 'c']);
    expect(() =>
      foreignKeyOrder(
        ['a', 'b'],
        [
          { table: 'a', references: 'b' },
          { table: 'b', references: 'a' },
        ],
      ),
    ).toThrow(CopyRefused);
  });
});
