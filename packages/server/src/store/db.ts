/**
 * @module The store interface every domain module talks to: parameterised SQL and transactions
 * (`Db`, the store; `Tx`, a transaction's handle).
 * Two drivers implement it (PGlite embedded, PostgreSQL over the network) with one SQL dialect.
 *
 * Dialect rules that keep both drivers returning the same JavaScript values:
 * - integers are `integer` (or cast with `::int`); `bigint` comes back as a string from `pg`;
 * - times are `timestamptz` (a Date from both drivers); arrays are `text[]`; documents are `jsonb`.
 */
import type { ListenHandler } from './listen.ts';

type Row = Record<string, unknown>;

export interface QueryOptions {
  /** The name of a prepared statement (unique per SQL text): the hot paths' statements (the money path). */
  name?: string;
}

/** What the store and a transaction's handle both do: run statements. */
interface Statements {
  /**
   * One statement with `$1…` parameters; resolves to the rows it returns (empty for none). A hot
   * statement may give `name`: PostgreSQL then prepares it once per connection (unless DATABASE_URL goes through a
   * pooler in transaction mode: store/postgres.ts), PGlite once per instance (outside transactions:
   * store/pglite-prepared.ts).
   */
  query<T = Row>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** Several statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
}

/** Exists only in the types: it tells a transaction's handle from the store. */
declare const IN_TRANSACTION: unique symbol;

/**
 * A transaction's handle: what `Db.transaction` passes to its callback. Its statements commit or roll back
 * together. It is not a `Db` (no `transaction`, no `listen`: a transaction is not nested, nor listened on),
 * and a `Db` is not a `Tx` (the brand): a function that must run inside a transaction (its writes belong
 * with the caller's, or it locks rows for the caller) takes a `Tx`, so a call from outside one does not
 * compile. A statement that may run either way takes `Db | Tx`.
 */
export interface Tx extends Statements {
  readonly [IN_TRANSACTION]: true;
}

export interface Db extends Statements {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * LISTEN on a channel of this store's schema (store/listen.ts); notified with `notifySql`.
   * Only the store itself has it, not a transaction's handle.
   */
  listen?(channel: string, handler: ListenHandler): Promise<void>;
  /**
   * PostgreSQL only: resolves once every instance's listener handled the notification of `version`
   * on `channel` (or is cut off after `timeoutMs`); see `awaitListeners` in store/listen.ts.
   */
  awaitListeners?(channel: string, version: number, since: Date, timeoutMs: number): Promise<void>;
  /**
   * Statements waiting for the store now: sent to the embedded store's worker thread and not answered
   * yet, or waiting for a pooled PostgreSQL connection (the admission control's measure). Only the
   * store itself has it; absent on the in-process PGlite (tests).
   */
  queued?(): number;
}

/** A driver's transaction handle as a `Tx` (the brand has no value: this is the one place it is given). */
export function asTx(handle: Statements): Tx {
  return handle as Tx;
}

/**
 * Whether `db` reaches PostgreSQL over the network (its handle's `driver`; a handle that does not say is taken for the
 * embedded store).
 */
export function onPostgres(db: Db): boolean {
  return Reflect.get(db, 'driver') === 'postgres';
}

/** A Db that owns its connection(s) and must be closed. */
export interface OpenDb extends Db {
  close(): Promise<void>;
  readonly driver: 'pglite' | 'postgres';
  /**
   * The embedded store in this thread only: the text output of `COPY (<query>) TO STDOUT` (PGlite's
   * `/dev/blob`), for `service store copy`.
   */
  copyOut?(query: string): Promise<Uint8Array>;
}

/**
 * Runs `fn` in `db`'s transaction: a new one on the store, the caller's own on a `Tx` (so what `fn`
 * writes commits exactly with the caller's change).
 */
export function inTransaction<T>(db: Db | Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return 'transaction' in db ? db.transaction(fn) : fn(db);
}

/**
 * A store function's one argument (store/functions/*.sql: a jsonb object, or an array of them, with named keys)
 * as the JSON text a statement passes: Dates as ISO text, and a number JSON cannot hold (an infinite quota or
 * limit) as text, which the function's float8 keys read as the driver would send it.
 */
export function functionArgument(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
}
