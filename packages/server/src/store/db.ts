/**
 * @module The store interface every domain module talks to: parameterised SQL and transactions.
 * Two drivers implement it (PGlite embedded, PostgreSQL over the network) with one SQL dialect.
 *
 * Dialect rules that keep both drivers returning the same JavaScript values:
 * - integers are `integer` (or cast with `::int`); `bigint` comes back as a string from `pg`;
 * - times are `timestamptz` (a Date from both drivers); arrays are `text[]`; documents are `jsonb`.
 */
export type Row = Record<string, unknown>;

export interface Db {
  /** One statement with `$1…` parameters; resolves to the rows it returns (empty for none). */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** Several statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
}

/** A Db that owns its connection(s) and must be closed. */
export interface OpenDb extends Db {
  close(): Promise<void>;
  readonly driver: 'pglite' | 'postgres';
}
