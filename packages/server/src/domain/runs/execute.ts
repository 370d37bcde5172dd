/**
 * @module Executing a started run: drives the engine of its alias (each text fragment through the
 * stream redactor to `onDelta`), records its steps, and closes it `completed`, `failed` (redacted
 * reason) or `canceled` with its usage, budgets, conversation turns and events in one transaction.
 * It never throws for an engine failure; a closing transaction that fails ends the run with a
 * smaller one (or the sweeper does) and rethrows.
 */
import { countMessageTokensAsync, countTextTokensAsync, EngineError, type TokenUsage } from '../../engine/index.ts';
import { getAgent } from '../../vocabulary/catalog.ts';
import { killSwitchReason, stuForRun, type SpendingScope } from '../usage/index.ts';
import { manualSwitchSince, settleBudget } from './budget.ts';
import type { RunContext } from './context.ts';
import { appendTurns } from './conversation.ts';
import { runCompletedEvent, runFailedEvent } from './events.ts';
import { endRun } from './recovery.ts';
import { createOutputCap } from './output-cap.ts';
import { runEnded } from './run-hooks.ts';
import type { PendingRun } from './start.ts';
import { writeSteps, type StepDraft } from './steps.ts';
import { readRunRow, toRun, type Run } from './store.ts';
import { chargeUsage } from './usage-store.ts';

export interface ExecuteOptions {
  /** Receives each redacted text fragment, in order (streaming). */
  onDelta?: (delta: string) => void | Promise<void>;
  /** Aborting (client disconnect) stops the engine; the run ends `canceled` and what was produced is billed. */
  signal?: AbortSignal;
}

export interface RunOutcome {
  run: Run;
  answeredBy: string;
  /** The answer, redacted (equal to the concatenated fragments). */
  content: string;
  usage: TokenUsage;
}

export async function executeRun(ctx: RunContext, run: PendingRun, options: ExecuteOptions = {}): Promise<RunOutcome> {
  const { db, clock, engines, budget, executing, heartbeat, redactor: redact } = ctx;
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) controller.abort();
  executing.set(run.runId, controller);
  heartbeat.start();

  const redactor = redact.stream();
  // The reservation is the ceiling of the run's cost: text beyond its output cap is cut here,
  // whatever the engine was told (a provider may ignore max_tokens).
  const cap = createOutputCap(run.outputCap);
  let raw = '';
  let usage: TokenUsage | undefined;
  let failure: unknown;
  const steps: StepDraft[] = [
    ...run.steps,
    { kind: 'model_call', agentSlug: run.answeredBy, summary: `${run.alias} answered as ${getAgent(run.answeredBy)?.name ?? run.answeredBy}.` },
  ];
  try {
    try {
      const events = engines[run.alias].stream({ ...run.request, signal: controller.signal, stream: Boolean(options.onDelta) });
      for await (const event of events) {
        // Once cut, only the engine's usage report is still read (recorded, not billed beyond the cap).
        if (cap.cut && event.type !== 'usage') continue;
        switch (event.type) {
          case 'text': {
            const passed = cap.push(event.delta);
            raw += passed;
            const out = redactor.push(passed);
            if (out !== '' && options.onDelta) await options.onDelta(out);
            // Stop the engine: what it would still produce can be neither delivered nor billed.
            if (cap.cut) controller.abort();
            break;
          }
          case 'tool_call':
            steps.push({
              kind: 'tool_call',
              agentSlug: run.answeredBy,
              summary: `Called ${event.name}.`,
              toolCall: { name: event.name, arguments: { ...event.arguments }, result: event.result, status: 'completed' },
            });
            break;
          case 'draft':
            steps.push({
              kind: 'draft',
              agentSlug: run.answeredBy,
              summary: `Wrote a draft ${event.kind}: ${event.subject}`,
              draft: { kind: event.kind, subject: event.subject, body: event.body },
            });
            break;
          case 'approval_request':
            steps.push({
              kind: 'approval',
              agentSlug: run.answeredBy,
              summary: `Asked for approval: ${event.summary}`,
              toolCall: { name: event.action, arguments: { summary: event.summary }, result: null, status: 'pending_approval' },
              approval: { action: event.action, summary: event.summary },
            });
            break;
          case 'usage':
            usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
            break;
        }
      }
    } catch (err) {
      // The abort that stopped the engine at the cap is ours, not a cancel nor a disconnect: the
      // answer is complete up to the cap, and what the engine counted so far is its report.
      if (!(cap.cut && err instanceof EngineError && err.reason === 'aborted' && !options.signal?.aborted)) throw err;
      usage = { inputTokens: err.usage.inputTokens, outputTokens: Math.max(err.usage.outputTokens, cap.receivedTokens) };
    }
    // Stopped at the cap without a report: what it sent is the least it produced.
    if (!usage && cap.cut) usage = { inputTokens: run.inputTokens, outputTokens: cap.receivedTokens };
    // A stream that stops without its usage event broke upstream; never a complete answer.
    if (!usage) throw new EngineError('engine_error');
    const rest = redactor.end();
    if (rest !== '' && options.onDelta) await options.onDelta(rest);
  } catch (err) {
    failure = err;
  } finally {
    executing.delete(run.runId);
    options.signal?.removeEventListener('abort', abort);
  }

  const reported = usage ?? (await producedUsage(run, raw, failure));
  const billed = withinReservation(run, reported, cap.cut);
  let reason: string | null = null;
  let crossed: SpendingScope | null = null;
  let canceled = false;
  if (failure !== undefined) {
    if (failure instanceof EngineError && failure.reason === 'aborted') canceled = true;
    else reason = failure instanceof EngineError ? failure.reason : 'internal_error';
    if (!(failure instanceof EngineError)) ctx.logError?.(failure);
  } else if (run.limitedBy && (cap.cut || billed.outputTokens >= run.outputCap)) {
    // The output was cut at the budget's edge: the run would have gone over the limit.
    crossed = run.limitedBy;
    reason = killSwitchReason(crossed);
  } else {
    const manual = await manualSwitchSince(db, run.workspaceId);
    if (manual && manual.getTime() >= run.createdAt.getTime()) reason = killSwitchReason('manual');
  }
  const content = redact.text(raw);
  let final: Run;
  try {
    final = await closeRun(ctx, run, { reason, canceled, crossed, usage: billed, reported, content, steps });
  } catch (err) {
    // The closing transaction failed (the store refused a write, or is down): end the run with a
    // smaller one, so it is never left in progress. If even that fails, its lease is no longer
    // renewed and the sweeper ends it.
    ctx.logError?.(err);
    await endRun(db, clock.now(), { workspaceId: run.workspaceId, runId: run.runId, reason: 'internal_error', limits: budget.limits }).catch((again: unknown) =>
      ctx.logError?.(again),
    );
    throw err;
  }
  return { run: final, answeredBy: run.answeredBy, content, usage: billed };
}

async function closeRun(
  ctx: RunContext,
  run: PendingRun,
  result: {
    reason: string | null;
    canceled: boolean;
    crossed: SpendingScope | null;
    /** What is billed: within the reservation. */
    usage: TokenUsage;
    /** What the engine reported (or what was counted); beyond `usage` it is recorded, not billed. */
    reported: TokenUsage;
    content: string;
    steps: StepDraft[];
  },
): Promise<Run> {
  const { db, clock, budget, redactor } = ctx;
  const now = clock.now();
  const stu = stuForRun({ alias: run.alias, ...result.usage }, budget.rates);
  const unbilled = {
    inputTokens: Math.max(0, result.reported.inputTokens - result.usage.inputTokens),
    outputTokens: Math.max(0, result.reported.outputTokens - result.usage.outputTokens),
  };
  const unbilledStu = Math.max(0, stuForRun({ alias: run.alias, ...result.reported }, budget.rates) - stu);
  if (unbilledStu > 0)
    ctx.logUnbilled?.({ workspaceId: run.workspaceId, runId: run.runId, alias: run.alias, billed: result.usage, reported: result.reported, unbilledStu });
  return db.transaction(async (tx) => {
    const row = await readRunRow(tx, run.workspaceId, run.runId, true);
    // This instance stalled past its lease and the run was handed over again (an inbound run after
    // the sweeper): the new execution owns it now; this one records nothing, so nothing is billed twice.
    if (row.started_at?.getTime() !== run.createdAt.getTime()) return toRun(row);
    // A cancel that arrived first wins: terminal states never change, but the tokens are still billed.
    const status = row.status !== 'in_progress' ? row.status : result.canceled ? 'canceled' : result.reason ? 'failed' : 'completed';
    const reason = status === 'failed' ? redactor.text(row.failure_reason ?? result.reason ?? 'internal_error') : row.failure_reason;
    await tx.query(
      `UPDATE runs SET status = $2, content = $3, failure_reason = $4, input_tokens = $5, output_tokens = $6, stu = $7,
                       reserved_stu = 0, lease_until = NULL, updated_at = $8, completed_at = COALESCE(completed_at, $8),
                       unbilled_input_tokens = $9, unbilled_output_tokens = $10, unbilled_stu = $11
        WHERE id = $1`,
      [
        run.runId,
        status,
        status === 'completed' ? result.content : null,
        reason,
        result.usage.inputTokens,
        result.usage.outputTokens,
        stu,
        now,
        unbilled.inputTokens,
        unbilled.outputTokens,
        unbilledStu,
      ],
    );
    // What the row still holds: a cancel (on any instance) may already have released the reservation.
    await settleBudget(tx, {
      workspaceId: run.workspaceId,
      windows: run.windows,
      reservedStu: Number(row.reserved_stu),
      stu,
      crossed: result.crossed,
      now,
      limits: budget.limits,
    });
    await runEnded(tx, { runId: run.runId, workspaceId: run.workspaceId, source: row.source });
    await chargeUsage(tx, { workspaceId: run.workspaceId, runId: run.runId, alias: run.alias, ...result.usage, stu, now, quotaStu: run.quotaStu });
    // Drafts and approvals only exist for an answer that was delivered.
    const steps = status === 'completed' ? result.steps : result.steps.filter((s) => !s.draft && !s.approval);
    await writeSteps(tx, run.runId, steps, now, { workspaceId: run.workspaceId }, redactor);
    if (status === 'completed') {
      await runCompletedEvent(tx, now, {
        workspaceId: run.workspaceId,
        runId: run.runId,
        agent: run.agentSlug,
        alias: run.alias,
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
        stu,
      });
      if (run.conversationId) {
        await appendTurns(tx, {
          workspaceId: run.workspaceId,
          conversationId: run.conversationId,
          runId: run.runId,
          now,
          turns: [...run.newMessages, { role: 'assistant', content: result.content }],
        });
      }
    } else if (status === 'failed' && row.status === 'in_progress') {
      await runFailedEvent(tx, now, { workspaceId: run.workspaceId, runId: run.runId, agent: run.agentSlug, reason: reason ?? 'internal_error' });
    }
    return toRun(await readRunRow(tx, run.workspaceId, run.runId));
  });
}

/**
 * Tokens of a run that stopped early: what the engine reported with its error, or else counted
 * here from the conversation and the text received, so a disconnect or a cancel is still billed.
 */
async function producedUsage(run: PendingRun, raw: string, failure: unknown): Promise<TokenUsage> {
  const reported = failure instanceof EngineError ? failure.usage : { inputTokens: 0, outputTokens: 0 };
  const outputTokens = Math.max(reported.outputTokens, await countTextTokensAsync(raw));
  // The input counts once the engine began answering, or when the caller walked away mid-request.
  const began = outputTokens > 0 || reported.inputTokens > 0 || (failure instanceof EngineError && failure.reason === 'aborted');
  const inputTokens = began ? Math.max(reported.inputTokens, await countMessageTokensAsync(run.request.messages)) : 0;
  return { inputTokens, outputTokens };
}

/**
 * What a run is billed: at most the tokens its reservation holds (the input estimate plus the
 * output cap), so the charge never exceeds the reservation whatever the engine reports. The output
 * is billed up to the cap (a run cut at the cap used all of it); the input as reported, within what
 * the output left of the reservation (an engine whose tokenizer counts a few more prompt tokens
 * than our estimate is billed them while the output leaves room). The rest is recorded as unbilled.
 */
function withinReservation(run: PendingRun, reported: TokenUsage, cut: boolean): TokenUsage {
  const outputTokens = cut ? run.outputCap : Math.min(reported.outputTokens, run.outputCap);
  return { inputTokens: Math.min(reported.inputTokens, run.inputTokens + run.outputCap - outputTokens), outputTokens };
}
