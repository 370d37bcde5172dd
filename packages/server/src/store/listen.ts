/**
 * @module LISTEN/NOTIFY on the store, for news that must reach every instance at once (a revoked
 * key). PostgreSQL hands a notification to every listening connection when the notifying
 * transaction commits, and never to anyone if it rolls back, so a change and its news cannot part.
 *
 * Channels are scoped to the store's schema (`<channel>.<schema>`): instances of one deployment
 * share it, while test suites on one database (one schema each) do not hear each other.
 * - PostgreSQL: one dedicated connection per store, reconnected with backoff; `state(false)` while
 *   it is down, `state(true)` once it listens again (news sent in between is lost: callers must
 *   assume anything may have changed).
 * - PGlite: one process, one instance; PGlite's own LISTEN, which cannot drop.
 */
import pg from 'pg';
import { scopedChannel } from './channel.ts';
import type { Db, Tx } from './db.ts';

export { scopedChannel };

export interface ListenHandler {
  /** The payload of one notification on the channel. */
  message(payload: string): void;
  /** true once the channel is listened to; false when the connection dropped (news may be lost). */
  state(up: boolean): void;
}

/** SQL fragment that notifies `channel` of this store's schema with the text parameter `$n`. */
export function notifySql(channel: string, payloadParam: string): string {
  return `pg_notify('${channel}.' || current_schema(), ${payloadParam})`;
}

/** Notifies every instance's listener of `channel` (in this store's schema) with `payload`. */
export async function notify(db: Db | Tx, channel: string, payload: string): Promise<void> {
  await db.query(`SELECT ${notifySql(channel, '$1::text')}`, [payload]);
}

/** Payloads that are versions are acknowledged (awaitListeners); anything else is not. */
const VERSION = /^[0-9]{1,15}$/;
const LISTENER_APPLICATION = 'service-listener';

/**
 * The statement a listener runs once it handled a notification, and with each LISTEN: for every channel it listens
 * on, the highest version it handled there (0 for none yet), e.g. `SELECT 7::bigint AS "service_keys.public",
 * 0::bigint AS "service_usage.public"`. pg_stat_activity shows a connection's last statement only, and one connection
 * listens on every channel of its instance: a statement that named one channel alone would hide the others.
 */
function ackSql(versions: ReadonlyMap<string, number>): string {
  return `SELECT ${Array.from(versions, ([scoped, version]) => `${version}::bigint AS "${scoped.replaceAll('"', '""')}"`).join(', ')}`;
}

/**
 * PostgreSQL: resolves once every instance listening on `channel` (of this schema) has handled the
 * notification of `version`, as each acknowledges on its own connection, visible in pg_stat_activity
 * (every instance connects with the same role). A listener connected at or after `since` (the store's
 * clock, at the change) needs no acknowledgement: it was not listening yet, so its instance dropped its
 * cache and read versions until then. A listener silent past `timeoutMs` is cut off
 * (pg_terminate_backend): its instance drops its cache and reads versions until it reconnects.
 */
export async function awaitListeners(db: Db, options: { channel: string; version: number; since: Date; timeoutMs: number; pollMs?: number }): Promise<void> {
  // The listeners of this channel and schema, and the version each acknowledged there (ackSql; a LISTEN runs with one).
  const behind = () =>
    db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity, LATERAL (SELECT '"' || $2 || '.' || current_schema() || '"' AS scoped) c
        WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()
          AND position(c.scoped in query) > 0 AND backend_start < $4
          AND COALESCE(substring(query from '([0-9]+)::bigint AS ' || replace(c.scoped, '.', '\\.'))::bigint, 0) < $3`,
      [LISTENER_APPLICATION, options.channel, options.version, options.since],
    );
  // A timeout, not a date: the monotonic clock (the store's clock dates `since` only).
  const deadline = performance.now() + options.timeoutMs;
  let late = await behind();
  while (late.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 2));
    late = await behind();
  }
  // Without the right to signal it (another role), the change still stands: the caller answers.
  for (const { pid } of late) await db.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => {});
}

interface PgListenerOptions {
  url: string;
  /** Passed to the connection like the pool's (`-c search_path=…`). */
  options?: string;
  /** First reconnect delay; doubles up to 30 s. */
  retryMs?: number;
}

/** One reconnecting LISTEN connection shared by every channel of a PostgreSQL store. */
export function createPgListener(settings: PgListenerOptions) {
  const channels = new Map<string, ListenHandler[]>();
  const dropped = new WeakSet<pg.Client>();
  /** Per connection, the highest version handled on each channel it listens on (scoped name; ackSql). */
  const handled = new WeakMap<pg.Client, Map<string, number>>();
  // Scoped name as notifications carry it -> channel.
  const scoped = new Map<string, string>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let closed = false;
  let delay = settings.retryMs ?? 500;
  let timer: NodeJS.Timeout | undefined;

  const everyHandler = () => [...channels.values()].flat();

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: settings.url,
      application_name: LISTENER_APPLICATION,
      ...(settings.options ? { options: settings.options } : {}),
    });
    handled.set(next, new Map());
    next.on('notification', (note) => {
      // A connection already given up on says nothing more (its instance reads versions meanwhile).
      if (dropped.has(next)) return;
      const channel = scoped.get(note.channel);
      if (channel === undefined || note.payload === undefined) return;
      for (const handler of channels.get(channel) ?? []) handler.message(note.payload);
      // Handled (synchronously, above): say so where the notifying instance can see it (awaitListeners).
      if (!VERSION.test(note.payload)) return;
      const versions = handled.get(next)!;
      versions.set(note.channel, Math.max(versions.get(note.channel) ?? 0, Number(note.payload)));
      next.query(ackSql(versions)).catch(() => {});
    });
    next.on('error', () => drop(next));
    next.on('end', () => drop(next));
    await next.connect();
    try {
      for (const channel of channels.keys()) await listenOn(next, channel);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    delay = settings.retryMs ?? 500;
    for (const handler of everyHandler()) handler.state(true);
  }

  async function listenOn(connection: pg.Client, channel: string): Promise<void> {
    const [row] = (await connection.query<{ schema: string }>('SELECT current_schema() AS schema')).rows;
    const name = `${channel}.${row!.schema}`;
    scoped.set(name, channel);
    const versions = handled.get(connection)!;
    versions.set(name, versions.get(name) ?? 0);
    // One statement, so pg_stat_activity never shows this LISTEN without the versions of the others.
    await connection.query(`LISTEN ${scopedChannel(channel, row!.schema)}; ${ackSql(versions)}`);
  }

  function drop(gone: pg.Client): void {
    dropped.add(gone);
    if (client !== gone) return;
    client = undefined;
    gone.end().catch(() => {});
    for (const handler of everyHandler()) handler.state(false);
    if (!closed) schedule();
  }

  function schedule(): void {
    clearTimeout(timer);
    timer = setTimeout(() => void retry(), delay);
    timer.unref?.();
  }

  async function retry(): Promise<void> {
    try {
      await connect();
    } catch {
      delay = Math.min(delay * 2, 30_000);
      if (!closed) schedule();
    }
  }

  return {
    /** Listens on `channel`; `handler.state(true)` once it does (at once when already listening). */
    async listen(channel: string, handler: ListenHandler): Promise<void> {
      const handlers = channels.get(channel);
      if (handlers) {
        handlers.push(handler);
        if (client) handler.state(true);
        return;
      }
      channels.set(channel, [handler]);
      if (client) {
        await listenOn(client, channel);
        handler.state(true);
        return;
      }
      connecting ??= connect().catch(() => schedule());
      await connecting;
      // Added while the connection was being opened, after it listened to the others.
      if (client && ![...scoped.values()].includes(channel)) {
        await listenOn(client, channel);
        handler.state(true);
      }
    },
    async close(): Promise<void> {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
