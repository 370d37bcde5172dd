/**
 * @module The embedded store in a worker thread, for `service serve`: PGlite's statements run on
 * their own thread (store/pglite-thread.ts), so the main thread keeps accepting, parsing, limiting
 * and logging while they run, and a second core is used.
 *
 * Each statement is one message and its answer another; a transaction's statements carry its
 * number, and the worker holds it open between them (every other statement and transaction waits
 * behind it, as in one PGlite). A transaction that ran no statement costs no message. Errors keep
 * their PostgreSQL fields (`code`, `constraint`, …), so callers that branch on them behave as
 * in-process. `queued()` counts the statements sent and not answered yet: the admission control's
 * measure of the store's queue (middleware/admission).
 *
 * At most {@link AT_THREAD} statements are at the thread at once, besides those of a transaction already open
 * (they must pass, or the transaction holding PGlite's lock would wait for the statements waiting for it); the
 * others wait here in one queue per party and are sent in turn (store/fair-queue.ts), so one workspace's flood does
 * not stand between another's statement and the store.
 */
import { Worker } from 'node:worker_threads';
import { asTx, type OpenDb } from './db.ts';
import type { ListenHandler } from './listen.ts';
import type { StoreErrorFields, StoreReply, StoreRequest, StoreThreadData } from './pglite-protocol.ts';
import { FairQueue, storeParty } from './fair-queue.ts';

/** Statements at the thread at once (outside open transactions): enough to keep it busy between two replies. */
const AT_THREAD = 8;

/** The thread's entry: the TypeScript source beside this file, or the bundle's `pglite-thread.js` beside `cli.js`. */
const THREAD_ENTRY = new URL(import.meta.url.endsWith('.ts') ? './pglite-thread.ts' : './pglite-thread.js', import.meta.url);

/** What a statement sent after the close, or cut off by the thread's end, fails with (store/unavailable.ts). */
const CLOSED = 'PGlite is closed';

/** A failure of the store, rebuilt on this thread with the PostgreSQL error's own fields. */
export class StoreError extends Error {
  constructor(error: StoreErrorFields) {
    super(error.message);
    this.name = error.name;
    Object.assign(this, error.fields);
  }
}

/** A request before `send` numbers it. */
type Unnumbered<R> = R extends unknown ? Omit<R, 'id'> : never;

interface Pending {
  resolve(rows: unknown[]): void;
  reject(err: Error): void;
  /** Counted in the statements at the thread (sent through the fair queue). */
  counted?: boolean;
}

export interface PgliteWorkerOptions {
  /** Called once if the thread ends on its own (a crash inside PGlite): every later statement fails. */
  onExit?: (err: Error) => void;
}

/** Opens PGlite in `dataDir` (in memory when absent) in a new worker thread. */
export async function openPgliteWorker(dataDir?: string, options: PgliteWorkerOptions = {}): Promise<OpenDb> {
  const data: StoreThreadData = { dataDir };
  const worker = new Worker(THREAD_ENTRY, { workerData: data });
  const pending = new Map<number, Pending>();
  const listeners = new Map<number, ListenHandler>();
  let nextId = 1;
  let nextTransaction = 1;
  let ended: Error | undefined;
  let closing = false;
  /** Statements sent through the fair queue and not answered yet. */
  let atThread = 0;
  const waiting = new FairQueue<StoreRequest>();
  /** Transactions whose first statement has reached the thread: theirs go at once. */
  const open = new Set<number>();
  /** Statements of a transaction whose first one still waits in the fair queue, in order. */
  const behindFirst = new Map<number, StoreRequest[]>();

  await new Promise<void>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`the store's worker thread ended (exit code ${code}) before PGlite opened`));
    worker.once('error', reject);
    worker.once('exit', onExit);
    worker.once('message', (reply: StoreReply) => {
      worker.off('error', reject);
      worker.off('exit', onExit);
      if (reply.kind === 'opened') resolve();
      else {
        reject(reply.kind === 'unopenable' ? new StoreError(reply.error) : new Error('the store thread sent no greeting'));
        void worker.terminate();
      }
    });
  });

  worker.on('message', (reply: StoreReply) => {
    if (reply.kind === 'notification') {
      listeners.get(reply.listener)?.message(reply.payload);
      return;
    }
    if (reply.kind !== 'answer' && reply.kind !== 'failed') return;
    const answered = pending.get(reply.id);
    if (!answered) return;
    pending.delete(reply.id);
    // Idle, the thread does not keep the process alive (a one-off command ends when its work is done).
    if (pending.size === 0 && !closing) worker.unref();
    if (answered.counted) {
      atThread -= 1;
      pump();
    }
    if (reply.kind === 'answer') answered.resolve(reply.rows);
    else answered.reject(new StoreError(reply.error));
  });
  // An uncaught error in the thread ('error') is followed by its end ('exit').
  worker.on('error', (err) => (ended ??= err));
  worker.on('exit', (code) => {
    const err = (ended ??= new Error(`the store's worker thread ended (exit code ${code})`));
    for (const unanswered of pending.values()) unanswered.reject(new Error(CLOSED, { cause: err }));
    pending.clear();
    waiting.drain();
    behindFirst.clear();
    if (!closing) options.onExit?.(err);
  });
  worker.unref();

  function send(request: Unnumbered<StoreRequest>): Promise<unknown[]> {
    if (ended || closing) return Promise.reject(new Error(CLOSED, ended ? { cause: ended } : {}));
    const id = nextId++;
    const numbered: StoreRequest = { ...request, id };
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      if (pending.size === 1) worker.ref();
      route(numbered);
    });
  }

  /** At once: a transaction's end, a statement of an open transaction, LISTEN, the close; else through the fair queue. */
  function route(request: StoreRequest): void {
    const tx = request.op === 'query' || request.op === 'exec' ? request.tx : undefined;
    if (request.op === 'end') open.delete(request.tx);
    if (request.op === 'end' || request.op === 'listen' || request.op === 'close' || (tx !== undefined && open.has(tx))) {
      worker.postMessage(request);
      return;
    }
    const behind = tx === undefined ? undefined : behindFirst.get(tx);
    if (behind) {
      behind.push(request);
      return;
    }
    if (tx !== undefined) behindFirst.set(tx, []);
    waiting.push(storeParty(), request);
    pump();
  }

  /** Sends from the fair queue while the thread has room. */
  function pump(): void {
    while (atThread < AT_THREAD && waiting.size > 0) {
      const request = waiting.shift()!;
      const entry = pending.get(request.id);
      if (!entry) continue;
      entry.counted = true;
      atThread += 1;
      worker.postMessage(request);
      const tx = request.op === 'query' || request.op === 'exec' ? request.tx : undefined;
      if (tx === undefined) continue;
      // The transaction is open in the thread from its first statement on: what queued behind it goes now.
      open.add(tx);
      for (const next of behindFirst.get(tx) ?? []) worker.postMessage(next);
      behindFirst.delete(tx);
    }
  }

  return {
    driver: 'pglite',
    query: (sql, params = [], options) => send({ op: 'query', sql, params, name: options?.name }) as Promise<never[]>,
    exec: async (sql) => {
      await send({ op: 'exec', sql });
    },
    async transaction(fn) {
      const tx = nextTransaction++;
      // The worker begins the transaction with its first statement; one that runs none sends nothing.
      let begun = false;
      const handle = asTx({
        query(sql, params = []) {
          begun = true;
          return send({ op: 'query', sql, params, tx }) as Promise<never[]>;
        },
        async exec(sql) {
          begun = true;
          await send({ op: 'exec', sql, tx });
        },
      });
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await fn(handle);
      } catch (err) {
        if (begun) await send({ op: 'end', tx, commit: false }).catch(() => {});
        throw err;
      }
      if (begun) await send({ op: 'end', tx, commit: true });
      return result;
    },
    async listen(channel, handler) {
      const listener = listeners.size + 1;
      listeners.set(listener, handler);
      await send({ op: 'listen', channel, listener });
      handler.state(true);
    },
    queued: () => pending.size,
    async close() {
      if (ended || closing) return;
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      const closed = send({ op: 'close' });
      closing = true;
      // Until the thread has ended: nothing else may keep the process alive by then.
      worker.ref();
      await closed.catch(() => {});
      await exited;
    },
  };
}
