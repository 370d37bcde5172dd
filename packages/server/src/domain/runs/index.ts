/**
 * @module Runs: their lifecycle (creation, execution through the engines, close, cancel, recovery) and
 * their records (rows, steps, conversations, events, idempotency). What a run spends is domain/spending's; its
 * event log (the contract's `RunEvent`) is domain/run-events'.
 */
export * from './service.ts';
export * from './store.ts';
export { requestHash, IDEMPOTENCY_TTL_MS, type IdempotencyClaim } from './idempotency.ts';
export { assertAliasInPlan, assertMayInvokeAgent } from './access.ts';
export { runFailureError } from './outcome.ts';
export { InboundRunWaits, inboundRunExecutor, type InboundRunInput } from './inbound.ts';
export { endRun, INTERRUPTED, MAX_RECOVERIES, RUN_LEASE_MS, sweepInterruptedRuns, type SweepResult } from './recovery.ts';
