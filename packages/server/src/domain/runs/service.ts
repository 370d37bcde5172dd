/**
 * @module The run service: creates a run (`in_progress`), routes it through the orchestrator,
 * calls the engine of the alias, and ends it `completed`, `failed` (redacted reason) or `canceled`,
 * with its steps, tool calls, drafts, approvals, usage, budgets and outbox events written in one
 * closing transaction. Terminal states never change.
 *
 * Two phases, so a handler can answer errors as JSON before a stream begins:
 *   start(input)  -> checks (agent, plan, alias, kill switches, quota), reserves the budget and
 *                    inserts the run; or replays an idempotent request; or a run that crossed a
 *                    limit before the engine was called (already `failed`).
 *   execute(run)  -> drives the engine (each text fragment through the stream redactor to
 *                    `onDelta`) and closes the run. It never throws for an engine failure.
 * `createRun` does both in the background, for runs started by an inbound webhook.
 */
import type { Clock } from '../../clock.ts';
import {
  countMessageTokens,
  countTextTokens,
  EngineError,
  type DraftKind,
  type EngineMessage,
  type EngineRequest,
  type Effort,
  type Engines,
  type PowerMode,
  type TokenUsage,
} from '../../engine/index.ts';
import { ServiceError } from '../../errors.ts';
import { newId } from '../../random.ts';
import { createStreamRedactor, redactText, redactValue } from '../../redact/index.ts';
import type { Db } from '../../store/db.ts';
import type { Alias } from '../agents/alias.ts';
import { assertAgentAvailable, routingCandidates } from '../agents/availability.ts';
import { getAgent, ORCHESTRATOR_SLUG } from '../agents/catalog.ts';
import { routeRequest } from '../agents/router.ts';
import { workspaceAgents } from '../agents/settings.ts';
import { PLANS, type PlanName } from '../agents/plans.ts';
import { killSwitchReason, stuForRun, type SpendingScope } from '../usage/index.ts';
import { assertAliasInPlan, assertMayInvokeAgent } from './access.ts';
import { manualSwitchSince, reserveBudget, settleBudget, type BudgetSettings, type Windows } from './budget.ts';
import { endRun, forgetInboundInput, RUN_LEASE_MS } from './recovery.ts';
import { appendTurns, earlierTurns } from './conversation.ts';
import { approvalCreatedEvent, draftCreatedEvent, runCompletedEvent, runFailedEvent } from './events.ts';
import { claimKey, findClaim, type IdempotencyClaim } from './idempotency.ts';
import { listRunRows, readRunDetail, readRunRow, toRun, type Run, type RunDetail, type RunFilters, type RunList, type RunSource } from './store.ts';
import { chargeUsage, ensurePeriod } from './usage-store.ts';

/** Output tokens reserved for a request that sets no `maxTokens` (and the cap given to the engine). */
export const DEFAULT_OUTPUT_TOKENS = 4096;
/** How long an approval request waits for a decision. */
export const APPROVAL_TTL_MS = 72 * 60 * 60 * 1000;

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
}

/** A run that is `in_progress`, ready for `execute`. */
export interface PendingRun {
  readonly runId: string;
  readonly workspaceId: string;
  readonly agentSlug: string;
  /** The agent that answers: the target, or the department the orchestrator routed to. */
  readonly answeredBy: string;
  readonly alias: Alias;
  readonly plan: PlanName;
  readonly request: Omit<EngineRequest, 'signal' | 'stream'>;
  readonly newMessages: readonly EngineMessage[];
  readonly conversationId: string | null;
  readonly windows: Windows;
  readonly reservedStu: number;
  readonly outputCap: number;
  readonly limitedBy: SpendingScope | null;
  readonly createdAt: Date;
  /** Steps recorded before the engine was called (the routing step). */
  readonly steps: readonly StepDraft[];
}

export type StartResult =
  | { kind: 'started'; run: PendingRun }
  /** The request repeats an Idempotency-Key: the first request's run (possibly still in progress). */
  | { kind: 'replay'; runId: string }
  /** The run crossed a spending limit before the engine was called: it is already `failed`. */
  | { kind: 'ended'; run: Run; answeredBy: string };

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

export interface RunService {
  start(input: RunInput): Promise<StartResult>;
  execute(run: PendingRun, options?: ExecuteOptions): Promise<RunOutcome>;
  /**
   * Starts a run in the background (inbound webhooks): the same checks as an invocation, then the
   * engine runs detached. Resolves with the run id once the run exists (`in_progress`, or already
   * `failed` when it crossed a spending limit); rejects with the ServiceError of a refused run.
   */
  createRun(input: RunInput): Promise<{ runId: string }>;
  /** Resolves once the run is terminal (polling the store), or with its current state after `timeoutMs`. */
  waitForTerminal(workspaceId: string, runId: string, timeoutMs?: number): Promise<Run>;
  getRun(workspaceId: string, runId: string): Promise<RunDetail>;
  listRuns(workspaceId: string, filters: RunFilters): Promise<RunList>;
  /** `in_progress` → `canceled`; a terminal run is answered unchanged. */
  cancelRun(workspaceId: string, runId: string): Promise<Run>;
  /** The department that answered a run (the target, or where the orchestrator routed it). */
  answeredBy(workspaceId: string, runId: string): Promise<string>;
}

export interface RunServiceDeps {
  db: Db;
  clock: Clock;
  engines: Engines;
  budget: BudgetSettings;
  /** Failures of background runs that could not even be closed (the store is down). */
  logError?: (error: unknown) => void;
  /**
   * Lease of a run being executed (RUN_LEASE_MS, 60 s by default). This instance renews it every
   * quarter of it; a run whose lease ran out is swept (see ./recovery.ts).
   */
  leaseMs?: number;
}

interface StepDraft {
  kind: 'routing' | 'model_call' | 'tool_call' | 'draft' | 'approval';
  agentSlug: string;
  summary: string;
  toolCall?: { name: string; arguments: Record<string, unknown>; result: string | null; status: 'completed' | 'failed' | 'pending_approval' };
  draft?: { kind: DraftKind; subject: string; body: string };
  approval?: { action: string; summary: string };
}

/** Thrown inside the creation transaction when a concurrent retry claimed the key first. */
class ClaimLost extends Error {}
/** Thrown inside the transaction that adopts an existing run that is no longer in progress. */
class RunGone extends Error {}

const POLL_MS = 50;

export function createRunService(deps: RunServiceDeps): RunService {
  const { db, clock, engines, budget } = deps;
  const leaseMs = deps.leaseMs ?? RUN_LEASE_MS;
  // Runs executing in this process, so a cancel can stop the engine at once.
  const executing = new Map<string, AbortController>();
  const heartbeat = createHeartbeat();

  async function start(input: RunInput): Promise<StartResult> {
    const now = clock.now();
    if (input.idempotency) {
      const runId = await findClaim(db, input.idempotency, now);
      if (runId) return { kind: 'replay', runId };
    }
    const target = input.agentSlug ?? ORCHESTRATOR_SLUG;
    const settings = await workspaceAgents(db, input.workspaceId);
    assertAgentAvailable(target, settings);
    assertMayInvokeAgent(input.scopes, target);
    assertAliasInPlan(settings.plan, input.alias);

    const history = input.conversationId ? await earlierTurns(db, input.workspaceId, input.conversationId) : [];
    const messages = [...history, ...input.messages];
    const steps: StepDraft[] = [];
    let answeredBy = target;
    if (target === ORCHESTRATOR_SLUG) {
      const candidates = routingCandidates(settings);
      if (candidates.length > 0) {
        const decision = routeRequest(messages, { candidates });
        answeredBy = decision.agentSlug;
        steps.push({ kind: 'routing', agentSlug: ORCHESTRATOR_SLUG, summary: decision.rationale });
      } else {
        steps.push({ kind: 'routing', agentSlug: ORCHESTRATOR_SLUG, summary: 'No department is available; the orchestrator answered itself.' });
      }
    }

    const inputTokens = countMessageTokens(messages);
    const desiredOutput = input.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
    const runId = input.existingRunId ?? newId('run');
    try {
      return await db.transaction(async (tx) => {
        const period = await ensurePeriod(tx, input.workspaceId, now, settings.plan);
        const reservation = await reserveBudget(tx, {
          workspaceId: input.workspaceId,
          now,
          alias: input.alias,
          inputTokens,
          desiredOutput,
          settings: budget,
          quota: { allowanceStu: PLANS[settings.plan].quotaStu + period.rolloverStu },
        });
        const reserved = reservation.ok ? reservation.reservedStu : 0;
        const leaseUntil = new Date(now.getTime() + leaseMs);
        if (input.existingRunId) {
          const adopted = await tx.query(
            `UPDATE runs SET answered_by = $3, conversation_id = $4, reserved_stu = $5, window_hour = $6, window_day = $7,
                             updated_at = $8, started_at = $8, lease_until = $9
              WHERE id = $1 AND workspace_id = $2 AND status = 'in_progress' AND started_at IS NULL RETURNING 1`,
            [runId, input.workspaceId, answeredBy, input.conversationId ?? null, reserved, reservation.windows.hour, reservation.windows.day, now, leaseUntil],
          );
          // Canceled before it could start, or already taken over: nothing to run; the reservation rolls back.
          if (adopted.length === 0) throw new RunGone();
        } else {
          await tx.query(
            `INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, conversation_id,
                               reserved_stu, window_hour, window_day, created_at, updated_at, started_at, lease_until)
             VALUES ($1, $2, 'in_progress', $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11, $12)`,
            [runId, input.workspaceId, target, answeredBy, input.alias, input.source, input.conversationId ?? null, reserved,
              reservation.windows.hour, reservation.windows.day, now, leaseUntil],
          );
        }
        if (input.idempotency && !(await claimKey(tx, input.idempotency, input.workspaceId, runId, now))) throw new ClaimLost();
        if (!reservation.ok) {
          // Crossed before any token was produced: the run fails at once and nothing is billed.
          const reason = killSwitchReason(reservation.crossed);
          await writeSteps(tx, runId, steps, now);
          await tx.query(
            `UPDATE runs SET status = 'failed', failure_reason = $2, updated_at = $3, completed_at = $3, lease_until = NULL WHERE id = $1`,
            [runId, reason, now],
          );
          if (input.existingRunId) await forgetInboundInput(tx, runId);
          await runFailedEvent(tx, now, { workspaceId: input.workspaceId, runId, agent: target, reason });
          return { kind: 'ended' as const, run: toRun(await readRunRow(tx, input.workspaceId, runId)), answeredBy };
        }
        const run: PendingRun = {
          runId,
          workspaceId: input.workspaceId,
          agentSlug: target,
          answeredBy,
          alias: input.alias,
          plan: settings.plan,
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
          outputCap: reservation.outputCap,
          limitedBy: reservation.limitedBy,
          createdAt: now,
          steps,
        };
        return { kind: 'started' as const, run };
      });
    } catch (err) {
      if (err instanceof RunGone) return { kind: 'ended', run: toRun(await readRunRow(db, input.workspaceId, runId)), answeredBy };
      if (err instanceof ClaimLost && input.idempotency) {
        const claimed = await findClaim(db, input.idempotency, clock.now());
        if (claimed) return { kind: 'replay', runId: claimed };
      }
      throw err;
    }
  }

  async function execute(run: PendingRun, options: ExecuteOptions = {}): Promise<RunOutcome> {
    const controller = new AbortController();
    const abort = () => controller.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) controller.abort();
    executing.set(run.runId, controller);
    heartbeat.start();

    const redactor = createStreamRedactor();
    let raw = '';
    let usage: TokenUsage | undefined;
    let failure: unknown;
    const steps: StepDraft[] = [
      ...run.steps,
      { kind: 'model_call', agentSlug: run.answeredBy, summary: `${run.alias} answered as ${getAgent(run.answeredBy)?.name ?? run.answeredBy}.` },
    ];
    try {
      const events = engines[run.alias].stream({ ...run.request, signal: controller.signal, stream: Boolean(options.onDelta) });
      for await (const event of events) {
        switch (event.type) {
          case 'text': {
            raw += event.delta;
            const out = redactor.push(event.delta);
            if (out !== '' && options.onDelta) await options.onDelta(out);
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

    const billed = usage ?? producedUsage(run, raw, failure);
    let reason: string | null = null;
    let crossed: SpendingScope | null = null;
    let canceled = false;
    if (failure !== undefined) {
      if (failure instanceof EngineError && failure.reason === 'aborted') canceled = true;
      else reason = failure instanceof EngineError ? failure.reason : 'internal_error';
      if (!(failure instanceof EngineError)) deps.logError?.(failure);
    } else if (run.limitedBy && billed.outputTokens >= run.outputCap) {
      // The output was cut at the budget's edge: the run would have gone over the limit.
      crossed = run.limitedBy;
      reason = killSwitchReason(crossed);
    } else {
      const manual = await manualSwitchSince(db, run.workspaceId);
      if (manual && manual.getTime() >= run.createdAt.getTime()) reason = killSwitchReason('manual');
    }
    const content = redactText(raw);
    let final: Run;
    try {
      final = await close(run, { reason, canceled, crossed, usage: billed, content, steps });
    } catch (err) {
      // The closing transaction failed (the store refused a write, or is down): end the run with a
      // smaller one, so it is never left in progress. If even that fails, its lease is no longer
      // renewed and the sweeper ends it.
      deps.logError?.(err);
      await endRun(db, clock.now(), { workspaceId: run.workspaceId, runId: run.runId, reason: 'internal_error', limits: budget.limits }).catch(
        (again: unknown) => deps.logError?.(again),
      );
      throw err;
    }
    return { run: final, answeredBy: run.answeredBy, content, usage: billed };
  }

  async function close(
    run: PendingRun,
    result: { reason: string | null; canceled: boolean; crossed: SpendingScope | null; usage: TokenUsage; content: string; steps: StepDraft[] },
  ): Promise<Run> {
    const now = clock.now();
    const stu = stuForRun({ alias: run.alias, ...result.usage }, budget.rates);
    return db.transaction(async (tx) => {
      const row = await readRunRow(tx, run.workspaceId, run.runId, true);
      // This instance stalled past its lease and the run was handed over again (an inbound run after
      // the sweeper): the new execution owns it now; this one records nothing, so nothing is billed twice.
      if (row.started_at?.getTime() !== run.createdAt.getTime()) return toRun(row);
      // A cancel that arrived first wins: terminal states never change, but the tokens are still billed.
      const status = row.status !== 'in_progress' ? row.status : result.canceled ? 'canceled' : result.reason ? 'failed' : 'completed';
      const reason = status === 'failed' ? redactText(row.failure_reason ?? result.reason ?? 'internal_error') : row.failure_reason;
      await tx.query(
        `UPDATE runs SET status = $2, content = $3, failure_reason = $4, input_tokens = $5, output_tokens = $6, stu = $7,
                         reserved_stu = 0, lease_until = NULL, updated_at = $8, completed_at = COALESCE(completed_at, $8)
          WHERE id = $1`,
        [run.runId, status, status === 'completed' ? result.content : null, reason, result.usage.inputTokens, result.usage.outputTokens, stu, now],
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
      if (row.source === 'inbound_webhook') await forgetInboundInput(tx, run.runId);
      await chargeUsage(tx, { workspaceId: run.workspaceId, runId: run.runId, alias: run.alias, ...result.usage, stu, now, plan: run.plan });
      // Drafts and approvals only exist for an answer that was delivered.
      const steps = status === 'completed' ? result.steps : result.steps.filter((s) => !s.draft && !s.approval);
      await writeSteps(tx, run.runId, steps, now, { workspaceId: run.workspaceId });
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

  async function createRun(input: RunInput): Promise<{ runId: string }> {
    let started: StartResult;
    try {
      started = await start(input);
    } catch (err) {
      // An adopted run already has an id the sender was given: it fails with the refusal's code.
      if (input.existingRunId && err instanceof ServiceError) {
        const reason = err.code === 'kill_switch' ? `kill_switch:${String(err.extras.kind)}` : err.code;
        await failRefused(input, input.existingRunId, reason);
        return { runId: input.existingRunId };
      }
      throw err;
    }
    if (started.kind === 'replay') return { runId: started.runId };
    if (started.kind === 'ended') return { runId: started.run.id };
    void execute(started.run).catch((err: unknown) => deps.logError?.(err));
    return { runId: started.run.runId };
  }

  async function failRefused(input: RunInput, runId: string, code: string): Promise<void> {
    const now = clock.now();
    await db.transaction(async (tx) => {
      const failed = await tx.query(
        `UPDATE runs SET status = 'failed', failure_reason = $3, updated_at = $4, completed_at = $4
          WHERE id = $1 AND workspace_id = $2 AND status = 'in_progress' AND started_at IS NULL RETURNING 1`,
        [runId, input.workspaceId, code, now],
      );
      if (failed.length > 0) {
        await forgetInboundInput(tx, runId);
        await runFailedEvent(tx, now, { workspaceId: input.workspaceId, runId, agent: input.agentSlug ?? ORCHESTRATOR_SLUG, reason: code });
      }
    });
  }

  async function waitForTerminal(workspaceId: string, runId: string, timeoutMs = 120_000): Promise<Run> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = toRun(await readRunRow(db, workspaceId, runId));
      if (run.status !== 'in_progress' || Date.now() >= deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async function cancelRun(workspaceId: string, runId: string): Promise<Run> {
    // The reservation is released at once, wherever the run executes (or whether anything still
    // does). The instance that runs it stops its engine now if it is this one, or at its next
    // lease renewal; its closing transaction then charges what was produced.
    const run = await endRun(db, clock.now(), { workspaceId, runId, status: 'canceled', limits: budget.limits });
    executing.get(runId)?.abort();
    return run;
  }

  /**
   * Renews the lease of the runs this process executes, every quarter of the lease, while there
   * are any; a run that is no longer in progress (canceled on another instance, or swept) is
   * stopped here.
   */
  function createHeartbeat() {
    let timer: NodeJS.Timeout | undefined;
    async function beat(): Promise<void> {
      const ids = [...executing.keys()];
      if (ids.length === 0) return;
      const renewed = await db.query<{ id: string }>(
        `UPDATE runs SET lease_until = $2 WHERE id = ANY ($1::text[]) AND status = 'in_progress' RETURNING id`,
        [ids, new Date(clock.now().getTime() + leaseMs)],
      );
      const alive = new Set(renewed.map((r) => r.id));
      for (const id of ids) if (!alive.has(id)) executing.get(id)?.abort();
    }
    return {
      start() {
        if (timer) return;
        timer = setInterval(() => {
          if (executing.size === 0) {
            clearInterval(timer);
            timer = undefined;
            return;
          }
          beat().catch((err: unknown) => deps.logError?.(err));
        }, Math.max(10, Math.floor(leaseMs / 4)));
        timer.unref?.();
      },
    };
  }

  return {
    start,
    execute,
    createRun,
    waitForTerminal,
    getRun: (workspaceId, runId) => readRunDetail(db, workspaceId, runId),
    listRuns: (workspaceId, filters) => listRunRows(db, workspaceId, filters),
    cancelRun,
    answeredBy: async (workspaceId, runId) => (await readRunRow(db, workspaceId, runId)).answered_by,
  };

  async function writeSteps(tx: Db, runId: string, steps: readonly StepDraft[], now: Date, events?: { workspaceId: string }): Promise<void> {
    for (const [index, step] of steps.entries()) {
      await tx.query(
        `INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [newId('stp'), runId, index, step.kind, step.agentSlug, redactText(step.summary), now],
      );
      if (step.toolCall) {
        await tx.query(
          `INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [
            newId('tc'),
            runId,
            index,
            step.toolCall.name,
            JSON.stringify(redactValue(step.toolCall.arguments)),
            step.toolCall.result === null ? null : redactText(step.toolCall.result),
            step.toolCall.status,
            now,
          ],
        );
      }
      if (!events) continue;
      if (step.draft) {
        const draftId = newId('drf');
        const subject = redactText(step.draft.subject);
        await tx.query(
          `INSERT INTO drafts (id, workspace_id, run_id, agent_slug, kind, subject, body, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [draftId, events.workspaceId, runId, step.agentSlug, step.draft.kind, subject, redactText(step.draft.body), now],
        );
        await draftCreatedEvent(tx, now, { workspaceId: events.workspaceId, draftId, runId, agent: step.agentSlug, kind: step.draft.kind, subject });
      }
      if (step.approval) {
        const approvalId = newId('apr');
        const summary = redactText(step.approval.summary);
        const expiresAt = new Date(now.getTime() + APPROVAL_TTL_MS);
        await tx.query(
          `INSERT INTO approvals (id, workspace_id, run_id, agent_slug, action, summary, expires_at, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [approvalId, events.workspaceId, runId, step.agentSlug, step.approval.action, summary, expiresAt, now],
        );
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
}

/**
 * Tokens of a run that stopped early: what the engine reported with its error, or else counted
 * here from the conversation and the text received, so a disconnect or a cancel is still billed.
 */
function producedUsage(run: PendingRun, raw: string, failure: unknown): TokenUsage {
  const reported = failure instanceof EngineError ? failure.usage : { inputTokens: 0, outputTokens: 0 };
  const outputTokens = Math.max(reported.outputTokens, countTextTokens(raw));
  // The input counts once the engine began answering, or when the caller walked away mid-request.
  const began = outputTokens > 0 || reported.inputTokens > 0 || (failure instanceof EngineError && failure.reason === 'aborted');
  const inputTokens = began ? Math.max(reported.inputTokens, countMessageTokens(run.request.messages)) : 0;
  return { inputTokens, outputTokens };
}
