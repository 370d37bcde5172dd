/**
 * @module The workspace's four spending kill switches as the panel shows them (`run`, `hour`, `day`,
 * `manual`): engaged or not, since when, the limits and the current windows' spend, in STU. Read from
 * the same rows the run budget locks (budget.ts), so the panel shows what invocations are refused by.
 */
import type { Schema } from '../../contract.ts';
import type { Db } from '../../store/db.ts';
import { killSwitchWindows, type KillSwitchLimits } from '../usage/index.ts';
import { killSwitchStatus, type WindowStatus } from './budget.ts';

export type KillSwitches = Schema<'KillSwitches'>;

export async function killSwitches(db: Db, workspaceId: string, now: Date, limits: KillSwitchLimits): Promise<KillSwitches> {
  const status = await killSwitchStatus(db, workspaceId, now, limits);
  const windows = killSwitchWindows(now);
  const none = { since: null, reason: null, spentStu: null, reservedStu: null, windowStart: null, windowEnd: null };
  const windowSwitch = (kind: 'hour' | 'day', w: WindowStatus) => {
    // Tripped by a crossing run, or spent up to the limit by runs that ended: either way new invocations are refused.
    const engaged = w.trippedAt !== null || w.spentStu >= w.limitStu;
    return {
      kind,
      engaged,
      // Settling trips a window spent to its limit (budget.ts), so `since` is the trip; a row spent
      // before that rule (no trip recorded) reads as engaged since its window began, never null.
      since: engaged ? (w.trippedAt ?? w.windowStart).toISOString() : null,
      reason: null,
      limitStu: w.limitStu,
      spentStu: Math.round(w.spentStu),
      reservedStu: Math.round(w.reservedStu),
      windowStart: w.windowStart.toISOString(),
      windowEnd: windows[kind].end.toISOString(),
    };
  };
  return {
    // The per-run limit stops one run at a time; it never refuses the workspace's next invocation.
    run: { kind: 'run', engaged: false, ...none, limitStu: limits.run },
    hour: windowSwitch('hour', status.hour),
    day: windowSwitch('day', status.day),
    manual: {
      kind: 'manual',
      engaged: status.manualSince !== null,
      ...none,
      since: status.manualSince?.toISOString() ?? null,
      reason: status.manualSince ? status.manualReason : null,
      limitStu: null,
    },
  };
}
