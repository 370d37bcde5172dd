/**
 * @module Following a run's event log (GET /runs/{run_id}/events): every event after `after`, in
 * order, each once, ending with the terminal event.
 *
 * The reader listens first (hub.ts: this instance's live runs, or the bus), then reads
 * the store. The log is complete in the store once the execution stored it, or once the run is
 * terminal with no execution left to store anything (no live lease: it failed before its engine
 * ran, its instance died, or it was canceled before it started); then it is replayed from there.
 * Otherwise the head comes from the run's row and the rest live; the store is read again every
 * POLL_MS while nothing arrives, which also catches a lost notification, an instance that died
 * mid-run (the sweeper ends its run) and an inbound run still waiting for its hand-over. A run that waits for an
 * approval has a stored log while still in progress (its events up to `approval.requested`, then
 * `approval.decided` and `run.resumed`): those are sent, then the resumed execution's events live.
 */
import type { Clock } from '../../clock.ts';
import { fail } from '../../errors.ts';
import type { Run } from '../runs/store.ts';
import type { RunEventHub } from './hub.ts';
import { type ExecutionEvent, headEvents, isTerminal, type RunEvent, storedLog } from './log.ts';

const POLL_MS = 1_000;

/** A run as the store holds it, with what its execution stored of its log (null: nothing stored, yet or ever). */
export interface StoredRunLog {
  run: Run;
  /** Until when the instance executing the run holds it; null once nothing executes it. */
  leaseUntil: Date | null;
  stored: unknown[] | null;
  /** The last sequence the execution had, where the retention merged its fragments. */
  lastSequence: number | null;
}

/** Reads the run and its stored log; undefined when the run does not exist in the workspace. */
export type ReadRunLog = (workspaceId: string, runId: string) => Promise<StoredRunLog | undefined>;

export interface FollowOptions {
  after: number;
  /** Stops following (the client left). */
  signal: AbortSignal;
}

/**
 * The run's events after `options.after`. Checks that the run exists in the workspace before it
 * yields anything (`404 not_found` is thrown by the first `next()`), so a route can answer JSON.
 */
export async function* followRunEvents(
  deps: { readLog: ReadRunLog; hub: RunEventHub; clock: Clock },
  workspaceId: string,
  runId: string,
  options: FollowOptions,
): AsyncGenerator<RunEvent, void, undefined> {
  const { readLog, hub, clock } = deps;
  const queue: RunEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = hub.follow(runId, options.after, (event) => {
    queue.push(event);
    wake?.();
  });
  const stop = () => wake?.();
  options.signal.addEventListener('abort', stop);
  let last = options.after;
  try {
    for (;;) {
      const found = await readLog(workspaceId, runId);
      if (!found) throw fail('not_found', 'Run not found.');
      const { run, leaseUntil, stored, lastSequence } = found;
      const executing = leaseUntil !== null && leaseUntil > clock.now();
      if (stored !== null && run.status === 'in_progress') {
        // Waited for an approval (domain/runs/pause.ts): what the pause, the decision and the resume stored, then live.
        for (const event of [...headEvents(run), ...(stored as ExecutionEvent[])]) {
          if (event.sequence <= last) continue;
          last = event.sequence;
          yield event;
        }
      } else if (stored !== null || (run.status !== 'in_progress' && !executing)) {
        // Nothing stored (no execution stored it): the tail follows what this reader already has.
        const log = stored === null ? storedLog(run, [], last) : storedLog(run, stored as ExecutionEvent[], lastSequence ?? 0);
        for (const event of log) if (event.sequence > last) yield event;
        return;
      }
      for (const event of headEvents(run)) {
        if (event.sequence <= last) continue;
        last = event.sequence;
        yield event;
      }
      // Live until the terminal event, or until nothing arrived for POLL_MS: then the store is read again.
      let deadline = performance.now() + POLL_MS;
      while (!options.signal.aborted) {
        const event = queue.shift();
        if (event === undefined) {
          const left = deadline - performance.now();
          if (left <= 0) break;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, left);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
          continue;
        }
        if (event.sequence <= last) continue;
        // A restarted execution numbers its events above the earlier ones' (log.ts): a jump, not a loss.
        if (event.sequence > last + 1 && event.type !== 'run.restarted') {
          // A notification was lost: ask again from here; what arrives twice is dropped.
          queue.length = 0;
          hub.rewatch(runId, last);
          continue;
        }
        last = event.sequence;
        deadline = performance.now() + POLL_MS;
        yield event;
        if (isTerminal(event)) return;
      }
      if (options.signal.aborted) return;
    }
  } finally {
    options.signal.removeEventListener('abort', stop);
    unsubscribe();
  }
}
