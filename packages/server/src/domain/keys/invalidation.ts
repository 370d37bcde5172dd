/**
 * @module How this instance learns that cached key verifications went stale: a revoke, a rotation,
 * or a change of a workspace's standing, made on any instance.
 *
 * Each such change bumps `api_key_revocations.version` and notifies channel `service_keys` with the
 * new version, both in its own transaction: PostgreSQL hands the notification to every instance's
 * listener when that transaction commits. While this instance listens, a cache hit costs no query.
 * To leave no gap a client could see, the instance that made the change answers only once its own
 * listener has seen the notification, which PostgreSQL delivered to every listener at that same
 * commit. While the listener is down or reconnecting (notifications may be lost), every cache hit
 * first reads the version, as a hit made under an older version is stale; on reconnect the cache
 * is dropped. The embedded store is one instance and hears its own notifications in process.
 */
import type { Db, Tx } from '../../store/db.ts';
import { notifySql } from '../../store/listen.ts';
import { date, int, row, selectRow, tableRow } from '../../store/rows.ts';

export const KEYS_CHANNEL = 'service_keys';
/** Longest wait for our own listener to hear a change before trusting it no more. */
const SETTLE_TIMEOUT_MS = 2_000;

export class KeyInvalidation {
  /** Bumped by every invalidation and change of state: a lookup that began before may not be cached. */
  generation = 0;
  #listening = false;
  #seen = 0;
  #waiters: { version: number; resolve: () => void }[] = [];

  constructor(readonly clear: () => void) {}

  /** True while notifications are known to arrive: cache hits need no version read. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Subscribes to the store's notifications, when it has them; until then (and without) hits read the version. */
  async start(db: Db): Promise<void> {
    await db.listen?.(KEYS_CHANNEL, {
      message: (payload) => this.heard(Number(payload)),
      state: (up) => this.#setListening(up),
    });
  }

  /**
   * A change committed by this instance (at `since`, the store's clock): drop the local cache now,
   * then wait until every instance's listener handled it (PostgreSQL) and our own did.
   */
  async settle(db: Db, version: number, since: Date): Promise<void> {
    this.invalidate();
    await db.awaitListeners?.(KEYS_CHANNEL, version, since, SETTLE_TIMEOUT_MS);
    if (!this.#listening || this.#seen >= version) return;
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), SETTLE_TIMEOUT_MS);
      timer.unref?.();
      const heardIt = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#waiters.push({ version, resolve: heardIt });
    });
    // Not heard in time: the connection may be dead without having said so; read versions until it speaks.
    if (!(await heard)) this.#setListening(false);
  }

  invalidate(): void {
    this.generation += 1;
    this.clear();
  }

  heard(version: number): void {
    if (Number.isInteger(version) && version > this.#seen) this.#seen = version;
    // Whatever the payload, something changed: drop everything.
    this.invalidate();
    if (!this.#listening) this.#setListening(true);
    const due = this.#waiters.filter((w) => w.version <= this.#seen);
    this.#waiters = this.#waiters.filter((w) => w.version > this.#seen);
    for (const waiter of due) waiter.resolve();
  }

  #setListening(up: boolean): void {
    // Hits cached in the other mode are not trusted in this one: both ways, start empty.
    this.#listening = up;
    this.invalidate();
    if (!up) {
      for (const waiter of this.#waiters) waiter.resolve();
      this.#waiters = [];
    }
  }
}

/** The caches' version and the store's time when it was read. */
const versionAt = row({ version: int, at: date });

/**
 * In the caller's transaction, bumps the version that every cached key verification was made under
 * and notifies every instance's listener of it at commit: a revoke, a rotation, or a change of a
 * workspace's standing. Resolves to the new version and the store's time.
 */
export async function invalidateKeyCaches(tx: Tx): Promise<{ version: number; at: Date }> {
  const bumped = await selectRow(
    tx,
    versionAt,
    `WITH bumped AS (UPDATE api_key_revocations SET version = version + 1 WHERE id = 1 RETURNING version)
     SELECT version, clock_timestamp() AS at, ${notifySql(KEYS_CHANNEL, 'version::text')} FROM bumped`,
  );
  return bumped!;
}

/**
 * After a change of a workspace's standing committed on this instance (domain/workspaces): answers
 * only once this instance's listener heard it, as every other instance's did at that commit.
 */
export async function settleKeyCaches(db: Db, invalidation: Pick<KeyInvalidation, 'settle'>): Promise<void> {
  const current = await selectRow(db, versionAt, `SELECT version, clock_timestamp() AS at FROM api_key_revocations WHERE id = 1`);
  await invalidation.settle(db, current!.version, current!.at);
}

/** The version cached verifications are made under (read on each hit while not listening). */
export async function readKeysVersion(db: Db): Promise<number> {
  const current = await selectRow(db, tableRow('api_key_revocations', { version: int }), `SELECT version FROM api_key_revocations WHERE id = 1`);
  return current!.version;
}
