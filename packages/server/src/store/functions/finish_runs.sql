-- finish_runs: several closes in one statement (domain/runs' group commit: runs/close-batch.ts sends the
-- closes that waited while the previous statement ran, through runs/queries.ts `finishRuns`). Each element
-- of `p_runs` is the array of finish_run_logged's 27 parameters for one run, in its order (timestamps as
-- ISO text, `p_steps`, `p_events` and the log as JSON text, the text[] parameters as JSON arrays, a number
-- that JSON cannot hold as text). Each run is closed by finish_run_logged itself (finish_run, then its
-- event log), so its rules are those of a lone close; the statement commits all of them or none (a run
-- that raises undoes the others, which the caller then closes one by one). Returns the runs' rows (one
-- per element; the caller matches them by id).
--
-- Lock order: the batch's run rows first, all of them (a cancel or the sweeper locks a run's row, then
-- its workspace's budget rows: taking a second run's row after a first run's budget rows could deadlock
-- with it); then the runs one after the other by workspace id, then run id (byte order), so two batches
-- on two instances take the workspaces' period and window rows in the same order.
--
-- The batch's rows are locked one by one, each by its primary key (`id = v_id`, the one shape whose plan
-- is the key's index whatever the size of `runs`). One statement for the set (0509's `id IN (SELECT …)`,
-- or `id = ANY (ARRAY(SELECT …))`) gets a plan that assumes about ten ids: PL/pgSQL keeps the plan made
-- while `runs` was small (a sequential scan) for the connection's life, and PGlite never analyzes, so
-- every batch of closes read every run stored (close-lookup.test.ts counts the rows).
CREATE OR REPLACE FUNCTION finish_runs(p_runs jsonb) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  v jsonb;
  v_id text;
BEGIN
  FOREACH v_id IN ARRAY ARRAY(SELECT x->>0 FROM jsonb_array_elements(p_runs) AS x ORDER BY (x->>0) COLLATE "C") LOOP
    PERFORM 1 FROM runs WHERE id = v_id FOR UPDATE;
  END LOOP;
  FOR v IN SELECT x FROM jsonb_array_elements(p_runs) WITH ORDINALITY AS a(x, n)
            ORDER BY (x->>1) COLLATE "C", (x->>0) COLLATE "C", n LOOP
    RETURN QUERY SELECT * FROM finish_run_logged(
      v->>0, v->>1, (v->>2)::timestamptz, (v->>3)::timestamptz,
      v->>4, v->>5, v->>6, v->>7,
      v->>8, (v->>9)::integer, (v->>10)::integer, (v->>11)::integer,
      (v->>12)::integer, (v->>13)::integer, (v->>14)::numeric,
      v->>15, (v->>16)::float8, (v->>17)::float8, (v->>18)::float8, v->>19,
      (v->>20)::jsonb, jsonb_text_array(v->21), jsonb_text_array(v->22), (v->>23)::jsonb, jsonb_text_array(v->24), v->>25,
      (v->>26)::jsonb);
  END LOOP;
END
$$;
