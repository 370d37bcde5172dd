/**
 * @module A task run one at a time: a call while it runs makes it run once more when it ends (the
 * calls that arrive meanwhile are one run), and answers that next run's promise. The worker claims with
 * it: the attempts that end together free their slots for one claim, not one claim each.
 *
 * A caller waits for at most the run under way and the one after it, however many calls keep arriving:
 * the worker's tick awaits its claims, and inbound hand-overs that end one after another call for a run
 * each time, so waiting until no call was left (as this did) held the tick, and with it the claim of
 * every other workspace's deliveries, until a backlog of hand-overs had drained.
 */
export interface OneAtATime {
  (): Promise<void>;
  /** The run under way or asked for, if any. */
  readonly current: Promise<void> | undefined;
}

export function oneAtATime(task: () => Promise<void>): OneAtATime {
  /** The run under way. */
  let current: Promise<void> | undefined;
  /** The run asked for while one is under way: it starts when that one ends (whatever its outcome). */
  let next: Promise<void> | undefined;
  function run(): Promise<void> {
    if (!current) {
      current = task().finally(() => {
        current = undefined;
      });
      return current;
    }
    next ??= current
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return run();
      });
    return next;
  }
  return Object.defineProperty(run, 'current', { get: () => current ?? next }) as OneAtATime;
}
