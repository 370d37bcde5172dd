/**
 * @module The steps of a run as they are stored: each step row, its tool call, and for an answer
 * that was delivered its draft (`draft.created`) and approval request (`approval.created`). Text is
 * redacted on the way in.
 */
import type { DraftKind } from '../../engine/index.ts';
import { newId } from '../../random.ts';
import type { Redactor } from '../../redact/index.ts';
import type { Db, Tx } from '../../store/db.ts';
import { insertApprovalRequest } from '../approvals/requests.ts';
import { approvalCreatedEvent, draftCreatedEvent } from './events.ts';
import { insertDraft, insertSteps, insertToolCall } from './queries.ts';
import type { Step, ToolCall } from './store.ts';

/** How long an approval request waits for a decision. */
export const APPROVAL_TTL_MS = 72 * 60 * 60 * 1000;

/** A step recorded while a run executes, written when the run closes. */
export interface StepDraft {
  kind: Step['kind'];
  agentSlug: string;
  summary: string;
  toolCall?: { name: string; arguments: Record<string, unknown>; result: string | null; status: ToolCall['status'] };
  draft?: { kind: DraftKind; subject: string; body: string };
  approval?: { action: string; summary: string };
}

/**
 * Writes the steps in order (one statement for all of them), numbered from `first` (the steps an earlier execution of
 * the run wrote come before); with `events`, also their drafts and approvals and those events. Text passes `redactor`.
 */
export async function writeSteps(
  tx: Tx,
  runId: string,
  steps: readonly StepDraft[],
  now: Date,
  events: { workspaceId: string } | undefined,
  redactor: Redactor,
  first = 0,
): Promise<void> {
  const redactText = redactor.text;
  if (steps.length > 0) {
    await insertSteps(
      tx,
      runId,
      now,
      steps.map((step, i) => ({ id: newId('stp'), index: first + i, kind: step.kind, agentSlug: step.agentSlug, summary: redactText(step.summary) })),
    );
  }
  for (const [i, step] of steps.entries()) {
    if (step.toolCall) {
      await insertToolCall(tx, {
        id: newId('tc'),
        runId,
        stepIndex: first + i,
        name: step.toolCall.name,
        arguments: redactor.value(step.toolCall.arguments),
        result: step.toolCall.result === null ? null : redactText(step.toolCall.result),
        status: step.toolCall.status,
        now,
      });
    }
  }
  if (events) await writeDeliverables(tx, runId, steps, now, events.workspaceId, redactor);
}

/** Whether a step is only kept for an answer that was delivered (a draft, an approval request). */
export function deliveredOnly(step: StepDraft): boolean {
  return Boolean(step.draft || step.approval);
}

/**
 * The steps as `finish_run` writes them (one jsonb parameter), text redacted: `index` when the run
 * completed, `keptIndex` otherwise (absent for a draft or approval, which only a completed run keeps);
 * both from `first` (what a pause of the run wrote before).
 */
export function stepRows(steps: readonly StepDraft[], redactor: Redactor, first = 0): string {
  let kept = first;
  return JSON.stringify(
    steps.map((step, i) => ({
      id: newId('stp'),
      index: first + i,
      keptIndex: deliveredOnly(step) ? null : kept++,
      kind: step.kind,
      agentSlug: step.agentSlug,
      summary: redactor.text(step.summary),
      ...(step.toolCall
        ? {
            toolCallId: newId('tc'),
            name: step.toolCall.name,
            arguments: redactor.value(step.toolCall.arguments),
            result: step.toolCall.result === null ? null : redactor.text(step.toolCall.result),
            toolStatus: step.toolCall.status,
          }
        : {}),
    })),
  );
}

/** The drafts and approval requests of a delivered answer, with their events. */
export async function writeDeliverables(tx: Tx, runId: string, steps: readonly StepDraft[], now: Date, workspaceId: string, redactor: Redactor): Promise<void> {
  const redactText = redactor.text;
  const events = { workspaceId };
  for (const step of steps) {
    if (step.draft) {
      const draftId = newId('drf');
      const subject = redactText(step.draft.subject);
      await insertDraft(tx, {
        id: draftId,
        workspaceId: events.workspaceId,
        runId,
        agentSlug: step.agentSlug,
        kind: step.draft.kind,
        subject,
        body: redactText(step.draft.body),
        now,
      });
      await draftCreatedEvent(tx, now, { workspaceId: events.workspaceId, draftId, runId, agent: step.agentSlug, kind: step.draft.kind, subject });
    }
    if (step.approval) {
      const approvalId = newId('apr');
      const summary = redactText(step.approval.summary);
      const expiresAt = new Date(now.getTime() + APPROVAL_TTL_MS);
      await insertApprovalRequest(tx, {
        id: approvalId,
        workspaceId: events.workspaceId,
        runId,
        agentSlug: step.agentSlug,
        action: step.approval.action,
        summary,
        expiresAt,
        createdAt: now,
      });
      await approvalCreatedEvent(tx, now, {
        workspaceId: events.workspaceId,
        approvalId,
        runId,
        agent: step.agentSlug,
        action: step.approval.action,
        summary,
        expiresAt,
      });
    }
  }
}

/** The call of an approval's step once decided (and, if approved, made): its status and result (redacted by the caller). */
export async function recordDecidedCall(
  db: Db | Tx,
  runId: string,
  stepIndex: number,
  call: { status: 'completed' | 'failed'; result: string },
): Promise<void> {
  await db.query(`UPDATE tool_calls SET status = $3, result = $4 WHERE run_id = $1 AND step_index = $2 AND status = 'pending_approval'`, [
    runId,
    stepIndex,
    call.status,
    call.result,
  ]);
}
