-- start_run: an invocation's first statement (domain/spending's: spending/budget.ts `reserveRun`, through
-- spending/queries.ts `startRun`, by way of start_run_previewed, migration 0516). The idempotency claim (a
-- replay reserves nothing), the length of the conversation's thread, the run's row when an inbound run is
-- adopted (by its primary key alone, the rest checked on the locked row), the period row (the quota), the
-- day and hour windows and the manual switch, the output cap shrunk to the binding limit, then the
-- reservation of the run's worst case on the period and both windows and the run's row (inserted, or
-- adopted). It answers a jsonb outcome that `reserveRun` turns into the contract's errors. Rows are locked
-- in one order: the run's, the period's, then the day's and the hour's windows, for this statement only.
--
-- The quota's hard stop caps the output as the hour and day do: a worst case that does not fit under it
-- beside what was charged runs with its output cap shrunk to what fits. Unlike a window's, that cap is not
-- a crossing (no `limitedBy`): the run answers what fits, as under a smaller `maxTokens`, and completes; its
-- charge may bring the period to the hard stop, where the next invocation is refused. `quota_exceeded` is
-- answered only at the hard stop, or when not even the input and one output token fit (`inputTooLarge`, with
-- what was charged alone, so the answer's `policy` and `pctConsumed` are those usage reads).
-- Before (0506-0518) such a worst case was refused with `quota_exceeded` while usage still read green.
CREATE OR REPLACE FUNCTION start_run(
  p_workspace_id text, p_run_id text, p_adopt boolean, p_now timestamptz, p_lease_until timestamptz,
  p_agent_slug text, p_answered_by text, p_alias text, p_source text, p_conversation_id text,
  p_quota_stu float8, p_rate float8, p_input_tokens integer, p_desired_output integer,
  p_limit_run float8, p_limit_hour float8, p_limit_day float8,
  p_credential_id text, p_idempotency_key text, p_request_hash text, p_claim_expires_at timestamptz,
  p_conversation_turns integer
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_day timestamptz := date_trunc('day', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  v_hour timestamptz := date_trunc('hour', p_now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  v_period text;
  v_consumed float8; v_reserved float8; v_allowance float8; v_hardstop float8;
  v_manual timestamptz;
  v_day_spent float8; v_day_reserved float8; v_day_tripped timestamptz;
  v_hour_spent float8; v_hour_reserved float8; v_hour_tripped timestamptz;
  v_binding text; v_binding_room float8;
  v_cap integer; v_quota_cap float8; v_stu bigint;  -- v_quota_cap: tokens the hard stop leaves, past 2^31 under a large quota
  v_claim record;
  v_waiting record;
BEGIN
  -- A retried request answers with the first one's run and reserves nothing.
  IF p_idempotency_key IS NOT NULL THEN
    DELETE FROM idempotency_keys k WHERE k.credential_id = p_credential_id AND k.idempotency_key = p_idempotency_key AND k.expires_at <= p_now;
    SELECT k.request_hash, k.run_id INTO v_claim FROM idempotency_keys k WHERE k.credential_id = p_credential_id AND k.idempotency_key = p_idempotency_key;
    IF FOUND THEN
      IF v_claim.request_hash <> p_request_hash THEN RETURN jsonb_build_object('outcome', 'idempotency_mismatch'); END IF;
      RETURN jsonb_build_object('outcome', 'replay', 'runId', v_claim.run_id);
    END IF;
  END IF;
  -- The earlier turns the caller gave the engine must be the whole thread (another instance may have added some).
  IF p_conversation_id IS NOT NULL AND p_conversation_turns IS DISTINCT FROM
     (SELECT COALESCE(max(t.seq) + 1, 0) FROM conversation_turns t WHERE t.workspace_id = p_workspace_id AND t.conversation_id = p_conversation_id) THEN
    RETURN jsonb_build_object('outcome', 'stale_history');
  END IF;
  -- The run's row first (the order every statement that ends a run locks in).
  IF p_adopt THEN
    -- By the primary key alone, the rest checked on the locked row (0518).
    SELECT r.workspace_id, r.status, r.started_at INTO v_waiting FROM runs r WHERE r.id = p_run_id FOR UPDATE;
    IF NOT FOUND OR v_waiting.workspace_id IS DISTINCT FROM p_workspace_id OR v_waiting.status <> 'in_progress' OR v_waiting.started_at IS NOT NULL THEN
      RETURN jsonb_build_object('outcome', 'gone');
    END IF;
  END IF;

  -- The quota: the period row, locked.
  v_period := ensure_usage_period(p_workspace_id, p_now, p_quota_stu);
  SELECT u.consumed_stu, u.reserved_stu, p_quota_stu + u.rollover_stu INTO v_consumed, v_reserved, v_allowance
    FROM usage_periods u WHERE u.workspace_id = p_workspace_id AND u.period = v_period FOR UPDATE;
  IF v_consumed > 0 AND v_consumed * 100 >= GREATEST(v_allowance, 1) * 120 THEN
    RETURN jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance);
  END IF;
  v_hardstop := floor(GREATEST(v_allowance, 1) * 120 / 100);

  -- The kill switches: the day and hour windows, locked day first, and the manual switch.
  INSERT INTO usage_windows (workspace_id, scope, window_start) VALUES (p_workspace_id, 'day', v_day), (p_workspace_id, 'hour', v_hour)
    ON CONFLICT (workspace_id, scope, window_start) DO NOTHING;
  PERFORM 1 FROM usage_windows w
    WHERE w.workspace_id = p_workspace_id AND ((w.scope = 'day' AND w.window_start = v_day) OR (w.scope = 'hour' AND w.window_start = v_hour))
    ORDER BY w.scope FOR UPDATE;
  SELECT w.spent_stu, w.reserved_stu, w.tripped_at INTO v_day_spent, v_day_reserved, v_day_tripped
    FROM usage_windows w WHERE w.workspace_id = p_workspace_id AND w.scope = 'day' AND w.window_start = v_day;
  SELECT w.spent_stu, w.reserved_stu, w.tripped_at INTO v_hour_spent, v_hour_reserved, v_hour_tripped
    FROM usage_windows w WHERE w.workspace_id = p_workspace_id AND w.scope = 'hour' AND w.window_start = v_hour;
  SELECT k.manual_since INTO v_manual FROM kill_switches k WHERE k.workspace_id = p_workspace_id;
  -- Manual wins, then day, then hour (the longest wait); a tripped window counts as spent.
  IF v_manual IS NOT NULL THEN RETURN jsonb_build_object('outcome', 'kill_switch', 'kind', 'manual', 'since', v_manual); END IF;
  IF v_day_tripped IS NOT NULL OR v_day_spent >= p_limit_day THEN
    RETURN jsonb_build_object('outcome', 'kill_switch', 'kind', 'day', 'since', v_day_tripped);
  END IF;
  IF v_hour_tripped IS NOT NULL OR v_hour_spent >= p_limit_hour THEN
    RETURN jsonb_build_object('outcome', 'kill_switch', 'kind', 'hour', 'since', v_hour_tripped);
  END IF;

  -- The limit that leaves the least room by what was charged alone (run, hour, day: the first on a tie).
  v_binding := 'run'; v_binding_room := p_limit_run;
  IF p_limit_hour - v_hour_spent < v_binding_room THEN v_binding := 'hour'; v_binding_room := p_limit_hour - v_hour_spent; END IF;
  IF p_limit_day - v_day_spent < v_binding_room THEN v_binding := 'day'; v_binding_room := p_limit_day - v_day_spent; END IF;
  -- Output tokens that fit in a room after this run's input: floor(max(0, room) / rate) - input.
  v_cap := LEAST(p_desired_output, floor(GREATEST(0, v_binding_room) / p_rate) - p_input_tokens);
  IF v_cap < 1 THEN
    -- Not even the input and one token fit: the run crosses at once, and an hour or day window trips.
    IF v_binding <> 'run' THEN
      UPDATE usage_windows w SET tripped_at = COALESCE(w.tripped_at, p_now)
       WHERE w.workspace_id = p_workspace_id AND w.scope = v_binding AND w.window_start = CASE v_binding WHEN 'day' THEN v_day ELSE v_hour END;
    END IF;
    RETURN jsonb_build_object('outcome', 'crossed', 'scope', v_binding);
  END IF;
  -- The quota's hard stop, by what was charged alone (what runs in progress hold answers budget_reserved below):
  -- a worst case that does not fit shrinks the output cap to what does, as the windows' limits do.
  v_quota_cap := floor(GREATEST(0, floor(v_hardstop - v_consumed)) / p_rate) - p_input_tokens;
  IF v_quota_cap < v_cap THEN
    IF v_quota_cap < 1 THEN
      -- Not even the input and one output token fit under the hard stop.
      RETURN jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance, 'inputTooLarge', true);
    END IF;
    v_cap := v_quota_cap::integer; v_binding := NULL;  -- below v_cap here, so it fits
  END IF;
  v_stu := ceil((GREATEST(0, p_input_tokens) + GREATEST(0, v_cap)) * p_rate);
  IF v_consumed + v_stu > v_hardstop THEN
    -- Rounding only (the cap fits by construction): never pass the hard stop.
    RETURN jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance, 'inputTooLarge', true);
  END IF;
  -- It fits the limits and the quota; only what runs in progress hold keeps it out: retry shortly.
  IF floor(GREATEST(0, p_limit_hour - v_hour_spent - v_hour_reserved) / p_rate) - p_input_tokens < v_cap THEN
    RETURN jsonb_build_object('outcome', 'budget_reserved', 'budget', 'hour');
  END IF;
  IF floor(GREATEST(0, p_limit_day - v_day_spent - v_day_reserved) / p_rate) - p_input_tokens < v_cap THEN
    RETURN jsonb_build_object('outcome', 'budget_reserved', 'budget', 'day');
  END IF;
  IF v_consumed + v_reserved + v_stu > v_hardstop THEN RETURN jsonb_build_object('outcome', 'budget_reserved', 'budget', 'quota'); END IF;

  -- Admitted: hold the worst case, then the run's row.
  UPDATE usage_periods u SET reserved_stu = u.reserved_stu + v_stu WHERE u.workspace_id = p_workspace_id AND u.period = v_period;
  UPDATE usage_windows w SET reserved_stu = w.reserved_stu + v_stu
   WHERE w.workspace_id = p_workspace_id AND ((w.scope = 'day' AND w.window_start = v_day) OR (w.scope = 'hour' AND w.window_start = v_hour));
  IF p_adopt THEN
    UPDATE runs r SET answered_by = p_answered_by, conversation_id = p_conversation_id, reserved_stu = v_stu, window_hour = v_hour, window_day = v_day,
                      updated_at = p_now, started_at = p_now, lease_until = p_lease_until
     WHERE r.id = p_run_id;
  ELSE
    INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, conversation_id,
                      reserved_stu, window_hour, window_day, created_at, updated_at, started_at, lease_until)
    VALUES (p_run_id, p_workspace_id, 'in_progress', p_agent_slug, p_answered_by, p_alias, p_source, p_conversation_id,
            v_stu, v_hour, v_day, p_now, p_now, p_now, p_lease_until);
  END IF;
  IF p_idempotency_key IS NOT NULL THEN
    INSERT INTO idempotency_keys (credential_id, idempotency_key, workspace_id, request_hash, run_id, created_at, expires_at)
    VALUES (p_credential_id, p_idempotency_key, p_workspace_id, p_request_hash, p_run_id, p_now, p_claim_expires_at)
    ON CONFLICT (credential_id, idempotency_key) DO NOTHING;
    IF NOT FOUND THEN RAISE EXCEPTION 'idempotency_claim_lost'; END IF;
  END IF;
  RETURN jsonb_build_object('outcome', 'started', 'outputCap', v_cap, 'reservedStu', v_stu,
                            'limitedBy', CASE WHEN v_cap < p_desired_output THEN v_binding END);  -- NULL when the quota shrank it
END
$$;

