/**
 * The embedded store in its worker thread, served over real HTTP on loopback (@hono/node-server),
 * with the store held busy by a statement that runs until the test releases it (a file appearing
 * in the data directory): no timing, only the order of events.
 *
 * - `/healthz` answers while the statement runs: the main thread keeps accepting and answering.
 * - Admission: with the requests in flight at their bound, or the store's queue at its bound and the requests
 *   waiting for it holding their share of it, a request answers `503 service_unavailable` with `Retry-After: 1`
 *   at once, while health routes still answer.
 * - A client that closes its connection before its run started gets no run.
 */
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '@service/testing/app';
import { openPgliteWorkerTestStore, untilFileSql } from '@service/testing/store';
import type { Deps } from '../app.ts';

type WorkerStore = Awaited<ReturnType<typeof openPgliteWorkerTestStore>>;

let store: WorkerStore;
let releases = 0;

/** Holds the store with a statement until the returned function releases it; resolves when it ended. */
function holdStore(): { release(): Promise<void>; done: Promise<unknown> } {
  const name = `release-${++releases}`;
  const done = store.db.query(untilFileSql(name));
  return {
    done,
    async release() {
      writeFileSync(join(store.dataDir, name), '');
      await done;
    },
  };
}

interface Served {
  t: TestApp;
  base: string;
  server: ServerType;
  /** Statuses the app answered, in order (also for requests whose client had gone). */
  answered: number[];
  /** Resolves at the next response whose connection closed before it was sent. */
  nextClientGone(): Promise<void>;
}

async function served(deps: Partial<Deps> = {}): Promise<Served> {
  const t = await createTestApp({ db: store.db, deps });
  const answered: number[] = [];
  const gone: Array<() => void> = [];
  const server = serve({
    fetch: async (request, env) => {
      const res = await t.app.fetch(request, env);
      answered.push(res.status);
      return res;
    },
    port: 0,
    hostname: '127.0.0.1',
  });
  server.on('request', (_req, res) => res.on('close', () => !res.writableFinished && gone.shift()?.()));
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    t,
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    nextClientGone: () => new Promise((resolve) => gone.push(resolve)),
  };
}

const apps: Served[] = [];
beforeAll(async () => {
  store = await openPgliteWorkerTestStore();
});
afterAll(async () => {
  for (const app of apps) await new Promise((resolve) => app.server.close(resolve));
  await store?.cleanup();
});

const INVOCATION = JSON.stringify({ alias: 'Prelude', agentSlug: 'sales', messages: [{ role: 'user', content: 'Summarise the pipeline.' }] });

describe('the main thread while the store works', () => {
  it('answers /healthz while a store statement runs in the worker', async () => {
    const app = await served();
    apps.push(app);
    const events: string[] = [];
    const held = holdStore();
    void held.done.then(() => events.push('statement ended'));
    const res = await fetch(`${app.base}/healthz`);
    events.push(`healthz ${res.status}`);
    expect(await res.json()).toEqual({ status: 'ok' });
    await held.release();
    expect(events).toEqual(['healthz 200', 'statement ended']);
  });
});

describe('admission', () => {
  it('answers 503 with Retry-After at once when the store queue is at its bound and the requests waiting hold their share of it; health still answers', async () => {
    const app = await served({ admission: { maxInFlight: 0, maxStoreQueue: 1 } });
    apps.push(app);
    const key = await app.t.keyWith('usage:read');
    const get = () => fetch(`${app.base}/usage/current`, { headers: { authorization: `Bearer ${key}` } });
    const held = holdStore();
    const events: string[] = [];
    void held.done.then(() => events.push('statement ended'));
    // The queue is at its bound (the held statement); the first request is admitted and waits to have its key
    // looked up: it holds the whole share of the queue that requests being authenticated may hold.
    const first = get();
    while (store.db.queued!() < 2) await new Promise((resolve) => setImmediate(resolve));
    const res = await get();
    events.push(`usage ${res.status}`);
    expect(res.status).toBe(503);
    expect([res.headers.get('retry-after'), res.headers.get('retry-after-ms'), res.headers.get('x-should-retry')]).toEqual(['1', '1000', 'true']);
    expect(await res.json()).toEqual({
      error: 'service_unavailable',
      message: 'The service is at capacity; retry shortly.',
      requestId: res.headers.get('x-request-id'),
    });
    expect((await fetch(`${app.base}/healthz`)).status).toBe(200);
    await held.release();
    expect(events).toEqual(['usage 503', 'statement ended']);
    expect((await first).status).toBe(200);
    // With the queue drained, the same request is admitted.
    expect((await get()).status).toBe(200);
  });

  it('answers 503 at once past the bound of requests in flight, and admits again once one ends', async () => {
    const app = await served({ admission: { maxInFlight: 1, maxStoreQueue: 0 } });
    apps.push(app);
    const key = await app.t.keyWith('usage:read');
    const get = () => fetch(`${app.base}/usage/current`, { headers: { authorization: `Bearer ${key}` } });
    const held = holdStore();
    // The first request waits for the store (its key is read there): it is the one in flight.
    const first = get();
    while (store.db.queued!() < 2) await new Promise((resolve) => setImmediate(resolve));
    const second = await get();
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(((await second.json()) as { error: string }).error).toBe('service_unavailable');
    await held.release();
    expect((await first).status).toBe(200);
    expect((await get()).status).toBe(200);
  });
});

describe('a client that leaves before its run started', () => {
  /** Sends one invocation on a raw connection; `leave` closes it as soon as the server has the request. */
  async function invokeRaw(app: Served, key: string, leave: boolean): Promise<void> {
    const socket = connect((app.server.address() as AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const received = new Promise((resolve) => app.server.once('request', resolve));
    socket.write(
      `POST /v1/inference HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(INVOCATION)}\r\n\r\n${INVOCATION}`,
    );
    await received;
    if (leave) socket.destroy();
    else socket.on('data', () => socket.end());
  }

  it('gets no run; the same request from a client that stays does', async () => {
    const app = await served();
    apps.push(app);
    const runs = async () => (await store.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE workspace_id = $1`, [app.t.workspaceId]))[0]!.n;

    // A fresh key: authenticating it reads the store, which is held, so the request waits there.
    const leavingKey = await app.t.keyWith('orchestrator:invoke');
    let held = holdStore();
    const gone = app.nextClientGone();
    await invokeRaw(app, leavingKey, true);
    await gone;
    await held.release();
    while (app.answered.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    // Its body could no longer be read (the connection closed): a 400 of the request in the log, for nobody.
    expect(app.answered).toEqual([400]);
    expect(await runs()).toBe(0);

    // The control: the same, but the client stays until the answer.
    const stayingKey = await app.t.keyWith('orchestrator:invoke');
    held = holdStore();
    await invokeRaw(app, stayingKey, false);
    await held.release();
    while (app.answered.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(app.answered).toEqual([400, 200]);
    expect(await runs()).toBe(1);
  });
});
