/**
 * @module Usage domain: STU per run, the period, policy levels, quota and kill switches (the rollover is the
 * store's: store/functions/ensure_usage_period.sql).
 * Pure functions of their inputs (time included), so they can run inside a store transaction.
 */
export * from './rates.ts';
export * from './period.ts';
export * from './projection.ts';
export * from './policy.ts';
export * from './usage.ts';
export * from './quota.ts';
export * from './kill-switch.ts';
