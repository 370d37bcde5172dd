/**
 * @module Closing a run that executed, in one statement (`finish_run`, store/functions/finish_run.sql
 * and finish_runs.sql, its settlement store/functions/settle_runs.sql): the run's row (`completed`, `failed` or `canceled`, with its usage), its
 * steps and tool calls, the ledger line and the period's charge, the windows' charge and trips,
 * the reservation released, a completed run's conversation turns, and the `run.completed` or
 * `run.failed` event with its deliveries. What the statement needs that is not in the store (ids,
 * redacted text, the events' envelopes) is prepared here first.
 *
 * The store decides what only it knows at that moment: a cancel that came first wins (terminal
 * states never change, but the tokens are still billed); a run handed over again since this
 * execution began (an inbound run after the sweeper) is left to the new execution and nothing is
 * billed twice; and the manual kill switch, turned on since the run started, fails a run that would
 * complete (`kill_switch:manual`).
 *
 * A completed run's drafts and their `draft.created` are written by the same statement. A run whose source has
 * run-ended hooks (inbound runs) closes in a transaction: the same statement, then the hooks' writes.
 */
import type { TokenUsage } from '../../engine/index.ts';
import { fail } from '../../errors.ts';
import { newId } from '../../random.ts';
import type { Db, Tx } from '../../store/db.ts';
import { deliveryIds, type PreparedEvent } from '../events/index.ts';
import type { WorkspaceEventType } from '../webhooks/envelope.ts';
import { killSwitchReason, stuForRun, TRIP_MARGIN, type SpendingScope } from '../usage/index.ts';
import type { RunContext } from './context.ts';
import { preparedRunCompleted, preparedRunFailed } from './events.ts';
import { hasRunEndedHooks, runEnded } from './run-hooks.ts';
import type { PendingRun } from './start.ts';
import { draftRows, stepRows, type StepDraft } from './steps.ts';
import { type FinishedRun, type FinishRunArgs, finishRun } from './queries/close.ts';
import { toRun, type Run } from './store.ts';
import { answerOnly, type ExecutionEvent } from '../run-events/log.ts';
import { closeNeeds } from './close-detail.ts';
import { traceStatement } from '../../tracing/statement.ts';

export interface RunResult {
  /** Why it failed (not redacted yet); null when it completed or was canceled. */
  reason: string | null;
  canceled: boolean;
  /** The limit a run cut at its shrunk cap crossed. */
  crossed: SpendingScope | null;
  /** What is billed: within the reservation. */
  usage: TokenUsage;
  /** What the engine reported (or what was counted); beyond `usage` it is recorded, not billed. */
  reported: TokenUsage;
  /** The answer, redacted. */
  content: string;
  steps: StepDraft[];
  /** What the execution saw of the run's event log (run-events.ts), stored by the closing statement. */
  log: readonly ExecutionEvent[];
}

export async function closeRun(ctx: RunContext, run: PendingRun, result: RunResult): Promise<Run> {
  const { clock, budget, redactor } = ctx;
  const now = clock.now();
  const stu = stuForRun({ alias: run.alias, ...result.usage }, budget.rates);
  const unbilled = {
    inputTokens: Math.max(0, result.reported.inputTokens - result.usage.inputTokens),
    outputTokens: Math.max(0, result.reported.outputTokens - result.usage.outputTokens),
  };
  const unbilledStu = Math.max(0, stuForRun({ alias: run.alias, ...result.reported }, budget.rates) - stu);
  if (unbilledStu > 0)
    ctx.logUnbilled?.({ workspaceId: run.workspaceId, runId: run.runId, alias: run.alias, billed: result.usage, reported: result.reported, unbilledStu });

  const status = result.canceled ? 'canceled' : result.reason ? 'failed' : 'completed';
  const reason = status === 'failed' ? redactor.text(result.reason ?? 'internal_error') : null;
  // Only a run that would complete is failed by the manual switch (as one that failed keeps its reason).
  const manualReason = status === 'completed' ? killSwitchReason('manual') : null;
  const event = { workspaceId: run.workspaceId, runId: run.runId, agent: run.agentSlug };
  // Its drafts, written by the same statement only if the run completes; their events after `run.completed`.
  const drafts = status === 'completed' ? draftRows(result.steps, run, now, redactor) : { drafts: [], events: [] };
  // The events of each outcome (`when`), prepared only for a close sent whole (`whole` below); their types go always.
  const outcomes: { when: string; type: WorkspaceEventType; prepare: () => PreparedEvent }[] = [
    ...(status === 'completed'
      ? [
          { when: 'completed', type: 'run.completed' as const, prepare: () => preparedRunCompleted(now, { ...event, alias: run.alias, ...result.usage, stu }) },
          { when: 'manual', type: 'run.failed' as const, prepare: () => preparedRunFailed(now, { ...event, reason: manualReason! }) },
        ]
      : []),
    ...(reason !== null ? [{ when: 'failed', type: 'run.failed' as const, prepare: () => preparedRunFailed(now, { ...event, reason }) }] : []),
  ];
  const prepareEvents = () => [
    ...outcomes.map(({ when, prepare }) => ({ when, ...prepare() })),
    ...drafts.events.map((prepared) => ({ when: 'completed', ...prepared })),
  ];
  const eventTypes = [...new Set([...outcomes.map((outcome) => outcome.type), ...drafts.events.map((prepared) => prepared.type)])];
  const onlyAnswer = answerOnly(result.log, result.content);
  const turns = run.conversationId && status === 'completed' ? [...run.newMessages, { role: 'assistant' as const, content: result.content }] : [];
  const close: FinishRunArgs = {
    run_id: run.runId,
    workspace_id: run.workspaceId,
    started_at: run.createdAt,
    now,
    status,
    reason,
    manual_reason: manualReason,
    crossed: result.crossed,
    content: result.content,
    input_tokens: result.usage.inputTokens,
    output_tokens: result.usage.outputTokens,
    stu,
    unbilled_input: unbilled.inputTokens,
    unbilled_output: unbilled.outputTokens,
    unbilled_stu: unbilledStu,
    alias: run.alias,
    quota_stu: run.quotaStu,
    limit_hour: budget.limits.hour,
    limit_day: budget.limits.day,
    trip_margin: TRIP_MARGIN,
    ledger_id: newId('led'),
    steps: stepRows(result.steps, redactor, run.firstStepIndex ?? 0),
    drafts: drafts.drafts,
    turn_roles: turns.map((turn) => turn.role),
    turn_contents: turns.map((turn) => turn.content),
    // Left out at first: most closes need neither (the statement says when one does: store/functions/finish_runs.sql).
    events: null,
    event_types: eventTypes,
    delivery_ids: null,
    instance: ctx.conversations.instance,
    log: onlyAnswer ? null : result.log,
    // Not stored if the run completes: readers take its answer from the run's row (run-events/log.ts).
    answer_only: onlyAnswer,
    answered_by: run.answeredBy,
  };
  /** The close with all it may need: its events and their delivery ids, and its log. */
  const whole = (): FinishRunArgs => ({ ...close, events: prepareEvents(), delivery_ids: deliveryIds(), log: result.log });
  // Alone (outside a transaction), the statement may carry other runs' closes too (close-batch.ts); it goes without
  // what it seldom needs unless its workspace takes its events, and whole when the store asks (close-detail.ts).
  const finishAlone = async () => {
    if (await ctx.closeDetail.takesEvents(run.workspaceId)) return ctx.closes.finish(whole());
    return ctx.closes.finish(close).catch((err: unknown) => {
      const needs = closeNeeds(err);
      if (!needs) throw err;
      if (needs === 'events') ctx.closeDetail.learn(run.workspaceId);
      return ctx.closes.finish(whole());
    });
  };
  const finish = async (tx: Db | Tx, alone: boolean) => {
    try {
      // In a transaction, a statement that asks for more would undo it: sent whole.
      return alone ? await finishAlone() : await traceStatement('finish_run', 1, finishRun, tx, whole());
    } catch (err) {
      // The run's row is gone (its workspace was deleted while it executed): as readRunRecord answers.
      if (err instanceof Error && err.message.includes('run_not_found')) throw fail('not_found', 'Run not found.');
      throw err;
    }
  };

  const { conversationId } = run;
  if (!conversationId) return toRun(await closeWith(ctx, run, finish));
  // The thread held in memory gets the turns this close appends (conversation.ts).
  ctx.conversations.closing(run.workspaceId, conversationId);
  let row: Awaited<ReturnType<typeof finish>> | undefined;
  try {
    row = await closeWith(ctx, run, finish);
    return toRun(row);
  } finally {
    const appended = row?.status === 'completed' && row.startedAt?.getTime() === run.createdAt.getTime() ? turns : row ? [] : null;
    ctx.conversations.closed(run.workspaceId, conversationId, appended);
  }
}

/** The closing statement alone, or in a transaction with the writes it cannot make (see the module comment). */
async function closeWith(ctx: RunContext, run: PendingRun, finish: (db: Db | Tx, alone: boolean) => Promise<FinishedRun>): Promise<FinishedRun> {
  const { db } = ctx;
  // The usage tally reads the workspace's period again before this run's answer leaves (spending/usage-tally.ts).
  const charged = () => ctx.usageCharged?.(run.workspaceId);
  if (!hasRunEndedHooks(run.source)) return finish(db, true).finally(charged);
  return db
    .transaction(async (tx) => {
      const row = await finish(tx, false);
      // Handed over again since this execution began: the new one owns the run (finish_run left it alone).
      if (row.startedAt?.getTime() !== run.createdAt.getTime()) return row;
      await runEnded(tx, { runId: run.runId, workspaceId: run.workspaceId, source: row.source });
      return row;
    })
    .finally(charged);
}
