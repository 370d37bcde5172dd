/**
 * @module Runs started by inbound webhooks. Ingestion writes the event and its `in_progress` run
 * in one transaction; executing the run is handed over here, from a durable queue (events whose
 * `run_started_at` is null), so a crash between the answer to the sender and the hand-over loses
 * nothing. The executor is injected: the run service's executor once it is wired in, nothing (the
 * queue waits) until then.
 */
import type { Clock } from '../clock.ts';
import type { Db } from '../store/db.ts';

/** One run to execute: its row already exists, `in_progress`, with `source = 'inbound_webhook'`. */
export interface InboundRun {
  runId: string;
  workspaceId: string;
  agentSlug: string;
  alias: string;
  /** The agent input rendered from the event by the webhook's template. */
  content: string;
  /** The sender's event id, for the run's audit trail. */
  eventId: string;
}

/**
 * Executes an inbound run (swap in the run service's executor here). It must be idempotent for a
 * run id: after a crash the same run can be handed over again. Resolving means "taken over": the
 * run holds its own lease from then on, so the event is marked started only once it resolved.
 */
export type InboundRunExecutor = (run: InboundRun) => Promise<void>;

/** How long a claimed hand-over is reserved for its worker before another may retry it. */
export const HAND_OVER_LEASE_MS = 60_000;

/**
 * Hands over up to `limit` waiting inbound runs; returns how many were taken over. The claim is a
 * short transaction (`FOR UPDATE SKIP LOCKED`, then a lease); the executor runs outside it, and
 * only once it resolved is the event marked started. A crash in between leaves the lease to run
 * out and the run is handed over again: at least once (the run service adopts a run only once).
 */
export async function handOverInboundRuns(deps: { db: Db; clock: Clock; execute: InboundRunExecutor }, limit = 10): Promise<number> {
  const now = deps.clock.now();
  const claimed = await deps.db.transaction(async (tx) => {
    const rows = await tx.query<{ id: string; run_id: string; workspace_id: string; agent_slug: string; alias: string; agent_input: string; event_id: string }>(
      // Only runs still in_progress: one that ended before its hand-over (canceled) has nothing to
      // run, and its input is already forgotten.
      `SELECT e.id, e.run_id, e.workspace_id, e.agent_slug, e.alias, e.agent_input, e.event_id FROM inbound_events e
         JOIN runs r ON r.id = e.run_id AND r.workspace_id = e.workspace_id
        WHERE e.run_started_at IS NULL AND (e.run_lease_until IS NULL OR e.run_lease_until <= $1) AND r.status = 'in_progress'
        ORDER BY e.received_at, e.id LIMIT $2 FOR UPDATE OF e SKIP LOCKED`,
      [now, limit],
    );
    if (rows.length > 0) {
      await tx.query(`UPDATE inbound_events SET run_lease_until = $2 WHERE id = ANY ($1::text[])`, [
        rows.map((r) => r.id),
        new Date(now.getTime() + HAND_OVER_LEASE_MS),
      ]);
    }
    return rows;
  });
  let handedOver = 0;
  for (const row of claimed) {
    try {
      await deps.execute({
        runId: row.run_id,
        workspaceId: row.workspace_id,
        agentSlug: row.agent_slug,
        alias: row.alias,
        content: row.agent_input,
        eventId: row.event_id,
      });
    } catch {
      continue; // the lease runs out and the hand-over is tried again
    }
    // The input stays until the run ends: a run interrupted by a crash is handed over again
    // (domain/runs/recovery.ts), and its closing transaction forgets the input.
    await deps.db.query(`UPDATE inbound_events SET run_started_at = $2, run_lease_until = NULL WHERE id = $1`, [row.id, deps.clock.now()]);
    handedOver += 1;
  }
  return handedOver;
}
