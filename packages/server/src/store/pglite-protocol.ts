/**
 * @module The messages between the main thread and the worker thread that owns the embedded store
 * (store/pglite-worker.ts, store/pglite-thread.ts). Types only: the thread's entry is loaded by
 * Node itself, so what it imports from here is erased.
 *
 * Every request carries an `id` its answer repeats. A statement of a transaction carries the
 * transaction's number: the first one opens it in the worker, which holds it open (PGlite's own
 * lock queues every other statement and transaction behind it) until `end` commits or rolls back.
 */

/** A statement, a transaction's end, a LISTEN, or the close. */
export type StoreRequest =
  | { id: number; op: 'query'; sql: string; params: readonly unknown[]; tx?: number; name?: string }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string; listener: number }
  | { id: number; op: 'close' };

/** The fields of a PostgreSQL error (PGlite's DatabaseError) that survive the thread boundary. */
export interface StoreErrorFields {
  name: string;
  message: string;
  /** SQLSTATE, severity, detail, constraint, table, …: every string or number field the error had. */
  fields: Record<string, string | number>;
}

/** What the worker posts: an answer, a notification, or (once, first) whether the store opened. */
export type StoreReply =
  | { kind: 'answer'; id: number; rows: unknown[] }
  | { kind: 'failed'; id: number; error: StoreErrorFields }
  | { kind: 'notification'; listener: number; payload: string }
  | { kind: 'opened' }
  | { kind: 'unopenable'; error: StoreErrorFields };

/** What the thread is started with (`workerData`). */
export interface StoreThreadData {
  /** PGlite's data directory; in memory when absent. */
  dataDir: string | undefined;
}

/**
 * PostgreSQL error fields kept across the boundary (PGlite's error also carries the statement's
 * parameters, which stay in the worker: they may hold secrets).
 */
export const ERROR_FIELDS = [
  'code',
  'severity',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
  'query',
] as const;
