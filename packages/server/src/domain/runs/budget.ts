/**
 * @module Spending budgets in the store: the hour and day windows of the kill switches and the
 * per-run limit, enforced atomically.
 *
 * A run *reserves* its worst case (input tokens plus its output cap, at the alias's STU rate) on the
 * hour and day rows before the engine is called, under `SELECT … FOR UPDATE` in one transaction, so
 * concurrent requests and several instances queue on the same rows and the sum of reservations and
 * charges never goes above a limit. When the headroom is smaller than the worst case, the output cap
 * shrinks to fit; a run that then uses its whole cap has crossed the limit and fails with
 * `kill_switch:<scope>`. When even the input does not fit, the run crosses at once. A crossing trips
 * the window (`tripped_at`): new invocations get `429 kill_switch` until the window ends. When the
 * run ends, its reservation is replaced by what it really consumed.
 */
import type { Alias } from '../agents/alias.ts';
import {
  activeKillSwitch,
  killSwitchError,
  killSwitchWindows,
  stuForRun,
  type KillSwitchLimits,
  type SpendingScope,
  type StuRates,
} from '../usage/index.ts';
import type { Db } from '../../store/db.ts';

export interface BudgetSettings {
  limits: KillSwitchLimits;
  rates: StuRates;
}

export interface Windows {
  hour: Date;
  day: Date;
}

export type ReservationResult =
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

interface WindowRow {
  spent: number;
  tripped_at: Date | null;
}

/**
 * Inside a transaction: refuses with `429 kill_switch` while a switch is active (manual, or the hour
 * or day window tripped or spent), then reserves the run's worst case.
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
  },
): Promise<ReservationResult> {
  const { workspaceId, now, settings } = input;
  const windows = windowsOf(now);
  const { hour, day } = await lockWindows(tx, workspaceId, windows);
  const [manual] = await tx.query<{ manual_since: Date }>(`SELECT manual_since FROM kill_switches WHERE workspace_id = $1`, [
    workspaceId,
  ]);
  const { limits } = settings;
  const active = activeKillSwitch(
    {
      now,
      // A tripped window counts as spent: the crossing run proved the next one would cross too.
      hourStu: hour.tripped_at ? limits.hour : hour.spent,
      dayStu: day.tripped_at ? limits.day : day.spent,
      manualSince: manual?.manual_since ?? null,
      hourSince: hour.tripped_at,
      daySince: day.tripped_at,
    },
    limits,
  );
  if (active) throw killSwitchError(active);

  const headroom: [SpendingScope, number][] = [
    ['run', limits.run],
    ['hour', limits.hour - hour.spent],
    ['day', limits.day - day.spent],
  ];
  const [scope, room] = headroom.reduce((min, next) => (next[1] < min[1] ? next : min));
  const rate = settings.rates[input.alias];
  const tokensInRoom = Math.floor(Math.max(0, room) / rate);
  const outputRoom = tokensInRoom - input.inputTokens;
  if (outputRoom < 1) {
    if (scope !== 'run') await trip(tx, workspaceId, scope, windows, now);
    return { ok: false, windows, crossed: scope };
  }
  const outputCap = Math.min(input.desiredOutput, outputRoom);
  const reservedStu = stuForRun({ alias: input.alias, inputTokens: input.inputTokens, outputTokens: outputCap }, settings.rates);
  await addSpent(tx, workspaceId, windows, reservedStu);
  return { ok: true, windows, reservedStu, outputCap, limitedBy: outputCap < input.desiredOutput ? scope : null };
}

/**
 * Inside the run's closing transaction: replaces the reservation by the STU really consumed and,
 * when the run crossed the hour or day limit, trips that window.
 */
export async function settleBudget(
  tx: Db,
  input: { workspaceId: string; windows: Windows; reservedStu: number; stu: number; crossed: SpendingScope | null; now: Date },
): Promise<void> {
  await lockWindows(tx, input.workspaceId, input.windows);
  await addSpent(tx, input.workspaceId, input.windows, input.stu - input.reservedStu);
  if (input.crossed === 'hour' || input.crossed === 'day') {
    await trip(tx, input.workspaceId, input.crossed, input.windows, input.now);
  }
}

/** The manual switch: on (from `now`) or off. Returns whether it is on afterwards. */
export async function setManualKillSwitch(db: Db, workspaceId: string, on: boolean, now: Date): Promise<void> {
  if (on) {
    await db.query(
      `INSERT INTO kill_switches (workspace_id, manual_since) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING`,
      [workspaceId, now],
    );
  } else {
    await db.query(`DELETE FROM kill_switches WHERE workspace_id = $1`, [workspaceId]);
  }
}

export interface KillSwitchStatus {
  manualSince: Date | null;
  hour: { windowStart: Date; spentStu: number; limitStu: number; trippedAt: Date | null };
  day: { windowStart: Date; spentStu: number; limitStu: number; trippedAt: Date | null };
}

/** What the operator sees with `service kill-switch status`. */
export async function killSwitchStatus(db: Db, workspaceId: string, now: Date, limits: KillSwitchLimits): Promise<KillSwitchStatus> {
  const windows = windowsOf(now);
  const [manual] = await db.query<{ manual_since: Date }>(`SELECT manual_since FROM kill_switches WHERE workspace_id = $1`, [
    workspaceId,
  ]);
  const read = async (scope: 'hour' | 'day') => {
    const [row] = await db.query<WindowRow>(
      `SELECT spent_stu::float8 AS spent, tripped_at FROM usage_windows WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`,
      [workspaceId, scope, windows[scope]],
    );
    return { windowStart: windows[scope], spentStu: Number(row?.spent ?? 0), limitStu: limits[scope], trippedAt: row?.tripped_at ?? null };
  };
  return { manualSince: manual?.manual_since ?? null, hour: await read('hour'), day: await read('day') };
}

/** Whether the manual switch was turned on after `since` (a run in progress is then stopped). */
export async function manualSwitchSince(db: Db, workspaceId: string): Promise<Date | null> {
  const [row] = await db.query<{ manual_since: Date }>(`SELECT manual_since FROM kill_switches WHERE workspace_id = $1`, [workspaceId]);
  return row?.manual_since ?? null;
}

function windowsOf(now: Date): Windows {
  const { hour, day } = killSwitchWindows(now);
  return { hour: hour.start, day: day.start };
}

/** Creates the two window rows if needed and locks them, day first, always in that order (no deadlock). */
async function lockWindows(tx: Db, workspaceId: string, windows: Windows): Promise<{ hour: WindowRow; day: WindowRow }> {
  await tx.query(
    `INSERT INTO usage_windows (workspace_id, scope, window_start) VALUES ($1, 'day', $2), ($1, 'hour', $3)
     ON CONFLICT (workspace_id, scope, window_start) DO NOTHING`,
    [workspaceId, windows.day, windows.hour],
  );
  const lock = async (scope: 'hour' | 'day') => {
    const [row] = await tx.query<WindowRow>(
      `SELECT spent_stu::float8 AS spent, tripped_at FROM usage_windows
        WHERE workspace_id = $1 AND scope = $2 AND window_start = $3 FOR UPDATE`,
      [workspaceId, scope, windows[scope]],
    );
    return { spent: Number(row!.spent), tripped_at: row!.tripped_at };
  };
  const day = await lock('day');
  const hour = await lock('hour');
  return { hour, day };
}

async function addSpent(tx: Db, workspaceId: string, windows: Windows, stu: number): Promise<void> {
  if (stu === 0) return;
  await tx.query(
    `UPDATE usage_windows SET spent_stu = GREATEST(0, spent_stu + $4)
      WHERE workspace_id = $1 AND ((scope = 'day' AND window_start = $2) OR (scope = 'hour' AND window_start = $3))`,
    [workspaceId, windows.day, windows.hour, stu],
  );
}

async function trip(tx: Db, workspaceId: string, scope: 'hour' | 'day', windows: Windows, now: Date): Promise<void> {
  await tx.query(
    `UPDATE usage_windows SET tripped_at = COALESCE(tripped_at, $4) WHERE workspace_id = $1 AND scope = $2 AND window_start = $3`,
    [workspaceId, scope, windows[scope], now],
  );
}
