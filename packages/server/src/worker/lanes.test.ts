/**
 * One workspace's slow receivers and inbound bursts hold only their own lanes:
 * the worker (`startWorker`, as `serve` runs it) with two workspaces on one store. Workspace A's five
 * destinations, on a real loopback HTTPS receiver, hold every request until the test releases them;
 * B's delivery, queued after A's fifty, still arrives while A's are held, and A never holds more than
 * its lanes (per destination, per workspace). Likewise for the inbound executor: A's burst of events
 * whose hand-overs hang does not keep B's run from being handed over. Released, everything of A's is
 * delivered and handed over: nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEvent } from '../domain/events/outbox.ts';
import { randomBase62 } from '../random.ts';
import { signInboundBody } from '../domain/webhooks/inbound-signature.ts';
import { createSelfSignedCertificate, startHttpsTestReceiver, type HttpsTestReceiver, type ReceiverAnswer } from '@service/testing/https-receiver';
import { until } from '@service/testing/cli-processes';
import { testBackends, type TestStore } from '@service/testing/store';
import type { Db, Tx } from '../store/db.ts';
import { createTestApp, type TestApp } from '@service/testing/app';
import { DEFAULT_DELIVERY_LANES } from './deliveries.ts';
import type { DeliveryLanes } from '../domain/events/deliveries.ts';
import { startWorker, type Worker } from './index.ts';
import { INBOUND_WORKSPACE_CONCURRENCY, type InboundRun } from './inbound-runs.ts';

const certificate = createSelfSignedCertificate();
const A_DESTINATIONS = 5;
const A_EVENTS = 10;

describe.each(testBackends())('lanes per destination and per workspace on $name', ({ open }) => {
  let store: TestStore;
  let a: TestApp;
  let b: TestApp;
  let receiver: HttpsTestReceiver;
  let worker: Worker | undefined;
  let deps: { webhooks: { secretKey: string; allowList: string[] } };
  const errors: unknown[] = [];
  /** Answers every held request of A's: until then A's receivers hold them. */
  let releaseA: () => void = () => {};
  let aReleased: Promise<ReceiverAnswer> = Promise.resolve({ status: 200 });
  /** Likewise for the one slow destination of the third test. */
  let releaseSlow: () => void = () => {};
  let slowReleased: Promise<ReceiverAnswer> = Promise.resolve({ status: 200 });

  beforeAll(async () => {
    store = await open();
    // One deployment's key: either app's box opens both workspaces' signing secrets.
    deps = { webhooks: { secretKey: `lanes-${randomBase62(32)}`, allowList: ['127.0.0.1'] } };
    a = await createTestApp({ db: store.db, deps });
    b = await createTestApp({ db: store.db, deps });
    receiver = await startHttpsTestReceiver(certificate, (request) =>
      request.path.startsWith('/a') ? aReleased : request.path === '/slow' ? slowReleased : { status: 200 },
    );
  });
  afterAll(async () => {
    releaseA();
    releaseSlow();
    await worker?.stop(0);
    await receiver?.close();
    await a?.close();
    await b?.close();
    await store?.cleanup();
  });

  function start(
    executeInboundRun?: (run: InboundRun) => Promise<void>,
    db: Db = store.db,
    pollMs = 50,
    wide?: { lanes: DeliveryLanes; concurrency: number },
  ): Worker {
    return startWorker({
      db,
      ...wide,
      clock: a.clock,
      secretBox: a.services.webhooks.secretBox,
      policy: { allowList: a.services.webhooks.allowList },
      // One certificate for every receiver of this file.
      ca: receiver.ca,
      // Longer than the test: A's attempts end only when released, never by their timeout.
      timeoutMs: 120_000,
      pollMs,
      ...(executeInboundRun ? { executeInboundRun } : {}),
      logError: (error) => errors.push(error),
    });
  }

  async function createDestination(t: TestApp, path: string, events = ['run.completed'], absolute = false): Promise<string> {
    const admin = await t.login();
    const res = await t.app.request('/webhook-destinations', {
      method: 'POST',
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ url: absolute ? path : `${receiver.origin}${path}`, events }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  const runCompleted = (t: TestApp, i: number) =>
    enqueueEvent(
      store.db,
      {
        tenantId: t.workspaceId,
        type: 'run.completed',
        data: { run_id: `run_${i}`, agent: 'sales', alias: 'Sonata', status: 'completed', usage: { input_tokens: 1, output_tokens: 1, stu: 1 } },
      },
      { now: a.clock.now() },
    );

  const statusesOf = async (workspaceId: string) =>
    store.db.query<{ status: string; n: number }>(
      `SELECT d.status, count(*)::integer AS n FROM deliveries d JOIN webhook_destinations w ON w.id = d.destination_id
        WHERE w.workspace_id = $1 GROUP BY d.status ORDER BY d.status`,
      [workspaceId],
    );

  it("B's delivery arrives while A's five hanging destinations hold theirs; A holds at most its lanes; released, all of A's arrive", async () => {
    aReleased = new Promise((resolve) => (releaseA = () => resolve({ status: 204 })));
    const aPaths = Array.from({ length: A_DESTINATIONS }, (_, i) => `/a${i}`);
    for (const path of aPaths) await createDestination(a, path);
    await createDestination(b, '/b');
    // A's fifty deliveries are due first; B's one a second after them.
    for (let i = 0; i < A_EVENTS; i += 1) await runCompleted(a, i);
    a.clock.advance(1_000);
    await runCompleted(b, 0);

    worker = start();
    await until(() => receiver.received.some((r) => r.path === '/b'), "B's delivery to reach its receiver", 30_000);
    await until(async () => (await statusesOf(b.workspaceId)).some((s) => s.status === 'delivered'), "B's delivery to be recorded", 30_000);

    // A's receivers still hold every request they got: none answered, none recorded.
    const heldByA = receiver.received.filter((r) => r.path.startsWith('/a'));
    expect(heldByA.length).toBeGreaterThan(0);
    expect(heldByA.length).toBeLessThanOrEqual(DEFAULT_DELIVERY_LANES.perWorkspace);
    for (const path of aPaths) expect(heldByA.filter((r) => r.path === path).length).toBeLessThanOrEqual(DEFAULT_DELIVERY_LANES.perDestination);
    expect(await statusesOf(a.workspaceId)).toEqual([{ status: 'pending', n: A_DESTINATIONS * A_EVENTS }]);
    expect(await statusesOf(b.workspaceId)).toEqual([{ status: 'delivered', n: 1 }]);

    releaseA();
    await until(async () => (await statusesOf(a.workspaceId)).every((s) => s.status === 'delivered'), "A's deliveries to be delivered", 60_000);
    expect(await statusesOf(a.workspaceId)).toEqual([{ status: 'delivered', n: A_DESTINATIONS * A_EVENTS }]);
    await worker.stop();
    worker = undefined;
    expect(errors).toEqual([]);
  }, 120_000);

  it("B's inbound run is handed over while A's burst hangs in the executor; A holds at most its share; released, all of A's are handed over", async () => {
    const hooks = await Promise.all(
      [a, b].map((t, i) => t.services.webhooks.inbound.create(t.workspaceId, { slug: `lanes-${i}`, agentSlug: 'sales', template: 'Lead: {{ name }}' })),
    );
    const ingest = async (t: TestApp, hook: { slug: string; secret: string }, eventId: string) => {
      const body = JSON.stringify({ name: eventId });
      const res = await t.app.request(`/webhooks/inbound/${hook.slug}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-SERVICE-Signature': signInboundBody(body, hook.secret), 'X-SERVICE-Event-Id': eventId },
        body,
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { runId: string }).runId;
    };
    const aRuns: string[] = [];
    for (let i = 0; i < 12; i += 1) aRuns.push(await ingest(a, hooks[0]!, `a-${i}`));
    // B's event is received a second after A's burst (the apps have a clock each).
    b.clock.set(new Date(a.clock.now().getTime() + 1_000));
    const bRun = await ingest(b, hooks[1]!, 'b-0');

    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const heldA = new Set<string>();
    const handedOver: string[] = [];
    // Taking A's runs over hangs until released (a slow run service); B's is taken over at once.
    const execute = async (run: InboundRun) => {
      if (run.workspaceId === a.workspaceId) {
        heldA.add(run.runId);
        await released;
        heldA.delete(run.runId);
      }
      handedOver.push(run.runId);
    };
    const started = async (runId: string) => {
      const [event] = await store.db.query<{ run_started_at: Date | null }>(`SELECT run_started_at FROM inbound_events WHERE run_id = $1`, [runId]);
      return event?.run_started_at != null;
    };

    worker = start(execute);
    await until(() => started(bRun), "B's run to be handed over", 30_000);
    expect(handedOver).toEqual([bRun]);
    expect(heldA.size).toBeGreaterThan(0);
    expect(heldA.size).toBeLessThanOrEqual(INBOUND_WORKSPACE_CONCURRENCY);

    release();
    await until(async () => (await Promise.all(aRuns.map(started))).every(Boolean), "A's runs to be handed over", 30_000);
    expect(new Set(handedOver)).toEqual(new Set([bRun, ...aRuns]));
    await worker.stop();
    worker = undefined;
    expect(errors).toEqual([]);
  }, 120_000);

  it("one hanging destination holds its lane only: the workspace's other destination gets every delivery meanwhile", async () => {
    slowReleased = new Promise((resolve) => (releaseSlow = () => resolve({ status: 204 })));
    const slow = await createDestination(a, '/slow', ['run.failed']);
    const fast = await createDestination(a, '/fast', ['run.failed']);
    const events = DEFAULT_DELIVERY_LANES.perDestination + 4;
    for (let i = 0; i < events; i += 1) {
      await enqueueEvent(
        store.db,
        { tenantId: a.workspaceId, type: 'run.failed', data: { run_id: `run_f${i}`, agent: 'sales', reason: 'timeout', status: 'failed' } },
        { now: a.clock.now() },
      );
    }
    const statuses = async (destinationId: string) =>
      store.db.query<{ status: string; claimed: boolean; n: number }>(
        `SELECT status, claim_token IS NOT NULL AS claimed, count(*)::integer AS n FROM deliveries WHERE destination_id = $1
          GROUP BY status, claimed ORDER BY status, claimed`,
        [destinationId],
      );

    worker = start();
    await until(async () => (await statuses(fast)).every((s) => s.status === 'delivered'), "the fast destination's deliveries", 30_000);
    expect(await statuses(fast)).toEqual([{ status: 'delivered', claimed: false, n: events }]);
    // The slow one holds exactly its lane; the rest of its deliveries wait, unclaimed, for a slot of its own.
    const slowHeld = () => receiver.received.filter((r) => r.path === '/slow').length;
    await until(() => slowHeld() === DEFAULT_DELIVERY_LANES.perDestination, 'the slow destination to hold its lane', 30_000);
    expect(await statuses(slow)).toEqual([
      { status: 'pending', claimed: false, n: events - DEFAULT_DELIVERY_LANES.perDestination },
      { status: 'pending', claimed: true, n: DEFAULT_DELIVERY_LANES.perDestination },
    ]);

    releaseSlow();
    await until(async () => (await statuses(slow)).every((s) => s.status === 'delivered'), "the slow destination's deliveries", 30_000);
    expect(await statuses(slow)).toEqual([{ status: 'delivered', claimed: false, n: events }]);
    await worker.stop();
    worker = undefined;
    expect(errors).toEqual([]);
  }, 120_000);

  it('a backlog to one fast receiver is claimed half a lane at a time, not once per attempt', async () => {
    const c = await createTestApp({ db: store.db, deps });
    try {
      const destination = await createDestination(c, '/backlog', ['run.failed']);
      const events = 4 * DEFAULT_DELIVERY_LANES.perDestination;
      for (let i = 0; i < events; i += 1) {
        await enqueueEvent(
          store.db,
          { tenantId: c.workspaceId, type: 'run.failed', data: { run_id: `run_c${i}`, agent: 'sales', reason: 'timeout', status: 'failed' } },
          // The worker's clock (A's): due at once.
          { now: a.clock.now() },
        );
      }
      // The store as the worker sees it, counting its claims (the statement that locks due deliveries).
      let claims = 0;
      const counted =
        (target: Db | Tx) =>
        (sql: string, ...rest: unknown[]) => {
          if (sql.includes('SKIP LOCKED')) claims += 1;
          return (target.query as (...args: unknown[]) => unknown).call(target, sql, ...rest);
        };
      const counting = (tx: Tx): Tx => new Proxy(tx, { get: (target, key) => (key === 'query' ? counted(target) : Reflect.get(target, key)) });
      const db: Db = new Proxy(store.db, {
        get: (target, key) =>
          key === 'query'
            ? counted(target)
            : key === 'transaction'
              ? <T>(fn: (tx: Tx) => Promise<T>) => target.transaction((tx) => fn(counting(tx)))
              : Reflect.get(target, key),
      });
      const delivered = async () =>
        (
          await store.db.query<{ n: number }>(`SELECT count(*)::integer AS n FROM deliveries WHERE destination_id = $1 AND status = 'delivered'`, [destination])
        )[0]!.n;

      // No polls during the test: only the first tick and the attempts that end claim.
      worker = start(undefined, db, 600_000);
      await until(async () => (await delivered()) === events, 'the backlog to be delivered', 10_000);
      await worker.stop();
      worker = undefined;
      // A claim refills a lane once half of it is free: about one claim per half lane (and a claim that
      // runs again for what freed meanwhile). One claim per attempt that ends would be up to one per delivery.
      expect(claims).toBeLessThanOrEqual(events / 4);
      expect(errors).toEqual([]);
    } finally {
      await c.close();
    }
  }, 120_000);

  it("the connections to one address are bounded by the lanes alone: one workspace's 80 hanging attempts there do not hold another's delivery to it", async () => {
    const c = await createTestApp({ db: store.db, deps });
    const d = await createTestApp({ db: store.db, deps });
    let releaseHeld: () => void = () => {};
    const held = new Promise<ReceiverAnswer>((resolve) => (releaseHeld = () => resolve({ status: 204 })));
    const shared = await startHttpsTestReceiver(certificate, (request) => (request.path.startsWith('/held') ? held : { status: 200 }));
    try {
      const hold = 80;
      const paths = Array.from({ length: 5 }, (_, i) => `/held${i}`);
      for (const path of paths) await createDestination(c, `${shared.origin}${path}`, ['run.failed'], true);
      await createDestination(d, `${shared.origin}/d`, ['run.failed'], true);
      const failed = (t: TestApp, i: number) =>
        enqueueEvent(
          store.db,
          { tenantId: t.workspaceId, type: 'run.failed', data: { run_id: `run_h${i}`, agent: 'sales', reason: 'timeout', status: 'failed' } },
          { now: a.clock.now() },
        );
      for (let i = 0; i < hold / paths.length; i += 1) await failed(c, i);
      // Lanes wide enough for C to hold 80 attempts to the one address D's destination is on too.
      worker = start(undefined, store.db, 50, { lanes: { perDestination: 16, perWorkspace: hold }, concurrency: 2 * hold });
      await until(() => shared.received.length === hold, "C's attempts to be held", 30_000);
      await failed(d, 0);
      worker.wake();
      await until(() => shared.received.some((r) => r.path === '/d'), "D's delivery to reach the shared address", 30_000);
      releaseHeld();
      await worker.stop();
      worker = undefined;
      expect(errors).toEqual([]);
    } finally {
      releaseHeld();
      await worker?.stop(0);
      worker = undefined;
      await shared.close();
      await c.close();
      await d.close();
    }
  }, 120_000);
});
