/**
 * @module Runs started by inbound webhooks. Ingestion writes the event and its `in_progress` run
 * in one transaction; executing the run is handed over here, from a durable queue (events whose
 * `run_started_at` is null), so a crash between the answer to the sender and the hand-over loses
 * nothing. The executor is injected: the run service's executor once it is wired in, nothing (the
 * queue waits) until then.
 */
import type { Clock } from '../clock.ts';
import type { Db } from '../store/db.ts';
import { asStoreParty, workspaceParty } from '../store/fair-queue.ts';
import { claimWaitingInboundEvents, markInboundRunStarted, postponeInboundRun, type WaitingInboundEvent } from '../domain/inbound-webhooks/run-queue.ts';
import { InboundRunWaits } from '../domain/runs/index.ts';

/** One run to execute: its row already exists, `in_progress`, with `source = 'inbound_webhook'`. */
export interface InboundRun {
  runId: string;
  workspaceId: string;
  agentSlug: string;
  alias: string;
  /** The agent input rendered from the event by the webhook's template. */
  content: string;
  /** The sender's event id, for the run's audit trail. */
  eventId: string;
  /** How many times the run was handed over again after its instance stopped (`runs.recoveries`). */
  recoveries: number;
}

/**
 * Executes an inbound run (swap in the run service's executor here). It must be idempotent for a
 * run id: after a crash the same run can be handed over again. Resolving means "taken over": the
 * run holds its own lease from then on, so the event is marked started only once it resolved.
 * Rejecting with `InboundRunWaits` means the run could not start yet (runs in progress hold the
 * budget it needs): it waits in the queue for `retryAfterMs`.
 */
export type InboundRunExecutor = (run: InboundRun) => Promise<void>;

/** How long a claimed hand-over is reserved for its worker before another may retry it. */
export const HAND_OVER_LEASE_MS = 60_000;

/** Hand-overs of one workspace under way at once in one worker: its share of the inbound executor. */
export const INBOUND_WORKSPACE_CONCURRENCY = 4;
/** Hand-overs under way at once in one worker. */
export const INBOUND_CONCURRENCY = 16;

type HandOverDeps = { db: Db; clock: Clock; execute: InboundRunExecutor };

/**
 * Hands over up to `limit` waiting inbound runs and waits for them; returns how many were taken over
 * (tests; the worker starts them with {@link startInboundHandOvers} and does not wait).
 */
export async function handOverInboundRuns(deps: HandOverDeps, limit = 10): Promise<number> {
  const taken = await Promise.all((await startInboundHandOvers(deps, { limit, perWorkspace: limit })).map((h) => h.done));
  return taken.filter(Boolean).length;
}

/**
 * Claims up to `limit` waiting inbound runs, workspaces taking turns and each at most `perWorkspace`
 * less what `busy` says it has under way (`claimWaitingInboundEvents`), and starts their hand-overs,
 * each on its own: one that is slow to be taken over holds nobody else's. The claim is a short
 * transaction (`FOR UPDATE SKIP LOCKED`, then a lease); the executor runs outside it, and only once it
 * resolved is the event marked started. A crash in between leaves the lease to run out and the run is
 * handed over again: at least once (the run service adopts a run only once). `done` answers whether
 * the run was taken over.
 */
export async function startInboundHandOvers(
  deps: HandOverDeps,
  lanes: { limit: number; perWorkspace: number; busy?: ReadonlyMap<string, number> },
): Promise<{ workspaceId: string; done: Promise<boolean> }[]> {
  const now = deps.clock.now();
  const claimed = await deps.db.transaction((tx) => claimWaitingInboundEvents(tx, { now, ...lanes, leaseUntil: new Date(now.getTime() + HAND_OVER_LEASE_MS) }));
  return claimed.map((row) => ({ workspaceId: row.workspace_id, done: handOver(deps, row) }));
}

async function handOver(deps: HandOverDeps, row: WaitingInboundEvent): Promise<boolean> {
  try {
    // The run's statements are its workspace's in the store's fair queue (store/fair-queue.ts), as a request's are:
    // one workspace's inbound backlog waits behind its own statements, not in front of everyone's background work.
    await asStoreParty(workspaceParty(row.workspace_id), () =>
      deps.execute({
        runId: row.run_id,
        workspaceId: row.workspace_id,
        agentSlug: row.agent_slug,
        alias: row.alias,
        // Forgotten only once the run has ended; such a run is not adopted again.
        content: row.agent_input ?? '',
        eventId: row.event_id,
        recoveries: row.recoveries,
      }),
    );
  } catch (error) {
    // Not taken over. A run that must wait: its claim's lease becomes the wait, and the first tick after it tries
    // again. Any other failure: the lease runs out and the hand-over is tried again.
    if (error instanceof InboundRunWaits) await postponeInboundRun(deps.db, row.id, new Date(deps.clock.now().getTime() + error.retryAfterMs));
    return false;
  }
  // The input stays until the run ends: a run interrupted by a crash is handed over again
  // (domain/runs/recovery.ts), and its closing transaction forgets the input.
  await markInboundRunStarted(deps.db, row.id, deps.clock.now());
  return true;
}
