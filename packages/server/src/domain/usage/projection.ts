/**
 * @module projectedStu: where consumption ends the period if it keeps its pace so far.
 */
import { periodStart, resetAt } from './period.ts';

/**
 * Elapsed time is floored at one hour: in the first minutes of a month a handful of runs would
 * otherwise project to absurd totals.
 */
const MIN_ELAPSED_MS = 60 * 60 * 1000;

/** Linear projection of `consumedStu` over the whole period; never below what is already consumed. */
export function projectedStu(consumedStu: number, now: Date): number {
  const start = periodStart(now).getTime();
  const length = resetAt(now).getTime() - start;
  const elapsed = Math.min(length, Math.max(MIN_ELAPSED_MS, now.getTime() - start));
  return Math.max(consumedStu, Math.round((consumedStu * length) / elapsed));
}
