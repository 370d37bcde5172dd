/**
 * @module Runs: creation, execution through the engines, cancel, reads, budgets and the usage ledger.
 */
export * from './service.ts';
export * from './store.ts';
export { requestHash, IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from './idempotency.ts';
export { createUsageService, type UsageService } from './usage-service.ts';
export { createUsageTally, type UsageTally } from './usage-tally.ts';
export { dailyUsage, type DailyUsage } from './daily-usage.ts';
export { killSwitches, type KillSwitches } from './kill-switches.ts';
export { killSwitchStatus, setManualKillSwitch, unbilledInWindows, type BudgetSettings, type KillSwitchStatus } from './budget.ts';
export { assertAliasInPlan, assertMayInvokeAgent } from './access.ts';
export { runFailureError, streamErrorOf, type StreamErrorBody } from './outcome.ts';
export { inboundRunExecutor, type InboundRunInput } from './inbound.ts';
export { endRun, INTERRUPTED, MAX_RECOVERIES, RUN_LEASE_MS, sweepInterruptedRuns, type SweepResult } from './recovery.ts';
