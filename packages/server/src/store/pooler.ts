/**
 * @module Whether the LISTEN connection hears what the pool notifies, checked by `service serve` at start on
 * PostgreSQL. Revoked keys, canceled runs, decided approvals and live run events reach every instance through
 * LISTEN/NOTIFY (store/listen.ts), which needs a session that outlives a transaction. Behind a pooler in
 * transaction mode (PgBouncer's `pool_mode = transaction`) a client's LISTEN lands on a server session that is
 * lent to other clients once the statement ends: the notifications go to whoever holds that session then, and
 * never to the listener. So the start sends one NOTIFY through the pool and waits a short bound for the LISTEN
 * connection to hear it; a server that cannot hear refuses to start, saying why and what to set.
 */
import pg from 'pg';
import { errnoOf } from '../caught.ts';
import { randomBase62 } from '../random.ts';
import type { Db } from './db.ts';

/** How long the LISTEN connection has to hear the start's NOTIFY (a direct session hears it within milliseconds). */
export const HEAR_BOUND_MS = 3_000;

/** The LISTEN connection did not hear the pool's NOTIFY; `message` says why and what to set (no URL in it). */
export class ListenUnheard extends Error {
  override readonly name = 'ListenUnheard';
}

/**
 * Resolves once a LISTEN on `listenUrl` heard a NOTIFY sent through `db` (the pool); throws ListenUnheard when
 * it did not within `boundMs` or could not connect. `separate`: `listenUrl` is DATABASE_LISTEN_URL, not DATABASE_URL.
 */
export async function assertListenHears(db: Db, listenUrl: string, options: { separate: boolean; boundMs?: number }): Promise<void> {
  const boundMs = options.boundMs ?? HEAR_BOUND_MS;
  const channel = `service_start_check_${randomBase62(16).toLowerCase()}`;
  const listener = new pg.Client({ connectionString: listenUrl, application_name: 'service-start-check' });
  // A connection lost later (the check is over) says nothing; one lost during the check fails it below.
  listener.on('error', () => {});
  try {
    try {
      await listener.connect();
      await listener.query(`LISTEN ${channel}`);
    } catch (err) {
      throw new ListenUnheard(unreachable(options.separate, err));
    }
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), boundMs);
      listener.on('notification', (note) => {
        if (note.channel !== channel) return;
        clearTimeout(timer);
        resolve(true);
      });
    });
    await db.query('SELECT pg_notify($1, $2)', [channel, 'start']);
    if (!(await heard)) throw new ListenUnheard(unheard(options.separate, boundMs));
  } finally {
    await listener.end().catch(() => {});
  }
}

function unheard(separate: boolean, boundMs: number): string {
  const seconds = `${boundMs / 1000} s`;
  return separate
    ? `DATABASE_LISTEN_URL does not keep a session: a NOTIFY sent through DATABASE_URL did not reach a LISTEN on ` +
        `DATABASE_LISTEN_URL within ${seconds}. Point DATABASE_LISTEN_URL at PostgreSQL itself (or at a pooler in session ` +
        `mode), on the same database as DATABASE_URL.`
    : `DATABASE_URL reaches PostgreSQL through a pooler in transaction mode (such as PgBouncer's pool_mode = transaction): ` +
        `a NOTIFY sent through it did not reach a LISTEN on it within ${seconds}, and LISTEN does not work there ` +
        `(revoked keys, canceled runs and live run events reach every instance through it). Set DATABASE_LISTEN_URL to ` +
        `a connection string that reaches the same database directly (or through a pooler in session mode), or run the ` +
        `pooler in session mode.`;
}

/** The listener's connection failed: its code (ECONNREFUSED, a SQLSTATE), never the URL or the server's message. */
function unreachable(separate: boolean, err: unknown): string {
  // A system error's code (ECONNREFUSED) or a PostgreSQL error's SQLSTATE, both in `code`.
  const code = errnoOf(err);
  const setting = separate ? 'DATABASE_LISTEN_URL' : 'DATABASE_URL';
  return `The LISTEN connection (${setting}) could not be opened${code ? ` (${code})` : ''}: check ${setting}.`;
}
