/**
 * @module The steps of a run as they are stored: each step row, its tool call, and for an answer
 * that was delivered its drafts (`draft.created`). Text is redacted on the way in.
 */
import type { DraftKind } from '../../engine/index.ts';
import { newId } from '../../random.ts';
import type { Redactor } from '../../redact/index.ts';
import type { Db, Tx } from '../../store/db.ts';
import { enqueuePrepared, type PreparedEvent } from '../events/index.ts';
import { preparedDraftCreated } from './events.ts';
import { insertDraft, insertSteps, insertToolCall } from './queries/steps.ts';
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
}

/**
 * Writes the steps in order (one statement for all of them), numbered from `first` (the steps an earlier execution of
 * the run wrote come before); with `events`, also their drafts and `draft.created`. Text passes `redactor`.
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
  if (events) await writeDrafts(tx, { runId, workspaceId: events.workspaceId }, steps, now, redactor);
}

/** Whether a step is only kept for an answer that was delivered (a draft's). */
export function deliveredOnly(step: StepDraft): boolean {
  return step.draft !== undefined;
}

/**
 * The steps as `finish_run` writes them (one jsonb parameter), text redacted: `index` when the run
 * completed, `keptIndex` otherwise (absent for a draft's, which only a completed run keeps);
 * both from `first` (what a pause of the run wrote before).
 */
export function stepRows(steps: readonly StepDraft[], redactor: Redactor, first = 0) {
  let kept = first;
  return steps.map((step, i) => ({
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
  }));
}

/** A draft as `finish_run` writes it (text redacted). */
export interface DraftRow {
  id: string;
  agentSlug: string;
  kind: DraftKind;
  subject: string;
  body: string;
}

/**
 * The drafts of the steps (text redacted), each with its `draft.created`, prepared for a statement that writes them
 * only if the run's answer is delivered: the closing statement (`finish_run`), or the pause's transaction.
 */
export function draftRows(
  steps: readonly StepDraft[],
  run: { runId: string; workspaceId: string },
  now: Date,
  redactor: Redactor,
): { drafts: DraftRow[]; events: PreparedEvent[] } {
  const drafts: DraftRow[] = [];
  const events: PreparedEvent[] = [];
  for (const step of steps) {
    if (!step.draft) continue;
    const draft = {
      id: newId('drf'),
      agentSlug: step.agentSlug,
      kind: step.draft.kind,
      subject: redactor.text(step.draft.subject),
      body: redactor.text(step.draft.body),
    };
    drafts.push(draft);
    events.push(
      preparedDraftCreated(now, {
        workspaceId: run.workspaceId,
        draftId: draft.id,
        runId: run.runId,
        agent: draft.agentSlug,
        kind: draft.kind,
        subject: draft.subject,
      }),
    );
  }
  return { drafts, events };
}

/** Writes the drafts of the steps and their events in the caller's transaction. */
async function writeDrafts(tx: Tx, run: { runId: string; workspaceId: string }, steps: readonly StepDraft[], now: Date, redactor: Redactor): Promise<void> {
  const { drafts, events } = draftRows(steps, run, now, redactor);
  for (const [i, draft] of drafts.entries()) {
    await insertDraft(tx, { ...draft, workspaceId: run.workspaceId, runId: run.runId, now });
    await enqueuePrepared(tx, run.workspaceId, events[i]!, now);
  }
}

/** The result of a call that waited for a decision and was never made: its run ended first. */
export const NOT_PERFORMED = 'Not performed: the run ended before it was decided.';

/** The steps with every call still waiting for a decision marked not performed (the run ends without making it). */
export function withUnmadeCalls(steps: readonly StepDraft[]): StepDraft[] {
  return steps.map((step) =>
    step.toolCall?.status === 'pending_approval' ? { ...step, toolCall: { ...step.toolCall, status: 'failed', result: NOT_PERFORMED } } : step,
  );
}

/** Marks the run's calls still waiting for a decision not performed: the run ended while they waited. */
export async function recordUnmadeCalls(tx: Tx, runId: string): Promise<void> {
  await tx.query(`UPDATE tool_calls SET status = 'failed', result = $2 WHERE run_id = $1 AND status = 'pending_approval'`, [runId, NOT_PERFORMED]);
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
