/**
 * @module Rollover: unused STU of a period carried into the next one, capped at one month's quota.
 */

interface ClosingPeriod {
  /** Base quota of the period that ends. */
  readonly quotaStu: number;
  /** Rollover that period had received. */
  readonly rolloverStu: number;
  readonly consumedStu: number;
  /** The cap: one month's quota of the plan in force in the next period. Default: `quotaStu`. */
  readonly capStu?: number;
}

/**
 * Rollover of the next period: what was left of quota + rollover, never negative (overage is not
 * carried as debt) and never more than the cap, so a quiet workspace cannot hoard months of quota.
 * For a period with no activity at all, call it once per skipped period with `consumedStu: 0`.
 */
export function nextRolloverStu({ quotaStu, rolloverStu, consumedStu, capStu = quotaStu }: ClosingPeriod): number {
  return Math.min(Math.max(0, capStu), Math.max(0, quotaStu + rolloverStu - consumedStu));
}
