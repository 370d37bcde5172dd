/**
 * @module Ending runs outside their own execution: a cancel, a closing transaction that failed,
 * and runs whose instance died.
 *
 * Every run being executed holds a lease (`runs.lease_until`), renewed by its instance every
 * quarter of `RUN_LEASE_MS`. When an instance dies (kill -9, a crash, a lost host) its leases run
 * out and `sweepInterruptedRuns`, called by the worker of any instance at every poll, ends them:
 * the reservation is released (nothing is charged: what the engine produced was never delivered)
 * and the run fails with the reason `interrupted`, with its `run.failed` event. A run started by an
 * inbound webhook was acknowledged to its sender, so it is handed over again instead, up to
 * `MAX_RECOVERIES` times, and only then fails. A run resumed after an approval waits again for any instance to
 * resume it from its checkpoint (resume.ts), a tool call it was making recorded `unknown`, as often. Bound: a run stays `in_progress` at most
 * `RUN_LEASE_MS` plus one worker poll after its instance died, once any instance is serving.
 */
import type { Clock } from '../../clock.ts';
import { redactText } from '../../redact/index.ts';
import type { Db, Tx } from '../../store/db.ts';
import { expireApprovalsOfEndedRun } from '../approvals/decision.ts';
import type { KillSwitchLimits } from '../usage/index.ts';
import { settleRun } from '../spending/budget.ts';
import { runFailedEvent } from './events.ts';
import { runEnded, runInterrupted } from './run-hooks.ts';
import { dropUnclaimedCheckpoints, lockLatestCheckpoint, reopenCheckpoint } from './checkpoints.ts';
import { recordUnmadeCalls } from './steps.ts';
import { endRunRow, expiredLeases, lockExpiredRun, resetForHandOver, type RunRecord } from './queries/run-row.ts';
import { lockRunRecord, readRunRecord, toRun, type Run } from './store.ts';

/** Lease of a run being executed, renewed every quarter of it (RUN_LEASE_MS). */
export const RUN_LEASE_MS = 60_000;
/** How many times an interrupted inbound run is handed over again before it fails. */
export const MAX_RECOVERIES = 3;
/** The `failureReason` of a run whose instance stopped before it ended. */
export const INTERRUPTED = 'interrupted';

/**
 * Ends an `in_progress` run as `failed` (with `reason`) or `canceled`, releasing its reservation,
 * in one transaction; a terminal run is answered unchanged. A run that waits for an approval is
 * never resumed: its checkpoint is dropped and its approval stored `expired` in the same transaction.
 * `404 not_found` for another workspace's run.
 */
export async function endRun(
  db: Db,
  now: Date,
  input: {
    workspaceId: string;
    runId: string;
    status?: 'failed' | 'canceled';
    reason?: string;
    limits: KillSwitchLimits;
    /** The call its approval was for will not be made (a resume refused before the call): it reads not performed. */
    callUnmade?: boolean;
  },
): Promise<Run> {
  return db.transaction(async (tx) => {
    const row = await lockRunRecord(tx, input.workspaceId, input.runId);
    if (row.status === 'in_progress') {
      await end(tx, row, now, { status: input.status ?? 'failed', reason: input.reason ?? 'internal_error', limits: input.limits });
      if (input.callUnmade) await recordUnmadeCalls(tx, row.id);
    }
    return toRun(await readRunRecord(tx, input.workspaceId, input.runId));
  });
}

export interface SweepResult {
  /** Runs failed with `interrupted`. */
  failed: number;
  /** Inbound runs handed over again. */
  retried: number;
}

/** Ends (or hands over again) up to `limit` runs whose lease ran out. */
export async function sweepInterruptedRuns(deps: { db: Db; clock: Clock; limits: KillSwitchLimits; maxRecoveries?: number }, limit = 50): Promise<SweepResult> {
  const { db, clock } = deps;
  const maxRecoveries = deps.maxRecoveries ?? MAX_RECOVERIES;
  const candidates = await expiredLeases(db, clock.now(), limit);
  const result: SweepResult = { failed: 0, retried: 0 };
  for (const id of candidates) {
    const now = clock.now();
    const outcome = await db.transaction(async (tx) => {
      // Checked again under the lock: its instance may have renewed or ended it meanwhile.
      const row = await lockExpiredRun(tx, id, now);
      if (!row) return null;
      if (row.recoveries < maxRecoveries && (await resumeAgain(tx, row, now, deps.limits))) return 'retried';
      if (row.source === 'inbound_webhook' && row.recoveries < maxRecoveries && (await handOverAgain(tx, row, now, deps.limits))) return 'retried';
      await end(tx, row, now, { status: 'failed', reason: INTERRUPTED, limits: deps.limits });
      return 'failed';
    });
    if (outcome) result[outcome] += 1;
  }
  return result;
}

/**
 * A run resumed after an approval (resume.ts) whose instance stopped: its checkpoint is claimable again and the
 * run waits as it did after its pause (its reservation released, nothing charged for the lost execution), so any
 * instance resumes it from the checkpoint; a tool call that was `calling` is recorded `unknown` and never made
 * again. False for a run that never paused.
 */
async function resumeAgain(tx: Tx, row: RunRecord, now: Date, limits: KillSwitchLimits): Promise<boolean> {
  const checkpoint = await lockLatestCheckpoint(tx, row.id);
  if (!checkpoint || checkpoint.claimedAt === null) return false;
  await release(tx, row, now, limits);
  await resetForHandOver(tx, row.id, now);
  await reopenCheckpoint(tx, checkpoint.id, now);
  return true;
}

/** Puts an interrupted inbound run back in the hand-over queue; false when its input is gone. */
async function handOverAgain(tx: Tx, row: RunRecord, now: Date, limits: KillSwitchLimits): Promise<boolean> {
  if (!(await runInterrupted(tx, { runId: row.id, workspaceId: row.workspaceId, source: row.source }))) return false;
  await release(tx, row, now, limits);
  await resetForHandOver(tx, row.id, now);
  return true;
}

async function end(tx: Tx, row: RunRecord, now: Date, outcome: { status: 'failed' | 'canceled'; reason: string; limits: KillSwitchLimits }): Promise<void> {
  await release(tx, row, now, outcome.limits);
  const reason = outcome.status === 'failed' ? redactText(outcome.reason) : null;
  await endRunRow(tx, row.id, { status: outcome.status, reason, now });
  // A run that waited for an approval ends with it: no instance resumes it, nobody can decide it any more, and its
  // call reads as not performed.
  // The checkpoint first, then the approval: a claim locks them in that order too.
  const waitedFor = await dropUnclaimedCheckpoints(tx, row.id);
  if (waitedFor.length > 0) {
    await expireApprovalsOfEndedRun(tx, waitedFor, now);
    await recordUnmadeCalls(tx, row.id);
  }
  await runEnded(tx, { runId: row.id, workspaceId: row.workspaceId, source: row.source });
  if (reason !== null) await runFailedEvent(tx, now, { workspaceId: row.workspaceId, runId: row.id, agent: row.agentSlug, reason });
}

/** Releases what the run holds; a run that holds nothing (not started yet) locks no budget row. */
async function release(tx: Tx, row: RunRecord, now: Date, limits: KillSwitchLimits): Promise<void> {
  const { reservedStu } = row;
  if (reservedStu <= 0) return;
  await settleRun(tx, {
    workspaceId: row.workspaceId,
    windows: { hour: row.windowHour, day: row.windowDay },
    reservedStu,
    stu: 0,
    crossed: null,
    now,
    limits,
  });
}
