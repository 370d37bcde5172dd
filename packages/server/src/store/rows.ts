/**
 * @module Rows decoded at the query boundary. A statement's rows pass a decoder that reads each column as the type
 * it must have, and throws `RowShapeError` (naming the column) when the store answers otherwise, instead of a
 * `query<T>` that only asserts `T`. A table's decoder is tied to its generated row type (generated/db.ts): each
 * column's reader must give exactly the column's type, so a migration that changes a column fails to compile here
 * until its reader follows. A reader costs a `typeof` per column.
 *
 *   const keyRow = tableRow('api_keys', { id: text, name: text, revoked_at: nullable(date) });
 *   const keys = await selectRows(db, keyRow, 'SELECT id, name, revoked_at FROM api_keys WHERE …', [...]);
 *   const joined = row({ ...columnsOf('sessions', { id: text }), ...columnsOf('users', { email: text }), n: int });
 *
 * Only the types both drivers return alike (store/db.ts): text, integer, boolean, timestamptz, text[], jsonb.
 */
import type { Tables } from '../../../../generated/db.ts';
import type { Db, QueryOptions, Tx } from './db.ts';
import { isOneOf } from '../one-of.ts';

/** A row as the driver returns it, before it is decoded. */
export type RawRow = Readonly<Record<string, unknown>>;

/** Reads one row into `T`; throws RowShapeError when the row does not have its shape. */
export type Decoder<T> = (row: RawRow) => T;

/** The store answered a row of another shape than the statement's decoder expects (a schema the code does not know). */
export class RowShapeError extends Error {
  override readonly name = 'RowShapeError';
}

/** Reads one column's value as `V`. Invariant in `V`, so a reader of `string` is no reader of `string | null`. */
export interface Reader<V> {
  (value: unknown, column: string): V;
  /** Exists only in the types (invariance). */
  readonly type?: (value: V) => V;
}

function reader<V>(expected: string, accepts: (value: unknown) => value is V): Reader<V> {
  return (value, column) => {
    if (accepts(value)) return value;
    throw new RowShapeError(`column ${column}: expected ${expected}, got ${value === null ? 'null' : typeof value}`);
  };
}

export const text: Reader<string> = reader('text', (value): value is string => typeof value === 'string');
export const int: Reader<number> = reader('an integer', (value): value is number => Number.isSafeInteger(value));
/** A `float8` (a `numeric` cast with `::float8`). */
export const float: Reader<number> = reader('a number', (value): value is number => typeof value === 'number');
export const bool: Reader<boolean> = reader('a boolean', (value): value is boolean => typeof value === 'boolean');
export const date: Reader<Date> = reader('a timestamp', (value): value is Date => value instanceof Date);
export const textArray: Reader<string[]> = reader('text[]', (value): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string'));
/** A `jsonb` column, parsed by the driver; what it holds is the caller's to check. */
export const json: Reader<unknown> = (value) => value;
/** A `jsonb` column that holds an object. */
export const jsonObject: Reader<Record<string, unknown>> = reader(
  'a JSON object',
  (value): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value),
);

/** One of `values` (a text column whose CHECK lists them: generated/db.ts types it as their union). */
export function oneOf<const V extends string>(values: readonly V[]): Reader<V> {
  return reader(values.map((v) => `'${v}'`).join(' | '), (value): value is V => isOneOf(values, value));
}

/** The same reader, or null. */
export function nullable<V>(read: Reader<V>): Reader<V | null> {
  return (value, column) => (value === null ? null : read(value, column));
}

/** Any reader, whatever it reads (a reader's type is invariant, so not every reader is a `Reader<unknown>`). */
type AnyReader = (value: unknown, column: string) => unknown;

/** The type a shape of readers decodes to. */
export type Decoded<S> = { -readonly [K in keyof S]: S[K] extends (value: unknown, column: string) => infer V ? V : never };

/** A decoder of the columns `shape` names (a statement's own columns: aggregates, aliases, joins). */
export function row<S extends Record<string, AnyReader>>(shape: S): Decoder<Decoded<S>> {
  const columns = Object.entries(shape);
  return (raw) => {
    const out: Record<string, unknown> = {};
    for (const [column, read] of columns) out[column] = read(raw[column], column);
    return out as Decoded<S>;
  };
}

/** Readers of some columns of `table`, each exactly as generated/db.ts types it: spread several into `row` for a join. */
export function columnsOf<T extends keyof Tables, K extends keyof Tables[T] & string>(
  _table: T,
  shape: { [C in K]: Reader<Tables[T][C]> },
): { [C in K]: Reader<Tables[T][C]> } {
  return shape;
}

/** A decoder of some columns of `table`, each read exactly as generated/db.ts types it. */
export function tableRow<T extends keyof Tables, K extends keyof Tables[T] & string>(
  table: T,
  shape: { [C in K]: Reader<Tables[T][C]> },
): Decoder<Pick<Tables[T], K>> {
  return row(columnsOf(table, shape)) as Decoder<Pick<Tables[T], K>>;
}

/** The rows of one statement, each decoded. */
export async function selectRows<T>(db: Db | Tx, decode: Decoder<T>, sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]> {
  const rows: RawRow[] = await db.query(sql, params, options);
  return rows.map(decode);
}

/** The first row of one statement, decoded; undefined when it returns none. */
export async function selectRow<T>(db: Db | Tx, decode: Decoder<T>, sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T | undefined> {
  const [first]: RawRow[] = await db.query(sql, params, options);
  return first === undefined ? undefined : decode(first);
}
