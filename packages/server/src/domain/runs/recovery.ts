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
 * `MAX_RECOVERIES` times, and only then fails. Bound: a run stays `in_progress` at most
 * `RUN_LEASE_MS` plus one worker poll after its instance died, once any instance is serving.
 */
import type { Clock } from '../../clock.ts';
import { redactText } from '../../redact/index.ts';
import type { Db, Tx } from '../../store/db.ts';
import type { KillSwitchLimits } from '../usage/index.ts';
import { settleBudget } from '../spending/budget.ts';
import { runFailedEvent } from './events.ts';
import { runEnded, runInterrupted } from './run-hooks.ts';
import { readRunRow, toRun, type Run, type RunRow } from './store.ts';

/** Lease of a run being executed, renewed every quarter of it (RUN_LEASE_MS). */
export const RUN_LEASE_MS = 60_000;
/** How many times an interrupted inbound run is handed over again before it fails. */
export const MAX_RECOVERIES = 3;
/** The `failureReason` of a run whose instance stopped before it ended. */
export const INTERRUPTED = 'interrupted';

/**
 * Ends an `in_progress` run as `failed` (with `reason`) or `canceled`, releasing its reservation,
 * in one transaction; a terminal run is answered unchanged. `404 not_found` for another
 * workspace's run.
 */
export async function endRun(
  db: Db,
  now: Date,
  input: { workspaceId: string; runId: string; status?: 'failed' | 'canceled'; reason?: string; limits: KillSwitchLimits },
): Promise<Run> {
  return db.transaction(async (tx) => {
    const row = await readRunRow(tx, input.workspaceId, input.runId, true);
    if (row.status === 'in_progress')
      await end(tx, row, now, { status: input.status ?? 'failed', reason: input.reason ?? 'internal_error', limits: input.limits });
    return toRun(await readRunRow(tx, input.workspaceId, input.runId));
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
  const candidates = await db.query<Pick<RunRow, 'id'>>(
    `SELECT id FROM runs WHERE status = 'in_progress' AND started_at IS NOT NULL AND (lease_until IS NULL OR lease_until <= $1)
      ORDER BY lease_until NULLS FIRST LIMIT $2`,
    [clock.now(), limit],
  );
  const result: SweepResult = { failed: 0, retried: 0 };
  for (const { id } of candidates) {
    const now = clock.now();
    const outcome = await db.transaction(async (tx) => {
      // Checked again under the lock: its instance may have renewed or ended it meanwhile.
      const [row] = await tx.query<RunRow>(
        `SELECT * FROM runs WHERE id = $1 AND status = 'in_progress' AND started_at IS NOT NULL
            AND (lease_until IS NULL OR lease_until <= $2) FOR UPDATE SKIP LOCKED`,
        [id, now],
      );
      if (!row) return null;
      if (row.source === 'inbound_webhook' && row.recoveries < maxRecoveries && (await handOverAgain(tx, row, now, deps.limits))) return 'retried';
      await end(tx, row, now, { status: 'failed', reason: INTERRUPTED, limits: deps.limits });
      return 'failed';
    });
    if (outcome) result[outcome] += 1;
  }
  return result;
}

/** Puts an interrupted inbound run back in the hand-over queue; false when its input is gone. */
async function handOverAgain(tx: Tx, row: RunRow, now: Date, limits: KillSwitchLimits): Promise<boolean> {
  if (!(await runInterrupted(tx, { runId: row.id, workspaceId: row.workspace_id, source: row.source }))) return false;
  await release(tx, row, now, limits);
  await tx.query(`UPDATE runs SET started_at = NULL, lease_until = NULL, reserved_stu = 0, recoveries = recoveries + 1, updated_at = $2 WHERE id = $1`, [
    row.id,
    now,
  ]);
  return true;
}

async function end(tx: Tx, row: RunRow, now: Date, outcome: { status: 'failed' | 'canceled'; reason: string; limits: KillSwitchLimits }): Promise<void> {
  await release(tx, row, now, outcome.limits);
  const reason = outcome.status === 'failed' ? redactText(outcome.reason) : null;
  await tx.query(`UPDATE runs SET status = $2, failure_reason = $3, reserved_stu = 0, lease_until = NULL, updated_at = $4, completed_at = $4 WHERE id = $1`, [
    row.id,
    outcome.status,
    reason,
    now,
  ]);
  await runEnded(tx, { runId: row.id, workspaceId: row.workspace_id, source: row.source });
  if (reason !== null) await runFailedEvent(tx, now, { workspaceId: row.workspace_id, runId: row.id, agent: row.agent_slug, reason });
}

/** Releases what the run holds; a run that holds nothing (not started yet) locks no budget row. */
async function release(tx: Tx, row: RunRow, now: Date, limits: KillSwitchLimits): Promise<void> {
  const reservedStu = Number(row.reserved_stu);
  if (reservedStu <= 0) return;
  await settleBudget(tx, {
    workspaceId: row.workspace_id,
    windows: { hour: row.window_hour, day: row.window_day },
    reservedStu,
    stu: 0,
    crossed: null,
    now,
    limits,
  });
}
