/**
 * @module The statements of the run event log's own table (`run_events`, store/migrations/0511_run_events.sql):
 * the execution writes it in the run's closing statement (`finish_runs`), a reader reads it with the run's
 * row (runs/queries.ts's readRunLog), and the retention merges it here.
 */
import type { Db } from '../../store/db.ts';

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
