/**
 * @module The statements of the run event log's own table (`run_events`, store/migrations/0511_run_events.sql):
 * the execution writes it in the run's closing statement (`finish_runs`), a reader reads it with the run's
 * row (runs/queries.ts's readRunLog), and the retention merges it here.
 */
import type { Db, Tx } from '../../store/db.ts';

/**
 * Merges the `text.delta` events of up to `limit` logs written before `before` into one (at the
 * first one's sequence, the text concatenated in order); the other events stay. Answers how many.
 */
export async function compactRunLogs(db: Db, before: Date, now: Date, limit: number): Promise<number> {
  const rows = await db.query(
    `WITH due AS (
       SELECT run_id FROM run_events WHERE compacted_at IS NULL AND written_at < $1 ORDER BY written_at LIMIT $3 FOR UPDATE SKIP LOCKED
     )
     UPDATE run_events e SET compacted_at = $2,
       last_sequence = (SELECT max((v->>'sequence')::integer) FROM jsonb_array_elements(e.events) AS v),
       events = COALESCE((
       SELECT jsonb_agg(x.event ORDER BY (x.event->>'sequence')::integer) FROM (
         SELECT v AS event FROM jsonb_array_elements(e.events) AS v WHERE v->>'type' <> 'text.delta'
         UNION ALL
         SELECT (array_agg(v ORDER BY (v->>'sequence')::integer))[1] || jsonb_build_object('delta', string_agg(v->>'delta', '' ORDER BY (v->>'sequence')::integer))
           FROM jsonb_array_elements(e.events) AS v WHERE v->>'type' = 'text.delta' HAVING count(*) > 0
       ) AS x), '[]'::jsonb)
     FROM due WHERE e.run_id = due.run_id RETURNING 1`,
    [before, now, limit],
  );
  return rows.length;
}

/**
 * Appends `events` (each with its sequence) to the run's stored log, creating it when missing: what a run that waits
 * for an approval stored at its pause (domain/runs/pause.ts), then the decision and the resume (resume.ts). The
 * resumed execution's close appends the rest (finish_runs). In the caller's transaction.
 */
export async function appendRunLog(tx: Tx, input: { runId: string; workspaceId: string; events: readonly unknown[]; now: Date }): Promise<void> {
  await tx.query(
    `INSERT INTO run_events (run_id, workspace_id, events, written_at) VALUES ($1, $2, $3::jsonb, $4)
     ON CONFLICT (run_id) DO UPDATE SET events = run_events.events || EXCLUDED.events, written_at = EXCLUDED.written_at,
       last_sequence = CASE WHEN run_events.compacted_at IS NULL THEN NULL
                            ELSE GREATEST(run_events.last_sequence, (SELECT max((v->>'sequence')::integer) FROM jsonb_array_elements(EXCLUDED.events) AS v)) END`,
    [input.runId, input.workspaceId, JSON.stringify(input.events), input.now],
  );
}

/** The highest sequence of the run's stored log (0 when nothing is stored), its row locked until the transaction ends. */
export async function lastStoredSequence(tx: Tx, runId: string): Promise<number> {
  const [found] = await tx.query<{ last: number | null }>(
    `SELECT (SELECT max((v->>'sequence')::integer) FROM jsonb_array_elements(e.events) AS v) AS last FROM run_events e WHERE e.run_id = $1 FOR UPDATE`,
    [runId],
  );
  return Number(found?.last ?? 0);
}
