/**
 * @module Outbound destinations of a workspace: creation behind the SSRF guard (secret shown
 * once), list, secret rotation (later attempts, retries included, sign with the new secret; the
 * previous one keeps signing `webhook-signature` for a grace period), pause, resume, ping and replay
 * of what was given up. Another workspace's destination is `404 not_found`.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import { zDelivery, zDeliveryAttempt, zDeliveryErrorKind, zWebhookDestination, type Schema } from '../../contract.ts';
import type { Db, Tx } from '../../store/db.ts';
import { date, int, nullable, oneOf, selectRow, selectRows, tableRow, text, textArray } from '../../store/rows.ts';
import { type AuditAction, type AuditContext, recordAudit } from '../audit/index.ts';
import { listDeliveriesOf, replayFailedDeliveries, type LoggedDelivery } from '../events/deliveries.ts';
import { enqueueTestEvent } from '../events/outbox.ts';
import type { OutboundEventType, WorkspaceEventType } from '../webhooks/envelope.ts';
import { newId } from '../../random.ts';
import { newSigningSecret, type SecretBox } from '../webhooks/secret-box.ts';
import { checkDestinationUrl, DestinationRefusedError, resolveDestination, type DestinationPolicy } from '../webhooks/ssrf-guard.ts';

/** The contract's WebhookDestination record. */
interface WebhookDestination {
  id: string;
  url: string;
  events: WorkspaceEventType[];
  status: 'active' | 'paused';
  consecutiveFailures: number;
  pausedAt: string | null;
  createdAt: string;
  secretRotatedAt: string | null;
  previousSecretExpiresAt: string | null;
  pausedReason: Schema<'WebhookDestination'>['pausedReason'];
  lastFailure: Schema<'DeliveryFailure'> | null;
}

/** A page of the delivery log (the contract's DeliveryList). */
type DeliveryLogPage = Schema<'DeliveryList'>;

export interface DestinationService {
  create(workspaceId: string, input: { url: string; events: WorkspaceEventType[] }, audit?: AuditContext): Promise<WebhookDestination & { secret: string }>;
  list(workspaceId: string): Promise<WebhookDestination[]>;
  rotateSecret(workspaceId: string, id: string, audit?: AuditContext): Promise<WebhookDestination & { secret: string }>;
  pause(workspaceId: string, id: string, audit?: AuditContext): Promise<WebhookDestination>;
  /** Active again, failure count reset; deliveries held while paused go out on the next poll. */
  resume(workspaceId: string, id: string, audit?: AuditContext): Promise<WebhookDestination>;
  ping(workspaceId: string, id: string, audit?: AuditContext): Promise<{ eventIds: string[] }>;
  /** A test event of any type (ping included), sample data, `"test": true`: attempted once, never retried. */
  testEvent(workspaceId: string, id: string, type: OutboundEventType, audit?: AuditContext): Promise<{ eventIds: string[] }>;
  /** Every given-up delivery of the destination queued again, same event ids and bodies. */
  replay(workspaceId: string, id: string, audit?: AuditContext): Promise<{ eventIds: string[] }>;
  /** The destination's delivery log, newest first, each delivery with its attempts. */
  deliveries(workspaceId: string, id: string, filter: { status?: string | undefined; limit: number; offset: number }): Promise<DeliveryLogPage>;
}

/**
 * How long the secret a rotation replaces keeps signing deliveries (a second `v1` in `webhook-signature`),
 * so receivers can move to the new secret without rejecting anything (the contract's 24 hours).
 */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

/** A row of `webhook_destinations` (generated/db.ts, from the migrations). */
type Row = TableRow<'webhook_destinations'>;

/** Decodes a row of `webhook_destinations` (`SELECT *`, `RETURNING *`). */
const destinationRow = tableRow('webhook_destinations', {
  id: text,
  workspace_id: text,
  url: text,
  events: textArray,
  secret_encrypted: text,
  status: oneOf(['active', 'paused']),
  consecutive_failures: int,
  paused_at: nullable(date),
  paused_reason: nullable(oneOf(['failures', 'admin', 'gone'])),
  secret_rotated_at: nullable(date),
  created_at: date,
  last_failure_at: nullable(date),
  last_failure_kind: nullable(text),
  last_failure_status: nullable(int),
  previous_secret_encrypted: nullable(text),
  previous_secret_expires_at: nullable(date),
});

const REFUSALS: Record<string, string> = {
  invalid_url: 'The url is not a valid absolute URL.',
  not_https: 'The url must use https://.',
  credentials_in_url: 'The url must not contain credentials.',
  metadata_address: 'The url points to a refused address.',
  blocked_host: 'The url points to a refused host.',
  blocked_address: 'The url points to a private, loopback or otherwise refused address.',
};

export function createDestinationService(deps: { db: Db; clock: Clock; secretBox: SecretBox; policy: DestinationPolicy }): DestinationService {
  const { db, clock, secretBox, policy } = deps;

  async function load(workspaceId: string, id: string, tx: Db | Tx = db): Promise<Row> {
    const row = await selectRow(tx, destinationRow, `SELECT * FROM webhook_destinations WHERE id = $1 AND workspace_id = $2`, [id, workspaceId]);
    if (!row) throw fail('not_found', 'No such destination.');
    return row;
  }

  /** The change and its audit event, in one transaction. */
  function audited<T>(
    audit: AuditContext | undefined,
    workspaceId: string,
    action: AuditAction,
    change: (tx: Tx) => Promise<{ row: Row; result: T; details?: Record<string, unknown> }>,
  ): Promise<T> {
    return db.transaction(async (tx) => {
      const { row, result, details } = await change(tx);
      await recordAudit(tx, audit, workspaceId, { action, target: { type: 'destination', id: row.id, label: row.url }, details: details ?? {} }, clock.now());
      return result;
    });
  }

  /** A test event of `type` (a ping, or any other) to the destination, recorded as the admin's action. */
  async function testEvent(workspaceId: string, id: string, type: OutboundEventType, audit: AuditContext | undefined): Promise<{ eventIds: string[] }> {
    const row = await load(workspaceId, id);
    // A ping is `destination.pinged`; a test event of another type is `destination.test_sent`, with its type.
    return audited(audit, workspaceId, type === 'ping' ? 'destination.pinged' : 'destination.test_sent', async (tx) => {
      const { eventId } = await enqueueTestEvent(tx, { tenantId: workspaceId, destinationId: id, type }, { now: clock.now() });
      return { row, result: { eventIds: [eventId] }, details: { type, eventId } };
    });
  }

  return {
    async create(workspaceId, input, audit) {
      await guardDestinationUrl(input.url, policy);
      const secret = newSigningSecret();
      return audited(audit, workspaceId, 'destination.created', async (tx) => {
        const row = await selectRow(
          tx,
          destinationRow,
          `INSERT INTO webhook_destinations (id, workspace_id, url, events, secret_encrypted, status, created_at)
           VALUES ($1, $2, $3, $4, $5, 'active', $6) RETURNING *`,
          [newId('dst'), workspaceId, input.url, [...new Set(input.events)], secretBox.seal(secret), clock.now()],
        );
        return { row: row!, result: { ...toRecord(row!, clock.now()), secret }, details: { events: row!.events } };
      });
    },
    async list(workspaceId) {
      const rows = await selectRows(db, destinationRow, `SELECT * FROM webhook_destinations WHERE workspace_id = $1 ORDER BY created_at DESC, id`, [
        workspaceId,
      ]);
      const now = clock.now();
      return rows.map((row) => toRecord(row, now));
    },
    async rotateSecret(workspaceId, id, audit) {
      await load(workspaceId, id);
      const secret = newSigningSecret();
      const now = clock.now();
      // The secret replaced stays, sealed, until the grace period ends (a second rotation within it
      // retires the one just replaced; the older one is dropped).
      return audited(audit, workspaceId, 'destination.secret_rotated', async (tx) => {
        const row = await selectRow(
          tx,
          destinationRow,
          `UPDATE webhook_destinations
            SET previous_secret_encrypted = secret_encrypted, previous_secret_expires_at = $5, secret_encrypted = $3, secret_rotated_at = $4
          WHERE id = $1 AND workspace_id = $2 RETURNING *`,
          [id, workspaceId, secretBox.seal(secret), now, new Date(now.getTime() + PREVIOUS_SECRET_GRACE_MS)],
        );
        return { row: row!, result: { ...toRecord(row!, now), secret } };
      });
    },
    async pause(workspaceId, id, audit) {
      await load(workspaceId, id);
      return audited(audit, workspaceId, 'destination.paused', async (tx) => {
        const row = await selectRow(
          tx,
          destinationRow,
          `UPDATE webhook_destinations
            SET status = 'paused', paused_at = COALESCE(paused_at, $3), paused_reason = COALESCE(paused_reason, 'admin')
          WHERE id = $1 AND workspace_id = $2 RETURNING *`,
          [id, workspaceId, clock.now()],
        );
        return { row: row!, result: toRecord(row!, clock.now()) };
      });
    },
    async resume(workspaceId, id, audit) {
      await load(workspaceId, id);
      return audited(audit, workspaceId, 'destination.resumed', async (tx) => {
        const row = await selectRow(
          tx,
          destinationRow,
          `UPDATE webhook_destinations SET status = 'active', paused_at = NULL, paused_reason = NULL, consecutive_failures = 0
          WHERE id = $1 AND workspace_id = $2 RETURNING *`,
          [id, workspaceId],
        );
        return { row: row!, result: toRecord(row!, clock.now()) };
      });
    },
    ping: (workspaceId, id, audit) => testEvent(workspaceId, id, 'ping', audit),
    testEvent,
    async replay(workspaceId, id, audit) {
      const row = await load(workspaceId, id);
      return audited(audit, workspaceId, 'destination.replayed', async (tx) => {
        const eventIds = (await replayFailedDeliveries(tx, id, clock.now())).sort();
        return { row, result: { eventIds }, details: { deliveries: eventIds.length } };
      });
    },
    async deliveries(workspaceId, id, filter) {
      await load(workspaceId, id);
      const { rows, total } = await listDeliveriesOf(db, id, { status: filter.status ?? null, limit: filter.limit, offset: filter.offset });
      return { data: rows.map(toDelivery), total, limit: filter.limit, offset: filter.offset };
    },
  };
}

/**
 * The creation-time guard: the URL itself, then its current addresses. A name that does not
 * resolve yet is accepted (it is checked again at every delivery); one that resolves to a refused
 * address is not. Answers `400 invalid_body` with the refusal's reason (`param`: the field). Connected integrations
 * (domain/integrations) and single sign-on's issuers (domain/sso) pass the same guard.
 */
export async function guardDestinationUrl(url: string, policy: DestinationPolicy, param = 'url'): Promise<void> {
  try {
    checkDestinationUrl(url, policy);
    await resolveDestination(url, policy);
  } catch (error) {
    if (!(error instanceof DestinationRefusedError)) throw error;
    if (error.reason === 'dns_failed') return;
    throw fail('invalid_body', (REFUSALS[error.reason] ?? 'The url is refused.').replace('The url', `The ${param}`), { param });
  }
}

function toRecord(row: Row, now: Date): WebhookDestination {
  const previousExpiresAt = row.previous_secret_encrypted !== null && row.previous_secret_expires_at ? row.previous_secret_expires_at : null;
  return {
    id: row.id,
    url: row.url,
    events: zWebhookDestination.shape.events.parse(row.events),
    status: zWebhookDestination.shape.status.parse(row.status),
    consecutiveFailures: row.consecutive_failures,
    pausedAt: row.paused_at ? row.paused_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
    secretRotatedAt: row.secret_rotated_at ? row.secret_rotated_at.toISOString() : null,
    previousSecretExpiresAt: previousExpiresAt && previousExpiresAt > now ? previousExpiresAt.toISOString() : null,
    pausedReason: row.status === 'paused' ? zWebhookDestination.shape.pausedReason.parse(row.paused_reason) : null,
    lastFailure:
      row.last_failure_at && row.last_failure_kind
        ? { at: row.last_failure_at.toISOString(), errorKind: zDeliveryErrorKind.parse(row.last_failure_kind), httpStatus: row.last_failure_status }
        : null,
  };
}

/** The log keeps every attempt; the answer shows the latest ones within the contract's bound. */
const MAX_ATTEMPTS_SHOWN = 100;

function toDelivery(row: LoggedDelivery): Schema<'Delivery'> {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: zDelivery.shape.eventType.parse(row.type),
    status: zDelivery.shape.status.parse(row.status),
    test: row.test,
    createdAt: row.created_at.toISOString(),
    deliveredAt: iso(row.delivered_at),
    nextRetryAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    requestBody: row.body,
    attempts: row.attempts.slice(-MAX_ATTEMPTS_SHOWN).map((a) => ({
      attempt: a.attempt,
      at: a.attempted_at.toISOString(),
      result: zDeliveryAttempt.shape.result.parse(a.result),
      httpStatus: a.status,
      errorKind: a.error_kind === null ? null : zDeliveryErrorKind.parse(a.error_kind),
      durationMs: a.duration_ms,
      nextRetryAt: iso(a.next_attempt_at),
      requestHeaders: a.request_headers === null ? null : zDeliveryAttempt.shape.requestHeaders.parse(a.request_headers),
      responseBody: a.response_body,
      responseBodyTruncated: a.response_truncated,
    })),
  };
}
