/**
 * @module Outbound deliveries: claim what is due, send it signed, record the attempt.
 *
 * Claiming takes a lease: in one short transaction, due pending deliveries of active destinations
 * are locked with `FOR UPDATE SKIP LOCKED` (so concurrent workers never take the same row) and
 * stamped with `locked_until` and a claim token. The HTTP attempt happens outside any transaction.
 * A worker that dies mid-attempt simply lets the lease run out; the delivery is then due again and
 * another worker (or the restarted one) sends it: at least once, nothing lost. The outcome is
 * recorded only by the holder of the claim token, so a late answer cannot overwrite a newer claim.
 */
import type { SecureContextOptions } from 'node:tls';
import type { Clock } from '../clock.ts';
import { randomBase62 } from '../random.ts';
import type { Db } from '../store/db.ts';
import { recordDestinationFailure, recordDestinationSuccess } from '../domain/destinations/health.ts';
import {
  claimDueDeliveries as claimDueDeliveriesIn,
  holdsClaim,
  insertDeliveryAttempt,
  markAttemptFailed,
  recordDeliveredAttempts,
  releaseDeliveryClaim,
  type ClaimedDelivery,
  type DeliveredAttempt,
  type DeliveryLanes,
} from '../domain/events/deliveries.ts';
import { groupCommit, type GroupCommit } from '../store/group-commit.ts';
import { deliverWebhook, DEFAULT_DELIVERY_TIMEOUT_MS, type DeliveryOutcome } from '../domain/webhooks/delivery.ts';
import { createDeliveryAgents, type DeliveryAgents } from '../domain/webhooks/delivery-agents.ts';
import { deliveryErrorKind, type DeliveryErrorKind } from '../domain/webhooks/failure-kind.ts';
import { nextAttemptAt, type RandomSource } from '../domain/webhooks/retry-schedule.ts';
import type { SecretBox } from '../domain/webhooks/secret-box.ts';
import type { DestinationPolicy } from '../domain/webhooks/ssrf-guard.ts';
import { traceHeaders, tracer } from '../tracing/index.ts';
import { endDeliverySpan, startDeliverySpan } from '../tracing/delivery.ts';

export interface DeliveryWorkerDeps {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  policy: DestinationPolicy;
  /** Budget of one attempt; the lease is this plus {@link LEASE_MARGIN_MS}. */
  timeoutMs?: number;
  /** Deliveries claimed per batch (`runDeliveryBatch`); the worker's loop keeps up to {@link DELIVERY_CONCURRENCY} in flight instead. */
  batchSize?: number;
  /** How many of one destination's, and of one workspace's, deliveries may be in flight at once: {@link DEFAULT_DELIVERY_LANES}. */
  lanes?: DeliveryLanes;
  /** Extra trust roots for receivers (tests); certificate checks are never turned off. */
  ca?: SecureContextOptions['ca'];
  /** The retry jitter source (tests pin it). */
  random?: RandomSource;
  /** One attempt; `deliverWebhook` unless a test replaces the transport. */
  send?: typeof deliverWebhook;
  /** Each recorded attempt (logs and metrics): ids, outcome and, for a failure, its reason. */
  onAttempt?: (attempt: DeliveryAttemptInfo) => void;
  /** Claims of this worker not recorded yet, by claim token (released at shutdown). */
  claims?: Map<string, string[]>;
  /** This worker's attempts in flight, by destination id: the claim leaves a destination at its lane's bound out. */
  inFlight?: Map<string, number>;
  /**
   * Records delivered attempts, grouped (`deliveredRecorder`): the worker keeps one, so attempts of
   * its batches that end together are one statement. Absent, each batch groups its own.
   */
  recordDelivered?: GroupCommit<DeliveredAttempt, string[]>;
  /** The kept-alive connections to receivers (delivery-agents.ts): the worker keeps one pool. Absent, each batch has its own. */
  agents?: DeliveryAgents;
  /** A failure of our own in an attempt, for the operator (a signing secret that does not open under this key). */
  logError?: (error: unknown) => void;
}

/** The grouped record of delivered attempts (store/group-commit.ts): one statement for those that end together. */
export function deliveredRecorder(db: Db): GroupCommit<DeliveredAttempt, string[]> {
  return groupCommit((attempts) => recordDeliveredAttempts(db, attempts));
}

export interface DeliveryAttemptInfo {
  deliveryId: string;
  eventId: string;
  eventType: string;
  destinationId: string;
  /** The host of the destination's URL, as its admin configured it (never an address it resolved to). */
  destinationHost: string;
  attempt: number;
  outcome: DeliveryOutcome;
  /** Null when delivered. */
  errorKind: DeliveryErrorKind | null;
  durationMs: number;
  /** When the delivery is due again; null when delivered or given up. */
  nextRetryAt: Date | null;
}

/**
 * Gives back the deliveries this worker claimed and has not recorded (a shutdown that cannot wait for
 * them): another worker may send them at once instead of after the lease. A late answer of the
 * abandoned attempt is then not recorded (its claim token no longer matches): at least once, never lost.
 */
export async function releaseClaims(db: Db, claims: Map<string, string[]>): Promise<number> {
  let released = 0;
  for (const [token, ids] of claims) {
    released += await releaseDeliveryClaim(db, token, ids);
    claims.delete(token);
  }
  return released;
}

/** Time past the attempt's own timeout before a lease is considered abandoned. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Attempts one worker keeps in flight at once. Each runs on its own: a slot freed by one attempt is
 * claimed again without waiting for the others once its destination's lane is half free (worker/index.ts).
 */
export const DELIVERY_CONCURRENCY = 64;

/**
 * The lanes of one worker: a destination holds at most 16 of its attempts and a workspace at most 32,
 * half of them, so a workspace whose receivers hang leaves the other half to the rest, and one hanging
 * destination leaves its workspace's other destinations 16. (Wider lanes, 32 and 64 of 128, drained one
 * fast destination's backlog 10-30 % faster but, while another workspace's receivers hung, delayed the
 * others' deliveries past the 2 s bound the fairness scenario holds: docs/performance.md.)
 */
export const DEFAULT_DELIVERY_LANES: DeliveryLanes = { perDestination: 16, perWorkspace: 32 };

interface BatchResult {
  claimed: number;
  delivered: number;
  failed: number;
}

const encoder = new TextEncoder();

/** Claims one batch of due deliveries and sends them concurrently; resolves when all are recorded (tests, the benchmark). */
export async function runDeliveryBatch(options: DeliveryWorkerDeps): Promise<BatchResult> {
  const deps = { ...options, recordDelivered: options.recordDelivered ?? deliveredRecorder(options.db), agents: options.agents ?? createDeliveryAgents() };
  const started = await startDeliveries(deps, deps.batchSize ?? 20);
  const outcomes = await Promise.all(started.map((s) => s.done));
  const delivered = outcomes.filter((o) => o.result === 'delivered').length;
  return { claimed: started.length, delivered, failed: started.length - delivered };
}

/** An attempt under way: its destination, and its outcome once recorded. */
export interface StartedDelivery {
  destinationId: string;
  done: Promise<DeliveryOutcome>;
}

/**
 * Claims up to `limit` due deliveries (by lane, see `claimDueDeliveries`) and starts their attempts,
 * each on its own: one promise per attempt, settled once it is recorded. A claimed delivery stays in
 * `deps.claims` until its attempt is recorded, so a shutdown that cannot wait gives it back.
 */
export async function startDeliveries(deps: DeliveryWorkerDeps, limit: number): Promise<StartedDelivery[]> {
  const claimed = await claimDueDeliveries({ ...deps, batchSize: limit });
  const token = claimed[0]?.claim_token;
  if (!token) return [];
  const held = claimed.map((row) => row.id);
  deps.claims?.set(token, held);
  const lanes = deps.inFlight;
  return claimed.map((row) => {
    lanes?.set(row.destination_id, (lanes.get(row.destination_id) ?? 0) + 1);
    const done = attempt(deps, row)
      .then((outcome) => {
        // Recorded: no longer ours to give back. An attempt whose record failed (the store is down) stays held.
        held.splice(held.indexOf(row.id), 1);
        if (held.length === 0) deps.claims?.delete(token);
        return outcome;
      })
      .finally(() => {
        const left = (lanes?.get(row.destination_id) ?? 1) - 1;
        if (left > 0) lanes?.set(row.destination_id, left);
        else lanes?.delete(row.destination_id);
      });
    return { destinationId: row.destination_id, done };
  });
}

export async function claimDueDeliveries(deps: DeliveryWorkerDeps): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + (deps.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS) + LEASE_MARGIN_MS);
  const token = randomBase62(16);
  return claimDueDeliveriesIn(deps.db, {
    now,
    limit: deps.batchSize ?? 20,
    leaseUntil,
    token,
    lanes: deps.lanes ?? DEFAULT_DELIVERY_LANES,
    ...(deps.inFlight ? { busy: deps.inFlight } : {}),
  });
}

async function attempt(deps: DeliveryWorkerDeps, row: ClaimedDelivery): Promise<DeliveryOutcome> {
  const send = deps.send ?? deliverWebhook;
  let outcome: DeliveryOutcome;
  // Wall time, not the injected clock: how long the receiver really took.
  const startedAt = performance.now();
  // Traces on: the attempt's client span (its number and status code, never the URL: the destination is the
  // tenant's), its context sent to the receiver as `traceparent`.
  const traces = tracer();
  const span = traces === undefined ? undefined : startDeliverySpan(traces, row.attempts + 1);
  try {
    outcome = await send(
      // The destination's current URL and secret: a rotation applies to retries too (and the previous
      // secret, during its grace period, adds its own `webhook-signature`).
      {
        url: row.url,
        secret: deps.secretBox.open(row.secret_encrypted),
        previousSecret: row.previous_secret_encrypted === null ? undefined : deps.secretBox.open(row.previous_secret_encrypted),
        body: encoder.encode(row.body),
        eventId: row.event_id,
        eventType: row.type,
        traceHeaders: span === undefined ? undefined : traceHeaders(span),
      },
      {
        policy: deps.policy,
        now: () => deps.clock.now().getTime(),
        ...(deps.timeoutMs !== undefined ? { timeoutMs: deps.timeoutMs } : {}),
        ...(deps.ca !== undefined ? { ca: deps.ca } : {}),
        ...(deps.agents ? { agents: deps.agents } : {}),
      },
    );
  } catch (error) {
    // A failure of our own (a secret that does not open): a failed attempt, retried on the schedule, and the
    // operator told the cause (the log line names the repair for a secret sealed under another key).
    deps.logError?.(error);
    outcome = { result: 'retry', reason: 'network_error', detail: 'internal' };
  }
  if (span !== undefined) endDeliverySpan(span, outcome);
  const durationMs = Math.max(0, Math.round(performance.now() - startedAt));
  // A test event is attempted once: a failure is its end, not a retry.
  if (row.test && outcome.result === 'retry') outcome = { ...outcome, result: 'give_up' };
  const errorKind = deliveryErrorKind(outcome);
  const nextRetryAt = await recordAttempt(deps, row, outcome, { errorKind, durationMs });
  deps.onAttempt?.({
    deliveryId: row.id,
    eventId: row.event_id,
    eventType: row.type,
    destinationId: row.destination_id,
    destinationHost: hostOf(row.url),
    attempt: row.attempts + 1,
    outcome,
    errorKind,
    durationMs,
    nextRetryAt,
  });
  return outcome;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid-url';
  }
}

/**
 * Writes the attempt, moves the delivery on (delivered, next retry, or given up) and applies the pause
 * rule; answers when the delivery is due again (null when delivered, given up, or no longer ours). A
 * delivered attempt is one statement shared with the others that end together; a failed one a
 * transaction of its own (the pause rule reads what it wrote). A test event leaves the destination's
 * health alone: neither its failure nor its success is counted.
 */
async function recordAttempt(
  deps: DeliveryWorkerDeps,
  row: ClaimedDelivery,
  outcome: DeliveryOutcome,
  measured: { errorKind: DeliveryErrorKind | null; durationMs: number },
): Promise<Date | null> {
  const at = deps.clock.now();
  const attempts = row.attempts + 1;
  const shown = {
    requestHeaders: outcome.sentHeaders ?? null,
    responseBody: outcome.answer?.body ?? null,
    responseTruncated: outcome.answer?.truncated ?? false,
  };
  if (outcome.result === 'delivered') {
    // Grouped with the other attempts that end now; a lost claim is left to the claim that took it.
    const record = deps.recordDelivered ?? deliveredRecorder(deps.db);
    const recorded = await record({
      deliveryId: row.id,
      claimToken: row.claim_token,
      attempt: attempts,
      status: outcome.status,
      at,
      durationMs: measured.durationMs,
      ...shown,
    });
    // A destination that was failing is healthy again (one that was not is left unwritten).
    if (!row.test && row.consecutive_failures > 0 && recorded.includes(row.id)) await recordDestinationSuccess(deps.db, row.destination_id);
    return null;
  }
  const next = outcome.result === 'retry' ? nextAttemptAt(attempts, at, deps.random) : null;
  return deps.db.transaction(async (tx) => {
    if (!(await holdsClaim(tx, row.id, row.claim_token))) return null; // the lease was lost and the delivery claimed again: that claim records it
    const status = outcome.status ?? null;
    await insertDeliveryAttempt(tx, {
      deliveryId: row.id,
      attempt: attempts,
      result: outcome.result,
      status,
      reason: 'reason' in outcome ? outcome.reason : null,
      at,
      errorKind: measured.errorKind,
      durationMs: measured.durationMs,
      nextAttemptAt: next,
      ...shown,
    });
    await markAttemptFailed(tx, { deliveryId: row.id, attempts, next, at, status, reason: outcome.reason });
    if (row.test) return next;
    await recordDestinationFailure(tx, row.destination_id, at, {
      errorKind: measured.errorKind ?? 'internal',
      httpStatus: status,
      // The receiver answered 410 Gone: it wants no more deliveries, so the destination is paused at once.
      gone: outcome.result === 'give_up' && status === 410,
    });
    return next;
  });
}
