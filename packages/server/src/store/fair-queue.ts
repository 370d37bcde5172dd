/**
 * @module The store's queue served fairly between parties: the party a statement is sent for (a
 * workspace, or the unauthenticated requests as one; admission control names it, middleware/admission) rides
 * along the request's async context, and the embedded store's worker (store/pglite-worker.ts) sends statements to
 * its thread from one queue per party in turn instead of in arrival order, so a workspace that floods waits behind
 * its own statements and a quiet one waits behind at most one statement of each other party.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const party = new AsyncLocalStorage<string>();

/** Runs `fn` (and every statement it sends, awaited or not) as `key`'s. */
export function asStoreParty<T>(key: string, fn: () => T): T {
  return party.run(key, fn);
}

/** The party of the statement being sent; {@link BACKGROUND_PARTY} outside any request's (health checks, start-up). */
export function storeParty(): string {
  return party.getStore() ?? BACKGROUND_PARTY;
}

/** The party of the background work (the delivery worker's claims and records, the resumer's claims, the sweeper). */
export const BACKGROUND_PARTY = '';

/** The party of the requests no credential names yet: anonymous routes, and every request while it authenticates. */
export const UNAUTHENTICATED_PARTY = 'unauthenticated';

/** A workspace's party: its requests' statements (middleware/admission), its inbound runs' and resumed runs'. */
export function workspaceParty(workspaceId: string): string {
  return `ws:${workspaceId}`;
}

/** Items in one FIFO queue per party, taken from the parties in turn (round robin). */
export class FairQueue<T> {
  readonly #queues = new Map<string, T[]>();
  /** Parties with something queued, in the order they are served next. */
  #turns: string[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(key: string, item: T): void {
    const queue = this.#queues.get(key);
    if (queue) queue.push(item);
    else {
      this.#queues.set(key, [item]);
      this.#turns.push(key);
    }
    this.#size += 1;
  }

  /**
   * The next item: the oldest of the party whose turn it is (the first in turn not in `skip`); that party then goes
   * last. Undefined when every party with items is skipped.
   */
  shift(skip?: { readonly size: number; has(key: string): boolean }): T | undefined {
    const at = skip === undefined || skip.size === 0 ? 0 : this.#turns.findIndex((key) => !skip.has(key));
    if (at < 0 || at >= this.#turns.length) return undefined;
    const [key] = this.#turns.splice(at, 1) as [string];
    const queue = this.#queues.get(key)!;
    const item = queue.shift()!;
    if (queue.length === 0) this.#queues.delete(key);
    else this.#turns.push(key);
    this.#size -= 1;
    return item;
  }

  /** Every item left, emptying the queue. */
  drain(): T[] {
    const items = [...this.#queues.values()].flat();
    this.#queues.clear();
    this.#turns = [];
    this.#size = 0;
    return items;
  }
}
