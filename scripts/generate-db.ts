/**
 * @module Step of `pnpm generate`: generated/db.ts, the row type of every table, read from the schema
 * the SQL migrations (packages/server/src/store/migrations/) build. The migrations run on an in-memory
 * PGlite, and each column of `information_schema.columns` becomes a field with the JavaScript value both
 * drivers return for it (see store/db.ts), `| null` when the column is nullable. A migration that adds or
 * changes a column therefore changes the types the domain compiles against, and `pnpm check:drift`
 * fails until they are regenerated. A text column whose CHECK allows a list of values (`CHECK (status IN
 * ('active', 'paused'))`, read from pg_constraint) becomes the union of those values (`'active' | 'paused'`).
 *
 * Store functions (store/functions/*.sql) take one argument with named keys: a `jsonb` object (or array of
 * them) read into a composite type declared in the function's own file (`CREATE TYPE start_run_args AS (…)`,
 * then `jsonb_populate_record(NULL::start_run_args, p)`). Each composite type becomes an entry of
 * `Composites`, every attribute `| null` (SQL takes a null or a missing key for any of them), so the
 * TypeScript that builds an argument is typed from the function file, as rows are from the migrations.
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

/** A CHECK constraint on one column, as PostgreSQL prints it back (`CHECK ((status = ANY (ARRAY['a'::text, …])))`). */
interface ColumnCheck {
  table_name: string;
  column_name: string;
  definition: string;
}

interface Attribute {
  type_name: string;
  attribute_name: string;
  attribute_udt_name: string;
}

export async function generateDb(): Promise<string> {
  const db = await openStore();
  let columns: Column[];
  let attributes: Attribute[];
  let checks: ColumnCheck[];
  try {
    columns = await db.query<Column>(
      `SELECT table_name, column_name, udt_name, is_nullable FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
    );
    checks = await db.query<ColumnCheck>(
      `SELECT t.relname AS table_name, a.attname AS column_name, pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
           JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'c' AND cardinality(c.conkey) = 1 AND t.relnamespace = current_schema()::regnamespace
        ORDER BY t.relname, a.attname, c.conname`,
    );
    // The composite types the function files declare (a table's own row type is not one of them).
    attributes = await db.query<Attribute>(
      `SELECT udt_name AS type_name, attribute_name, attribute_udt_name FROM information_schema.attributes
        WHERE udt_schema = current_schema() ORDER BY udt_name, ordinal_position`,
    );
  } finally {
    await db.close();
  }
  const tsType = (udt: string, where: string): string => {
    const type = TS_TYPES[udt];
    if (!type) throw new Error(`db: ${where} has type ${udt}, which generate-db.ts does not map`);
    return type;
  };
  const allowed = allowedValues(checks);
  const tables = new Map<string, string[]>();
  for (const column of columns) {
    const values = column.udt_name === 'text' ? allowed.get(`${column.table_name}.${column.column_name}`) : undefined;
    const type =
      values && values.length > 0
        ? values.map((value) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`).join(' | ')
        : tsType(column.udt_name, `${column.table_name}.${column.column_name}`);
    const fields = tables.get(column.table_name) ?? [];
    fields.push(`    ${column.column_name}: ${type}${column.is_nullable === 'YES' ? ' | null' : ''};`);
    tables.set(column.table_name, fields);
  }
  const composites = new Map<string, string[]>();
  const compositeNames = new Set(attributes.map((attribute) => attribute.type_name));
  for (const attribute of attributes) {
    // A composite holding another (finish_runs' decided close holds its argument) names it.
    const type = compositeNames.has(attribute.attribute_udt_name)
      ? `Composites['${attribute.attribute_udt_name}']`
      : tsType(attribute.attribute_udt_name, `${attribute.type_name}.${attribute.attribute_name}`);
    const fields = composites.get(attribute.type_name) ?? [];
    fields.push(`    ${attribute.attribute_name}: ${type} | null;`);
    composites.set(attribute.type_name, fields);
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
    '',
    '/** The composite types the store functions declare (store/functions/*.sql): their arguments, as the JSON keys they read, and what they keep. */',
    'export interface Composites {',
    ...[...composites].flatMap(([name, fields]) => [`  ${name}: {`, ...fields, '  };']),
    '}',
    '',
    "/** The argument of one store function, e.g. `FunctionArgument<'start_run_args'>`. */",
    'export type FunctionArgument<T extends keyof Composites> = Composites[T];',
  ].join('\n');
  await writeGenerated('db.ts', source);
  return `${tables.size} tables, ${composites.size} argument types`;
}

/** A CHECK that lists a column's values: `(col = ANY (ARRAY['a'::text, 'b'::text]))`, or `(col = 'a'::text)` for one. */
const ANY_OF = /^CHECK \(\((\w+) = ANY \(ARRAY\[(.*)\]\)\)\)$/;
const ONE_OF = /^CHECK \(\((\w+) = ('(?:[^']|'')*'::text)\)\)$/;
const TEXT_LITERAL = /^'((?:[^']|'')*)'::text$/;

/**
 * The values each `table.column` may hold, from the CHECKs that list them (several such CHECKs on one column: the
 * values all of them allow). A CHECK of another shape (a range, `IS NULL OR …`) leaves its column as it is.
 */
function allowedValues(checks: readonly ColumnCheck[]): Map<string, string[]> {
  const allowed = new Map<string, string[]>();
  for (const check of checks) {
    const match = ANY_OF.exec(check.definition) ?? ONE_OF.exec(check.definition);
    if (!match || match[1] !== check.column_name) continue;
    const literals = match[2]!.split(/, (?=')/).map((item) => TEXT_LITERAL.exec(item)?.[1]?.replaceAll("''", "'"));
    if (literals.some((value) => value === undefined)) continue;
    const key = `${check.table_name}.${check.column_name}`;
    const before = allowed.get(key);
    const values = literals as string[];
    allowed.set(key, before ? before.filter((value) => values.includes(value)) : values);
  }
  return allowed;
}
