/**
 * @module The worker thread that owns the embedded store (PGlite) for `service serve`: it opens
 * PGlite, runs each statement it is sent, holds a transaction open between its statements, forwards
 * LISTEN notifications, and closes PGlite when asked (store/pglite-worker.ts is the other side;
 * store/pglite-protocol.ts the messages).
 *
 * Node loads this file itself (from the sources, or as `pglite-thread.js` beside the built
 * `cli.js`), so it uses only erasable TypeScript and imports nothing of the server's but types, the channel's name and
 * the prepared statements (store/pglite-prepared.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { scopedChannel } from './channel.ts';
import { preparedStatements } from './pglite-prepared.ts';
import { ERROR_FIELDS, type StoreErrorFields, type StoreReply, type StoreRequest, type StoreThreadData } from './pglite-protocol.ts';

const port = parentPort!;
const post = (reply: StoreReply) => port.postMessage(reply);

/** A transaction held open in PGlite until its `end` arrives. */
interface OpenTransaction {
  /** Resolves with the handle once PGlite began it (other transactions may run first). */
  handle: Promise<Transaction>;
  /** Commits (true) or rolls back (false); resolves when done. */
  end(commit: boolean): Promise<void>;
}

function serialise(err: unknown): StoreErrorFields {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, string | number> = {};
  for (const name of ERROR_FIELDS) {
    const value: unknown = Reflect.get(err, name);
    if (typeof value === 'string' || typeof value === 'number') fields[name] = value;
  }
  return { name: err.name, message: err.message, fields };
}

function begin(pg: PGlite): OpenTransaction {
  let decide!: (commit: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  let opened!: (tx: Transaction) => void;
  const handle = new Promise<Transaction>((resolve) => (opened = resolve));
  const done = pg.transaction(async (tx) => {
    opened(tx);
    // PGlite commits when this resolves and rolls back when it throws (or when rolled back here).
    if (!(await decided)) await tx.rollback();
  });
  return {
    // A BEGIN that failed (PGlite closed) fails the statements waiting for it.
    handle: Promise.race([handle, done.then(() => Promise.reject(new Error('the transaction ended before it began')))]),
    async end(commit) {
      decide(commit);
      await done;
    },
  };
}

async function main(): Promise<void> {
  const { dataDir } = workerData as StoreThreadData;
  let pg: PGlite;
  try {
    pg = await PGlite.create(dataDir);
  } catch (err) {
    post({ kind: 'unopenable', error: serialise(err) });
    return;
  }
  const prepared = preparedStatements(pg);
  const transactions = new Map<number, OpenTransaction>();
  const transaction = (id: number) => {
    let open = transactions.get(id);
    if (!open) transactions.set(id, (open = begin(pg)));
    return open.handle;
  };

  async function run(request: StoreRequest): Promise<unknown[]> {
    switch (request.op) {
      case 'query': {
        // A named statement outside a transaction: parsed once, one exchange a call.
        if (request.name !== undefined && request.tx === undefined) return prepared(request.name, request.sql, request.params);
        const on = request.tx === undefined ? pg : await transaction(request.tx);
        return (await on.query(request.sql, request.params as unknown[])).rows;
      }
      case 'exec': {
        const on = request.tx === undefined ? pg : await transaction(request.tx);
        await on.exec(request.sql);
        return [];
      }
      case 'end': {
        const open = transactions.get(request.tx);
        transactions.delete(request.tx);
        await open?.end(request.commit);
        return [];
      }
      case 'listen': {
        const [row] = (await pg.query<{ schema: string }>('SELECT current_schema() AS schema')).rows;
        // Delivered as the notifying transaction commits, and never lost (one instance, in this thread).
        await pg.listen(scopedChannel(request.channel, row!.schema), (payload) => post({ kind: 'notification', listener: request.listener, payload }));
        return [];
      }
      case 'close':
        // Once closing, the main thread sends nothing more: a transaction still open would never end, and PGlite's
        // close waits for it. Each is rolled back (it could not have committed), then PGlite closes.
        await Promise.allSettled([...transactions.values()].map((open) => open.end(false)));
        transactions.clear();
        if (!pg.closed) await pg.close();
        return [];
    }
  }

  port.on('message', (request: StoreRequest) => {
    // Not awaited: a statement of an open transaction must pass the statements queued behind it.
    run(request)
      .then(
        (rows) => post({ kind: 'answer', id: request.id, rows }),
        (err: unknown) => post({ kind: 'failed', id: request.id, error: serialise(err) }),
      )
      .finally(() => {
        // Nothing keeps the thread alive after the close: it ends, and the main thread sees it exit.
        if (request.op === 'close') port.close();
      });
  });
  post({ kind: 'opened' });
}

await main();
