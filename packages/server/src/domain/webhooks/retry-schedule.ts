/**
 * @module The published retry schedule of outbound deliveries and the pause rule of destinations.
 *
 * Schedule: attempt 1 at once; after each failed attempt, wait 30 s, 2 min, 10 min, 30 min, 1 h,
 * 2 h, 4 h (each ±20 % jitter) before attempts 2 to 8; after the 8th failed attempt, give up
 * (about 7 h 42 min after the first try, before jitter). The delays count from the previous
 * failed attempt. Pause rule: a destination whose last 20 attempts all failed (across all of its
 * deliveries; any success resets the count) is paused and flagged until an admin resumes it.
 */

/** The nominal delay before each attempt, in seconds; index 0 is the first attempt. */
export const RETRY_SCHEDULE_SECONDS = [0, 30, 120, 600, 1800, 3600, 7200, 14400] as const;
/** Attempts made for one delivery before it is given up. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length;
/** The jitter applied to every retry delay: a uniform factor in [1 − 0.2, 1 + 0.2]. */
const RETRY_JITTER_RATIO = 0.2;
/** Consecutive failed attempts (per destination) that pause it. */
export const PAUSE_AFTER_CONSECUTIVE_FAILURES = 20;

/** A source of uniform numbers in [0, 1), injectable so tests can pin the jitter. */
export type RandomSource = () => number;

/**
 * The delay in milliseconds before the next attempt, given how many attempts already failed,
 * or null when the delivery is to be given up. `failedAttempts` is at least 1.
 */
export function nextRetryDelayMs(failedAttempts: number, random: RandomSource = Math.random): number | null {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) throw new RangeError('failedAttempts must be a positive integer');
  const nominal = RETRY_SCHEDULE_SECONDS[failedAttempts];
  if (nominal === undefined) return null;
  const unit = random();
  if (!(unit >= 0 && unit < 1)) throw new RangeError('random() must answer a number in [0, 1)');
  const factor = 1 + RETRY_JITTER_RATIO * (2 * unit - 1);
  return Math.round(nominal * 1000 * factor);
}

/** When the next attempt is due, or null to give up: {@link nextRetryDelayMs} after `failedAt`. */
export function nextAttemptAt(failedAttempts: number, failedAt: Date, random: RandomSource = Math.random): Date | null {
  const delay = nextRetryDelayMs(failedAttempts, random);
  return delay === null ? null : new Date(failedAt.getTime() + delay);
}

/** Whether a destination with this many consecutive failed attempts must be paused. */
export function shouldPauseDestination(consecutiveFailures: number): boolean {
  return consecutiveFailures >= PAUSE_AFTER_CONSECUTIVE_FAILURES;
}
