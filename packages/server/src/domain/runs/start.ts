/**
 * @module Starting a run: the checks (agent, plan, alias, scope), the routing step, the worst-case
 * reservation on the period, hour and day budgets, and the run row (inserted, or an inbound run's
 * row adopted), all in one transaction; or a replay of an idempotent request; or a run that
 * crossed a spending limit before the engine was called, ended `failed` at once.
 */
import type { EngineMessage, EngineRequest, Effort, PowerMode } from '../../engine/index.ts';
import { countMessageTokensAsync } from '../../engine/index.ts';
import { newId } from '../../random.ts';
import type { Alias } from '../../vocabulary/alias.ts';
import { assertAgentAvailable, routingCandidates } from '../agents/availability.ts';
import { ORCHESTRATOR_SLUG } from '../../vocabulary/catalog.ts';
import { routeRequest } from '../../vocabulary/router.ts';
import { workspaceAgents } from '../agents/settings.ts';
import { killSwitchReason, type SpendingScope } from '../usage/index.ts';
import { assertAliasInPlan, assertMayInvokeAgent } from './access.ts';
import { reserveBudget, type Windows } from './budget.ts';
import { earlierTurns } from './conversation.ts';
import { runFailedEvent } from './events.ts';
import { claimKey, findClaim, type IdempotencyClaim } from './idempotency.ts';
import type { RunContext } from './context.ts';
import { runEnded } from './run-hooks.ts';
import { writeSteps, type StepDraft } from './steps.ts';
import { readRunRow, toRun, type Run, type RunSource } from './store.ts';
import { ensurePeriod } from './usage-store.ts';

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
}

/** A run that is `in_progress`, ready for `execute`. */
export interface PendingRun {
  readonly runId: string;
  readonly workspaceId: string;
  readonly agentSlug: string;
  /** The agent that answers: the target, or the department the orchestrator routed to. */
  readonly answeredBy: string;
  readonly alias: Alias;
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
}

export type StartResult =
  | { kind: 'started'; run: PendingRun }
  /** The request repeats an Idempotency-Key: the first request's run (possibly still in progress). */
  | { kind: 'replay'; runId: string }
  /** The run crossed a spending limit before the engine was called: it is already `failed`. */
  | { kind: 'ended'; run: Run; answeredBy: string };

/** Thrown inside the creation transaction when a concurrent retry claimed the key first. */
class ClaimLost extends Error {}
/** Thrown inside the transaction that adopts an existing run that is no longer in progress. */
class RunGone extends Error {}

export async function startRun(ctx: RunContext, input: RunInput): Promise<StartResult> {
  const { db, clock, budget, leaseMs } = ctx;
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

  // Pauses for the event loop: a request may hold megabytes of text.
  const inputTokens = await countMessageTokensAsync(messages);
  const desiredOutput = input.maxTokens ?? DEFAULT_OUTPUT_TOKENS;
  const runId = input.existingRunId ?? newId('run');
  try {
    return await db.transaction(async (tx) => {
      const period = await ensurePeriod(tx, input.workspaceId, now, settings.quotaStu);
      const reservation = await reserveBudget(tx, {
        workspaceId: input.workspaceId,
        now,
        alias: input.alias,
        inputTokens,
        desiredOutput,
        settings: budget,
        quota: { allowanceStu: settings.quotaStu + period.rolloverStu },
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
          [
            runId,
            input.workspaceId,
            target,
            answeredBy,
            input.alias,
            input.source,
            input.conversationId ?? null,
            reserved,
            reservation.windows.hour,
            reservation.windows.day,
            now,
            leaseUntil,
          ],
        );
      }
      if (input.idempotency && !(await claimKey(tx, input.idempotency, input.workspaceId, runId, now))) throw new ClaimLost();
      if (!reservation.ok) {
        // Crossed before any token was produced: the run fails at once and nothing is billed.
        const reason = killSwitchReason(reservation.crossed);
        await writeSteps(tx, runId, steps, now, undefined, ctx.redactor);
        await tx.query(`UPDATE runs SET status = 'failed', failure_reason = $2, updated_at = $3, completed_at = $3, lease_until = NULL WHERE id = $1`, [
          runId,
          reason,
          now,
        ]);
        await runEnded(tx, { runId, workspaceId: input.workspaceId, source: input.source });
        await runFailedEvent(tx, now, { workspaceId: input.workspaceId, runId, agent: target, reason });
        return { kind: 'ended' as const, run: toRun(await readRunRow(tx, input.workspaceId, runId)), answeredBy };
      }
      const run: PendingRun = {
        runId,
        workspaceId: input.workspaceId,
        agentSlug: target,
        answeredBy,
        alias: input.alias,
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
