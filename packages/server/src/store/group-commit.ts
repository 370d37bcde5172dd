/**
 * @module Group commit: writes that arrive together go to the store as one statement. The first
 * write goes out at once, or (`waitForTurn`) once the current turn of the event loop ends, so that
 * the writes of the same turn join it; while that statement runs, new writes wait and go out
 * together as the next one (at most `maxItems` a statement). A lone write therefore waits for
 * nothing (or for its turn), and under load a statement carries what arrived while the last one
 * ran. Each writer's promise settles with its statement: resolved with the statement's result once
 * it committed, rejected if it failed. Used by the delivery worker's records
 * (worker/deliveries.ts) and the runs' closes (domain/runs/close-batch.ts).
 *
 * A statement carries several writers' writes, so it waits in the store's queue as a party of its own
 * ({@link GROUP_PARTY}, store/fair-queue.ts), not as whoever's statement happened to run before it: a quiet
 * workspace's close is not queued behind a flooding workspace's statements.
 */
import { asStoreParty } from './fair-queue.ts';

/** The store party of a group's statement. */
export const GROUP_PARTY = 'group-commit';

/** Submits one item; resolves with the result of the statement that carried it. */
export interface GroupCommit<T, R> {
  (item: T): Promise<R>;
  /** Writes waiting for the statement in flight to return (or for their turn). */
  waiting(): number;
}

export function groupCommit<T, R>(flush: (items: T[]) => Promise<R>, options: { maxItems?: number; waitForTurn?: boolean } = {}): GroupCommit<T, R> {
  const maxItems = options.maxItems ?? 500;
  const waitForTurn = options.waitForTurn ?? true;
  let waiting: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  let busy = false;

  function next(): void {
    if (busy || waiting.length === 0) return;
    busy = true;
    const group = waiting.slice(0, maxItems);
    waiting = waiting.slice(group.length);
    asStoreParty(GROUP_PARTY, () => flush(group.map((w) => w.item)))
      .then(
        (result) => {
          for (const w of group) w.resolve(result);
        },
        (error: unknown) => {
          for (const w of group) w.reject(error);
        },
      )
      .finally(() => {
        busy = false;
        next();
      });
  }

  const submit = (item: T) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (busy) return;
      if (!waitForTurn) next();
      else if (waiting.length === 1) setImmediate(next);
    });
  return Object.assign(submit, { waiting: () => waiting.length });
}

/**
 * The store answered a group's statement with an error (PostgreSQL's ErrorResponse, kept by both drivers and
 * across the embedded store's thread: a `severity` and a SQLSTATE `code`): the statement ran in its own
 * transaction, which was not committed, so each of its writes may be sent again alone. A failure without an
 * answer (a cut connection, a closed store, a client-side timeout) leaves that unknown: nothing is sent again.
 */
export function answeredByStore(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { severity, code } = err as Error & { severity?: unknown; code?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
