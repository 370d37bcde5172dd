/**
 * @module The store's spans: one per statement of the money path (`start_runs`, `finish_run`, `finish_runs`) and of
 * an inbound event's ingestion (`ingest_inbound_event`), a batch being one statement. They name the store function
 * and how many items the statement carries, never the statement's text nor its values, nor the store's host.
 */
import { SpanKind } from '@opentelemetry/api';
import {
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_STORED_PROCEDURE_NAME,
  ATTR_DB_SYSTEM_NAME,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import { inSpan, tracer } from './index.ts';

/**
 * Runs `statement(store, argument)` inside a `db` client span when traces are on; else calls it, nothing more (no
 * closure, no attributes: the call sites pass the function and its two arguments).
 */
export function traceStatement<S, A, T>(
  procedure: string,
  batchSize: number,
  statement: (store: S, argument: A) => Promise<T>,
  store: S,
  argument: A,
): Promise<T> {
  const active = tracer();
  if (active === undefined) return statement(store, argument);
  return inSpan(
    active,
    procedure,
    SpanKind.CLIENT,
    {
      // `db.system` as the conventions before 1.33 named it, which many back ends still read.
      'db.system': DB_SYSTEM_NAME_VALUE_POSTGRESQL,
      [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
      [ATTR_DB_OPERATION_NAME]: 'SELECT',
      [ATTR_DB_STORED_PROCEDURE_NAME]: procedure,
      [ATTR_DB_OPERATION_BATCH_SIZE]: batchSize,
    },
    () => statement(store, argument),
  );
}
