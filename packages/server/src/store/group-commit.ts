/**
 * @module Group commit: writes that arrive together go to the store as one statement. The first
 * write waits for the current turn of the event loop to end (so that writes of the same turn join
 * it), then goes out with every write waiting; while that statement runs, new writes wait and go
 * out together as the next one. A lone write therefore waits for nothing but its turn, and under
 * load a statement carries what arrived while the last one ran. Each writer's promise settles
 * with its statement: resolved once the statement committed, rejected if it failed.
 */

/** Submits one item; resolves with the result of the statement that carried it. */
export type GroupCommit<T, R> = (item: T) => Promise<R>;

export function groupCommit<T, R>(flush: (items: T[]) => Promise<R>, options: { maxItems?: number } = {}): GroupCommit<T, R> {
  const maxItems = options.maxItems ?? 500;
  let waiting: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  let busy = false;

  function next(): void {
    if (busy || waiting.length === 0) return;
    busy = true;
    const group = waiting.slice(0, maxItems);
    waiting = waiting.slice(group.length);
    flush(group.map((w) => w.item))
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

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!busy && waiting.length === 1) setImmediate(next);
    });
}
