/**
 * @module Group commit: writes that arrive together go to the store as one statement. The first
 * write goes out at once, or (`waitForTurn`) once the current turn of the event loop ends, so that
 * the writes of the same turn join it; while that statement runs, new writes wait and go out
 * together as the next one (at most `maxItems` a statement). A lone write therefore waits for
 * nothing (or for its turn), and under load a statement carries what arrived while the last one
 * ran. Each writer's promise settles with its statement: resolved with the statement's result once
 * it committed, rejected if it failed. Used by the delivery worker's records
 * (worker/deliveries.ts); `groupCommitEach`, whose writes each get a result of their own and are sent again
 * one by one after a failed statement, by the runs' starts and closes (domain/spending/start-batch.ts,
 * domain/runs/close-batch.ts).
 *
 * The writes waiting for the next statement queue by their writer's party (the workspace, store/fair-queue.ts), and
 * a statement takes them from the parties in turn: a quiet workspace's write goes in the next statement, however many
 * a flooding workspace has queued. With `maxStatements` above one (the runs' starts and closes), a write whose party
 * no statement in flight carries does not even wait for that: it goes at once, in a statement beside the one in
 * flight (a workspace still has one statement in flight at a time, so its writes keep sharing statements). Two such
 * statements never carry the same party, so on PostgreSQL they touch different workspaces' rows; on the embedded store
 * they queue at its one connection, the quiet workspace's right behind the statement in flight. That statement is
 * kept short (`maxItems`) while another workspace is active; a workspace alone may fill longer ones (`maxItemsAlone`).
 * A statement carries several writers' writes, so it waits in the store's queue as a party of its own
 * ({@link GROUP_PARTY}), not as whoever's statement happened to run before it: a quiet workspace's close is not queued
 * behind a flooding workspace's statements.
 */
import { asStoreParty, FairQueue, storeParty } from './fair-queue.ts';

/**
 * Statements of one group commit in flight at once for the runs' starts and closes (each carrying other workspaces'
 * writes than the rest): one per workspace at a time, and on PostgreSQL at most this many of the pool's connections
 * per batcher.
 */
export const MAX_GROUP_STATEMENTS = 3;

/** The store party of a group's statement. */
export const GROUP_PARTY = 'group-commit';

/** Submits one item; resolves with the result of the statement that carried it. */
export interface GroupCommit<T, R> {
  (item: T): Promise<R>;
  /** Writes waiting for the statement in flight to return (or for their turn). */
  waiting(): number;
}

export interface GroupCommitOptions {
  /** At most this many writes a statement (default 500). */
  maxItems?: number;
  /**
   * At most this many writes a statement while one party alone is active (none other wrote in the last
   * {@link ACTIVE_MS}): a lone workspace's writes share fewer, larger statements; a party that becomes active finds at
   * most one of them in flight. Default `maxItems`.
   */
  maxItemsAlone?: number;
  /** The monotonic clock in milliseconds that decides which parties are active (tests); `performance.now`. */
  now?: () => number;
  /** The first write waits for the end of the event loop's turn, so that the writes of the same turn join it (default). */
  waitForTurn?: boolean;
  /**
   * At most this many statements in flight at once (default 1). Past the first, a statement carries only the writes of
   * parties that none in flight carries: a workspace's writes wait for its statement in flight, another's go beside it.
   */
  maxStatements?: number;
}

/**
 * A party that wrote within this many milliseconds is active: while another party is, a statement carries at most
 * `maxItems` writes, so that the other's next write waits behind a short statement at most.
 */
export const ACTIVE_MS = 1_000;

export function groupCommit<T, R>(flush: (items: T[]) => Promise<R>, options: GroupCommitOptions = {}): GroupCommit<T, R> {
  const maxItems = options.maxItems ?? 500;
  const maxItemsAlone = options.maxItemsAlone ?? maxItems;
  const now = options.now ?? (() => performance.now());
  /** When each party last wrote, oldest first (a write moves its party to the end). */
  const lastWrote = new Map<string, number>();
  const waitForTurn = options.waitForTurn ?? true;
  const maxStatements = options.maxStatements ?? 1;
  type Writer = { party: string; item: T; resolve: (result: R) => void; reject: (error: unknown) => void };
  const waiting = new FairQueue<Writer>();
  /** The parties of the statements in flight (their writes wait), each with how many of those statements carry it. */
  const inFlight = new Map<string, number>();
  let statements = 0;
  let scheduled = false;

  /** How many parties wrote within {@link ACTIVE_MS} (the others are forgotten). */
  function active(): number {
    const since = now() - ACTIVE_MS;
    for (const [party, at] of lastWrote) {
      if (at >= since) break;
      lastWrote.delete(party);
    }
    return lastWrote.size;
  }

  function next(): void {
    while (statements < maxStatements && waiting.size > 0) {
      const cap = maxItemsAlone > maxItems && active() <= 1 ? maxItemsAlone : maxItems;
      const group: Writer[] = [];
      while (group.length < cap) {
        const writer = waiting.shift(inFlight);
        if (!writer) break;
        group.push(writer);
      }
      if (group.length === 0) return;
      send(group);
    }
  }

  function send(group: Writer[]): void {
    statements += 1;
    const parties = new Set(group.map((w) => w.party));
    for (const party of parties) inFlight.set(party, (inFlight.get(party) ?? 0) + 1);
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
        statements -= 1;
        for (const party of parties) {
          const left = inFlight.get(party)! - 1;
          if (left > 0) inFlight.set(party, left);
          else inFlight.delete(party);
        }
        next();
      });
  }

  const submit = (item: T) =>
    new Promise<R>((resolve, reject) => {
      const party = storeParty();
      if (maxItemsAlone > maxItems) {
        lastWrote.delete(party);
        lastWrote.set(party, now());
      }
      waiting.push(party, { party, item, resolve, reject });
      // A write whose party is in flight, or with every statement taken, waits for a statement to return.
      if (statements >= maxStatements || inFlight.has(party)) return;
      if (!waitForTurn) next();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          next();
        });
      }
    });
  return Object.assign(submit, { waiting: () => waiting.size });
}

/**
 * A group commit whose writes each get a result of their own (the runs' starts and closes): `many` carries a
 * group in one statement and answers one result per item, in order; an item alone goes through `one`, the
 * statement it always ran. With `waitForTurn` (the runs' starts and closes on PostgreSQL), a write that finds nothing
 * in flight waits for the end of the event loop's turn, so that the writes of the requests handled in the same turn
 * go with it: under load a workspace's writes then seldom go alone, where each lone statement held back the batch
 * behind it for a whole round trip. On the embedded store they go at once: there its one thread is what limits, and a
 * statement that waits for the turn leaves it idle meanwhile (docs/performance.md, "Starts and closes at the end of
 * the turn"). When the store answers the group's statement
 * with an error ({@link answeredByStore}: nothing of it was committed), each item is sent again alone, so the one
 * that fails fails alone and each caller sees what its lone statement answers. A failure with no answer may have
 * come after the commit: nothing is sent again (a second write could charge twice), and every item of the group
 * gets that failure.
 */
export function groupCommitEach<T, R>(many: (items: T[]) => Promise<R[]>, one: (item: T) => Promise<R>, options: GroupCommitOptions = {}): GroupCommit<T, R> {
  type Outcome = { value: R } | { error: unknown };
  /** Each call's own wrapper: its outcome is found by identity, even for an item given twice. */
  type Call = { item: T };
  const alone = (item: T): Promise<Outcome> =>
    one(item).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  const submit = groupCommit<Call, Map<Call, Outcome>>(async (calls) => {
    if (calls.length === 1) return new Map([[calls[0]!, await alone(calls[0]!.item)]]);
    let values: R[];
    try {
      values = await many(calls.map((c) => c.item));
    } catch (err) {
      if (!answeredByStore(err)) throw err;
      const outcomes = await Promise.all(calls.map((c) => alone(c.item)));
      return new Map(calls.map((c, i) => [c, outcomes[i]!]));
    }
    return new Map(calls.map((c, i) => [c, { value: values[i]! }]));
  }, options);
  const each = async (item: T): Promise<R> => {
    const call = { item };
    const outcome = (await submit(call)).get(call)!;
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
  return Object.assign(each, { waiting: submit.waiting });
}

/**
 * The store answered a group's statement with an error (PostgreSQL's ErrorResponse, kept by both drivers and
 * across the embedded store's thread: a `severity` and a SQLSTATE `code`): the statement ran in its own
 * transaction, which was not committed, so each of its writes may be sent again alone. A failure without an
 * answer (a cut connection, a closed store, a client-side timeout) leaves that unknown: nothing is sent again.
 */
export function answeredByStore(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const severity: unknown = Reflect.get(err, 'severity');
  const code: unknown = Reflect.get(err, 'code');
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
