/**
 * @module The consumption period: one calendar month in UTC, named `YYYY-MM`.
 */

/** `YYYY-MM` of the instant, in UTC. */
export function periodOf(now: Date): string {
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** First instant of the period that contains `now`. */
export function periodStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** First instant of the next period: when the quota resets (`resetAt`). */
export function resetAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}
