/**
 * @module Spending budgets and the quota in the store, enforced atomically: the hour and day
 * windows of the kill switches, the per-run limit, and the period's hard stop.
 *
 * A run *reserves* its worst case (input tokens plus its output cap, at the alias's STU rate)
 * before the engine is called, on the period row and the hour and day rows, locked with
 * `SELECT … FOR UPDATE` in one transaction, always in the order period, day, hour (no deadlock).
 * Concurrent requests on any number of instances queue on the same rows, and admission counts what
 * was charged plus what runs in progress hold (`reserved_stu`), so neither a limit nor the quota's
 * hard stop can be passed.
 *
 * - Kill switches: when what was charged leaves less than the worst case, the output cap shrinks to
 *   fit; a run that then uses its whole cap has crossed the limit and fails with `kill_switch:<scope>`.
 *   When even the input does not fit, the run crosses at once, and an hour or day window *trips*
 *   (`tripped_at`: new invocations get `429 kill_switch` until the window ends). A window also trips
 *   when a run's charge brings it to its limit, or a crossing run's to within `TRIP_MARGIN` of it.
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
 * When a run ends (or is canceled, or swept after a crash) its reservation is released and what it
 * really consumed is charged (`settleBudget`).
 */
import type { Alias } from '../../vocabulary/alias.ts';
import {
  activeKillSwitch,
  hardstopStu,
  killSwitchError,
  killSwitchWindows,
  periodOf,
  quotaExceededError,
  resetAt,
  pctConsumed,
  checkQuota,
  stuForRun,
  type KillSwitchLimits,
  type SpendingScope,
  type StuRates,
} from '../usage/index.ts';
import type { TableRow } from '../../../../../generated/db.ts';
import type { Db } from '../../store/db.ts';
import { fail, type ServiceError } from '../../errors.ts';

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
 * documented margin of the hour and day switches.
 */
const TRIP_MARGIN = 0.01;

type ReservationResult =
  | {
      ok: true;
      windows: Windows;
      reservedStu: number;
      /** Output tokens the engine may produce. */
      outputCap: number;
      /** The switch that shrank the cap, if one did: using the whole cap then crosses it. */
      limitedBy: SpendingScope | null;
    }
  | { ok: false; windows: Windows; crossed: SpendingScope };

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

/** The quota of the run's period: quota plus rollover (the hard stop is a share of it). */
interface QuotaAllowance {
  allowanceStu: number;
}

/**
 * Inside a transaction: refuses with `429 quota_exceeded` at the hard stop and with
 * `429 kill_switch` while a switch is active (manual, or the hour or day window tripped or spent),
 * then reserves the run's worst case on the period and the windows.
 */
export async function reserveBudget(
  tx: Db,
  input: {
    workspaceId: string;
    now: Date;
    alias: Alias;
    inputTokens: number;
    desiredOutput: number;
    settings: BudgetSettings;
    quota: QuotaAllowance;
  },
): Promise<ReservationResult> {
  const { workspaceId, now, settings } = input;
  const windows = windowsOf(now);
  const period = await lockPeriod(tx, workspaceId, periodOf(windows.day));
  const quota = { now, quotaStu: input.quota.allowanceStu, rolloverStu: 0 };
  const charged = checkQuota({ ...quota, consumedStu: period.consumed });
  if (!charged.allowed) throw quotaExceededError(charged);
  const { hour, day, manualSince } = await lockWindows(tx, workspaceId, windows);
  const { limits } = settings;
  const active = activeKillSwitch(
    {
      now,
      // A tripped window counts as spent: the crossing run proved the next one would cross too.
      hourStu: hour.tripped_at ? limits.hour : hour.spent,
      dayStu: day.tripped_at ? limits.day : day.spent,
      manualSince,
      hourSince: hour.tripped_at,
      daySince: day.tripped_at,
    },
    limits,
  );
  if (active) throw killSwitchError(active);

  const rate = settings.rates[input.alias];
  /** Output tokens that fit in `stu` after this run's input. */
  const outputWithin = (stu: number) => Math.floor(Math.max(0, stu) / rate) - input.inputTokens;
  // What each limit leaves: by what was charged alone (the limit itself), and after what runs in progress hold.
  const rooms: { scope: SpendingScope; charged: number; held: number }[] = [
    { scope: 'run', charged: limits.run, held: limits.run },
    { scope: 'hour', charged: limits.hour - hour.spent, held: limits.hour - hour.spent - hour.reserved },
    { scope: 'day', charged: limits.day - day.spent, held: limits.day - day.spent - day.reserved },
  ];
  const binding = rooms.reduce((min, next) => (next.charged < min.charged ? next : min));
  const byLimits = outputWithin(binding.charged);
  if (byLimits < 1) {
    // The limit itself leaves no room for this run's input and one token: the run crosses at once,
    // and an hour or day window trips (every further run would cross it too).
    if (binding.scope !== 'run') await trip(tx, workspaceId, binding.scope, windows, now);
    return { ok: false, windows, crossed: binding.scope };
  }
  // Only the limit itself shrinks a cap (a run that uses all of a shrunk cap crosses it), never
  // what other runs hold: that room comes back as they end.
  const outputCap = Math.min(input.desiredOutput, byLimits);
  const reservedStu = stuForRun({ alias: input.alias, inputTokens: input.inputTokens, outputTokens: outputCap }, settings.rates);
  const hardstop = hardstopStu(input.quota.allowanceStu);
  if (period.consumed + reservedStu > hardstop) {
    // Even with no run in progress, this run's worst case would pass the hard stop (a smaller maxTokens may fit).
    const held = { ...quota, consumedStu: period.consumed + period.reserved };
    throw quotaExceededError({
      allowed: false,
      policy: 'hardstop',
      pctConsumed: pctConsumed(held),
      resetAt: resetAt(now).toISOString(),
      retryAfterSec: Math.max(1, Math.ceil((resetAt(now).getTime() - now.getTime()) / 1000)),
    });
  }
  // It fits the limits and the quota; only reservations of runs in progress keep it out: retry shortly.
  const crowded = rooms.find((room) => room.scope !== 'run' && outputWithin(room.held) < outputCap);
  if (crowded) throw budgetReservedError(crowded.scope === 'day' ? 'day' : 'hour');
  if (period.consumed + period.reserved + reservedStu > hardstop) throw budgetReservedError('quota');
  await hold(tx, workspaceId, windows, reservedStu);
  return { ok: true, windows, reservedStu, outputCap, limitedBy: outputCap < input.desiredOutput ? binding.scope : null };
}

/**
 * Inside the transaction that ends a run (closing, cancel, sweep): releases its reservation,
 * charges the STU it really consumed to its windows and, when the run crossed the hour or day
 * limit and the window's charged consumption is within the margin of it, trips that window. The
 * period's consumption is charged by the usage ledger (chargeUsage), in the same transaction.
 */
export async function settleBudget(
  tx: Db,
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

/** Whether the manual switch was turned on after `since` (a run in progress is then stopped). */
export async function manualSwitchSince(db: Db, workspaceId: string): Promise<Date | null> {
  const [row] = await db.query<Pick<TableRow<'kill_switches'>, 'manual_since'>>(`SELECT manual_since FROM kill_switches WHERE workspace_id = $1`, [
    workspaceId,
  ]);
  return row?.manual_since ?? null;
}

function windowsOf(now: Date): Windows {
  const { hour, day } = killSwitchWindows(now);
  return { hour: hour.start, day: day.start };
}

/**
 * Creates the two window rows if needed and locks them, day first, always in that order (no
 * deadlock); reads the manual kill switch in the same statement.
 */
async function lockWindows(tx: Db, workspaceId: string, windows: Windows): Promise<{ hour: WindowTotals; day: WindowTotals; manualSince: Date | null }> {
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
async function lockPeriod(tx: Db, workspaceId: string, period: string): Promise<{ consumed: number; reserved: number }> {
  const [row] = await tx.query<{ consumed: number; reserved: number }>(
    `SELECT consumed_stu::float8 AS consumed, reserved_stu::float8 AS reserved FROM usage_periods
      WHERE workspace_id = $1 AND period = $2 FOR UPDATE`,
    [workspaceId, period],
  );
  return { consumed: Number(row?.consumed ?? 0), reserved: Number(row?.reserved ?? 0) };
}

async function hold(tx: Db, workspaceId: string, windows: Windows, stu: number): Promise<void> {
  await tx.query(`UPDATE usage_periods SET reserved_stu = reserved_stu + $3 WHERE workspace_id = $1 AND period = $2`, [
    workspaceId,
    periodOf(windows.day),
    stu,
  ]);
  await tx.query(
    `UPDATE usage_windows SET reserved_stu = reserved_stu + $4
      WHERE workspace_id = $1 AND ((scope = 'day' AND window_start = $2) OR (scope = 'hour' AND window_start = $3))`,
    [workspaceId, windows.day, windows.hour, stu],
  );
}

/** Whether a window's charged consumption is within the trip margin of its limit. */
function reachedLimit(chargedStu: number, limitStu: number): boolean {
  return chargedStu >= limitStu - Math.ceil(limitStu * TRIP_MARGIN);
}

async function trip(tx: Db, workspaceId: string, scope: 'hour' | 'day', windows: Windows, now: Date): Promise<void> {
  await tx.query(`UPDATE usage_windows SET tripped_at = COALESCE(tripped_at, $4) WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`, [
    workspaceId,
    scope,
    windows[scope],
    now,
  ]);
}
