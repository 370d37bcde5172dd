/**
 * @module The usage service handlers receive: the current period's usage, the days of it, the spending
 * kill switches and the manual one. Built once per app from the store, the clock, the budget's limits,
 * the agent settings (the quota) and the usage tally; the reads and writes are those of usage-store.ts,
 * daily-usage.ts, kill-switches.ts and budget.ts. (Beside the run budget rather than in domain/usage:
 * the ledger is the spending's, and domain/usage stays the pure arithmetic both read.)
 */
import type { Clock } from '../../clock.ts';
import type { Db, Tx } from '../../store/db.ts';
import { type AuditContext, recordAudit } from '../audit/index.ts';
import type { KillSwitchLimits } from '../usage/index.ts';
import { setManualKillSwitch } from './budget.ts';
import { dailyUsage } from './daily-usage.ts';
import { killSwitches } from './kill-switches.ts';
import { currentUsage } from './usage-store.ts';
import type { UsageTally } from './usage-tally.ts';

export type UsageService = ReturnType<typeof createUsageService>;

export function createUsageService(deps: {
  db: Db;
  clock: Clock;
  limits: KillSwitchLimits;
  /** The workspace's quota (the agent settings cache, domain/agents/settings-cache.ts). */
  settings: (workspaceId: string) => Promise<{ quotaStu: number }>;
  /** The current periods in memory (usage-tally.ts). */
  tally: UsageTally;
}) {
  const { db, clock, limits } = deps;
  return {
    /** The Usage resource of the workspace's current period: from memory while it is known current. */
    current: (workspaceId: string) => currentUsage(db, clock, deps, workspaceId),
    /** The current period day by day. */
    daily: (workspaceId: string) => dailyUsage(db, clock, workspaceId),
    /** The four kill switches (run, hour, day, manual) as of now. */
    killSwitches: (workspaceId: string) => killSwitches(db, workspaceId, clock.now(), limits),
    /** Engages or releases the manual switch (as `service kill-switch on|off`). */
    setManualKillSwitch: (
      workspaceId: string,
      engaged: boolean,
      detail: { reason?: string | undefined; engagedBy?: string | undefined },
      audit?: AuditContext,
    ) => db.transaction((tx) => setManualKillSwitchAudited(tx, workspaceId, engaged, clock.now(), detail, audit)),
  };
}

/** Engages or releases the manual switch and records who did, in the caller's transaction (the route, the command line). */
export async function setManualKillSwitchAudited(
  tx: Tx,
  workspaceId: string,
  engaged: boolean,
  now: Date,
  detail: { reason?: string | undefined; engagedBy?: string | undefined },
  audit: AuditContext | undefined,
): Promise<void> {
  await setManualKillSwitch(tx, workspaceId, engaged, now, detail);
  const details = engaged && detail.reason ? { reason: detail.reason } : {};
  const target = { type: 'kill_switch' as const, id: 'manual', label: 'Manual spending switch' };
  await recordAudit(tx, audit, workspaceId, { action: engaged ? 'kill_switch.engaged' : 'kill_switch.released', target, details }, now);
}
