/**
 * @module Pausing a run for an approval: the agent loop reached a tool call that needs a person's decision
 * (domain/agent-loop's `requestApproval`). The API for the loop:
 *
 *   pauseRun(ctx, input)  One transaction, with the run's row locked (a cancel or a sweep takes the same lock):
 *                         - the spend so far settled as a close would (spending/budget.ts `settlePause`: the
 *                           ledger line, the period and the windows charged through `settle_runs`, the
 *                           reservation released), added to the run's usage;
 *                         - the run stays `in_progress`, holding no reservation and no lease, and not started
 *                           (`started_at` null): the sweeper of interrupted runs leaves it alone;
 *                         - the approval (`pending`, expiring after APPROVAL_TTL_MS) and `approval.created`;
 *                         - the run's event log so far, with `approval.requested` (its approval's id and expiry);
 *                         - the steps so far, with the drafts among them (`draft.created`);
 *                         - the checkpoint (checkpoints.ts): the loop's state as given (a plain JSON object), the
 *                           pending call (id, name, arguments), its state `pending_approval`, and what the resume
 *                           will reserve (the next model call's input estimate and output cap).
 *                         Answers `waiting` with the approval the caller tells its client about (`waitingFor`), or
 *                         `ended` when the run is no longer this execution's (canceled meanwhile): then nothing was
 *                         written, and the loop closes the run as usual (close.ts bills what it produced).
 *
 * After a `waiting` answer the execution ends here: it stops renewing the run's lease and ends its stream with
 * `event: end` carrying `waitingFor`. The decision (domain/approvals/decision.ts) or the expiry makes the run
 * resumable; resume.ts takes it up on whichever instance claims it first. A cancel before the claim ends the run
 * for good (recovery.ts): its checkpoint is dropped and its approval stored `expired`.
 */
import type { TokenUsage } from '../../engine/index.ts';
import { newId } from '../../random.ts';
import { insertApprovalRequest } from '../approvals/requests.ts';
import { appendRunLog } from '../run-events/queries.ts';
import { FIRST_EXECUTION_SEQUENCE, type ExecutionEvent, type RunEvent } from '../run-events/log.ts';
import { settlePause } from '../spending/budget.ts';
import { stuForRun } from '../usage/index.ts';
import { insertCheckpoint, pauseRunRow } from './checkpoints.ts';
import type { RunContext } from './context.ts';
import { approvalCreatedEvent } from './events.ts';
import type { PendingRun } from './start.ts';
import { APPROVAL_TTL_MS, type StepDraft, writeSteps } from './steps.ts';
import { lockRunRecord, readRunRecord, toRun, type Run } from './store.ts';

export type PauseContext = Pick<RunContext, 'db' | 'clock' | 'budget' | 'redactor' | 'usageCharged'>;

export interface PauseInput {
  /** The run as its execution holds it (its reservation, windows and start). */
  run: PendingRun;
  /** What the execution consumed so far, within its reservation: billed now. */
  usage: TokenUsage;
  /**
   * The approval asked for: the action (the tool's name as the panel shows it), what it would do (redacted here), and
   * the agent that asks (a department the orchestrator delegated to; absent: the run's).
   */
  approval: { action: string; summary: string; agentSlug?: string | undefined };
  /** The tool call that waits for the decision (its arguments as the model gave them). */
  call: { id: string; name: string; arguments: Record<string, unknown> };
  /** The agent loop's state (conversation with its tool calls, steps, usage, step count): serialisable as JSON. */
  loopState: unknown;
  /** What the resume reserves: the next model call's input estimate and the output it asks for. */
  next: { inputTokens: number; desiredOutput: number };
  /** The execution's events so far (its LiveRun's `executionEvents()`), stored now. */
  log: readonly ExecutionEvent[];
  /**
   * The steps so far, written now from `firstStepIndex` (a waiting run shows them), with the drafts among them and
   * `draft.created`; the approval's step is the last one, its call `pending_approval` until the resume records it.
   */
  steps: readonly StepDraft[];
  firstStepIndex: number;
}

export interface PendingApproval {
  id: string;
  action: string;
  summary: string;
  expiresAt: string;
}

export type PauseResult =
  | { kind: 'waiting'; run: Run; checkpointId: string; waitingFor: PendingApproval; event: Extract<RunEvent, { type: 'approval.requested' }> }
  | { kind: 'ended'; run: Run };

export async function pauseRun(ctx: PauseContext, input: PauseInput): Promise<PauseResult> {
  const { db, clock, budget, redactor } = ctx;
  const { run } = input;
  const now = clock.now();
  const stu = stuForRun({ alias: run.alias, ...input.usage }, budget.rates);
  const summary = redactor.text(input.approval.summary);
  const action = input.approval.action;
  const asking = input.approval.agentSlug ?? run.answeredBy;
  const expiresAt = new Date(now.getTime() + APPROVAL_TTL_MS);
  const result = await db.transaction(async (tx): Promise<PauseResult> => {
    const row = await lockRunRecord(tx, run.workspaceId, run.runId);
    // Canceled (or swept, or handed over) since this execution began: not this execution's to pause.
    if (row.status !== 'in_progress' || row.startedAt?.getTime() !== run.createdAt.getTime()) return { kind: 'ended', run: toRun(row) };
    await settlePause(tx, {
      workspaceId: run.workspaceId,
      runId: run.runId,
      alias: run.alias,
      windows: { hour: row.windowHour, day: row.windowDay },
      reservedStu: row.reservedStu,
      usage: input.usage,
      stu,
      quotaStu: run.quotaStu,
      now,
      limits: budget.limits,
      ledgerId: newId('led'),
    });
    await pauseRunRow(tx, run.runId, { ...input.usage, stu, now, answeredBy: run.answeredBy });
    const approvalId = newId('apr');
    await insertApprovalRequest(tx, {
      id: approvalId,
      workspaceId: run.workspaceId,
      runId: run.runId,
      agentSlug: asking,
      action,
      summary,
      expiresAt,
      createdAt: now,
    });
    await approvalCreatedEvent(tx, now, { workspaceId: run.workspaceId, approvalId, runId: run.runId, agent: asking, action, summary, expiresAt });
    // The steps so far, and the drafts among them for a person to review now, not once the run ends.
    await writeSteps(tx, run.runId, input.steps, now, { workspaceId: run.workspaceId }, redactor, input.firstStepIndex);
    const sequence = Math.max(FIRST_EXECUTION_SEQUENCE - 1, ...input.log.map((e) => e.sequence)) + 1;
    const event = {
      sequence,
      type: 'approval.requested' as const,
      runId: run.runId,
      at: now.toISOString(),
      action,
      summary,
      approvalId,
      expiresAt: expiresAt.toISOString(),
    };
    await appendRunLog(tx, { runId: run.runId, workspaceId: run.workspaceId, events: [...input.log, event], now });
    const checkpointId = newId('chk');
    await insertCheckpoint(tx, {
      id: checkpointId,
      runId: run.runId,
      workspaceId: run.workspaceId,
      approvalId,
      loopState: input.loopState,
      call: input.call,
      next: input.next,
      lastSequence: sequence,
      now,
    });
    const waitingFor = { id: approvalId, action, summary, expiresAt: expiresAt.toISOString() };
    return { kind: 'waiting', run: { ...toRun(await readRunRecord(tx, run.workspaceId, run.runId)), waitingFor }, checkpointId, waitingFor, event };
  });
  // The usage tally reads the workspace's period again (spending/usage-tally.ts), as after a close.
  if (result.kind === 'waiting') ctx.usageCharged?.(run.workspaceId);
  return result;
}
