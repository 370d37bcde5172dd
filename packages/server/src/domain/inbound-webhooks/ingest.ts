/**
 * @module Idempotent ingestion of one verified inbound event. The UNIQUE (webhook, event id)
 * constraint decides between "first" and "duplicate", so concurrent repeats on several instances
 * still start exactly one run. The row is also the audit record of the accepted event and the
 * durable queue entry of its run (`run_started_at` is null until the run has been handed over).
 */
import { createHash } from 'node:crypto';
import { randomBase62 } from '../../random.ts';
import type { Db } from '../../store/db.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { InboundEventId } from '../webhooks/event-id.ts';
import { newId } from '../../random.ts';
import { insertInboundRun } from '../runs/store.ts';
import type { InboundWebhookTarget } from './service.ts';

export interface InboundEventRecord {
  webhook: InboundWebhookTarget;
  eventId: InboundEventId;
  rawBody: Uint8Array;
  /** The rendered agent input. */
  agentInput: string;
  receivedAt: Date;
  sourceIp: string | undefined;
  /** The sender's verified timestamp, when it sent one. */
  signedAtMs: number | null;
  requestId: string | undefined;
}

export type IngestResult = { code: 'ok'; eventId: string; runId: string } | { code: 'duplicate'; eventId: string; runId: string };

/** A run id chosen at ingestion, so the sender learns it before the run exists. */
function newRunId(): string {
  return newId('run');
}

export async function ingestInboundEvent(db: Db, record: InboundEventRecord): Promise<IngestResult> {
  const { webhook, eventId } = record;
  return db.transaction(async (tx) => {
    const runId = newRunId();
    const inserted = await tx.query<Pick<TableRow<'inbound_events'>, 'run_id'>>(
      `INSERT INTO inbound_events (id, webhook_id, workspace_id, slug, event_id, event_id_source, received_at, source_ip,
         body_sha256, body_bytes, signed_at, request_id, agent_input, agent_slug, alias, run_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (webhook_id, event_id) DO NOTHING
       RETURNING run_id`,
      [
        `iev_${randomBase62(20)}`,
        webhook.id,
        webhook.workspaceId,
        webhook.slug,
        eventId.eventId,
        eventId.source,
        record.receivedAt,
        record.sourceIp ?? null,
        createHash('sha256').update(record.rawBody).digest('hex'),
        record.rawBody.byteLength,
        record.signedAtMs === null ? null : new Date(record.signedAtMs),
        record.requestId ?? null,
        record.agentInput,
        webhook.agentSlug,
        webhook.alias,
        runId,
      ],
    );
    await tx.query(`UPDATE inbound_webhooks SET last_event_at = $2 WHERE id = $1`, [webhook.id, record.receivedAt]);
    if (inserted.length === 1) {
      // The run row, in the same transaction as the event: the id answered to the sender names a
      // run that exists. Executing it is the hand-over's job (src/worker/inbound-runs.ts).
      await insertInboundRun(tx, { runId, workspaceId: webhook.workspaceId, agentSlug: webhook.agentSlug, alias: webhook.alias, at: record.receivedAt });
      return { code: 'ok', eventId: eventId.eventId, runId };
    }
    // The repeat is audited on the first row: how many came, and when the last did.
    const [first] = await tx.query<Pick<TableRow<'inbound_events'>, 'run_id'>>(
      `UPDATE inbound_events SET duplicates = duplicates + 1, last_duplicate_at = $3
        WHERE webhook_id = $1 AND event_id = $2 RETURNING run_id`,
      [webhook.id, eventId.eventId, record.receivedAt],
    );
    return { code: 'duplicate', eventId: eventId.eventId, runId: first!.run_id };
  });
}
