/**
 * @module Cross-instance cancel. `POST /runs/{id}/cancel` may be answered by any instance, while the
 * run executes on one of them: the cancel is published on a bus that every instance listens to, and
 * the instance executing the run stops its engine at once.
 *
 * - PostgreSQL (`DATABASE_URL`): `NOTIFY service_run_cancel, '<run id>'` on the shared database and
 *   `LISTEN` on a dedicated connection, reconnected with backoff when it drops.
 * - No Redis pub/sub: several instances always share PostgreSQL (the embedded store allows one
 *   instance), so the database is the bus; Redis stays optional.
 * - Embedded store: one instance, no bus (the local abort is enough).
 *
 * A lost notification (the listener was reconnecting) is still caught: the executing instance stops
 * the run at its next lease renewal (every quarter of RUN_LEASE_MS), as before.
 */
import pg from 'pg';

export const CANCEL_CHANNEL = 'service_run_cancel';

export interface CancelBus {
  /** Tells every instance that this run was canceled. */
  publish(runId: string): Promise<void>;
  /** Called for every cancel published by any instance (this one included). */
  onCancel(handler: (runId: string) => void): void;
  close(): Promise<void>;
}

/** A run id as the store makes them; anything else on the channel is ignored. */
const RUN_ID = /^run_[A-Za-z0-9]{1,64}$/;

export interface PgCancelBusOptions {
  url: string;
  /** Errors of the listening connection (it reconnects by itself). */
  onError?: (error: unknown) => void;
  /** First reconnect delay; doubles up to 30 s. */
  retryMs?: number;
}

export async function createPgCancelBus(options: PgCancelBusOptions): Promise<CancelBus> {
  const handlers: ((runId: string) => void)[] = [];
  const publisher = new pg.Pool({ connectionString: options.url, max: 1 });
  publisher.on('error', () => {});
  let listener: pg.Client | undefined;
  let closed = false;
  let delay = options.retryMs ?? 500;
  let timer: NodeJS.Timeout | undefined;

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: options.url });
    client.on('notification', (message) => {
      if (message.channel !== CANCEL_CHANNEL || !message.payload || !RUN_ID.test(message.payload)) return;
      for (const handler of handlers) handler(message.payload);
    });
    client.on('error', (error) => {
      options.onError?.(error);
      reconnect(client);
    });
    client.on('end', () => reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${CANCEL_CHANNEL}`);
    listener = client;
    delay = options.retryMs ?? 500;
  }

  function reconnect(client: pg.Client): void {
    if (closed || listener !== client) return;
    listener = undefined;
    client.end().catch(() => {});
    schedule();
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = setTimeout(() => void retry(), delay);
    timer.unref?.();
  }

  async function retry(): Promise<void> {
    try {
      await listen();
    } catch (error) {
      options.onError?.(error);
      delay = Math.min(delay * 2, 30_000);
      if (!closed) schedule();
    }
  }

  await listen();
  return {
    async publish(runId) {
      await publisher.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, runId]);
    },
    onCancel(handler) {
      handlers.push(handler);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await listener?.end().catch(() => {});
      await publisher.end().catch(() => {});
    },
  };
}
