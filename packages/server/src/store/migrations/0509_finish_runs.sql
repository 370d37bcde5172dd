-- Several closes in one statement (group commit: domain/runs/close-batch.ts sends the closes that
-- waited while the previous statement ran). Each element of `p_runs` is the array of finish_run's 26
-- parameters for one run, in finish_run's order (timestamps as ISO text, `p_steps` and `p_events` as
-- JSON text, the text[] parameters as JSON arrays, a number that JSON cannot hold as text). Each run
-- is closed by finish_run itself, so its rules are those of a lone close; the statement commits all
-- of them or none (a run that raises undoes the others, which the caller then closes one by one).
--
-- Lock order: the batch's run rows first, all of them (a cancel or the sweeper locks a run's row,
-- then its workspace's budget rows: taking a second run's row after a first run's budget rows could
-- deadlock with it); then the runs one after the other by workspace id, then run id (byte order),
-- so two batches on two instances take the workspaces' period and window rows in the same order.
-- Returns the runs' rows (one per element; the caller matches them by id).

-- A JSON array of strings as text[] (finish_run's array parameters), in its order.
CREATE FUNCTION jsonb_text_array(p jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT COALESCE(array_agg(t.e ORDER BY t.n), '{}') FROM jsonb_array_elements_text(p) WITH ORDINALITY AS t(e, n)
$$;

CREATE FUNCTION finish_runs(p_runs jsonb) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  v jsonb;
BEGIN
  PERFORM 1 FROM runs r
    WHERE r.id IN (SELECT x->>0 FROM jsonb_array_elements(p_runs) AS x)
    ORDER BY r.id COLLATE "C" FOR UPDATE;
  FOR v IN SELECT x FROM jsonb_array_elements(p_runs) WITH ORDINALITY AS a(x, n)
            ORDER BY (x->>1) COLLATE "C", (x->>0) COLLATE "C", n LOOP
    RETURN QUERY SELECT * FROM finish_run(
      v->>0, v->>1, (v->>2)::timestamptz, (v->>3)::timestamptz,
      v->>4, v->>5, v->>6, v->>7,
      v->>8, (v->>9)::integer, (v->>10)::integer, (v->>11)::integer,
      (v->>12)::integer, (v->>13)::integer, (v->>14)::numeric,
      v->>15, (v->>16)::float8, (v->>17)::float8, (v->>18)::float8, v->>19,
      (v->>20)::jsonb, jsonb_text_array(v->21), jsonb_text_array(v->22), (v->>23)::jsonb, jsonb_text_array(v->24), v->>25);
  END LOOP;
END
$$;
