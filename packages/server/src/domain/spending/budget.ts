/**
 * @module Spending budgets and the quota in the store, enforced atomically: the hour and day
 * windows of the kill switches, the per-run limit, and the period's hard stop.
 *
 * A run *reserves* its worst case (input tokens plus its output cap, at the alias's STU rate)
 * before the engine is called, on the period row and the hour and day rows. The check and the
 * reservation are one statement, `start_run` (store/migrations/0506_money_path.sql), which also
 * inserts the run: it locks the period row, then the day and hour rows (always in that order, so no
 * deadlock), for the length of that statement only, never across a round trip nor while the engine
 * runs. Concurrent requests on any number of instances take turns on the same rows, and admission
 * counts what was charged plus what runs in progress hold (`reserved_stu`), so neither a limit nor
 * the quota's hard stop can be passed. The policy it applies:
 *
 * - Kill switches: when what was charged leaves less than the worst case, the output cap shrinks to
 *   fit; a run that then uses its whole cap has crossed the limit and fails with `kill_switch:<scope>`.
 *   When even the input does not fit, the run crosses at once, and an hour or day window *trips*
 *   (`tripped_at`: new invocations get `429 kill_switch` until the window ends). A window also trips
 *   when a run's charge brings it to its limit, or a crossing run's to within `TRIP_MARGIN` of it.
 *   The manual switch refuses every invocation while it is on.
 * - Reservations of other runs never shrink a cap nor trip a window: when the run fits the limits
 *   and the quota but not beside what runs in progress hold, it is refused with `429
 *   budget_reserved` (a few seconds' `Retry-After`, no run created), since that room comes back as
 *   they end.
 * - Quota: an invocation is admitted only when its worst case fits under the hard stop together with
 *   the charged consumption (else `429 quota_exceeded`) and what runs in progress hold (else `429
 *   budget_reserved`).
 * - The charge of a run never exceeds its reservation (execute.ts bills within it), so no limit nor
 *   the hard stop is passed by what an engine reports.
 *
 * When a run ends its reservation is released and what it really consumed is charged: by
 * `finish_run` (close.ts) for a run that executed, by `settleBudget` below for a cancel or a sweep.
 */
import type { Alias } from '../../vocabulary/alias.ts';
import {
  activeKillSwitch,
  killSwitchError,
  killSwitchWindows,
  quotaExceededError,
  resetAt,
  pctConsumed,
  type KillSwitchLimits,
  type SpendingScope,
  type StuRates,
} from '../usage/index.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { Db, Tx } from '../../store/db.ts';
import { fail, type ServiceError } from '../../errors.ts';
import { periodOf } from '../usage/index.ts';
import type { IdempotencyClaim } from '../runs/idempotency.ts';

export interface BudgetSettings {
  limits: KillSwitchLimits;
  rates: StuRates;
}

export interface Windows {
  hour: Date;
  day: Date;
}

/**
 * A window trips only when its charged consumption is within this share of the limit (1 %): the
 * documented margin of the hour and day switches (finish_run applies the same margin).
 */
const TRIP_MARGIN = 0.01;

/** What `start_run` decided for an invocation that was not refused. */
export type Reservation =
  /** Reserved, and the run's row is `in_progress`. */
  | { outcome: 'started'; windows: Windows; reservedStu: number; outputCap: number; limitedBy: SpendingScope | null }
  /** The idempotency key names an earlier run: nothing reserved. */
  | { outcome: 'replay'; runId: string }
  /** The run to adopt is no longer waiting (canceled before it could start, or taken over). */
  | { outcome: 'gone' }
  /** The conversation has turns the caller's copy lacks: nothing reserved; read it again and retry. */
  | { outcome: 'stale_history' }
  /** Not even the input fits under `scope`'s limit: nothing reserved, the window tripped; the run fails at once. */
  | { outcome: 'crossed'; windows: Windows; scope: SpendingScope };

/** `Retry-After` of `429 budget_reserved`: reservations are freed as runs end, within seconds for most. */
const BUDGET_RESERVED_RETRY_AFTER_SEC = 5;

/**
 * `429 budget_reserved`: the invocation fits the limits and the quota, but runs in progress hold the
 * room it needs. Not a kill switch (none is engaged), and no run is created: the caller retries shortly.
 */
function budgetReservedError(budget: 'quota' | 'hour' | 'day'): ServiceError {
  return fail(
    'budget_reserved',
    'Runs in progress hold the budget this invocation needs; retry shortly or with a smaller maxTokens.',
    { budget, retryAfterSec: BUDGET_RESERVED_RETRY_AFTER_SEC },
    { 'Retry-After': String(BUDGET_RESERVED_RETRY_AFTER_SEC) },
  );
}

/** A window's totals, read with its `numeric` STU columns cast to numbers (not the stored row's types). */
interface WindowTotals {
  /** Charged to runs that ended. */
  spent: number;
  /** Held by runs in progress. */
  reserved: number;
  tripped_at: Date | null;
}

/** The run `start_run` inserts (or, with `adopt`, the inbound run's row it takes over). */
export interface RunToStart {
  workspaceId: string;
  runId: string;
  adopt: boolean;
  now: Date;
  leaseUntil: Date;
  agentSlug: string;
  answeredBy: string;
  alias: Alias;
  source: string;
  conversationId: string | null;
  /** How many turns the conversation had in the copy the engine is given (checked against the store's). */
  conversationTurns: number | null;
  /** The workspace's quota per period (the plan's, or the operator's override); the rollover is added in the store. */
  quotaStu: number;
  inputTokens: number;
  desiredOutput: number;
  settings: BudgetSettings;
  /** The request's Idempotency-Key, claimed for the run until `expiresAt`. */
  idempotency?: (IdempotencyClaim & { expiresAt: Date }) | undefined;
}

const START_RUN = `SELECT start_run($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) AS decision`;

type StartDecision =
  | { outcome: 'started'; outputCap: number; reservedStu: number; limitedBy: SpendingScope | null }
  | { outcome: 'replay'; runId: string }
  | { outcome: 'gone' | 'stale_history' | 'idempotency_mismatch' }
  | { outcome: 'quota_exceeded'; consumedStu: number; allowanceStu: number }
  | { outcome: 'kill_switch'; kind: 'manual' | 'hour' | 'day'; since: string | null }
  | { outcome: 'crossed'; scope: SpendingScope }
  | { outcome: 'budget_reserved'; budget: 'quota' | 'hour' | 'day' };

/**
 * The invocation's first round trip: refuses it (`429 quota_exceeded`, `429 kill_switch`, `429
 * budget_reserved`, `400 invalid_request` for a reused idempotency key), or reserves its worst case
 * and inserts its run, in one statement (see the module comment).
 */
export async function reserveRun(db: Db, run: RunToStart): Promise<Reservation> {
  const { now, settings } = run;
  const windows = windowsOf(now);
  const claim = run.idempotency;
  const [row] = await db.query<{ decision: StartDecision | string }>(
    START_RUN,
    [
      run.workspaceId,
      run.runId,
      run.adopt,
      now,
      run.leaseUntil,
      run.agentSlug,
      run.answeredBy,
      run.alias,
      run.source,
      run.conversationId,
      run.quotaStu,
      settings.rates[run.alias],
      run.inputTokens,
      run.desiredOutput,
      settings.limits.run,
      settings.limits.hour,
      settings.limits.day,
      claim?.credentialId ?? null,
      claim?.key ?? null,
      claim?.requestHash ?? null,
      claim?.expiresAt ?? null,
      run.conversationTurns,
    ],
    { name: 'start_run' },
  );
  const decision: StartDecision = typeof row!.decision === 'string' ? JSON.parse(row!.decision) : row!.decision;
  switch (decision.outcome) {
    case 'started':
      return { outcome: 'started', windows, reservedStu: Number(decision.reservedStu), outputCap: decision.outputCap, limitedBy: decision.limitedBy };
    case 'replay':
      return decision;
    case 'gone':
    case 'stale_history':
      return { outcome: decision.outcome };
    case 'crossed':
      return { outcome: 'crossed', windows, scope: decision.scope };
    case 'idempotency_mismatch':
      throw fail('invalid_request', "'idempotency-key' was already used with a different request.");
    case 'quota_exceeded': {
      const used = { quotaStu: Number(decision.allowanceStu), rolloverStu: 0, consumedStu: Number(decision.consumedStu) };
      throw quotaExceededError({
        allowed: false,
        policy: 'hardstop',
        pctConsumed: pctConsumed(used),
        resetAt: resetAt(now).toISOString(),
        retryAfterSec: Math.max(1, Math.ceil((resetAt(now).getTime() - now.getTime()) / 1000)),
      });
    }
    case 'kill_switch': {
      // The same answer activeKillSwitch gives for these totals: its kind, since when, and Retry-After.
      const since = decision.since ? new Date(decision.since) : null;
      const { limits } = settings;
      const active = activeKillSwitch(
        {
          now,
          hourStu: decision.kind === 'hour' ? limits.hour : 0,
          dayStu: decision.kind === 'day' ? limits.day : 0,
          manualSince: decision.kind === 'manual' ? since : null,
          hourSince: since,
          daySince: since,
        },
        limits,
      );
      throw killSwitchError(active!);
    }
    case 'budget_reserved':
      throw budgetReservedError(decision.budget);
  }
}

/**
 * Inside the transaction that ends a run outside its execution (cancel, sweep): releases its
 * reservation, charges the STU given to its windows and, when the run crossed the hour or day
 * limit and the window's charged consumption is within the margin of it, trips that window. (A run
 * that executed is settled by `finish_run`, which applies the same rules; see close.ts.)
 */
export async function settleBudget(
  tx: Tx,
  input: {
    workspaceId: string;
    windows: Windows;
    reservedStu: number;
    stu: number;
    crossed: SpendingScope | null;
    now: Date;
    limits: KillSwitchLimits;
  },
): Promise<void> {
  const { workspaceId, windows } = input;
  await lockPeriod(tx, workspaceId, periodOf(windows.day));
  await lockWindows(tx, workspaceId, windows);
  if (input.reservedStu !== 0) {
    await tx.query(`UPDATE usage_periods SET reserved_stu = GREATEST(0, reserved_stu - $3) WHERE workspace_id = $1 AND period = $2`, [
      workspaceId,
      periodOf(windows.day),
      input.reservedStu,
    ]);
  }
  const after = await tx.query<Pick<TableRow<'usage_windows'>, 'scope'> & { spent: number }>(
    `UPDATE usage_windows SET spent_stu = spent_stu + $4, reserved_stu = GREATEST(0, reserved_stu - $5)
      WHERE workspace_id = $1 AND ((scope = 'day' AND window_start = $2) OR (scope = 'hour' AND window_start = $3))
      RETURNING scope, spent_stu::float8 AS spent`,
    [workspaceId, windows.day, windows.hour, input.stu, input.reservedStu],
  );
  for (const scope of ['day', 'hour'] as const) {
    const spent = Number(after.find((row) => row.scope === scope)?.spent ?? 0);
    // A window spent up to its limit refuses new invocations whichever run got it there: it trips
    // now, so the switch always reads with the time it engaged (`since`, `activeSince`).
    if (spent >= input.limits[scope] || (input.crossed === scope && reachedLimit(spent, input.limits[scope])))
      await trip(tx, workspaceId, scope, windows, input.now);
  }
}

/** The manual switch: on (from `now`) or off. Returns whether it is on afterwards. */
export async function setManualKillSwitch(
  db: Db,
  workspaceId: string,
  on: boolean,
  now: Date,
  detail: { reason?: string | undefined; engagedBy?: string | undefined } = {},
): Promise<void> {
  if (on) {
    // Already on: it stays on since the first time (activeSince does not move); a new reason replaces the old one.
    await db.query(
      `INSERT INTO kill_switches (workspace_id, manual_since, reason, engaged_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_id) DO UPDATE SET reason = COALESCE(EXCLUDED.reason, kill_switches.reason)`,
      [workspaceId, now, detail.reason ?? null, detail.engagedBy ?? null],
    );
  } else {
    await db.query(`DELETE FROM kill_switches WHERE workspace_id = $1`, [workspaceId]);
  }
}

export interface KillSwitchStatus {
  manualSince: Date | null;
  /** The reason given when it was turned on from the panel. */
  manualReason: string | null;
  hour: WindowStatus;
  day: WindowStatus;
}

export interface WindowStatus {
  windowStart: Date;
  /** Charged to runs that ended. */
  spentStu: number;
  /** Held by runs in progress. */
  reservedStu: number;
  limitStu: number;
  trippedAt: Date | null;
}

/** What the operator sees with `service kill-switch status`. */
export async function killSwitchStatus(db: Db, workspaceId: string, now: Date, limits: KillSwitchLimits): Promise<KillSwitchStatus> {
  const windows = windowsOf(now);
  const [manual] = await db.query<Pick<TableRow<'kill_switches'>, 'manual_since' | 'reason'>>(
    `SELECT manual_since, reason FROM kill_switches WHERE workspace_id = $1`,
    [workspaceId],
  );
  const read = async (scope: 'hour' | 'day') => {
    const [row] = await db.query<WindowTotals>(
      `SELECT spent_stu::float8 AS spent, reserved_stu::float8 AS reserved, tripped_at FROM usage_windows
        WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`,
      [workspaceId, scope, windows[scope]],
    );
    return {
      windowStart: windows[scope],
      spentStu: Number(row?.spent ?? 0),
      reservedStu: Number(row?.reserved ?? 0),
      limitStu: limits[scope],
      trippedAt: row?.tripped_at ?? null,
    };
  };
  return { manualSince: manual?.manual_since ?? null, manualReason: manual?.reason ?? null, hour: await read('hour'), day: await read('day') };
}

/**
 * STU that engines reported beyond the reservations of the runs started in the current hour and day
 * windows: recorded on the runs (`unbilled_stu`), never charged. For operators (`kill-switch status`).
 */
export async function unbilledInWindows(db: Db, workspaceId: string, now: Date): Promise<{ hour: number; day: number }> {
  const windows = windowsOf(now);
  const [row] = await db.query<{ hour: number; day: number }>(
    `SELECT coalesce(sum(unbilled_stu) FILTER (WHERE window_hour = $3), 0)::float8 AS hour, coalesce(sum(unbilled_stu), 0)::float8 AS day
       FROM runs WHERE workspace_id = $1 AND window_day = $2 AND unbilled_stu > 0`,
    [workspaceId, windows.day, windows.hour],
  );
  return { hour: Number(row?.hour ?? 0), day: Number(row?.day ?? 0) };
}

function windowsOf(now: Date): Windows {
  const { hour, day } = killSwitchWindows(now);
  return { hour: hour.start, day: day.start };
}

/**
 * Creates the two window rows if needed and locks them, day first, always in that order (no
 * deadlock); reads the manual kill switch in the same statement.
 */
async function lockWindows(tx: Tx, workspaceId: string, windows: Windows): Promise<{ hour: WindowTotals; day: WindowTotals; manualSince: Date | null }> {
  await tx.query(
    `INSERT INTO usage_windows (workspace_id, scope, window_start) VALUES ($1, 'day', $2), ($1, 'hour', $3)
     ON CONFLICT (workspace_id, scope, window_start) DO NOTHING`,
    [workspaceId, windows.day, windows.hour],
  );
  // One statement locks both: the locking clause takes rows as they leave the sort, so day before hour.
  const rows = await tx.query<WindowTotals & { scope: 'hour' | 'day'; manual_since: Date | null }>(
    `SELECT scope, spent_stu::float8 AS spent, reserved_stu::float8 AS reserved, tripped_at,
            (SELECT manual_since FROM kill_switches k WHERE k.workspace_id = $1) AS manual_since
       FROM usage_windows
      WHERE workspace_id = $1 AND ((scope = 'day' AND window_start = $2) OR (scope = 'hour' AND window_start = $3))
      ORDER BY scope FOR UPDATE OF usage_windows`,
    [workspaceId, windows.day, windows.hour],
  );
  const totals = (scope: 'hour' | 'day') => {
    const row = rows.find((r) => r.scope === scope)!;
    return { spent: Number(row.spent), reserved: Number(row.reserved), tripped_at: row.tripped_at };
  };
  return { hour: totals('hour'), day: totals('day'), manualSince: rows[0]?.manual_since ?? null };
}

/**
 * Locks the period row of a reservation (created by ensurePeriod before the run starts; a row that
 * is missing, as for a run that started before the period existed, reads as empty).
 */
async function lockPeriod(tx: Tx, workspaceId: string, period: string): Promise<{ consumed: number; reserved: number }> {
  const [row] = await tx.query<{ consumed: number; reserved: number }>(
    `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods
      WHERE workspace_id = $1 AND period = $2 FOR UPDATE`,
    [workspaceId, period],
  );
  return { consumed: Number(row?.consumed ?? 0), reserved: Number(row?.reserved ?? 0) };
}

/** Whether a window's charged consumption is within the trip margin of its limit. */
function reachedLimit(chargedStu: number, limitStu: number): boolean {
  return chargedStu >= limitStu - Math.ceil(limitStu * TRIP_MARGIN);
}

async function trip(tx: Tx, workspaceId: string, scope: 'hour' | 'day', windows: Windows, now: Date): Promise<void> {
  await tx.query(`UPDATE usage_windows SET tripped_at = COALESCE(tripped_at, $4) WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`, [
    workspaceId,
    scope,
    windows[scope],
    now,
  ]);
}
