/**
 * @module The outbox: a workspace event is written with one delivery row per active destination
 * subscribed to its type, in the same transaction as the change that caused it (pass the
 * caller's transaction as `db`). The worker (`src/worker/`) sends what is due; nothing is sent here.
 * An event no destination takes is not written: nothing reads an event but its deliveries.
 */
import type { FunctionArgument } from '../../../../../generated/db.ts';
import { randomBase62 } from '../../random.ts';
import { redactText } from '../../redact/index.ts';
import { functionArgument, inTransaction, type Db, type Tx } from '../../store/db.ts';
import { selectRows, tableRow, text } from '../../store/rows.ts';
import {
  buildEnvelope,
  serializeEnvelope,
  type OutboundEnvelope,
  type OutboundEventData,
  type OutboundEventType,
  type WorkspaceEventType,
} from '../webhooks/envelope.ts';
import { buildTestEnvelope } from '../webhooks/test-events.ts';

export interface EnqueueEventInput<T extends WorkspaceEventType> {
  /** The workspace, `wksp_…`. */
  tenantId: string;
  type: T;
  /** The event's `data`, snake_case as the spec; agent text fields are redacted here. */
  data: OutboundEventData[T];
}

export interface EnqueueOptions {
  /** When the event occurred: the application clock (`Clock`), read by the caller. */
  now: Date;
}

export interface EnqueuedEvent {
  eventId: string;
  /** How many deliveries were created (0 when no active destination subscribes to the type). */
  deliveries: number;
}

const decoder = new TextDecoder();

/**
 * Writes the event and its deliveries (nothing when no destination takes it). With a transaction (`Tx`) as `db`
 * it joins it, so the event exists exactly when the caller's change commits; with the store (`Db`) it opens its
 * own. A destination that the pause rule paused (20 failures) still gets its deliveries, held until an admin
 * resumes it, so an outage of the receiver loses nothing; one an admin paused gets none while paused.
 */
export async function enqueueEvent<T extends WorkspaceEventType>(db: Db | Tx, input: EnqueueEventInput<T>, options: EnqueueOptions): Promise<EnqueuedEvent> {
  const { now } = options;
  const envelope = buildEnvelope({ type: input.type, tenantId: input.tenantId, data: input.data, redactText, createdAt: now });
  return inTransaction(db, async (tx) => {
    const rows = await selectRows(
      tx,
      tableRow('webhook_destinations', { id: text }),
      `SELECT id FROM webhook_destinations
        WHERE workspace_id = $1 AND $2 = ANY (events)
          AND (status = 'active' OR paused_reason = 'failures')
        ORDER BY created_at, id`,
      [input.tenantId, input.type],
    );
    if (rows.length > 0) await insertEvent(tx, envelope, now);
    for (const row of rows) await insertDelivery(tx, envelope.id, row.id, now);
    return { eventId: envelope.id, deliveries: rows.length };
  });
}

/**
 * An event built and serialised now, to be written by one statement of the caller's (a run's
 * closing statement, `finish_run`), through the store function `outbox_enqueue` (store/functions/
 * outbox_enqueue.sql), which writes what `enqueueEvent` writes: the event and a delivery per
 * active destination subscribed to its type.
 */
export interface PreparedEvent {
  id: string;
  type: WorkspaceEventType;
  data: unknown;
  /** The exact envelope bytes every attempt sends (UTF-8 JSON). */
  body: string;
}

export function prepareEvent<T extends WorkspaceEventType>(input: EnqueueEventInput<T>, options: EnqueueOptions): PreparedEvent {
  const envelope = buildEnvelope({ type: input.type, tenantId: input.tenantId, data: input.data, redactText, createdAt: options.now });
  return { id: envelope.id, type: input.type, data: envelope.data, body: decoder.decode(serializeEnvelope(envelope)) };
}

/** One event of `outbox_enqueue`'s argument (named keys, typed from store/functions/outbox_enqueue.sql). */
type OutboxEventArgs = FunctionArgument<'outbox_event_args'>;

/** Writes a prepared event and its deliveries in one statement (`outbox_enqueue`), in the caller's transaction or alone. */
export async function enqueuePrepared(db: Db | Tx, tenantId: string, event: PreparedEvent, now: Date): Promise<void> {
  const row: OutboxEventArgs = { id: event.id, tenant_id: tenantId, type: event.type, data: event.data, body: event.body, now, delivery_ids: null };
  await db.query(`SELECT outbox_enqueue($1)`, [functionArgument([row])]);
}

/**
 * Delivery ids drawn ahead for `outbox_enqueue` (a workspace usually has at most this many
 * destinations per event; past them the store draws its own, from random()).
 */
export function deliveryIds(count = 2): string[] {
  return Array.from({ length: count }, () => `dlv_${randomBase62(24)}`);
}

/**
 * A test event of any outbound type (`ping` included) for one destination, whatever its subscriptions:
 * the same outbox and worker (signed, durable) as real traffic, but marked `test` (in the envelope and on
 * the delivery), so the worker attempts it once, even while the destination is paused, never retries it
 * and leaves the destination's health alone. It is not workspace activity: no run, no usage, no STU.
 */
export async function enqueueTestEvent(
  db: Db | Tx,
  input: { tenantId: string; destinationId: string; type: OutboundEventType },
  options: EnqueueOptions,
): Promise<EnqueuedEvent> {
  const { now } = options;
  const envelope = buildTestEnvelope({ type: input.type, tenantId: input.tenantId, destinationId: input.destinationId, createdAt: now });
  return inTransaction(db, async (tx) => {
    await insertEvent(tx, envelope, now);
    await insertDelivery(tx, envelope.id, input.destinationId, now, { test: true });
    return { eventId: envelope.id, deliveries: 1 };
  });
}

async function insertEvent(tx: Tx, envelope: OutboundEnvelope, now: Date): Promise<void> {
  await tx.query(`INSERT INTO outbox_events (id, tenant_id, type, data, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
    envelope.id,
    envelope.tenant_id,
    envelope.type,
    JSON.stringify(envelope.data),
    decoder.decode(serializeEnvelope(envelope)),
    now,
  ]);
}

async function insertDelivery(tx: Tx, eventId: string, destinationId: string, now: Date, options: { test?: boolean } = {}): Promise<void> {
  // Due at once: the first attempt of the schedule is at 0 s.
  await tx.query(
    `INSERT INTO deliveries (id, event_id, destination_id, status, attempts, next_attempt_at, created_at, test)
     VALUES ($1, $2, $3, 'pending', 0, $4, $4, $5)`,
    [`dlv_${randomBase62(24)}`, eventId, destinationId, now, options.test === true],
  );
}
