/**
 * @module The anti-replay window of signed webhooks: parsing the timestamp header (unix seconds
 * or ISO 8601) and checking it lies within 300 s in the past and 60 s in the future.
 */

/** How far in the past a signed timestamp may lie, in seconds (the spec's ±300 s). */
const REPLAY_WINDOW_PAST_SECONDS = 300;
/** How far in the future a signed timestamp may lie, in seconds (the spec's 60 s clock tolerance). */
const REPLAY_WINDOW_FUTURE_SECONDS = 60;

/** Why a timestamp was refused (kept for the audit log, never sent). */
export type TimestampProblem = 'malformed_timestamp' | 'timestamp_too_old' | 'timestamp_in_future';

// Unix seconds: plain digits. Twelve digits reach far past any real clock; more is certainly a
// millisecond value or garbage, and is refused rather than guessed at.
const UNIX_SECONDS = /^\d{1,12}$/;
// ISO 8601 date-time with an explicit offset: a bare local time would depend on the server's zone.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The instant a timestamp header names, in epoch milliseconds, or undefined when it is neither
 * unix seconds nor an ISO 8601 date-time with a `Z` or `±hh:mm` offset.
 */
function parseWebhookTimestamp(value: string): number | undefined {
  const text = value.trim();
  if (UNIX_SECONDS.test(text)) return Number(text) * 1000;
  const m = ISO_8601.exec(text.toUpperCase());
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', offset] = m;
  const utc = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  // Date.UTC rolls 2026-02-31 over into March; a real date must survive the round trip.
  const check = new Date(utc);
  if (
    check.getUTCFullYear() !== Number(year) ||
    check.getUTCMonth() !== Number(month) - 1 ||
    check.getUTCDate() !== Number(day) ||
    Number(hour) > 23 ||
    Number(minute) > 59 ||
    Number(second) > 59
  ) {
    return undefined;
  }
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  let offsetMinutes = 0;
  if (offset !== 'Z' && offset !== undefined) {
    const sign = offset.startsWith('-') ? -1 : 1;
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return utc + millis - offsetMinutes * 60_000;
}

/**
 * Check a timestamp header against the window at `nowMs` (both bounds inclusive): the instant it
 * names, or the problem.
 */
export function checkReplayWindow(value: string, nowMs: number): { ok: true; atMs: number } | { ok: false; problem: TimestampProblem } {
  const atMs = parseWebhookTimestamp(value);
  if (atMs === undefined) return { ok: false, problem: 'malformed_timestamp' };
  const skewSeconds = (atMs - nowMs) / 1000;
  if (skewSeconds < -REPLAY_WINDOW_PAST_SECONDS) return { ok: false, problem: 'timestamp_too_old' };
  if (skewSeconds > REPLAY_WINDOW_FUTURE_SECONDS) return { ok: false, problem: 'timestamp_in_future' };
  return { ok: true, atMs };
}
