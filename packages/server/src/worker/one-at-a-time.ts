/**
 * @module A task run one at a time: a call while it runs makes it run once more when it ends (the
 * calls that arrive meanwhile are one run), and answers that run's promise. The worker claims with it:
 * the attempts that end together free their slots for one claim, not one claim each.
 */
export interface OneAtATime {
  (): Promise<void>;
  /** The run under way, if any. */
  readonly current: Promise<void> | undefined;
}

export function oneAtATime(task: () => Promise<void>): OneAtATime {
  let current: Promise<void> | undefined;
  let again = false;
  function run(): Promise<void> {
    if (current) {
      again = true;
      return current;
    }
    current = (async () => {
      do {
        again = false;
        await task();
      } while (again);
    })().finally(() => {
      current = undefined;
    });
    return current;
  }
  return Object.defineProperty(run, 'current', { get: () => current }) as OneAtATime;
}
