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
 *   execute(run)  -> runs the agent loop (model calls and tool calls; each text fragment through
 *                    the stream redactor to `onDelta`) and closes the run. It never throws for an
 *                    engine failure.
 * `createRun` does both in the background, for runs started by an inbound webhook.
 */
import type { CancelBus } from './cancel-bus.ts';
import type { Clock } from '../../clock.ts';
import type { Redactor } from '../../redact/index.ts';
import type { Engines } from '../../engine/index.ts';
import { ServiceError } from '../../errors.ts';
import { type AgentDefinitions, noConnectedTools, type ToolSource } from '../agent-loop/index.ts';
import type { Db } from '../../store/db.ts';
import { ORCHESTRATOR_SLUG } from '../../vocabulary/catalog.ts';
import type { BudgetSettings } from '../spending/budget.ts';
import { workspaceAgents } from '../agents/settings.ts';
import { createCloseBatcher } from './close-batch.ts';
import { createCloseDetail } from './close-detail.ts';
import { createHeartbeat, type RunContext } from './context.ts';
import type { UsageTally } from '../spending/usage-tally.ts';
import { createConversationCache } from './conversation.ts';
import { answerLog, createRunEventHub, followRunEvents, type FollowOptions, type RunEvent, type RunEventHub } from '../run-events/index.ts';
import { randomBase62 } from '../../random.ts';
import { runFailedEvent } from './events.ts';
import { executeRun, type ExecuteOptions, type RunOutcome } from './execute.ts';
import { closeRun, type RunResult } from './close.ts';
import { pauseRun, type PauseInput, type PauseResult } from './pause.ts';
import { beginApprovedCall, type Checkpoint, claimResumption, type ClaimOutcome, endApprovedCall, releaseLostClaims, type Resumption } from './resume.ts';
import { resumeRun } from './resume-run.ts';
import { endRun, RUN_LEASE_MS } from './recovery.ts';
import { runEnded } from './run-hooks.ts';
import { startRun, type PendingRun, type RunInput, type StartResult } from './start.ts';
import { failRefusedRun } from './queries/run-row.ts';
import { readRunLog } from './queries/run-log.ts';
import { listRunRows, readRunDetail, readRunRecord, toRun, type Run, type RunDetail, type RunFilters, type RunList } from './store.ts';

export { DEFAULT_OUTPUT_TOKENS, type PendingRun, type RunInput, type StartResult } from './start.ts';
export type { ExecuteOptions, RunOutcome } from './execute.ts';
export type { RunResult } from './close.ts';
export type { PauseInput, PauseResult } from './pause.ts';
export type { Checkpoint, ClaimOutcome, Resumption, ResumeRun } from './resume.ts';
export { APPROVAL_TTL_MS } from './steps.ts';

export interface RunService {
  start(input: RunInput): Promise<StartResult>;
  execute(run: PendingRun, options?: ExecuteOptions): Promise<RunOutcome>;
  /**
   * Starts a run in the background (inbound webhooks): the same checks as an invocation, then the
   * engine runs detached. Resolves with the run id once the run exists (`in_progress`, or already
   * `failed` when it crossed a spending limit); rejects with the ServiceError of a refused run.
   */
  createRun(input: RunInput): Promise<{ runId: string }>;
  /** Executes a started run detached from its caller (an invocation with `background: true`), as `createRun` does. */
  executeDetached(run: PendingRun): void;
  /** Resolves once the run is terminal (polling the store), or with its current state after `timeoutMs`. */
  waitForTerminal(workspaceId: string, runId: string, timeoutMs?: number): Promise<Run>;
  getRun(workspaceId: string, runId: string): Promise<RunDetail>;
  listRuns(workspaceId: string, filters: RunFilters): Promise<RunList>;
  /** `in_progress` → `canceled`; a terminal run is answered unchanged. */
  cancelRun(workspaceId: string, runId: string): Promise<Run>;
  /** The department that answered a run (the target, or where the orchestrator routed it). */
  answeredBy(workspaceId: string, runId: string): Promise<string>;
  /**
   * The outcome of an earlier run, once it is terminal (a retried idempotent request): the same
   * `RunOutcome` a first answer has, from what the run stored.
   */
  replay(workspaceId: string, runId: string): Promise<RunOutcome>;
  /**
   * The run's event log after `options.after`, live until its terminal event (run-events/reader.ts);
   * the first `next()` throws `404 not_found` for a run not in the workspace.
   */
  events(workspaceId: string, runId: string, options: FollowOptions): AsyncGenerator<RunEvent, void, undefined>;
  /** Closes waiting for the closing statement in flight to return (close-batch.ts; tests and metrics). */
  closesWaiting(): number;
  /** Closes an execution (close.ts): a run resumed after an approval is closed by its continuation this way. */
  close(run: PendingRun, result: RunResult): Promise<Run>;
  /** Pauses an executing run for an approval (pause.ts). */
  pause(input: PauseInput): Promise<PauseResult>;
  /** Claims one resumable run for `instance` and reserves its budget again (resume.ts). */
  claimResumption(instance: string): Promise<ClaimOutcome | undefined>;
  /** Gives back claims whose instance stopped before their reservation (resume.ts). */
  releaseLostClaims(): Promise<number>;
  /** The approved call: `calling` before the tool is called (false: it must not be called), then its outcome. */
  beginApprovedCall(checkpoint: Pick<Checkpoint, 'id'>): Promise<boolean>;
  endApprovedCall(checkpoint: Pick<Checkpoint, 'id'>, outcome: { status: 'completed' | 'failed'; result: string }): Promise<boolean>;
  /** Goes on with a claimed run (resume-run.ts): the call it waited for settled, the agent loop to its end or next pause. */
  resume(resumption: Resumption): Promise<void>;
}

interface RunServiceDeps {
  db: Db;
  /** The workspace's agent settings; read from the store at every invocation when absent (tests). */
  agentSettings?: RunContext['agentSettings'];
  /** The usage tally that GET /usage/current reads, told of this instance's charges (usage-tally.ts). */
  usageTally?: Pick<UsageTally, 'charged'> | undefined;
  clock: Clock;
  engines: Engines;
  /** The app's redactor: every engine text and failure reason passes it before it is stored or sent. */
  redactor: Redactor;
  budget: BudgetSettings;
  /** Failures of background runs that could not even be closed (the store is down). */
  logError?: (error: unknown) => void;
  /** A run whose engine reported more than its reservation allowed (see execute.ts). */
  logUnbilled?: RunContext['logUnbilled'];
  /**
   * Lease of a run being executed (RUN_LEASE_MS, 60 s by default). This instance renews it every
   * quarter of it; a run whose lease ran out is swept (see ./recovery.ts).
   */
  leaseMs?: number;
  /** How long a streamed run goes on after its client left, for a reader to follow it again (STREAM_RESUME_MS; 10 s). */
  streamResumeMs?: number;
  /** Cross-instance cancel (PostgreSQL LISTEN/NOTIFY); absent with the embedded store (one instance). */
  cancelBus?: CancelBus | undefined;
  /** The live event logs (run-events/hub.ts), joined to the other instances' with PostgreSQL; this instance's alone when absent. */
  runEvents?: RunEventHub | undefined;
  /** The tools of a workspace's connected integrations; none when absent. */
  tools?: ToolSource | undefined;
  /** The agents' definitions; the default one of each agent when absent (agent-loop/agents.ts). */
  agents: AgentDefinitions;
  /** How long a tool call may take; agent-loop's TOOL_TIMEOUT_MS when absent. */
  toolTimeoutMs?: number | undefined;
}

const POLL_MS = 50;
/** How long a streamed run goes on after its client left (STREAM_RESUME_MS). */
export const STREAM_RESUME_MS = 10_000;

export function createRunService(deps: RunServiceDeps): RunService {
  const { db, clock } = deps;
  const leaseMs = deps.leaseMs ?? RUN_LEASE_MS;
  const executing = new Map<string, AbortController>();
  const ctx: RunContext = {
    db,
    agentSettings: deps.agentSettings ?? ((workspaceId) => workspaceAgents(db, workspaceId)),
    usageCharged: deps.usageTally?.charged,
    conversations: createConversationCache(db, randomBase62(12)),
    closes: createCloseBatcher(db),
    closeDetail: createCloseDetail(db),
    clock,
    engines: deps.engines,
    redactor: deps.redactor,
    tools: deps.tools ?? noConnectedTools,
    agents: deps.agents,
    toolTimeoutMs: deps.toolTimeoutMs,
    budget: deps.budget,
    leaseMs,
    streamResumeMs: deps.streamResumeMs ?? STREAM_RESUME_MS,
    logError: deps.logError,
    logUnbilled: deps.logUnbilled,
    runEvents: deps.runEvents ?? createRunEventHub(db, { logError: deps.logError }),
    executing,
    heartbeat: createHeartbeat(db, clock, leaseMs, executing, deps.logError),
  };
  const { budget } = deps;
  // A cancel answered by another instance stops the engine here at once.
  deps.cancelBus?.onCancel((runId) => executing.get(runId)?.abort());
  const start = (input: RunInput) => startRun(ctx, input);
  const execute = (run: PendingRun, options?: ExecuteOptions) => executeRun(ctx, run, options);

  async function createRun(input: RunInput): Promise<{ runId: string }> {
    let started: StartResult;
    try {
      started = await start(input);
    } catch (err) {
      // An adopted run already has an id the sender was given: it fails with the refusal's code.
      // Not for budget_reserved: the run waits in the queue and is handed over again (lease).
      if (input.existingRunId && err instanceof ServiceError && err.code !== 'budget_reserved') {
        const reason = err.is('kill_switch') ? `kill_switch:${err.extras.kind}` : err.code;
        await failRefused(input, input.existingRunId, reason);
        return { runId: input.existingRunId };
      }
      throw err;
    }
    if (started.kind === 'replay') return { runId: started.runId };
    if (started.kind === 'ended') return { runId: started.run.id };
    executeDetached(started.run);
    return { runId: started.run.runId };
  }

  function executeDetached(run: PendingRun): void {
    void execute(run).catch((err: unknown) => deps.logError?.(err));
  }

  async function failRefused(input: RunInput, runId: string, code: string): Promise<void> {
    const now = clock.now();
    await db.transaction(async (tx) => {
      if (await failRefusedRun(tx, { runId, workspaceId: input.workspaceId, reason: code, now })) {
        await runEnded(tx, { runId, workspaceId: input.workspaceId, source: input.source });
        await runFailedEvent(tx, now, { workspaceId: input.workspaceId, runId, agent: input.agentSlug ?? ORCHESTRATOR_SLUG, reason: code });
      }
    });
  }

  async function readStoredLog(workspaceId: string, runId: string) {
    const found = await readRunLog(db, workspaceId, runId);
    if (!found) return undefined;
    const run = toRun(found.record);
    // A completed run whose log was only its answer stored none (close.ts): its answer is its log.
    return { run, leaseUntil: found.record.leaseUntil, stored: found.stored ?? answerLog(run), lastSequence: found.lastSequence };
  }

  async function waitForTerminal(workspaceId: string, runId: string, timeoutMs = 120_000): Promise<Run> {
    // A polling budget, not a date: the monotonic clock (a test's fixed clock would never end it).
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const run = toRun(await readRunRecord(db, workspaceId, runId));
      if (run.status !== 'in_progress' || performance.now() >= deadline) return run;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  async function cancelRun(workspaceId: string, runId: string): Promise<Run> {
    // The reservation is released at once, wherever the run executes (or whether anything still
    // does). The instance that runs it stops its engine now if it is this one, or at its next
    // lease renewal; its closing transaction then charges what was produced.
    const run = await endRun(db, clock.now(), { workspaceId, runId, status: 'canceled', limits: budget.limits });
    const local = executing.get(runId);
    if (local) local.abort();
    // Elsewhere: the instance executing it hears it now (a lost notification: at its next lease renewal).
    else if (deps.cancelBus) await deps.cancelBus.publish(runId).catch((err: unknown) => deps.logError?.(err));
    return run;
  }

  return {
    start,
    execute,
    createRun,
    executeDetached,
    waitForTerminal,
    getRun: (workspaceId, runId) => readRunDetail(db, workspaceId, runId),
    listRuns: (workspaceId, filters) => listRunRows(db, workspaceId, filters),
    cancelRun,
    answeredBy: async (workspaceId, runId) => (await readRunRecord(db, workspaceId, runId)).answeredBy,
    async replay(workspaceId, runId) {
      const run = await waitForTerminal(workspaceId, runId);
      const answeredBy = (await readRunRecord(db, workspaceId, runId)).answeredBy;
      return { run, answeredBy, content: run.content ?? '', usage: { inputTokens: run.usage.inputTokens, outputTokens: run.usage.outputTokens } };
    },
    events: (workspaceId, runId, options) => followRunEvents({ readLog: readStoredLog, hub: ctx.runEvents, clock }, workspaceId, runId, options),
    closesWaiting: () => ctx.closes.waiting(),
    close: (run, result) => closeRun(ctx, run, result),
    pause: (input) => pauseRun(ctx, input),
    claimResumption: (instance) => claimResumption(ctx, { instance }),
    releaseLostClaims: () => releaseLostClaims(ctx),
    beginApprovedCall: (checkpoint) => beginApprovedCall(ctx, checkpoint),
    endApprovedCall: (checkpoint, outcome) => endApprovedCall(ctx, checkpoint, outcome),
    async resume(resumption) {
      await resumeRun(ctx, resumption);
    },
  };
}
