-- The run's event log (domain/runs/run-events.ts). `run.created`, `run.routed`, `run.usage` and the
-- terminal event are read from the run's row; what only the execution saw (the answer's fragments,
-- tool calls, approval requests, drafts, each with its sequence and time) is written here as one
-- jsonb array by the closing statement, so the log adds no statement to an invocation.
CREATE TABLE run_events (
  run_id        text PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  workspace_id  text NOT NULL,
  events        jsonb NOT NULL,
  written_at    timestamptz NOT NULL,
  -- Set when the retention merged the fragments into one (domain/runs/run-events-retention.ts),
  -- with the sequence of the last event it had, which the usage and terminal events follow.
  compacted_at  timestamptz,
  last_sequence integer
);
CREATE INDEX run_events_to_compact ON run_events (written_at) WHERE compacted_at IS NULL;

-- finish_run, then the execution's events (`p_log`), written only when this execution owns the
-- run (finish_run left a run handed over again alone). One statement, as finish_run is.
CREATE FUNCTION finish_run_logged(
  p_run_id text, p_workspace_id text, p_started_at timestamptz, p_now timestamptz,
  p_status text, p_reason text, p_manual_reason text, p_crossed text,
  p_content text, p_input_tokens integer, p_output_tokens integer, p_stu integer,
  p_unbilled_input integer, p_unbilled_output integer, p_unbilled_stu numeric,
  p_alias text, p_quota_stu float8, p_limit_hour float8, p_limit_day float8, p_ledger_id text,
  p_steps jsonb, p_turn_roles text[], p_turn_contents text[], p_events jsonb, p_delivery_ids text[], p_instance text,
  p_log jsonb
) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  r runs%ROWTYPE;
BEGIN
  SELECT * INTO r FROM finish_run(p_run_id, p_workspace_id, p_started_at, p_now, p_status, p_reason, p_manual_reason, p_crossed,
    p_content, p_input_tokens, p_output_tokens, p_stu, p_unbilled_input, p_unbilled_output, p_unbilled_stu,
    p_alias, p_quota_stu, p_limit_hour, p_limit_day, p_ledger_id, p_steps, p_turn_roles, p_turn_contents, p_events,
    p_delivery_ids, p_instance);
  IF r.started_at IS NOT DISTINCT FROM p_started_at THEN
    INSERT INTO run_events (run_id, workspace_id, events, written_at) VALUES (p_run_id, p_workspace_id, COALESCE(p_log, '[]'), p_now)
      ON CONFLICT (run_id) DO NOTHING;
  END IF;
  RETURN NEXT r;
END
$$;

-- finish_runs (0509), each close with its events (element 26 of each run's array).
CREATE OR REPLACE FUNCTION finish_runs(p_runs jsonb) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  v jsonb;
BEGIN
  PERFORM 1 FROM runs r
    WHERE r.id IN (SELECT x->>0 FROM jsonb_array_elements(p_runs) AS x)
    ORDER BY r.id COLLATE "C" FOR UPDATE;
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
