/**
 * @module Idempotent ingestion of one verified inbound event, in one statement. The UNIQUE (webhook,
 * event id) constraint decides between "first" and "duplicate", so concurrent repeats on several
 * instances still start exactly one run. The row is also the audit record of the accepted event and the
 * durable queue entry of its run (`run_started_at` is null until the run has been handed over).
 */
import { createHash } from 'node:crypto';
import { randomBase62 } from '../../random.ts';
import type { FunctionArgument } from '../../../../../generated/db.ts';
import { functionArgument, type Db } from '../../store/db.ts';
import { oneOf, row, selectRow, text } from '../../store/rows.ts';
import type { InboundEventId } from '../webhooks/event-id.ts';
import { newId } from '../../random.ts';
import type { InboundWebhookTarget } from './service.ts';
import { traceStatement } from '../../tracing/statement.ts';

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

/**
 * One statement (`ingest_inbound_event`, store/functions/ingest_inbound_event.sql): the event row, the
 * run of a first event or the audit of a repeat, and the webhook's last event time.
 */
const INGEST = `SELECT o_code AS code, o_run_id AS run_id FROM ingest_inbound_event($1)`;

/** The ingestion's one statement; an `ingest_inbound_event` span when traces are on (tracing/statement.ts). */
export function ingestInboundEvent(db: Db, record: InboundEventRecord): Promise<IngestResult> {
  return traceStatement('ingest_inbound_event', 1, ingestStatement, db, record);
}

async function ingestStatement(db: Db, record: InboundEventRecord): Promise<IngestResult> {
  const found = await selectRow(db, row({ code: oneOf(['ok', 'duplicate']), run_id: text }), INGEST, [functionArgument(ingestArgs(record))], {
    name: 'ingest_inbound_event',
  });
  return { code: found!.code, eventId: record.eventId.eventId, runId: found!.run_id };
}

/** The statement's one argument (named keys, typed from store/functions/ingest_inbound_event.sql). */
function ingestArgs(record: InboundEventRecord): FunctionArgument<'ingest_inbound_event_args'> {
  const { webhook, eventId } = record;
  return {
    id: `iev_${randomBase62(20)}`,
    webhook_id: webhook.id,
    workspace_id: webhook.workspaceId,
    slug: webhook.slug,
    event_id: eventId.eventId,
    event_id_source: eventId.source,
    received_at: record.receivedAt,
    source_ip: record.sourceIp ?? null,
    body_sha256: createHash('sha256').update(record.rawBody).digest('hex'),
    body_bytes: record.rawBody.byteLength,
    signed_at: record.signedAtMs === null ? null : new Date(record.signedAtMs),
    request_id: record.requestId ?? null,
    agent_input: record.agentInput,
    agent_slug: webhook.agentSlug,
    alias: webhook.alias,
    run_id: newRunId(),
  };
}
