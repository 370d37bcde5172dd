/**
 * @module Cross-instance cancel. `POST /runs/{id}/cancel` may be answered by any instance, while the
 * run executes on one of them: the cancel is published on a bus that every instance listens to, and
 * the instance executing the run stops its engine at once.
 *
 * - PostgreSQL (`DATABASE_URL`): `NOTIFY` on the channel `service_run_cancel` of the store's schema,
 *   heard through the store's own `listen` (store/listen.ts): the one reconnecting LISTEN connection
 *   that key invalidation (domain/keys/invalidation.ts) uses too, not a connection of its own.
 * - No Redis pub/sub: several instances always share PostgreSQL (the embedded store allows one
 *   instance), so the database is the bus; Redis stays optional.
 * - Embedded store: one instance, no bus (the local abort is enough).
 *
 * A lost notification (the listener was reconnecting) is still caught: the executing instance stops
 * the run at its next lease renewal (every quarter of RUN_LEASE_MS), as before.
 */
import type { Db } from '../../store/db.ts';
import { notify } from '../../store/listen.ts';

const CANCEL_CHANNEL = 'service_run_cancel';

export interface CancelBus {
  /** Tells every instance that this run was canceled. */
  publish(runId: string): Promise<void>;
  /** Called for every cancel published by any instance (this one included). */
  onCancel(handler: (runId: string) => void): void;
}

/** A run id as the store makes them; anything else on the channel is ignored. */
const RUN_ID = /^run_[A-Za-z0-9]{1,64}$/;

interface CancelBusOptions {
  /** The store's LISTEN connection dropped (it reconnects by itself; cancels meanwhile wait for a lease renewal). */
  onDown?: () => void;
}

/** The cancel bus over the store's LISTEN/NOTIFY; the store closes its connection. */
export async function createCancelBus(db: Db, options: CancelBusOptions = {}): Promise<CancelBus> {
  const handlers: ((runId: string) => void)[] = [];
  let up = false;
  await db.listen?.(CANCEL_CHANNEL, {
    message(payload) {
      if (!RUN_ID.test(payload)) return;
      for (const handler of handlers) handler(payload);
    },
    state(now) {
      if (up && !now) options.onDown?.();
      up = now;
    },
  });
  return {
    async publish(runId) {
      await notify(db, CANCEL_CHANNEL, runId);
    },
    onCancel(handler) {
      handlers.push(handler);
    },
  };
}
