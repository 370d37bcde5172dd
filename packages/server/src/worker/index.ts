/**
 * @module The background worker started by `serve`: it polls for due outbound deliveries (and
 * inbound runs to hand over) every `pollMs`, or sooner when woken. Deliveries go by lane
 * (domain/events/deliveries.ts, `claimDueDeliveries`): each attempt runs on its own, up to
 * `concurrency` at once, and the slot one frees is claimed again without waiting for the others, so a
 * receiver that hangs holds its own attempts and nobody else's. Stopping waits for the attempts in
 * flight, so a clean shutdown records every attempt (or gives back what did not end in the grace); a
 * crash loses only leases, which run out.
 */
import { fallbackLogger } from '../log/index.ts';
import type { Clock } from '../clock.ts';
import { createDeliveryAgents } from '../domain/webhooks/delivery-agents.ts';
import { DEFAULT_DELIVERY_LANES, DELIVERY_CONCURRENCY, deliveredRecorder, releaseClaims, startDeliveries, type DeliveryWorkerDeps } from './deliveries.ts';
import { INBOUND_CONCURRENCY, INBOUND_WORKSPACE_CONCURRENCY, startInboundHandOvers, type InboundRunExecutor } from './inbound-runs.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { asStoreParty, BACKGROUND_PARTY } from '../store/fair-queue.ts';

interface WorkerOptions extends DeliveryWorkerDeps {
  /** Time between polls when there is nothing to do. */
  pollMs?: number;
  /** Delivery attempts in flight at once in this worker: {@link DELIVERY_CONCURRENCY}. */
  concurrency?: number;
  /** The inbound run executor; absent, inbound runs wait in their queue. */
  executeInboundRun?: InboundRunExecutor;
  /** Ends (or hands over again) runs whose instance died (domain/runs/recovery.ts); absent, none are swept. */
  sweepInterruptedRuns?: () => Promise<unknown>;
  /** Errors of a tick (the store is down, …); the worker keeps polling. */
  logError?: (error: unknown) => void;
  clock: Clock;
}

export interface Worker {
  /**
   * Runs one tick now: hand over inbound runs, then claim due deliveries into the free slots and start
   * their attempts; resolves once they are started, not when they end (see `idle`).
   */
  tick(): Promise<void>;
  /** Resolves when no delivery attempt (nor inbound hand-over) of this worker is in flight. */
  idle(): Promise<void>;
  /** Schedules a tick as soon as the current one ends. */
  wake(): void;
  /**
   * Stops polling and claiming and waits for the tick and the attempts in flight, at most `graceMs` when
   * given; then gives back the deliveries still claimed (their attempts did not end in time) so another
   * instance sends them.
   */
  stop(graceMs?: number): Promise<void>;
}

const DEFAULT_POLL_MS = 1_000;
/** Longest wait between ticks while they keep failing (the store is down): the poll doubles up to it. */
export const MAX_BACKOFF_MS = 30_000;

/** The wait after `failures` failed ticks in a row: the poll interval, doubled each time, at most MAX_BACKOFF_MS. */
export function backoffMs(pollMs: number, failures: number): number {
  return failures === 0 ? pollMs : Math.max(pollMs, Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 16)));
}

export function startWorker(options: WorkerOptions): Worker {
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const concurrency = options.concurrency ?? DELIVERY_CONCURRENCY;
  const logError = options.logError ?? defaultLog;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failures = 0;
  const claims = new Map<string, string[]>();
  // One grouped recorder for every attempt: attempts that end together are one statement.
  const deps = {
    ...options,
    claims,
    inFlight: new Map<string, number>(),
    recordDelivered: options.recordDelivered ?? deliveredRecorder(options.db),
    // One pool of kept-alive connections to receivers for every attempt (domain/webhooks/delivery-agents.ts).
    agents: options.agents ?? createDeliveryAgents(),
  };
  /** The attempts in flight, each settled once recorded (or once its failure is logged). */
  const attempts = new Set<Promise<void>>();
  /** The inbound hand-overs under way, and how many per workspace. */
  const handOvers = new Set<Promise<void>>();
  const handOversOf = new Map<string, number>();

  /**
   * An attempt that ends claims again only once its destination's lane is half free (or empty): a
   * backlog to one fast receiver is then claimed eight at a time, not one claim per attempt, while a
   * lane whose receiver hangs still never holds more than its bound. Whatever a refill does not take
   * (another lane's due retry) waits at most for the next tick.
   */
  const refillAt = Math.floor((options.lanes ?? DEFAULT_DELIVERY_LANES).perDestination / 2);

  /** Claims due deliveries into the free slots and starts them, each on its own. */
  const fillDeliveries = oneAtATime(async () => {
    const free = concurrency - attempts.size;
    if (stopped || free <= 0) return;
    for (const { destinationId, done } of await startDeliveries(deps, free)) {
      track(attempts, done, () => ((deps.inFlight.get(destinationId) ?? 0) <= refillAt ? fillDeliveries() : Promise.resolve()));
    }
  });

  /** Claims waiting inbound runs into the free hand-over slots (a workspace at its share is skipped) and starts them. */
  const fillHandOvers = oneAtATime(async () => {
    const execute = options.executeInboundRun;
    const free = INBOUND_CONCURRENCY - handOvers.size;
    if (!execute || stopped || free <= 0) return;
    const started = await startInboundHandOvers(
      { db: options.db, clock: options.clock, execute },
      { limit: free, perWorkspace: INBOUND_WORKSPACE_CONCURRENCY, busy: handOversOf },
    );
    for (const { workspaceId, done } of started) {
      handOversOf.set(workspaceId, (handOversOf.get(workspaceId) ?? 0) + 1);
      track(handOvers, done, () => {
        const left = (handOversOf.get(workspaceId) ?? 1) - 1;
        if (left > 0) handOversOf.set(workspaceId, left);
        else handOversOf.delete(workspaceId);
        return fillHandOvers();
      });
    }
  });

  /** Keeps `work` in `pool` until it settles (a failure is logged: its lease runs out), then frees its slot and claims again. */
  function track(pool: Set<Promise<void>>, work: Promise<unknown>, freed: () => Promise<void>): void {
    const settled: Promise<void> = work
      .then(
        () => undefined,
        (error: unknown) => logError(error),
      )
      .finally(() => {
        pool.delete(settled);
        // The slot is free: claim what is due (the next of this lane, or another's) at once.
        if (!stopped) freed().catch(logError);
      });
    pool.add(settled);
  }

  /**
   * The worker's statements are the background party's in the store's fair queue, whoever woke it (a request that
   * queued an event): a tick started in a flooding workspace's request would otherwise queue behind its statements.
   */
  const tick = (): Promise<void> =>
    asStoreParty(BACKGROUND_PARTY, async () => {
      // First, so an interrupted inbound run is handed over again in the same tick.
      await options.sweepInterruptedRuns?.();
      // Neither waits for what it started: a slow receiver or a slow hand-over holds only its own slot.
      await fillHandOvers();
      await fillDeliveries();
    });

  async function idle(): Promise<void> {
    // A claim under way may still start attempts: it is waited for too.
    for (;;) {
      const busy = [...attempts, ...handOvers, fillDeliveries.current, fillHandOvers.current].filter((p) => p !== undefined);
      if (busy.length === 0) return;
      await Promise.allSettled(busy);
    }
  }

  function schedule(delay: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(loop, delay);
    timer.unref?.();
  }

  function loop(): void {
    if (running) {
      again = true;
      return;
    }
    running = tick()
      .then(() => {
        failures = 0;
      })
      .catch((error: unknown) => {
        failures += 1;
        logError(error);
      })
      .finally(() => {
        running = undefined;
        const now = again && failures === 0;
        again = false;
        // A failing tick (the store is down) backs off; a wake-up does not shorten the backoff.
        schedule(now ? 0 : backoffMs(pollMs, failures));
      });
  }

  schedule(0);
  return {
    tick,
    idle,
    wake() {
      if (running) again = true;
      else schedule(0);
    },
    async stop(graceMs?: number) {
      stopped = true;
      clearTimeout(timer);
      const settled = (async () => {
        await running;
        await idle();
      })();
      if (graceMs === undefined) {
        await settled;
        return;
      }
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([settled, new Promise((resolve) => (timeout = setTimeout(resolve, graceMs)))]);
      clearTimeout(timeout);
      if (claims.size > 0) await releaseClaims(options.db, claims).catch((error: unknown) => logError(error));
    },
  };
}

function defaultLog(error: unknown): void {
  fallbackLogger().error({ err: error }, 'webhook worker tick failed');
}
