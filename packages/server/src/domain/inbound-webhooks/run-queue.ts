/**
 * @module The inbound events as the durable queue of their runs: the only writes to `inbound_events`
 * made after ingestion. The hand-over (src/worker/inbound-runs.ts) claims waiting events under a
 * lease and marks them started; through the run hooks it registers (./run-hooks.ts), an interrupted
 * run is put back in the queue and the rendered input is forgotten once the run has ended. Each
 * function takes the caller's transaction, so its guarantees are the caller's.
 */
import type { Db, Tx } from '../../store/db.ts';
import { columnsOf, int, nullable, row, selectRows, text } from '../../store/rows.ts';

/** A waiting event, as the hand-over reads it. */
const waitingRow = row({
  ...columnsOf('inbound_events', {
    id: text,
    run_id: text,
    workspace_id: text,
    agent_slug: text,
    alias: text,
    agent_input: nullable(text),
    event_id: text,
  }),
  ...columnsOf('runs', { recoveries: int }),
});

export type WaitingInboundEvent = ReturnType<typeof waitingRow>;

/**
 * Claims up to `limit` events whose run waits for its hand-over (`FOR UPDATE SKIP LOCKED`, so
 * concurrent workers never take the same one) and reserves them until `leaseUntil`. Workspaces take
 * turns: each waiting workspace's oldest event first, then each one's second, …, so one workspace's
 * burst never stands before another's first event; a workspace gets at most `perWorkspace` less what
 * the caller still hands over for it (`busy`, by workspace id). The workspaces with events waiting are
 * found by skipping through an index (one probe per such workspace, not a read of every waiting event).
 *
 * Every row is read by its key: each event chosen is locked by its id (a lateral subquery per id, so the planner
 * cannot turn the join around), and each event's run is read by a scalar subquery on `runs.id` alone. Written as
 * joins, the plan followed the statistics, and PGlite never analyzes (PostgreSQL only once autovacuum gets to it):
 * planned while the store was small, the claim read every waiting event, and every `in_progress` run of the
 * workspace (its status index) once per event it looked at, so each claim of a burst's backlog was slower than the
 * last (run-queue.test.ts, in a first version: 46,066 rows of `runs` with 300 events waiting, 411,762 with 900).
 */
export async function claimWaitingInboundEvents(
  tx: Tx,
  input: { now: Date; limit: number; leaseUntil: Date; perWorkspace: number; busy?: ReadonlyMap<string, number> },
): Promise<WaitingInboundEvent[]> {
  const busy = [...(input.busy ?? new Map<string, number>())];
  const rows = await selectRows(
    tx,
    waitingRow,
    // Only runs still in_progress: one that ended before its hand-over (canceled) has nothing to run,
    // and its input is already forgotten.
    `WITH RECURSIVE waiting AS (
       (SELECT workspace_id FROM inbound_events WHERE run_started_at IS NULL ORDER BY workspace_id LIMIT 1)
       UNION ALL
       SELECT (SELECT e.workspace_id FROM inbound_events e
                WHERE e.run_started_at IS NULL AND e.workspace_id > w.workspace_id ORDER BY e.workspace_id LIMIT 1)
         FROM waiting w WHERE w.workspace_id IS NOT NULL
     ), turns AS (
       SELECT c.id, c.received_at, row_number() OVER (PARTITION BY w.workspace_id ORDER BY c.received_at, c.id) AS turn,
              $3::integer - COALESCE(b.n, 0) AS room
         FROM waiting w LEFT JOIN unnest($4::text[], $5::integer[]) AS b (workspace_id, n) ON b.workspace_id = w.workspace_id
        CROSS JOIN LATERAL (
           SELECT e.id, e.received_at FROM inbound_events e
            WHERE e.workspace_id = w.workspace_id AND e.run_started_at IS NULL
              AND (e.run_lease_until IS NULL OR e.run_lease_until <= $1)
              AND (SELECT r.status FROM runs r WHERE r.id = e.run_id) = 'in_progress'
            ORDER BY e.received_at, e.id
            LIMIT $3
         ) c
        WHERE w.workspace_id IS NOT NULL
     )
     SELECT c.* FROM unnest(ARRAY(SELECT id FROM turns WHERE turn <= room ORDER BY turn, received_at, id LIMIT $2)) AS claim (id)
      CROSS JOIN LATERAL (
        SELECT e.id, e.run_id, e.workspace_id, e.agent_slug, e.alias, e.agent_input, e.event_id,
               (SELECT r.recoveries FROM runs r WHERE r.id = e.run_id) AS recoveries
          FROM inbound_events e
         WHERE e.id = claim.id AND e.run_started_at IS NULL AND (e.run_lease_until IS NULL OR e.run_lease_until <= $1)
           AND (SELECT r.status FROM runs r WHERE r.id = e.run_id) = 'in_progress'
         LIMIT 1
           FOR UPDATE OF e SKIP LOCKED
      ) c`,
    [input.now, input.limit, input.perWorkspace, busy.map(([id]) => id), busy.map(([, n]) => n)],
  );
  if (rows.length > 0) {
    await tx.query(`UPDATE inbound_events SET run_lease_until = $2 WHERE id = ANY ($1::text[])`, [rows.map((r) => r.id), input.leaseUntil]);
  }
  return rows;
}

/** The event's run has been taken over by the run service. */
export async function markInboundRunStarted(db: Db, eventRowId: string, at: Date): Promise<void> {
  await db.query(`UPDATE inbound_events SET run_started_at = $2, run_lease_until = NULL WHERE id = $1`, [eventRowId, at]);
}

/** The event's run could not start yet: it waits in the queue until `until` (its claim's lease, shortened or lengthened). */
export async function postponeInboundRun(db: Db, eventRowId: string, until: Date): Promise<void> {
  await db.query(`UPDATE inbound_events SET run_lease_until = $2 WHERE id = $1 AND run_started_at IS NULL`, [eventRowId, until]);
}

/** Puts the event of an interrupted run back in the queue; false when its input is gone. */
export async function requeueInboundRun(tx: Tx, input: { runId: string; workspaceId: string }): Promise<boolean> {
  const requeued = await tx.query(
    `UPDATE inbound_events SET run_started_at = NULL, run_lease_until = NULL
      WHERE run_id = $1 AND workspace_id = $2 AND agent_input IS NOT NULL RETURNING 1`,
    [input.runId, input.workspaceId],
  );
  return requeued.length > 0;
}

/** Forgets the rendered input of an inbound run once the run has ended (the audit keeps the body's hash and size). */
export async function forgetInboundInput(tx: Tx, runId: string): Promise<void> {
  await tx.query(`UPDATE inbound_events SET agent_input = NULL WHERE run_id = $1 AND agent_input IS NOT NULL`, [runId]);
}
