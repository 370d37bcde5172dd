/**
 * @module The background worker started by `serve`: it polls for due outbound deliveries (and
 * inbound runs to hand over) every `pollMs`, or sooner when woken. Stopping waits for the batch in
 * flight, so a clean shutdown records every attempt; a crash loses only leases, which run out.
 */
import { fallbackLogger } from '../log/index.ts';
import type { Clock } from '../clock.ts';
import { createDeliveryAgents } from '../domain/webhooks/delivery-agents.ts';
import { deliveredRecorder, releaseClaims, runDeliveryBatch, type DeliveryWorkerDeps } from './deliveries.ts';
import { handOverInboundRuns, type InboundRunExecutor } from './inbound-runs.ts';

interface WorkerOptions extends DeliveryWorkerDeps {
  /** Time between polls when there is nothing to do. */
  pollMs?: number;
  /** The inbound run executor; absent, inbound runs wait in their queue. */
  executeInboundRun?: InboundRunExecutor;
  /** Ends (or hands over again) runs whose instance died (domain/runs/recovery.ts); absent, none are swept. */
  sweepInterruptedRuns?: () => Promise<unknown>;
  /** Errors of a tick (the store is down, …); the worker keeps polling. */
  logError?: (error: unknown) => void;
  clock: Clock;
}

export interface Worker {
  /** Runs one tick now: hand over inbound runs, then deliver until nothing is due. */
  tick(): Promise<void>;
  /** Schedules a tick as soon as the current one ends. */
  wake(): void;
  /**
   * Stops polling and waits for the tick in flight, at most `graceMs` when given; then gives back the
   * deliveries still claimed (their attempts did not end in time) so another instance sends them.
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
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  let failures = 0;
  const claims = new Map<string, string[]>();
  // One grouped recorder for every batch: attempts of any batch that end together are one statement.
  const deps = {
    ...options,
    claims,
    recordDelivered: options.recordDelivered ?? deliveredRecorder(options.db),
    // One pool of kept-alive connections to receivers for every batch (domain/webhooks/delivery-agents.ts).
    agents: options.agents ?? createDeliveryAgents(),
  };

  async function tick(): Promise<void> {
    // First, so an interrupted inbound run is handed over again in the same tick.
    await options.sweepInterruptedRuns?.();
    if (options.executeInboundRun) {
      while ((await handOverInboundRuns({ db: options.db, clock: options.clock, execute: options.executeInboundRun })) > 0 && !stopped);
    }
    // Keep going while full batches come back: a backlog drains without waiting for the next poll.
    for (;;) {
      const batch = await runDeliveryBatch(deps);
      if (stopped || batch.claimed < (options.batchSize ?? 20)) break;
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
        (options.logError ?? defaultLog)(error);
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
    wake() {
      if (running) again = true;
      else schedule(0);
    },
    async stop(graceMs?: number) {
      stopped = true;
      clearTimeout(timer);
      if (graceMs === undefined) {
        await running;
        return;
      }
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise((resolve) => (timeout = setTimeout(resolve, graceMs)))]);
      clearTimeout(timeout);
      if (claims.size > 0) await releaseClaims(options.db, claims).catch((error: unknown) => (options.logError ?? defaultLog)(error));
    },
  };
}

function defaultLog(error: unknown): void {
  fallbackLogger().error({ err: error }, 'webhook worker tick failed');
}
