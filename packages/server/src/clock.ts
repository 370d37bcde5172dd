/**
 * @module Time as a dependency, so tests can move it (expiry, login windows, TOTP steps).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests. */
export function fixedClock(start: Date | string = '2026-01-01T00:00:00Z') {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    advance(ms: number) {
      current += ms;
    },
    set(at: Date | string) {
      current = new Date(at).getTime();
    },
  };
}
