/**
 * @module Connected integrations: recording one emits `integration.connected`, in the same
 * transaction as the record.
 */
import { type AuditContext, recordAudit } from '../audit/index.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../store/db.ts';
import { enqueueEvent } from '../events/outbox.ts';
import type { OutboundEventData } from '../webhooks/envelope.ts';
import { newId } from '../../random.ts';
import type { Schema } from '../../contract.ts';

type Integration = Schema<'Integration'>;

export async function recordIntegration(
  db: Db,
  clock: Clock,
  input: { workspaceId: string; integration: OutboundEventData['integration.connected']['integration']; provider: string; connectedBy: string },
  audit?: AuditContext,
): Promise<Integration> {
  const now = clock.now();
  const id = newId('int');
  await db.transaction(async (tx) => {
    await tx.query(`INSERT INTO integrations (id, workspace_id, integration, provider, connected_by, connected_at) VALUES ($1, $2, $3, $4, $5, $6)`, [
      id,
      input.workspaceId,
      input.integration,
      input.provider,
      input.connectedBy,
      now,
    ]);
    await enqueueEvent(
      tx,
      {
        tenantId: input.workspaceId,
        type: 'integration.connected',
        data: { integration: input.integration, provider: input.provider, connected_by: input.connectedBy },
      },
      { now },
    );
    const target = { type: 'integration' as const, id, label: input.integration };
    await recordAudit(tx, audit, input.workspaceId, { action: 'integration.connected', target, details: { provider: input.provider } }, now);
  });
  return { id, integration: input.integration, provider: input.provider, connectedBy: input.connectedBy, connectedAt: now.toISOString() };
}
