/**
 * @module The run's workspace events, written to the outbox (src/domain/events) inside the run's
 * closing transaction, so an event exists exactly when the change that caused it commits.
 */
import type { Tx } from '../../store/db.ts';
import { enqueueEvent, prepareEvent, type PreparedEvent } from '../events/index.ts';
import type { OutboundEventData } from '../webhooks/envelope.ts';

export async function runFailedEvent(tx: Tx, now: Date, run: { workspaceId: string; runId: string; agent: string; reason: string }): Promise<void> {
  await enqueueEvent(
    tx,
    { tenantId: run.workspaceId, type: 'run.failed', data: { run_id: run.runId, agent: run.agent, reason: run.reason, status: 'failed' } },
    { now },
  );
}

/** `draft.created`, built for the statement that writes the draft (written only if the run's answer is delivered). */
export function preparedDraftCreated(
  now: Date,
  draft: { workspaceId: string; draftId: string; runId: string; agent: string; kind: OutboundEventData['draft.created']['kind']; subject: string },
): PreparedEvent {
  return prepareEvent(
    {
      tenantId: draft.workspaceId,
      type: 'draft.created',
      data: { draft_id: draft.draftId, run_id: draft.runId, agent: draft.agent, kind: draft.kind, subject: draft.subject },
    },
    { now },
  );
}

export async function approvalCreatedEvent(
  tx: Tx,
  now: Date,
  approval: { workspaceId: string; approvalId: string; runId: string; agent: string; action: string; summary: string; expiresAt: Date },
): Promise<void> {
  await enqueueEvent(
    tx,
    {
      tenantId: approval.workspaceId,
      type: 'approval.created',
      data: {
        approval_id: approval.approvalId,
        run_id: approval.runId,
        agent: approval.agent,
        action: approval.action,
        summary: approval.summary,
        expires_at: approval.expiresAt.toISOString(),
      },
    },
    { now },
  );
}

/** `run.completed`, built for the run's closing statement (written only if the run completes). */
export function preparedRunCompleted(
  now: Date,
  run: {
    workspaceId: string;
    runId: string;
    agent: string;
    alias: OutboundEventData['run.completed']['alias'];
    inputTokens: number;
    outputTokens: number;
    stu: number;
  },
): PreparedEvent {
  return prepareEvent(
    {
      tenantId: run.workspaceId,
      type: 'run.completed',
      data: {
        run_id: run.runId,
        agent: run.agent,
        alias: run.alias,
        status: 'completed',
        usage: { input_tokens: run.inputTokens, output_tokens: run.outputTokens, stu: run.stu },
      },
    },
    { now },
  );
}

/** `run.failed`, built for the run's closing statement (written only if this close fails it). */
export function preparedRunFailed(now: Date, run: { workspaceId: string; runId: string; agent: string; reason: string }): PreparedEvent {
  return prepareEvent(
    { tenantId: run.workspaceId, type: 'run.failed', data: { run_id: run.runId, agent: run.agent, reason: run.reason, status: 'failed' } },
    { now },
  );
}
