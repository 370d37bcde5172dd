/**
 * @module A run's spending: the reservation of its worst case and its settling (the money path's
 * budget side), the usage ledger's period reads, the days of a period, the kill switches and the
 * manual one, the output cap, and the usage service handlers receive.
 */
export { killSwitchStatus, setManualKillSwitch, unbilledInWindows, type BudgetSettings, type KillSwitchStatus } from './budget.ts';
export { currentUsage } from './usage-store.ts';
export { dailyUsage, type DailyUsage } from './daily-usage.ts';
export { killSwitches, type KillSwitches } from './kill-switches.ts';
export { createUsageService, type UsageService } from './usage-service.ts';
