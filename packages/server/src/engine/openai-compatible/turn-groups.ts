/**
 * @module The items of an async source, grouped by the event loop's turn they arrive in: an item that arrives in a
 * turn after the last group was handed on is handed on alone, at once; the items that arrive in the same turn as the
 * last hand-over (the rest of one network read: a model server that sent a burst of chunks, or chunks that waited
 * while this process was busy) are handed on together when that turn ends. So a paced stream passes item by item without delay, and a
 * burst costs what follows it (redaction, the output cap, the event log, the write to the client) about twice, not
 * once per item.
 */

const TURN_ENDED = Symbol('turn ended');

export async function* turnGroups<T>(source: AsyncIterable<T>): AsyncGenerator<T[]> {
  const items = source[Symbol.asyncIterator]();
  /** Resolves when the turn of the last hand-over ends; undefined before the first. */
  let turnEnd: Promise<typeof TURN_ENDED> | undefined;
  let ended = true;
  let next: Promise<IteratorResult<T>> | undefined;
  const handedOver = () => {
    ended = false;
    turnEnd = new Promise((resolve) =>
      setImmediate(() => {
        ended = true;
        resolve(TURN_ENDED);
      }),
    );
  };
  try {
    for (;;) {
      const first = await (next ?? items.next());
      next = undefined;
      if (first.done) return;
      if (ended) {
        handedOver();
        yield [first.value];
        continue;
      }
      const group = [first.value];
      let done = false;
      let failure: { error: unknown } | undefined;
      for (;;) {
        next = items.next();
        let arrived: IteratorResult<T> | typeof TURN_ENDED;
        try {
          arrived = await Promise.race([next, turnEnd!]);
        } catch (error) {
          // What arrived before the failure is handed on first.
          next = undefined;
          failure = { error };
          break;
        }
        if (arrived === TURN_ENDED) break;
        next = undefined;
        if (arrived.done) {
          done = true;
          break;
        }
        group.push(arrived.value);
      }
      handedOver();
      yield group;
      if (failure) throw failure.error;
      if (done) return;
    }
  } finally {
    if (next) {
      // A read still pending when the consumer stops: the source's return waits for it, so it is not awaited here
      // (the consumer goes on), and the read's failure (the stream aborted) is nobody's to handle.
      next.catch(() => {});
      items.return?.()?.catch(() => {});
    } else {
      await items.return?.();
    }
  }
}
