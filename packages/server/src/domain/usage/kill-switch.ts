/**
 * @module Spending kill switches: 1 M STU per run, 10 M per hour, 80 M per day (the spec's
 * 5 / 50 / 400 EUR at the overage rate), plus a manual switch.
 *
 * Decisions (team): hours and days are UTC calendar windows (`date_trunc('hour'|'day')`), so a
 * database can keep one budget row per window and enforce it atomically. A run *crosses* a limit
 * when its total would go above it; the hour or day switch is *active* for new invocations once
 * the window's consumption has reached its limit, since any further run would cross it. The store applies
 * the limits (store/functions/start_runs.sql admits and caps a run, settle_runs.sql charges and trips the
 * windows); here are the limits, the windows, the margin and the answers of an active switch.
 */
import { fail, retryHints, type ServiceError } from '../../errors.ts';
import { isOneOf } from '../../one-of.ts';

const KILL_SWITCH_KINDS = ['run', 'hour', 'day', 'manual'] as const;
export type KillSwitchKind = (typeof KILL_SWITCH_KINDS)[number];
export type SpendingScope = Exclude<KillSwitchKind, 'manual'>;

export type KillSwitchLimits = Readonly<Record<SpendingScope, number>>;

export const KILL_SWITCH_LIMITS: KillSwitchLimits = { run: 1_000_000, hour: 10_000_000, day: 80_000_000 };

/**
 * The documented margin of the hour and day switches (1 %): a window a run crossed (its output cut at the
 * cap that window's limit left) trips once what it was charged is within this share of its limit
 * (limit - ceil(limit × margin)); any run that brings it to the limit trips it. Its one home: every
 * settlement passes it to `settle_runs` (store/functions/settle_runs.sql), which applies it.
 */
export const TRIP_MARGIN = 0.01;

/** The `run.failed` reason of a run stopped by a switch (`manual` when an operator pulls it mid-run). */
export function killSwitchReason(kind: KillSwitchKind): `kill_switch:${KillSwitchKind}` {
  return `kill_switch:${kind}`;
}

/** The kill switch a failure reason names (`kill_switch:hour` → `hour`), or undefined for any other reason. */
export function killSwitchOfReason(reason: string): KillSwitchKind | undefined {
  const kind = reason.startsWith('kill_switch:') ? reason.slice('kill_switch:'.length) : undefined;
  return isOneOf(KILL_SWITCH_KINDS, kind) ? kind : undefined;
}

interface Window {
  readonly start: Date;
  readonly end: Date;
}

/** The UTC hour and day windows that contain `now`. */
export function killSwitchWindows(now: Date): { hour: Window; day: Window } {
  const hourStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours());
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return {
    hour: { start: new Date(hourStart), end: new Date(hourStart + HOUR_MS) },
    day: { start: new Date(dayStart), end: new Date(dayStart + 24 * HOUR_MS) },
  };
}

interface KillSwitchState {
  readonly now: Date;
  /** Consumption of the current UTC hour and day windows. */
  readonly hourStu: number;
  readonly dayStu: number;
  /** When the manual switch was turned on, or null when it is off. */
  readonly manualSince?: Date | null;
  /** When the hour / day budget was reached, if the store recorded it. */
  readonly hourSince?: Date | null;
  readonly daySince?: Date | null;
}

interface ActiveKillSwitch {
  readonly kind: KillSwitchKind;
  readonly activeSince?: Date;
  /** How long until the switch clears (the window's end), in milliseconds. */
  readonly retryAfterMs: number;
}

/** A manual switch has no end of its own; clients are told to look again in an hour. */
const MANUAL_RETRY_AFTER_MS = 3_600_000;
const HOUR_MS = 60 * 60 * 1000;

/**
 * The switch that refuses new invocations now, or null. Manual wins, then day, then hour, so the
 * client is told the longest wait.
 */
export function activeKillSwitch(state: KillSwitchState, limits: KillSwitchLimits = KILL_SWITCH_LIMITS): ActiveKillSwitch | null {
  const windows = killSwitchWindows(state.now);
  const until = (end: Date) => Math.max(1, end.getTime() - state.now.getTime());
  if (state.manualSince) return { kind: 'manual', activeSince: state.manualSince, retryAfterMs: MANUAL_RETRY_AFTER_MS };
  if (state.dayStu >= limits.day) return withSince('day', state.daySince, until(windows.day.end));
  if (state.hourStu >= limits.hour) return withSince('hour', state.hourSince, until(windows.hour.end));
  return null;
}

/**
 * The 429 `kill_switch` error with `kind`, `activeSince` when known, and the retry hints: the wait until the
 * switch clears, and `X-Should-Retry: false` (it ends by waiting for the window or a person, not by looping).
 */
export function killSwitchError(active: ActiveKillSwitch): ServiceError {
  return fail(
    'kill_switch',
    'A spending kill switch is active.',
    { kind: active.kind, activeSince: active.activeSince?.toISOString() },
    retryHints(active.retryAfterMs, false),
  );
}

function withSince(kind: KillSwitchKind, since: Date | null | undefined, retryAfterMs: number): ActiveKillSwitch {
  return since ? { kind, activeSince: since, retryAfterMs } : { kind, retryAfterMs };
}
