/**
 * @module Usage domain: STU per run, the period, policy levels, quota, rollover and kill switches.
 * Pure functions of their inputs (time included), so they can run inside a store transaction.
 */
export * from './rates.ts';
export * from './period.ts';
export * from './projection.ts';
export * from './policy.ts';
export * from './rollover.ts';
export * from './usage.ts';
export * from './quota.ts';
export * from './kill-switch.ts';
