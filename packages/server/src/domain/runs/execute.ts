/**
 * @module Executing a started run: its lifecycle around the agent loop (domain/agent-loop), which
 * makes the model calls and the tool calls (each text fragment through the stream redactor to
 * `onDelta`) and records the steps; then the run closes `completed`, `failed` (redacted reason) or
 * `canceled` with its usage, budgets, conversation turns and events in one statement (close.ts).
 * It never throws for an engine failure; a closing transaction that fails ends the run with a
 * smaller one (or the sweeper does) and rethrows.
 */
import { countModelInputTokens, EngineError, type TokenUsage } from '../../engine/index.ts';
import {
  continueAgentLoop,
  initialLoopState,
  nextCallInput,
  type LoopIO,
  type LoopOutcome,
  type LoopRun,
  type LoopState,
  routedToOf,
} from '../agent-loop/index.ts';
import type { Tracer } from '@opentelemetry/api';
import { failSpan, inSpan, tracer } from '../../tracing/index.ts';
import { invokeAgentSpan } from '../../tracing/gen-ai.ts';
import { type CheckpointState, savedRunOf } from './checkpoint-state.ts';
import { pauseRun } from './pause.ts';
import { killSwitchReason, type SpendingScope } from '../usage/index.ts';
import { closeRun, type RunResult } from './close.ts';
import type { ExecuteContext, RunContext } from './context.ts';
import { routeExecutingRun } from './queries/run-row.ts';
import { endRun } from './recovery.ts';
import type { PendingRun } from './start.ts';
import { type StepDraft, withUnmadeCalls } from './steps.ts';
import type { Run } from './store.ts';
import type { LiveRun } from '../run-events/hub.ts';

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
  /** Told the milliseconds of each model call and tool call (agent-loop/loop.ts `LoopIO.waited`). */
  onWait?: (ms: number) => void;
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
  return endExecution(ctx, run, execution, await driveLoop(ctx, run, execution, options, initialLoopState()));
}

/**
 * Ends what the loop produced: a run whose loop stopped at a call that needs a person's decision pauses
 * (pause.ts: what it spent is settled, the run waits holding nothing); any other closes (close.ts), as does one
 * whose pause the store refused (`failed`, `internal_error`).
 */
export async function endExecution(ctx: RunContext, run: PendingRun, execution: Execution, produced: Produced): Promise<RunOutcome> {
  let refused: Error | undefined;
  if (produced.state.waiting !== null && produced.failure === undefined) {
    // A pause the store refused wrote nothing: the run did not do what it was asked (its call waits for no one), so it
    // closes `failed` (`internal_error`, the error logged below) with what it produced billed, its call never made.
    const paused = await pauseExecution(ctx, run, execution, produced.state).catch((err: unknown) => {
      refused = err instanceof Error ? err : new Error(String(err));
      return undefined;
    });
    if (paused) return paused;
  }
  const { reported } = produced;
  const answered = answeredIn(run, produced.state);
  const failure = refused ?? produced.failure;
  const billed = withinReservation(run, produced.billed);
  if (failure !== undefined && !(failure instanceof EngineError)) ctx.logError?.(failure);
  const ending = endingOf(run, failure, billed, produced.cut);
  const content = ctx.redactor.text(produced.raw);
  // A call that waited for the refused pause was never made, and its step says so.
  const steps = refused ? withUnmadeCalls(produced.steps) : produced.steps;
  const result: RunResult = { ...ending, usage: billed, reported, content, steps, log: execution.log.executionEvents() };
  const final = await closeExecution(ctx, answered, result, execution.log);
  const lastSequence = execution.log.end(final);
  return { run: final, answeredBy: answered.answeredBy, content, usage: billed, lastSequence };
}

/**
 * Pauses the run at its waiting call (pause.ts): the loop's state and what the run needs to go on are checkpointed,
 * what it spent is settled, and its log ends at `approval.requested`. Undefined when the run is no longer this
 * execution's (canceled meanwhile): it closes as usual.
 */
async function pauseExecution(ctx: RunContext, run: PendingRun, execution: Execution, state: LoopState): Promise<RunOutcome | undefined> {
  const waiting = state.waiting!;
  const usage = withinReservation(run, state.billed);
  // The steps so far are written by the pause (a waiting run shows them); the checkpoint keeps the loop without them.
  const steps = [...run.steps, ...state.steps];
  const firstStepIndex = run.firstStepIndex ?? 0;
  const checkpoint: CheckpointState = {
    state: { ...state, steps: [] },
    run: { ...savedRunOf(run), steps: [] },
    stepsWritten: firstStepIndex + steps.length,
  };
  const answered = answeredIn(run, state);
  const result = await pauseRun(ctx, {
    run: answered,
    usage,
    approval: { action: waiting.action, summary: waiting.summary, agentSlug: waiting.agentSlug },
    call: { id: waiting.call.id, name: waiting.call.name, arguments: { ...waiting.call.arguments } },
    loopState: checkpoint,
    // The resume reserves for the next model call: its input as the loop will build it (the speaker's instructions
    // and tools, the conversation so far: inside a department's part, the department's), and the output the run asked for.
    next: {
      inputTokens: await countModelInputTokens(ctx.engines[run.alias], await nextCallInput(ctx, run, state)),
      desiredOutput: run.request.maxTokens ?? run.outputCap,
    },
    log: execution.log.executionEvents(),
    steps,
    firstStepIndex,
  });
  if (result.kind !== 'waiting') return undefined;
  execution.log.pause(result.event);
  return { run: result.run, answeredBy: answered.answeredBy, content: ctx.redactor.text(state.text), usage, lastSequence: result.event.sequence };
}

/**
 * The run as it ends or pauses: answered by the department the orchestrator routed it to when it delegated
 * (agent-loop/state.ts `routedToOf`: the one whose part runs, else the last that answered), else by the agent it
 * started with. The same department the run's row names from the handoff on (`loopIO`'s `routed`).
 */
function answeredIn(run: PendingRun, state: LoopState): PendingRun {
  const routed = routedToOf(state);
  return routed === undefined ? run : { ...run, answeredBy: routed };
}

/** A run executing here: its engine's stop, its event log, and what ends its registration. */
export interface Execution {
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
export function beginExecution(
  ctx: Pick<ExecuteContext, 'clock' | 'executing' | 'heartbeat' | 'runEvents' | 'streamResumeMs'>,
  run: PendingRun,
  options: ExecuteOptions,
  resumed?: { after: number },
): Execution {
  const controller = new AbortController();
  const abort = () => controller.abort();
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) controller.abort();
  ctx.executing.set(run.runId, controller);
  ctx.heartbeat.start();
  // The run's event log while it executes (run-events/hub.ts); the closing statement stores it.
  const log = ctx.runEvents.begin(run.runId, run.recoveries > 0 ? { attempt: run.recoveries, at: ctx.clock.now() } : undefined, resumed);
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

/** What the loop produced: the raw text within the caps, its usage, the steps, and its failure. */
export interface Produced {
  raw: string;
  /** Billed within the reservation, step by step. */
  billed: TokenUsage;
  reported: TokenUsage;
  /** Undefined when the loop ended with an answer. */
  failure: unknown;
  /** The loop stopped at the output cap or the reservation. */
  cut: boolean;
  steps: StepDraft[];
  /** The loop's state: `waiting` when it stopped at a call that needs a person's decision. */
  state: LoopState;
}

/**
 * Runs the agent loop for the run from `from` (a fresh state, or a resumed one): its text to the log and
 * `onDelta`, its other events to the log. Never throws.
 */
export async function driveLoop(ctx: RunContext, run: PendingRun, execution: Execution, options: ExecuteOptions, from: LoopState): Promise<Produced> {
  try {
    const traces = tracer();
    const { state, failure } = await (traces === undefined
      ? continueAgentLoop(ctx, loopRunOf(run), loopIO(ctx, run, execution, options), from)
      : tracedLoop(traces, ctx, run, loopIO(ctx, run, execution, options), from));
    return { raw: state.text, billed: state.billed, reported: state.reported, failure, cut: state.cut, steps: [...run.steps, ...state.steps], state };
  } finally {
    execution.done();
  }
}

/** The loop inside the run's `invoke_agent` span (traces on): the agent's slug and alias, the tokens the engine reported. */
function tracedLoop(traces: Tracer, ctx: RunContext, run: PendingRun, io: LoopIO, from: LoopState): Promise<LoopOutcome> {
  const { name, kind, attributes } = invokeAgentSpan(run.agentSlug, run.alias);
  return inSpan(traces, name, kind, attributes, async (span) => {
    const outcome = await continueAgentLoop(ctx, loopRunOf(run), io, from);
    span.setAttributes({ 'gen_ai.usage.input_tokens': outcome.state.reported.inputTokens, 'gen_ai.usage.output_tokens': outcome.state.reported.outputTokens });
    if (outcome.failure !== undefined) failSpan(span, outcome.failure);
    return outcome;
  });
}

/** What the loop needs of the run. */
export function loopRunOf(run: PendingRun): LoopRun {
  return {
    workspaceId: run.workspaceId,
    answeredBy: run.answeredBy,
    departments: run.departments,
    request: run.request,
    reservedTokens: run.inputTokens + run.outputCap,
    outputCap: run.outputCap,
  };
}

/**
 * Where the loop's output goes: text to the log and `onDelta`, other events to the log; a handoff to the log
 * (`run.routed`, for those following the run) and to the run's row (its `routedTo`, for those reading it: one
 * statement per handoff, none for a run that does not delegate). A store that refuses that write is logged, not the
 * run's failure: its close or pause writes who answered anyway.
 */
export function loopIO(ctx: Pick<RunContext, 'clock' | 'db' | 'logError'>, run: PendingRun, execution: Execution, options: ExecuteOptions): LoopIO {
  const { controller, log } = execution;
  const { clock, db } = ctx;
  return {
    async routed(department) {
      log.push({ type: 'run.routed', agentSlug: department }, clock.now());
      await routeExecutingRun(db, { runId: run.runId, workspaceId: run.workspaceId, startedAt: run.createdAt }, department, clock.now()).catch((err: unknown) =>
        ctx.logError?.(err),
      );
    },
    signal: controller.signal,
    stream: Boolean(options.onDelta),
    record: (body) => void log.push(body, clock.now()),
    async fragment(out) {
      const sequence = log.push({ type: 'text.delta', delta: out }, clock.now());
      if (options.onDelta) await options.onDelta(out, sequence);
    },
    ...(options.onWait ? { waited: options.onWait } : {}),
  };
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
 * What a run is billed: at most the tokens its reservation holds (the input estimate plus the
 * output cap), so the charge never exceeds the reservation whatever the engine reports. The loop
 * bills each step within what was left (agent-loop/loop.ts); this is the run's last guard.
 */
function withinReservation(run: PendingRun, billed: TokenUsage): TokenUsage {
  const outputTokens = Math.min(billed.outputTokens, run.outputCap);
  return { inputTokens: Math.min(billed.inputTokens, run.inputTokens + run.outputCap - outputTokens), outputTokens };
}
