/**
 * @module Time as a dependency, so tests can move it (expiry, login windows, TOTP steps).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * `pass`, run at most once every `everyMs` of `clock`'s time however often the answer is called (a worker's sweeps
 * that need not run at every tick); a call in between does nothing and answers 0.
 */
export function atMostEvery(clock: Clock, everyMs: number, pass: (now: Date) => Promise<number>): () => Promise<number> {
  let next = 0;
  return async () => {
    const now = clock.now();
    if (now.getTime() < next) return 0;
    next = now.getTime() + everyMs;
    return pass(now);
  };
}

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
