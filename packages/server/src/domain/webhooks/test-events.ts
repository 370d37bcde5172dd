/**
 * @module Test events: an envelope of any outbound type with a sample `data` of that type's shape, marked
 * `"test": true`, for one destination (`POST /webhook-destinations/{id}/test-events`, and the `ping`). The ids
 * are made up (fresh each time, in the contract's formats); nothing comes from the workspace's activity.
 */
import { randomBase62 } from '../../random.ts';
import { buildEnvelope, buildPingEnvelope, type OutboundEnvelope, type OutboundEventData, type OutboundEventType } from './envelope.ts';

const sampleId = (prefix: string) => `${prefix}_${randomBase62(20)}`;

/** A sample `data` of each type, valid against the contract's schema of that type. */
function sampleData(type: Exclude<OutboundEventType, 'ping'>, now: Date): OutboundEventData[typeof type] {
  const run_id = sampleId('run');
  switch (type) {
    case 'run.completed':
      return { run_id, agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 812, output_tokens: 164, stu: 3 } };
    case 'run.failed':
      return { run_id, agent: 'sales', reason: 'timeout', status: 'failed' };
    case 'approval.created':
      return {
        approval_id: sampleId('apr'),
        run_id,
        agent: 'sales',
        action: 'email.send',
        summary: 'Test event: send a follow-up email to a sample customer.',
        expires_at: new Date(now.getTime() + 24 * 3_600_000).toISOString(),
      };
    case 'approval.decided':
      return { approval_id: sampleId('apr'), decision: 'approved', decided_by: sampleId('usr'), run_id };
    case 'draft.created':
      return { draft_id: sampleId('drf'), run_id, agent: 'sales', kind: 'email', subject: 'Test event: a sample draft' };
    case 'integration.connected':
      return { integration: 'crm', provider: 'sample', connected_by: sampleId('usr') };
  }
}

/** The test envelope of `type` for one destination (`dst_<id>`) of the workspace (`wksp_<id>`). */
export function buildTestEnvelope(input: { type: OutboundEventType; tenantId: string; destinationId: string; createdAt: Date }): OutboundEnvelope {
  if (input.type === 'ping') return buildPingEnvelope({ tenantId: input.tenantId, destinationId: input.destinationId, createdAt: input.createdAt });
  return buildEnvelope({
    type: input.type,
    tenantId: input.tenantId,
    data: sampleData(input.type, input.createdAt),
    redactText: (text) => text,
    createdAt: input.createdAt,
    test: true,
  });
}
