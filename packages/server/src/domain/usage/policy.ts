/**
 * @module Quota policy: the percentage consumed and the level it puts the workspace in.
 * Thresholds (team decision): green < 75 %, warning 75–90 %, critical 90–100 %,
 * overage 100–110 %, grace 110–120 %, hardstop ≥ 120 % (new invocations get `quota_exceeded`).
 * Each range includes its lower bound.
 */

export const POLICY_LEVELS = ['green', 'warning', 'critical', 'overage', 'grace', 'hardstop'] as const;
export type PolicyLevel = (typeof POLICY_LEVELS)[number];

/** Lower bound, in percent, of each level above green. */
const POLICY_THRESHOLDS: Readonly<Record<Exclude<PolicyLevel, 'green'>, number>> = {
  warning: 75,
  critical: 90,
  overage: 100,
  grace: 110,
  hardstop: 120,
};

interface Allowance {
  readonly consumedStu: number;
  readonly quotaStu: number;
  readonly rolloverStu: number;
}

/**
 * Percent of quota + rollover consumed, floored to two decimals so the figure shown never reads
 * as a higher level than the one applied. A zero allowance counts as 1 STU, so the figure stays finite
 * and agrees with policyLevel.
 */
export function pctConsumed({ consumedStu, quotaStu, rolloverStu }: Allowance): number {
  const allowance = quotaStu + rolloverStu;
  if (consumedStu <= 0) return 0;
  return Math.floor((consumedStu * 10_000) / Math.max(allowance, 1)) / 100;
}

/** The level, compared in integers (consumed × 100 against allowance × threshold) so there is no rounding at the edges. */
export function policyLevel({ consumedStu, quotaStu, rolloverStu }: Allowance): PolicyLevel {
  if (consumedStu <= 0) return 'green';
  const allowance = Math.max(quotaStu + rolloverStu, 1);
  let level: PolicyLevel = 'green';
  for (const [name, threshold] of Object.entries(POLICY_THRESHOLDS) as [PolicyLevel, number][]) {
    if (consumedStu * 100 >= allowance * threshold) level = name;
  }
  return level;
}

/**
 * The hard stop, in percent of quota plus rollover: its one home. `start_runs` (store/functions/start_runs.sql) is given
 * it with every run (`hardstop_pct`) and refuses new invocations from there.
 */
export const HARDSTOP_PCT = POLICY_THRESHOLDS.hardstop;

/** The most STU the period may consume: the hard stop's share of quota plus rollover (the quota guard admits no run past it). */
export function hardstopStu(allowanceStu: number): number {
  return Math.floor((Math.max(allowanceStu, 1) * HARDSTOP_PCT) / 100);
}
