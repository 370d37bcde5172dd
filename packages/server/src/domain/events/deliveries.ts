/**
 * @module The delivery rows of the outbox after they were queued: the claim under a lease, the
 * record of each attempt and the delivery's next state, and the replay of what was given up. The
 * worker (src/worker/deliveries.ts) decides and sends; the statements on `deliveries` and
 * `delivery_attempts` are here. Each function takes the caller's transaction.
 */
import type { TableRow } from '../../../../../generated/db.ts';
import { randomBase62 } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { bool, columnsOf, date, int, json, nullable, oneOf, row, selectRow, selectRows, tableRow, text } from '../../store/rows.ts';

type Delivery = TableRow<'deliveries'>;

/**
 * A claimed delivery with what sending it needs: the event's body and the destination's current URL and
 * secret, and the secret the last rotation replaced while its grace period lasts (null otherwise).
 */
export type ClaimedDelivery = Pick<Delivery, 'id' | 'attempts' | 'event_id' | 'destination_id' | 'test'> & {
  /** Set by the claim. */
  claim_token: string;
} & Pick<TableRow<'outbox_events'>, 'type' | 'body'> &
  Pick<TableRow<'webhook_destinations'>, 'url' | 'secret_encrypted' | 'previous_secret_encrypted' | 'consecutive_failures'>;

/** How many deliveries one worker may have in flight at once: per destination and per workspace. */
export interface DeliveryLanes {
  /** Deliveries of one destination in flight at once: a slow or failing receiver holds at most this many. */
  perDestination: number;
  /** Deliveries of one workspace's destinations in flight at once: its share of the worker's attempts. */
  perWorkspace: number;
}

/**
 * Claims up to `limit` due pending deliveries of active destinations (and test events, whatever the
 * destination's status: an admin tries a paused receiver before resuming it), lane by lane: a
 * destination gets at most `perDestination` in flight and a workspace at most `perWorkspace`, counting
 * what the caller already has in flight (`busy`, by destination id); what is left is taken round by round
 * (each destination's oldest due first, then each one's second, …), the workspaces interleaved, so one
 * destination's or one workspace's backlog never stands before another's first delivery. The chosen rows
 * are locked with `FOR UPDATE SKIP LOCKED` (concurrent workers never take the same row), then, if still
 * due and unclaimed, stamped with `locked_until` and the claim token.
 */
export async function claimDueDeliveries(
  db: Db | Tx,
  input: { now: Date; limit: number; leaseUntil: Date; token: string; lanes: DeliveryLanes; busy?: ReadonlyMap<string, number> },
): Promise<ClaimedDelivery[]> {
  const busy = [...(input.busy ?? new Map<string, number>())];
  // One statement (its own transaction): the lock of the chosen rows and their stamp commit together.
  return db.query<ClaimedDelivery>(
    `WITH lanes AS (
       SELECT w.id, w.status = 'active' AS active, w.workspace_id, $3::integer - COALESCE(b.n, 0) AS free,
              COALESCE(sum(b.n) OVER (PARTITION BY w.workspace_id), 0) AS workspace_busy
         FROM webhook_destinations w LEFT JOIN unnest($5::text[], $6::integer[]) AS b (destination_id, n) ON b.destination_id = w.id
     ), lane_due AS (
       SELECT c.id, c.next_attempt_at, l.workspace_id, l.workspace_busy, l.free,
              row_number() OVER (PARTITION BY l.id ORDER BY c.next_attempt_at, c.id) AS lane_rank
         FROM lanes l CROSS JOIN LATERAL (
           SELECT d.id, d.next_attempt_at FROM deliveries d
            WHERE d.destination_id = l.id AND d.status = 'pending' AND d.next_attempt_at <= $1
              AND (d.locked_until IS NULL OR d.locked_until <= $1) AND (l.active OR d.test)
            ORDER BY d.next_attempt_at, d.id
            LIMIT $3
         ) c
        WHERE l.free > 0
     ), due AS (
       SELECT id, next_attempt_at, workspace_busy,
              row_number() OVER (PARTITION BY workspace_id ORDER BY lane_rank, next_attempt_at, id) AS workspace_rank
         FROM lane_due WHERE lane_rank <= free
     ), chosen AS (
       -- The chosen ids as an array, found by the primary key (as a join, the plan read every due delivery).
       SELECT d.id FROM deliveries d
        WHERE d.id = ANY (ARRAY(SELECT id FROM due WHERE workspace_rank <= $4::integer - workspace_busy ORDER BY workspace_rank, next_attempt_at, id LIMIT $2))
        FOR UPDATE OF d SKIP LOCKED
     )
     -- Checked again on the locked rows: still due and unclaimed.
     UPDATE deliveries d SET locked_until = $7, claim_token = $8
       FROM outbox_events e, webhook_destinations w
      WHERE d.id = ANY (ARRAY(SELECT id FROM chosen)) AND e.id = d.event_id AND w.id = d.destination_id
        AND d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.locked_until IS NULL OR d.locked_until <= $1)
      RETURNING d.id, d.claim_token, d.attempts, d.event_id, d.test, e.type, e.body, d.destination_id, w.url, w.secret_encrypted,
                CASE WHEN w.previous_secret_expires_at > $1 THEN w.previous_secret_encrypted END AS previous_secret_encrypted,
                w.consecutive_failures`,
    [
      input.now,
      input.limit,
      input.lanes.perDestination,
      input.lanes.perWorkspace,
      busy.map(([id]) => id),
      busy.map(([, n]) => n),
      input.leaseUntil,
      input.token,
    ],
  );
}

/** Locks the delivery while `token` still holds its claim; false once the lease was lost and it was claimed again. */
export async function holdsClaim(tx: Tx, deliveryId: string, token: string): Promise<boolean> {
  const owned = await tx.query(`SELECT 1 FROM deliveries WHERE id = $1 AND claim_token = $2 FOR UPDATE`, [deliveryId, token]);
  return owned.length > 0;
}

type AttemptRecord = {
  deliveryId: string;
  /** 1 for the first attempt. */
  attempt: number;
  result: string;
  status: number | null;
  reason: string | null;
  at: Date;
  /** Null when delivered (domain/webhooks/failure-kind.ts). */
  errorKind: string | null;
  durationMs: number;
  /** When the delivery is due again; null when delivered or given up. */
  nextAttemptAt: Date | null;
} & AttemptShown;

/** What the delivery log shows of an attempt besides its outcome (domain/webhooks/attempt-detail.ts). */
interface AttemptShown {
  /** The headers sent, signatures shortened; null when nothing was sent. */
  requestHeaders: { name: string; value: string }[] | null;
  /** The start of the receiver's answer (at most 2 KiB); null when it did not answer. */
  responseBody: string | null;
  responseTruncated: boolean;
}

/** The audit row of one attempt, which the delivery log shows. */
export async function insertDeliveryAttempt(tx: Tx, record: AttemptRecord): Promise<void> {
  await tx.query(
    `INSERT INTO delivery_attempts (id, delivery_id, attempt, result, status, reason, attempted_at, error_kind, duration_ms, next_attempt_at,
                                    request_headers, response_body, response_truncated)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      `att_${randomBase62(20)}`,
      record.deliveryId,
      record.attempt,
      record.result,
      record.status,
      record.reason,
      record.at,
      record.errorKind,
      record.durationMs,
      record.nextAttemptAt,
      record.requestHeaders === null ? null : JSON.stringify(record.requestHeaders),
      record.responseBody,
      record.responseTruncated,
    ],
  );
}

/** A delivery of the log with its attempts, oldest attempt first. */
export type LoggedDelivery = Pick<Delivery, 'id' | 'event_id' | 'status' | 'next_attempt_at' | 'delivered_at' | 'created_at' | 'test'> &
  Pick<TableRow<'outbox_events'>, 'type' | 'body'> & {
    attempts: Pick<
      TableRow<'delivery_attempts'>,
      | 'attempt'
      | 'attempted_at'
      | 'result'
      | 'status'
      | 'error_kind'
      | 'duration_ms'
      | 'next_attempt_at'
      | 'request_headers'
      | 'response_body'
      | 'response_truncated'
    >[];
  };

/** A delivery of the log (without its attempts), with the count of every match. */
const loggedRow = row({
  ...columnsOf('deliveries', {
    id: text,
    event_id: text,
    status: oneOf(['pending', 'delivered', 'failed']),
    next_attempt_at: nullable(date),
    delivered_at: nullable(date),
    created_at: date,
    test: bool,
  }),
  ...columnsOf('outbox_events', { type: text, body: text }),
  total: int,
});

/** An attempt of the log, with its delivery's id. */
const attemptRow = tableRow('delivery_attempts', {
  delivery_id: text,
  attempt: int,
  attempted_at: date,
  result: oneOf(['delivered', 'retry', 'give_up']),
  status: nullable(int),
  error_kind: nullable(text),
  duration_ms: nullable(int),
  next_attempt_at: nullable(date),
  request_headers: json,
  response_body: nullable(text),
  response_truncated: bool,
});

/**
 * One page of a destination's deliveries, newest first, with their attempts. The caller has checked
 * that the destination is the workspace's; `status` null means every status.
 */
export async function listDeliveriesOf(
  db: Db,
  destinationId: string,
  filter: { status: string | null; limit: number; offset: number },
): Promise<{ rows: LoggedDelivery[]; total: number }> {
  const page = await selectRows(
    db,
    loggedRow,
    `SELECT d.id, d.event_id, d.status, d.next_attempt_at, d.delivered_at, d.created_at, d.test, e.type, e.body, count(*) OVER ()::integer AS total
       FROM deliveries d JOIN outbox_events e ON e.id = d.event_id
      WHERE d.destination_id = $1 AND ($2::text IS NULL OR d.status = $2)
      ORDER BY d.created_at DESC, d.id DESC
      LIMIT $3 OFFSET $4`,
    [destinationId, filter.status, filter.limit, filter.offset],
  );
  const total = page[0]?.total ?? (filter.offset > 0 ? await countDeliveries(db, destinationId, filter.status) : 0);
  if (page.length === 0) return { rows: [], total };
  const attempts = await selectRows(
    db,
    attemptRow,
    `SELECT delivery_id, attempt, attempted_at, result, status, error_kind, duration_ms, next_attempt_at, request_headers, response_body, response_truncated
       FROM delivery_attempts WHERE delivery_id = ANY ($1::text[]) ORDER BY delivery_id, attempted_at, attempt`,
    [page.map((d) => d.id)],
  );
  const byDelivery = new Map<string, LoggedDelivery['attempts']>();
  for (const { delivery_id, ...attempt } of attempts) {
    const list = byDelivery.get(delivery_id) ?? [];
    list.push(attempt);
    byDelivery.set(delivery_id, list);
  }
  const rows = page.map(({ total: _total, ...d }) => ({ ...d, attempts: byDelivery.get(d.id) ?? [] }));
  return { rows, total };
}

async function countDeliveries(db: Db, destinationId: string, status: string | null): Promise<number> {
  const found = await selectRow(
    db,
    row({ n: int }),
    `SELECT count(*)::integer AS n FROM deliveries WHERE destination_id = $1 AND ($2::text IS NULL OR status = $2)`,
    [destinationId, status],
  );
  return found?.n ?? 0;
}

/** A delivered attempt, recorded by {@link recordDeliveredAttempts} under the claim that sent it. */
export interface DeliveredAttempt {
  deliveryId: string;
  claimToken: string;
  /** 1 for the first attempt. */
  attempt: number;
  status: number;
  at: Date;
  durationMs: number;
  /** What the log shows of the attempt; none when absent. */
  requestHeaders?: AttemptShown['requestHeaders'];
  responseBody?: string | null;
  responseTruncated?: boolean;
}

/**
 * Records delivered attempts, any number, in one statement: each delivery still held by its claim
 * becomes `delivered` (claim released) with its attempt's audit row. A delivery whose claim was lost
 * (its lease ran out and it was claimed again) is left to that claim. Answers the ids it recorded.
 */
export async function recordDeliveredAttempts(db: Db, attempts: readonly DeliveredAttempt[]): Promise<string[]> {
  if (attempts.length === 0) return [];
  const rows = await selectRows(
    db,
    tableRow('deliveries', { id: text }),
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb)
         AS x(id text, token text, attempt integer, status integer, at timestamptz, duration integer, attempt_id text,
              headers jsonb, body text, truncated boolean)
     ), delivered AS (
       UPDATE deliveries d SET status = 'delivered', attempts = i.attempt, delivered_at = i.at, last_attempt_at = i.at, last_status = i.status,
              last_error = NULL, next_attempt_at = NULL, locked_until = NULL, claim_token = NULL
         FROM input i
        WHERE d.id = i.id AND d.claim_token = i.token
       RETURNING d.id, d.destination_id
     ), audit AS (
       INSERT INTO delivery_attempts (id, delivery_id, attempt, result, status, reason, attempted_at, error_kind, duration_ms, next_attempt_at,
                                      request_headers, response_body, response_truncated)
       SELECT i.attempt_id, i.id, i.attempt, 'delivered', i.status, NULL, i.at, NULL, i.duration, NULL, i.headers, i.body, COALESCE(i.truncated, false)
         FROM input i JOIN delivered USING (id)
     )
     SELECT id FROM delivered`,
    [
      JSON.stringify(
        attempts.map((a) => ({
          id: a.deliveryId,
          token: a.claimToken,
          attempt: a.attempt,
          status: a.status,
          at: a.at.toISOString(),
          duration: a.durationMs,
          attempt_id: `att_${randomBase62(20)}`,
          headers: a.requestHeaders ?? null,
          body: a.responseBody ?? null,
          truncated: a.responseTruncated ?? false,
        })),
      ),
    ],
    { name: 'record_delivered_attempts' },
  );
  return rows.map((r) => r.id);
}

/** The attempt failed: `pending` again at `next`, or `failed` (given up) when `next` is null; claim released. */
export async function markAttemptFailed(
  tx: Tx,
  input: { deliveryId: string; attempts: number; next: Date | null; at: Date; status: number | null; reason: string },
): Promise<void> {
  await tx.query(
    `UPDATE deliveries SET status = $2, attempts = $3, next_attempt_at = $4, last_attempt_at = $5, last_status = $6,
       last_error = $7, locked_until = NULL, claim_token = NULL WHERE id = $1`,
    [input.deliveryId, input.next ? 'pending' : 'failed', input.attempts, input.next, input.at, input.status, input.reason],
  );
}

/** Every given-up delivery of the destination queued again, due at `now`; the ids of their events. */
export async function replayFailedDeliveries(db: Db | Tx, destinationId: string, now: Date): Promise<string[]> {
  const rows = await selectRows(
    db,
    tableRow('deliveries', { event_id: text }),
    `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2, locked_until = NULL, claim_token = NULL
      WHERE destination_id = $1 AND status = 'failed' RETURNING event_id`,
    [destinationId, now],
  );
  return rows.map((r) => r.event_id);
}

/** Gives back pending deliveries still held under `token` (a worker shutting down); how many were released. */
export async function releaseDeliveryClaim(db: Db, token: string, ids: string[]): Promise<number> {
  const rows = await db.query(
    `UPDATE deliveries SET locked_until = NULL, claim_token = NULL WHERE claim_token = $1 AND id = ANY ($2::text[]) AND status = 'pending' RETURNING id`,
    [token, ids],
  );
  return rows.length;
}
