/**
 * @module The deliveries of the fairness scenario (fairness.ts): slow receivers for workspace A, a fast one for
 * workspace B, both on one loopback HTTPS receiver with the run's certificate (the server trusts it through
 * NODE_EXTRA_CA_CERTS). A's {@link SLOW_DESTINATIONS} destinations (`/slow/<n>`) answer after {@link SLOW_RECEIVER_MS};
 * while A floods, it keeps them busy with pings ({@link PINGERS_PER_DESTINATION} at a time per destination, so that
 * `backlog` pings of each stay queued beyond those its receiver holds: the worker's lanes stay full). B's destination
 * (`/fast`) answers at once; B pings it at {@link DELIVERY_RATE}/s, and its delivery latency is the time from a
 * ping's `202` to the receiver getting that event (matched by `X-SERVICE-Event-Id`; 0 when the delivery came first).
 * Pings go through the admin API (`POST /webhook-destinations/{id}/ping`), each from its own forwarded address.
 */
import { startHttpsTestReceiver, type TestCertificate } from '@service/testing/https-receiver';
import { type AdminSession, signIn } from './probes.ts';
import type { ServiceUnderTest } from './processes.ts';
import { percentile } from './stats.ts';

/** A's slow destinations, and how long their receiver takes to answer (the five receivers at 9 s). */
export const SLOW_DESTINATIONS = 5;
export const SLOW_RECEIVER_MS = 9_000;
/** B's pings per second. */
export const DELIVERY_RATE = 1;
/** How long after its half a delivery of B may still arrive and count. */
export const DELIVERY_GRACE_MS = 15_000;
/** A's pings in flight at a time per slow destination. */
const PINGERS_PER_DESTINATION = 3;

/** B's pings of one half and the deliveries they caused. */
export interface DeliveryRun {
  sent: number;
  /** Ping answers by status (`error` for a failed connection). */
  statuses: Record<string, number>;
  /** Deliveries the receiver got within the half plus {@link DELIVERY_GRACE_MS}. */
  received: number;
  /** `received` over `sent`. */
  successRate: number;
  /** From the ping's `202` to the delivery's arrival. */
  p50Ms: number;
  p99Ms: number;
}

/** What A's slow receivers got. */
export interface SlowReceivers {
  destinations: number;
  answerMs: number;
  /** Pings queued beyond those held, per destination. */
  backlog: number;
  /** A's ping answers by status (refusals under its own flood among them). */
  pings: Record<string, number>;
  /** Deliveries the slow receivers got, and the most they held at once. */
  received: number;
  maxHeld: number;
}

export interface FairnessDeliveries {
  /** B pings its destination at {@link DELIVERY_RATE}/s for `seconds`; resolves once every delivery arrived or the grace ran out. */
  modest(seconds: number, phase: number): Promise<DeliveryRun>;
  /** A starts keeping its slow destinations busy; resolves once each has `backlog` pings queued (or after 15 s). */
  startSlow(backlog: number): Promise<void>;
  stopSlow(): Promise<SlowReceivers>;
  /** Answers what the slow receivers still hold and closes the receiver. */
  close(): Promise<void>;
}

type Answered = { status: string; eventId?: string; at: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Queues a ping to `destination`: its status, event id and when its answer came. */
async function ping(base: string, session: AdminSession, destination: string, address: string): Promise<Answered> {
  try {
    const res = await fetch(`${base}/webhook-destinations/${destination}/ping`, {
      method: 'POST',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'x-forwarded-for': address },
    });
    const at = performance.now();
    if (res.status !== 202) {
      await res.arrayBuffer();
      return { status: String(res.status), at };
    }
    const { eventIds } = (await res.json()) as { eventIds: string[] };
    return { status: '202', eventId: eventIds[0], at };
  } catch {
    return { status: 'error', at: performance.now() };
  }
}

async function createDestination(base: string, session: AdminSession, url: string, address: string): Promise<string> {
  const res = await fetch(`${base}/webhook-destinations`, {
    method: 'POST',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json', 'x-forwarded-for': address },
    // Subscribed to an event the benchmark does not cause: only the pings are delivered.
    body: JSON.stringify({ url, events: ['integration.connected'] }),
  });
  if (res.status !== 201) throw new Error(`creating a destination answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/**
 * The receiver, A's slow destinations and B's fast one (`modestAdmin` is B's owner), and one unmeasured ping of B
 * that must arrive.
 */
export async function setUpDeliveries(
  service: ServiceUnderTest,
  modestAdmin: ServiceUnderTest['admin'],
  certificate: TestCertificate,
): Promise<FairnessDeliveries> {
  const arrivals = new Map<string, number>();
  const slowReceived = Array.from({ length: SLOW_DESTINATIONS }, () => 0);
  const holding = new Set<() => void>();
  let maxHeld = 0;
  const receiver = await startHttpsTestReceiver(certificate, (request) => {
    const slow = /^\/slow\/(\d+)$/.exec(request.path);
    if (!slow) {
      const id = request.headers['x-service-event-id'];
      if (typeof id === 'string') arrivals.set(id, performance.now());
      return { status: 200 };
    }
    slowReceived[Number(slow[1])]! += 1;
    return new Promise((resolve) => {
      const answer = () => {
        clearTimeout(timer);
        holding.delete(answer);
        resolve({ status: 200 });
      };
      const timer = setTimeout(answer, SLOW_RECEIVER_MS);
      holding.add(answer);
      maxHeld = Math.max(maxHeld, holding.size);
    });
  });
  const close = async () => {
    for (const answer of [...holding]) answer();
    await receiver.close();
  };
  try {
    const flooding = await signIn(service.url, service.admin, '10.252.1.1');
    const modestSession = await signIn(service.url, modestAdmin, '10.252.1.2');
    const slowIds: string[] = [];
    for (let n = 0; n < SLOW_DESTINATIONS; n += 1) slowIds.push(await createDestination(service.url, flooding, `${receiver.origin}/slow/${n}`, '10.252.1.1'));
    const fastId = await createDestination(service.url, modestSession, `${receiver.origin}/fast`, '10.252.1.2');

    /** Waits until each event has arrived or `deadline` passed; the latencies of those that arrived in time. */
    const arrived = async (answered: Answered[], deadline: number): Promise<number[]> => {
      while (answered.some((a) => !arrivals.has(a.eventId!)) && performance.now() < deadline) await sleep(20);
      return answered.flatMap((a) => {
        const at = arrivals.get(a.eventId!);
        return at !== undefined && at <= deadline ? [Math.max(0, at - a.at)] : [];
      });
    };
    const first = await ping(service.url, modestSession, fastId, '10.254.9.1');
    if (!first.eventId || (await arrived([first], performance.now() + DELIVERY_GRACE_MS)).length === 0)
      throw new Error(`workspace B's first ping was not delivered (ping answered ${first.status})`);

    let keeping = false;
    const pingers: Promise<void>[] = [];
    const pinged = Array.from({ length: SLOW_DESTINATIONS }, () => 0);
    const pings: Record<string, number> = {};
    let backlog = 0;
    let k = 0;
    /** One of A's pingers of destination `n`: pings while fewer than `backlog` of its pings wait to be delivered. */
    const keep = async (n: number) => {
      while (keeping) {
        if (pinged[n]! - slowReceived[n]! >= backlog) {
          await sleep(50);
          continue;
        }
        pinged[n]! += 1;
        k += 1;
        const answer = await ping(service.url, flooding, slowIds[n]!, `10.255.${Math.floor(k / 250) % 250}.${(k % 250) + 1}`);
        pings[answer.status] = (pings[answer.status] ?? 0) + 1;
        if (answer.status !== '202') {
          pinged[n]! -= 1;
          await sleep(200);
        }
      }
    };
    return {
      async modest(seconds, phase) {
        const count = Math.max(1, Math.round(seconds * DELIVERY_RATE));
        const statuses: Record<string, number> = {};
        const answered: Answered[] = [];
        const started = performance.now();
        const sent: Promise<void>[] = [];
        for (let i = 0; i < count; i += 1) {
          const wait = started + (i * 1000) / DELIVERY_RATE - performance.now();
          if (wait > 0) await sleep(wait);
          sent.push(
            (async () => {
              const answer = await ping(service.url, modestSession, fastId, `10.254.${phase}.${(i % 250) + 1}`);
              statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
              if (answer.eventId) answered.push(answer);
            })(),
          );
        }
        await Promise.all(sent);
        const latencies = await arrived(answered, started + seconds * 1000 + DELIVERY_GRACE_MS);
        return {
          sent: count,
          statuses,
          received: latencies.length,
          successRate: latencies.length / count,
          p50Ms: percentile(latencies, 0.5),
          p99Ms: percentile(latencies, 0.99),
        };
      },
      async startSlow(queued) {
        backlog = queued;
        keeping = true;
        for (let n = 0; n < SLOW_DESTINATIONS; n += 1) for (let p = 0; p < PINGERS_PER_DESTINATION; p += 1) pingers.push(keep(n));
        const deadline = performance.now() + 15_000;
        while (pinged.some((count, n) => count - slowReceived[n]! < backlog) && performance.now() < deadline) await sleep(20);
      },
      async stopSlow() {
        keeping = false;
        await Promise.all(pingers);
        return {
          destinations: SLOW_DESTINATIONS,
          answerMs: SLOW_RECEIVER_MS,
          backlog,
          pings,
          received: slowReceived.reduce((a, b) => a + b, 0),
          maxHeld,
        };
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
