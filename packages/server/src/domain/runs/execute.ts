/**
 * @module Executing a started run: drives the engine of its alias (each text fragment through the
 * stream redactor to `onDelta`), records its steps, and closes it `completed`, `failed` (redacted
 * reason) or `canceled` with its usage, budgets, conversation turns and events in one statement (close.ts).
 * It never throws for an engine failure; a closing transaction that fails ends the run with a
 * smaller one (or the sweeper does) and rethrows.
 */
import { countMessageTokensAsync, countTextTokensAsync, type EngineEvent, EngineError, type TokenUsage } from '../../engine/index.ts';
import type { Redactor } from '../../redact/index.ts';
import { getAgent } from '../../vocabulary/catalog.ts';
import { killSwitchReason, type SpendingScope } from '../usage/index.ts';
import { closeRun, type RunResult } from './close.ts';
import type { ExecuteContext, RunContext } from './context.ts';
import { endRun } from './recovery.ts';
import { createOutputCap } from '../spending/output-cap.ts';
import type { PendingRun } from './start.ts';
import type { StepDraft } from './steps.ts';
import type { Run } from './store.ts';
import type { LiveRun } from '../run-events/hub.ts';
import type { ExecutionEventBody } from '../run-events/log.ts';

export interface ExecuteOptions {
  /** Receives each redacted text fragment, in order (streaming), with its sequence in the run's event log. */
  onDelta?: (delta: string, sequence: number) => void | Promise<void>;
  /** Aborting (a graceful shutdown) stops the engine; the run ends `canceled` and what was produced is billed. */
  signal?: AbortSignal;
  /**
   * Aborted when the client left (its stream dropped): the run goes on for `streamResumeMs`, and is
   * canceled then (as by `signal`) unless someone follows its events (GET /runs/{run_id}/events).
   */
  left?: AbortSignal;
}

export interface RunOutcome {
  run: Run;
  answeredBy: string;
  /** The answer, redacted (equal to the concatenated fragments). */
  content: string;
  usage: TokenUsage;
  /** The sequence of the run's terminal event in its event log (run-events/log.ts); absent for a replayed outcome. */
  lastSequence?: number;
}

export async function executeRun(ctx: RunContext, run: PendingRun, options: ExecuteOptions = {}): Promise<RunOutcome> {
  const execution = beginExecution(ctx, run, options);
  const produced = await driveEngine(ctx, run, execution, options);
  const reported = produced.usage ?? (await producedUsage(run, produced.raw, produced.failure));
  const billed = withinReservation(run, reported, produced.cut);
  const { failure } = produced;
  if (failure !== undefined && !(failure instanceof EngineError)) ctx.logError?.(failure);
  const ending = endingOf(run, failure, billed, produced.cut);
  const content = ctx.redactor.text(produced.raw);
  const result: RunResult = { ...ending, usage: billed, reported, content, steps: produced.steps, log: execution.log.executionEvents() };
  const final = await closeExecution(ctx, run, result, execution.log);
  const lastSequence = execution.log.end(final);
  return { run: final, answeredBy: run.answeredBy, content, usage: billed, lastSequence };
}

/** A run executing here: its engine's stop, its event log, and what ends its registration. */
interface Execution {
  controller: AbortController;
  log: LiveRun;
  /** The run no longer executes here: its lease is no longer renewed, the caller's signals no longer heard. */
  done(): void;
}

/**
 * Registers the run as executing here (the heartbeat renews its lease, a cancel stops its engine), begins its
 * event log, and hears the caller's signals: `signal` stops the engine, `left` stops it after `streamResumeMs`
 * unless a reader follows the run.
 */
function beginExecution(
  ctx: Pick<ExecuteContext, 'clock' | 'executing' | 'heartbeat' | 'runEvents' | 'streamResumeMs'>,
  run: PendingRun,
  options: ExecuteOptions,
): Execution {
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) controller.abort();
  ctx.executing.set(run.runId, controller);
  ctx.heartbeat.start();
  // The run's event log while it executes (run-events/hub.ts); the closing statement stores it.
  const log = ctx.runEvents.begin(run.runId, run.recoveries > 0 ? { attempt: run.recoveries, at: ctx.clock.now() } : undefined);
  const left = () => {
    void log.whenFollowed(ctx.streamResumeMs).then((followed) => {
      if (!followed) controller.abort();
    });
  };
  options.left?.addEventListener('abort', left, { once: true });
  return {
    controller,
    log,
    done() {
      ctx.executing.delete(run.runId);
      options.signal?.removeEventListener('abort', abort);
      options.left?.removeEventListener('abort', left);
    },
  };
}

/** What the engine produced: the raw text within the output cap, its usage report, the steps, and its failure. */
interface Produced {
  raw: string;
  usage: TokenUsage | undefined;
  /** Undefined when the engine completed. */
  failure: unknown;
  /** The text was cut at the output cap. */
  cut: boolean;
  steps: StepDraft[];
}

/**
 * Drives the engine of the run's alias: each text fragment through the output cap and the stream redactor to
 * `onDelta`, each other event into the log and the steps. Never throws: a failure is in the answer.
 */
async function driveEngine(
  ctx: Pick<ExecuteContext, 'clock' | 'engines' | 'redactor'>,
  run: PendingRun,
  execution: Execution,
  options: ExecuteOptions,
): Promise<Produced> {
  const { controller, log } = execution;
  const { clock, engines, redactor: redact } = ctx;
  const record = (body: ExecutionEventBody) => log.push(body, clock.now());
  const fragment = async (out: string) => {
    const sequence = record({ type: 'text.delta', delta: out });
    if (options.onDelta) await options.onDelta(out, sequence);
  };

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
        if (event.type === 'text') {
          const passed = cap.push(event.delta);
          raw += passed;
          const out = redactor.push(passed);
          if (out !== '') await fragment(out);
          // Stop the engine: what it would still produce can be neither delivered nor billed.
          if (cap.cut) controller.abort();
        } else if (event.type === 'usage') {
          usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
        } else {
          record(logEventOf(event, redact));
          steps.push(stepOf(event, run.answeredBy));
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
    if (rest !== '') await fragment(rest);
  } catch (err) {
    failure = err;
  } finally {
    execution.done();
  }
  return { raw, usage, failure, cut: cap.cut, steps };
}

/** An engine event that is neither text nor usage. */
type StepEvent = Extract<EngineEvent, { type: 'tool_call' | 'draft' | 'approval_request' }>;

/** The event log's record of a step, redacted (the log is read by clients). */
function logEventOf(event: StepEvent, redact: Redactor): ExecutionEventBody {
  switch (event.type) {
    case 'tool_call':
      return { type: 'tool.called', name: redact.text(event.name), summary: redact.text(`Called ${event.name}.`) };
    case 'draft':
      return { type: 'draft.created', kind: event.kind, subject: redact.text(event.subject) };
    case 'approval_request':
      return { type: 'approval.requested', action: redact.text(event.action), summary: redact.text(event.summary) };
  }
}

/** The step an engine event records (redacted when it is stored, steps.ts). */
function stepOf(event: StepEvent, agentSlug: string): StepDraft {
  switch (event.type) {
    case 'tool_call':
      return {
        kind: 'tool_call',
        agentSlug,
        summary: `Called ${event.name}.`,
        toolCall: { name: event.name, arguments: { ...event.arguments }, result: event.result, status: 'completed' },
      };
    case 'draft':
      return {
        kind: 'draft',
        agentSlug,
        summary: `Wrote a draft ${event.kind}: ${event.subject}`,
        draft: { kind: event.kind, subject: event.subject, body: event.body },
      };
    case 'approval_request':
      return {
        kind: 'approval',
        agentSlug,
        summary: `Asked for approval: ${event.summary}`,
        toolCall: { name: event.action, arguments: { summary: event.summary }, result: null, status: 'pending_approval' },
        approval: { action: event.action, summary: event.summary },
      };
  }
}

/** How the run ends: failed (and why), canceled, crossed a spending limit at its cap, or completed. */
function endingOf(run: PendingRun, failure: unknown, billed: TokenUsage, cut: boolean): Pick<RunResult, 'reason' | 'crossed' | 'canceled'> {
  let reason: string | null = null;
  let crossed: SpendingScope | null = null;
  let canceled = false;
  if (failure !== undefined) {
    if (failure instanceof EngineError && failure.reason === 'aborted') canceled = true;
    else reason = failure instanceof EngineError ? failure.reason : 'internal_error';
  } else if (run.limitedBy && (cut || billed.outputTokens >= run.outputCap)) {
    // The output was cut at the budget's edge: the run would have gone over the limit.
    crossed = run.limitedBy;
    reason = killSwitchReason(crossed);
  }
  // (The manual switch, turned on while the run executed, is checked by the closing statement.)
  return { reason, crossed, canceled };
}

/**
 * Closes the run (close.ts). When the closing transaction fails (the store refused a write, or is down), ends it
 * with a smaller one, so it is never left in progress (if even that fails, its lease is no longer renewed and the
 * sweeper ends it), and rethrows.
 */
async function closeExecution(ctx: RunContext, run: PendingRun, result: RunResult, log: LiveRun): Promise<Run> {
  try {
    return await closeRun(ctx, run, result);
  } catch (err) {
    const { db, clock, budget } = ctx;
    // Readers here get the end the store will show (the smaller close below, or the sweeper's).
    log.end({ ...pendingView(run, clock.now()), status: 'failed', failureReason: 'internal_error' });
    ctx.logError?.(err);
    await endRun(db, clock.now(), { workspaceId: run.workspaceId, runId: run.runId, reason: 'internal_error', limits: budget.limits }).catch((again: unknown) =>
      ctx.logError?.(again),
    );
    throw err;
  }
}

/** A run that could not be closed, as its log's tail shows it: nothing billed. */
function pendingView(run: PendingRun, now: Date) {
  const at = now.toISOString();
  return { id: run.runId, usage: { inputTokens: 0, outputTokens: 0, stu: 0 }, completedAt: at, updatedAt: at };
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
