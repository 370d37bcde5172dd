/**
 * @module A run's spending: the reservation of its worst case and its settling (the money path's
 * budget side), the usage ledger's period reads, the days of a period, the kill switches and the
 * manual one, the output cap, the usage service handlers receive and its tally in memory.
 */
export { killSwitchStatus, setManualKillSwitch, unbilledInWindows, type BudgetSettings, type KillSwitchStatus } from './budget.ts';
export { dailyUsage, type DailyUsage } from './daily-usage.ts';
export { killSwitches, type KillSwitches } from './kill-switches.ts';
export { createUsageService, setManualKillSwitchAudited, type UsageService } from './usage-service.ts';
export { createUsageTally, type UsageTally } from './usage-tally.ts';
