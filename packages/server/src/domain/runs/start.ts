/**
 * @module Starting a run: the checks (agent, plan, alias, scope) on the workspace's settings held in
 * memory, the routing step, then one statement (budget.ts `reserveRun`) that replays an idempotent
 * request, or refuses, or reserves the worst case on the period, hour and day budgets and inserts
 * the run row (or adopts an inbound run's); or a run that crossed a spending limit before the
 * engine was called, ended `failed` at once.
 */
import type { EngineMessage, EngineRequest, Effort, PowerMode } from '../../engine/index.ts';
import type { Db } from '../../store/db.ts';
import { countModelInputTokens } from '../../engine/index.ts';
import { firstCallInput } from '../agent-loop/index.ts';
import { newId } from '../../random.ts';
import type { Alias } from '../../vocabulary/alias.ts';
import { assertAgentAvailable, routingCandidates, type WorkspaceAgents } from '../agents/availability.ts';
import { fail, retryHints } from '../../errors.ts';
import { type DepartmentSlug, ORCHESTRATOR_SLUG } from '../../vocabulary/catalog.ts';
import { mayInvokeAgent } from '../keys/index.ts';
import { routeRequest } from '../../vocabulary/router.ts';
import { killSwitchReason, type SpendingScope } from '../usage/index.ts';
import { assertAliasInPlan, assertMayInvokeAgent } from './access.ts';
import { reserveRun, type Reservation, type RunToStart, type Windows } from '../spending/budget.ts';
import { runFailedEvent } from './events.ts';
import { claimKey, claimLost, findClaim, IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from './idempotency.ts';
import type { RunContext } from './context.ts';
import { runEnded } from './run-hooks.ts';
import { writeSteps, type StepDraft } from './steps.ts';
import { failWaitingRunAtOnce, insertFailedRun } from './queries/run-row.ts';
import { readRunRecord, toRun, type Run, type RunSource } from './store.ts';
import { requestPreview } from './request-preview.ts';

/** Output tokens reserved for a request that sets no `maxTokens` (and the cap given to the engine). */
export const DEFAULT_OUTPUT_TOKENS = 4096;

export interface RunInput {
  workspaceId: string;
  /** Target agent; the orchestrator (which routes) by default. */
  agentSlug?: string | undefined;
  alias: Alias;
  /** The new messages of this invocation (earlier turns of `conversationId` are added before them). */
  messages: readonly EngineMessage[];
  source: RunSource;
  conversationId?: string | undefined;
  maxTokens?: number | undefined;
  effort?: Effort | undefined;
  powerMode?: PowerMode | undefined;
  /** The credential's scopes; undefined for a run the service starts itself (no agent scope check). */
  scopes?: readonly string[] | undefined;
  idempotency?: IdempotencyClaim | undefined;
  /**
   * A run row that already exists `in_progress` (inserted by inbound ingestion, so the sender got its
   * id at once). The run service adopts it instead of inserting one.
   */
  existingRunId?: string | undefined;
  /** How many times that run was handed over again after its instance stopped (`runs.recoveries`); 0 or absent for a first execution. */
  recoveries?: number | undefined;
}

/** A run that is `in_progress`, ready for `execute`. */
export interface PendingRun {
  readonly runId: string;
  readonly workspaceId: string;
  readonly agentSlug: string;
  /**
   * The agent that answers: the target, or the department the orchestrator routed to (or the orchestrator itself,
   * which delegates as the run goes: `departments`; execute.ts records who answered when the run ends or pauses).
   */
  readonly answeredBy: string;
  /** The departments the orchestrator may delegate to on a real model (agent-loop/handoff.ts); absent otherwise. */
  readonly departments?: readonly string[] | undefined;
  readonly alias: Alias;
  readonly source: RunSource;
  /** The workspace's quota in STU per period (the plan's, or the operator's override). */
  readonly quotaStu: number;
  readonly request: Omit<EngineRequest, 'signal' | 'stream'>;
  readonly newMessages: readonly EngineMessage[];
  readonly conversationId: string | null;
  readonly windows: Windows;
  readonly reservedStu: number;
  /** Input tokens the reservation counted (our estimate): the most a run's input is billed. */
  readonly inputTokens: number;
  /** Output tokens the reservation holds: the most a run's output is billed, and where it is cut. */
  readonly outputCap: number;
  readonly limitedBy: SpendingScope | null;
  readonly createdAt: Date;
  /** Steps recorded before the engine was called (the routing step). */
  readonly steps: readonly StepDraft[];
  /** Steps an earlier execution already wrote (a run resumed after a pause): this one's are numbered after them. */
  readonly firstStepIndex?: number;
  /** An inbound run handed over again after its instance stopped: how many times (its event log restarts). */
  readonly recoveries: number;
}

export type StartResult =
  | { kind: 'started'; run: PendingRun }
  /** The request repeats an Idempotency-Key: the first request's run (possibly still in progress). */
  | { kind: 'replay'; runId: string }
  /** The run crossed a spending limit before the engine was called: it is already `failed`. */
  | { kind: 'ended'; run: Run; answeredBy: string };

/** Thrown inside the transaction that fails a run at once when a concurrent retry claimed the key first. */
class ClaimLost extends Error {}
/** Thrown inside that transaction when the run to adopt is no longer waiting. */
class RunGone extends Error {}

export async function startRun(ctx: RunContext, input: RunInput): Promise<StartResult> {
  const { db, clock, budget, leaseMs } = ctx;
  const now = clock.now();
  const target = input.agentSlug ?? ORCHESTRATOR_SLUG;
  const settings = await ctx.agentSettings(input.workspaceId);
  try {
    assertAgentAvailable(target, settings);
    assertMayInvokeAgent(input.scopes, target);
    assertAliasInPlan(settings.plan, input.alias);
  } catch (refusal) {
    // A retry answers the first result whatever changed since (the contract's Idempotency-Key): the
    // claim is only looked up here, on the way to a refusal, so the usual path stays one statement.
    const replayed = input.idempotency ? await findClaim(db, input.idempotency, now) : null;
    if (replayed) return { kind: 'replay', runId: replayed };
    throw refusal;
  }

  const desiredOutput = input.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  const runId = input.existingRunId ?? newId('run');
  // The one round trip before the engine: checks, reservation and the run's row (spending/budget.ts).
  const reserve = (p: Prepared) =>
    reserveOrReplay(db, {
      workspaceId: input.workspaceId,
      runId,
      adopt: input.existingRunId !== undefined,
      now,
      leaseUntil: new Date(now.getTime() + leaseMs),
      agentSlug: target,
      answeredBy: p.answeredBy,
      alias: input.alias,
      source: input.source,
      conversationId: input.conversationId ?? null,
      conversationTurns: p.conversationTurns,
      requestPreview: requestPreview(input.messages),
      quotaStu: settings.quotaStu,
      inputTokens: p.inputTokens,
      desiredOutput,
      settings: budget,
      idempotency: input.idempotency && { ...input.idempotency, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) },
    });
  // The earlier turns come from memory; start_runs refuses a copy that is behind the store, and
  // then the thread is read again (a few times at most: each retry reads it from the store).
  let prepared = await prepare(ctx, input, target, settings);
  let reservation = await reserve(prepared);
  for (let retry = 0; reservation.outcome === 'stale_history' && retry < MAX_STALE_RETRIES; retry += 1) {
    ctx.conversations.forget(input.workspaceId, input.conversationId!);
    prepared = await prepare(ctx, input, target, settings);
    reservation = await reserve(prepared);
  }
  const { messages, steps, answeredBy, departments, inputTokens } = prepared;
  switch (reservation.outcome) {
    case 'replay':
      return { kind: 'replay', runId: reservation.runId };
    case 'gone':
      // Canceled before it could start, or already taken over: nothing to run.
      return { kind: 'ended', run: toRun(await readRunRecord(db, input.workspaceId, runId)), answeredBy };
    case 'stale_history':
      // Other runs kept adding to the thread while this one read it again and again: retry shortly.
      throw fail('service_unavailable', 'The conversation changed while this invocation started; retry.', {}, retryHints(1000, true));
    case 'crossed':
      return failAtOnce(ctx, input, { runId, target, answeredBy, steps, now, windows: reservation.windows, crossed: reservation.scope });
    case 'started':
      break;
  }
  const run: PendingRun = {
    runId,
    workspaceId: input.workspaceId,
    agentSlug: target,
    answeredBy,
    ...(departments ? { departments } : {}),
    alias: input.alias,
    source: input.source,
    quotaStu: settings.quotaStu,
    request: {
      alias: input.alias,
      agentSlug: answeredBy,
      messages,
      maxTokens: reservation.outputCap,
      ...(input.effort ? { effort: input.effort } : {}),
      ...(input.powerMode ? { powerMode: input.powerMode } : {}),
    },
    newMessages: input.messages,
    conversationId: input.conversationId ?? null,
    windows: reservation.windows,
    reservedStu: reservation.reservedStu,
    inputTokens,
    outputCap: reservation.outputCap,
    limitedBy: reservation.limitedBy,
    createdAt: now,
    steps,
    recoveries: input.recoveries ?? 0,
  };
  return { kind: 'started', run };
}

/**
 * `reserveRun`, and when a concurrent retry claimed the idempotency key first (the statement then
 * undid everything), that retry's run as a replay.
 */
async function reserveOrReplay(db: Db, run: RunToStart): Promise<Reservation> {
  try {
    return await reserveRun(db, run);
  } catch (err) {
    if (run.idempotency && claimLost(err)) {
      const claimed = await findClaim(db, run.idempotency, run.now);
      if (claimed) return { outcome: 'replay', runId: claimed };
    }
    throw err;
  }
}

/** Reads of a conversation that changed under an invocation before it gives up. */
const MAX_STALE_RETRIES = 3;

/** What an invocation gives the engine and reserves for: the thread and its new messages, routed and counted. */
interface Prepared {
  messages: EngineMessage[];
  steps: StepDraft[];
  answeredBy: string;
  /** The departments the orchestrator delegates to as the run goes (a real model chooses), or undefined. */
  departments?: DepartmentSlug[];
  inputTokens: number;
  /** The thread's length the messages were built from (null without a conversation). */
  conversationTurns: number | null;
}

async function prepare(ctx: RunContext, input: RunInput, target: string, settings: WorkspaceAgents): Promise<Prepared> {
  const thread = input.conversationId ? await ctx.conversations.earlierTurns(input.workspaceId, input.conversationId) : null;
  const messages = [...(thread?.turns ?? []), ...input.messages];
  const steps: StepDraft[] = [];
  let answeredBy = target;
  let departments: DepartmentSlug[] | undefined;
  if (target === ORCHESTRATOR_SLUG) {
    // What the plan offers and no pause holds, and what the key may invoke: the orchestrator reaches nothing else.
    const candidates = routingCandidates(settings).filter((slug) => input.scopes === undefined || mayInvokeAgent(input.scopes, slug));
    if (candidates.length > 0 && ctx.engines[input.alias].delegates) {
      // A real model chooses as the run goes (agent-loop/loop.ts); the keyword router is its fallback there.
      departments = candidates;
    } else if (candidates.length > 0) {
      const decision = routeRequest(messages, { candidates });
      answeredBy = decision.agentSlug;
      steps.push({ kind: 'routing', agentSlug: ORCHESTRATOR_SLUG, summary: decision.rationale });
    } else {
      steps.push({ kind: 'routing', agentSlug: ORCHESTRATOR_SLUG, summary: 'No department is available; the orchestrator answered itself.' });
    }
  }
  // The first model call's whole input, as the loop builds it and the engine reads it: the conversation and the
  // answering agent's instructions and tool definitions (the orchestrator's handoffs too), from memory. Counting
  // pauses for the event loop (a request may hold megabytes of text); the instructions' and the definitions' counts
  // are kept (engine/model-input.ts).
  const firstCall = await firstCallInput(ctx, { workspaceId: input.workspaceId, answeredBy, departments, request: { messages } });
  const inputTokens = await countModelInputTokens(ctx.engines[input.alias], firstCall);
  return { messages, steps, answeredBy, ...(departments ? { departments } : {}), inputTokens, conversationTurns: thread?.length ?? null };
}

/**
 * A run that crossed a limit before the engine was called (rare: a window spent to its edge): it is
 * recorded `failed` at once, with its steps, its idempotency claim and its `run.failed` event, in
 * one transaction. Nothing was reserved and nothing is billed.
 */
async function failAtOnce(
  ctx: RunContext,
  input: RunInput,
  run: { runId: string; target: string; answeredBy: string; steps: StepDraft[]; now: Date; windows: Windows; crossed: SpendingScope },
): Promise<StartResult> {
  const { db, clock } = ctx;
  const { runId, now } = run;
  const reason = killSwitchReason(run.crossed);
  try {
    return await db.transaction(async (tx) => {
      const failed = {
        runId,
        workspaceId: input.workspaceId,
        agentSlug: run.target,
        answeredBy: run.answeredBy,
        alias: input.alias,
        source: input.source,
        conversationId: input.conversationId ?? null,
        requestPreview: requestPreview(input.messages),
        reason,
        windows: run.windows,
        now,
      };
      if (input.existingRunId) {
        if (!(await failWaitingRunAtOnce(tx, failed))) throw new RunGone();
      } else {
        await insertFailedRun(tx, failed);
      }
      if (input.idempotency && !(await claimKey(tx, input.idempotency, input.workspaceId, runId, now))) throw new ClaimLost();
      await writeSteps(tx, runId, run.steps, now, undefined, ctx.redactor);
      await runEnded(tx, { runId, workspaceId: input.workspaceId, source: input.source });
      await runFailedEvent(tx, now, { workspaceId: input.workspaceId, runId, agent: run.target, reason });
      return { kind: 'ended' as const, run: toRun(await readRunRecord(tx, input.workspaceId, runId)), answeredBy: run.answeredBy };
    });
  } catch (err) {
    if (err instanceof RunGone) return { kind: 'ended', run: toRun(await readRunRecord(db, input.workspaceId, runId)), answeredBy: run.answeredBy };
    if (err instanceof ClaimLost && input.idempotency) {
      const claimed = await findClaim(db, input.idempotency, clock.now());
      if (claimed) return { kind: 'replay', runId: claimed };
    }
    throw err;
  }
}
