-- finish_run (0506) finds the run's row by its primary key alone and checks the workspace on the row it
-- locked, instead of `WHERE id = … AND workspace_id = …`. PL/pgSQL keeps a statement's generic plan for the
-- life of the connection, and PGlite never runs ANALYZE (no autovacuum): planned while `runs` held a few
-- rows, that lookup took runs_workspace_status_order (Index Cond: workspace_id, Filter: id) and read every
-- run of the workspace on each close, a close costing more with every run stored
-- (docs/performance.md, "Inside PGlite: where an invocation's store time goes"). With the id alone the
-- only index that fits is the primary key. The outcome is the same: a run of another workspace raises
-- `run_not_found`, which undoes the statement and so releases the row it locked. The rest of the
-- function is 0506's, unchanged.
CREATE OR REPLACE FUNCTION finish_run(
  p_run_id text, p_workspace_id text, p_started_at timestamptz, p_now timestamptz,
  p_status text, p_reason text, p_manual_reason text, p_crossed text,
  p_content text, p_input_tokens integer, p_output_tokens integer, p_stu integer,
  p_unbilled_input integer, p_unbilled_output integer, p_unbilled_stu numeric,
  p_alias text, p_quota_stu float8, p_limit_hour float8, p_limit_day float8, p_ledger_id text,
  p_steps jsonb, p_turn_roles text[], p_turn_contents text[], p_events jsonb, p_delivery_ids text[], p_instance text
) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  r runs%ROWTYPE;
  v_status text := p_status;
  v_reason text := p_reason;
  v_when text := p_status;
  v_start_period text;
  v_charge_period text;
  v_seq integer;
  e record;
BEGIN
  -- By the primary key alone, the workspace checked on the row (0517).
  SELECT * INTO r FROM runs WHERE id = p_run_id FOR UPDATE;
  IF NOT FOUND OR r.workspace_id IS DISTINCT FROM p_workspace_id THEN RAISE EXCEPTION 'run_not_found'; END IF;
  IF r.started_at IS DISTINCT FROM p_started_at THEN
    RETURN QUERY SELECT * FROM runs WHERE id = p_run_id;
    RETURN;
  END IF;
  IF v_status = 'completed' AND p_manual_reason IS NOT NULL
     AND EXISTS (SELECT 1 FROM kill_switches k WHERE k.workspace_id = p_workspace_id AND k.manual_since >= p_started_at) THEN
    v_status := 'failed'; v_reason := p_manual_reason; v_when := 'manual';
  END IF;
  IF r.status <> 'in_progress' THEN v_status := r.status; END IF;
  v_reason := CASE WHEN v_status = 'failed' THEN COALESCE(r.failure_reason, v_reason, 'internal_error') ELSE r.failure_reason END;
  UPDATE runs SET status = v_status, content = CASE WHEN v_status = 'completed' THEN p_content END, failure_reason = v_reason,
                  input_tokens = p_input_tokens, output_tokens = p_output_tokens, stu = p_stu,
                  reserved_stu = 0, lease_until = NULL, updated_at = p_now, completed_at = COALESCE(completed_at, p_now),
                  unbilled_input_tokens = p_unbilled_input, unbilled_output_tokens = p_unbilled_output, unbilled_stu = p_unbilled_stu
   WHERE id = p_run_id;

  -- The periods (the reservation's, then the charge's: the same one but at a month's turn), then the windows.
  v_start_period := to_char(r.window_day AT TIME ZONE 'UTC', 'YYYY-MM');
  v_charge_period := ensure_usage_period(p_workspace_id, p_now, p_quota_stu);
  UPDATE usage_periods u
     SET reserved_stu = CASE WHEN u.period = v_start_period THEN GREATEST(0, u.reserved_stu - r.reserved_stu) ELSE u.reserved_stu END,
         consumed_stu = CASE WHEN u.period = v_charge_period THEN u.consumed_stu + p_stu ELSE u.consumed_stu END
   WHERE u.workspace_id = p_workspace_id AND u.period IN (v_start_period, v_charge_period);
  INSERT INTO usage_windows (workspace_id, scope, window_start) VALUES (p_workspace_id, 'day', r.window_day), (p_workspace_id, 'hour', r.window_hour)
    ON CONFLICT (workspace_id, scope, window_start) DO NOTHING;
  PERFORM 1 FROM usage_windows w
    WHERE w.workspace_id = p_workspace_id AND ((w.scope = 'day' AND w.window_start = r.window_day) OR (w.scope = 'hour' AND w.window_start = r.window_hour))
    ORDER BY w.scope FOR UPDATE;
  UPDATE usage_windows w SET spent_stu = w.spent_stu + p_stu, reserved_stu = GREATEST(0, w.reserved_stu - r.reserved_stu)
   WHERE w.workspace_id = p_workspace_id AND ((w.scope = 'day' AND w.window_start = r.window_day) OR (w.scope = 'hour' AND w.window_start = r.window_hour));
  UPDATE usage_windows w SET tripped_at = COALESCE(w.tripped_at, p_now)
   WHERE w.workspace_id = p_workspace_id AND ((w.scope = 'day' AND w.window_start = r.window_day) OR (w.scope = 'hour' AND w.window_start = r.window_hour))
     AND (w.spent_stu >= CASE w.scope WHEN 'hour' THEN p_limit_hour ELSE p_limit_day END
          OR (w.scope = p_crossed
              AND w.spent_stu >= CASE w.scope WHEN 'hour' THEN p_limit_hour - ceil(p_limit_hour * 0.01) ELSE p_limit_day - ceil(p_limit_day * 0.01) END));
  IF p_stu <> 0 OR p_input_tokens <> 0 OR p_output_tokens <> 0 THEN
    INSERT INTO usage_ledger (id, workspace_id, run_id, period, alias, input_tokens, output_tokens, stu, created_at)
    VALUES (p_ledger_id, p_workspace_id, p_run_id, v_charge_period, p_alias, p_input_tokens, p_output_tokens, p_stu, p_now);
  END IF;

  -- Steps: drafts and approvals (no keptIndex) only for an answer that was delivered.
  INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at)
  SELECT s.id, p_run_id, CASE WHEN v_status = 'completed' THEN s.index ELSE s."keptIndex" END, s.kind, s."agentSlug", s.summary, p_now
    FROM jsonb_to_recordset(p_steps) AS s(id text, index integer, "keptIndex" integer, kind text, "agentSlug" text, summary text)
   WHERE v_status = 'completed' OR s."keptIndex" IS NOT NULL;
  INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at)
  SELECT s."toolCallId", p_run_id, CASE WHEN v_status = 'completed' THEN s.index ELSE s."keptIndex" END, s.name, s.arguments, s.result, s."toolStatus", p_now
    FROM jsonb_to_recordset(p_steps) AS s(index integer, "keptIndex" integer, "toolCallId" text, name text, arguments jsonb, result text, "toolStatus" text)
   WHERE s."toolCallId" IS NOT NULL AND (v_status = 'completed' OR s."keptIndex" IS NOT NULL);

  IF v_status = 'completed' AND r.conversation_id IS NOT NULL AND cardinality(p_turn_roles) > 0 THEN
    -- Serialises appends to one thread, so two runs of the same conversation cannot take the same seq.
    PERFORM pg_advisory_xact_lock(hashtext(p_workspace_id || ':' || r.conversation_id));
    SELECT COALESCE(max(t.seq), -1) INTO v_seq FROM conversation_turns t WHERE t.workspace_id = p_workspace_id AND t.conversation_id = r.conversation_id;
    INSERT INTO conversation_turns (workspace_id, conversation_id, seq, role, content, run_id, created_at)
    SELECT p_workspace_id, r.conversation_id, v_seq + t.n::integer, t.role, t.content, p_run_id, p_now
      FROM unnest(p_turn_roles, p_turn_contents) WITH ORDINALITY AS t(role, content, n);
    -- Instances that hold the thread in memory drop it (domain/runs/conversation.ts; the channel as store/listen.ts names it).
    PERFORM pg_notify('service_conversations.' || current_schema(), json_build_array(p_instance, p_workspace_id, r.conversation_id)::text);
  END IF;

  -- The event of the outcome: completed, or failed when this close is what failed it.
  v_when := CASE WHEN v_status = 'completed' THEN 'completed' WHEN v_status = 'failed' AND r.status = 'in_progress' THEN v_when END;
  FOR e IN SELECT * FROM jsonb_to_recordset(p_events) AS x("when" text, id text, type text, data jsonb, body text) WHERE x."when" = v_when LOOP
    PERFORM outbox_enqueue(e.id, p_workspace_id, e.type, e.data, e.body, p_now, p_delivery_ids);
  END LOOP;
  RETURN QUERY SELECT * FROM runs WHERE id = p_run_id;
END
$$;
