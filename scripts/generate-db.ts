/**
 * @module Step of `pnpm generate`: generated/db.ts, the row type of every table, read from the schema
 * the SQL migrations (packages/server/src/store/migrations/) build. The migrations run on an in-memory
 * PGlite, and each column of `information_schema.columns` becomes a field with the JavaScript value both
 * drivers return for it (see store/db.ts), `| null` when the column is nullable. A migration that adds or
 * changes a column therefore changes the types the domain compiles against, and `pnpm check:drift`
 * fails until they are regenerated.
 */
import { openStore } from '../packages/server/src/store/open.ts';
import { tsHeader, writeGenerated } from './generate-common.ts';

/** The JavaScript type of a column, by its PostgreSQL type (`udt_name`). */
const TS_TYPES: Record<string, string> = {
  text: 'string',
  varchar: 'string',
  bpchar: 'string',
  uuid: 'string',
  int2: 'number',
  int4: 'number',
  float4: 'number',
  float8: 'number',
  // `pg` returns 64-bit integers and numerics as text, so the domain casts them (`::int`, `::float8`) or reads strings.
  int8: 'string',
  numeric: 'string',
  bool: 'boolean',
  timestamptz: 'Date',
  timestamp: 'Date',
  date: 'Date',
  jsonb: 'unknown',
  json: 'unknown',
  bytea: 'Uint8Array',
  _text: 'string[]',
};

interface Column {
  table_name: string;
  column_name: string;
  udt_name: string;
  is_nullable: 'YES' | 'NO';
}

export async function generateDb(): Promise<string> {
  const db = await openStore();
  let columns: Column[];
  try {
    columns = await db.query<Column>(
      `SELECT table_name, column_name, udt_name, is_nullable FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    );
  } finally {
    await db.close();
  }
  const tables = new Map<string, string[]>();
  for (const column of columns) {
    const type = TS_TYPES[column.udt_name];
    if (!type) throw new Error(`db: ${column.table_name}.${column.column_name} has type ${column.udt_name}, which generate-db.ts does not map`);
    const fields = tables.get(column.table_name) ?? [];
    fields.push(`    ${column.column_name}: ${type}${column.is_nullable === 'YES' ? ' | null' : ''};`);
    tables.set(column.table_name, fields);
  }
  const source = [
    tsHeader('generate-db.ts', 'packages/server/src/store/migrations/*.sql (applied to an in-memory PGlite)'),
    '/** @module The row of every table of the store, as `SELECT *` returns it. */',
    '',
    'export interface Tables {',
    ...[...tables].flatMap(([table, fields]) => [`  ${table}: {`, ...fields, '  };']),
    '}',
    '',
    "/** The row of one table, e.g. `TableRow<'runs'>`. */",
    'export type TableRow<T extends keyof Tables> = Tables[T];',
  ].join('\n');
  await writeGenerated('db.ts', source);
  return `${tables.size} tables`;
}
