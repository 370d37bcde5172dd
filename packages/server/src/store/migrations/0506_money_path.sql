-- The money path of an invocation in two statements (docs/architecture.md, "The money path"):
-- start_run checks and reserves the budget and inserts the run; finish_run closes it, writes its
-- steps, charges the ledger and the windows, releases the reservation and enqueues its events.
--
-- Each is one statement on its own (no transaction around it), so the rows it locks (the period,
-- then the day and hour windows, always in that order; a run's row before them) are held only while
-- it runs, never across a round trip nor while the engine runs. Concurrent invocations of one
-- workspace still take turns on the period row, but for the length of one statement (tens of µs),
-- so the bound on what runs in progress hold stays exact on any number of instances.
--
-- The policy is the one documented in domain/runs/budget.ts (its header comment), here executed
-- where the rows are; the TypeScript side (domain/runs/start.ts, close.ts) turns the outcomes into
-- the contract's errors. Amounts are in STU; the alias's STU rate and the limits come as parameters.

-- The period row of `p_now` (created on first use with the rollover of the period before it, capped
-- at one period's quota). What usage-store.ts's ensurePeriod does, for the statements below.
CREATE FUNCTION ensure_usage_period(p_workspace_id text, p_now timestamptz, p_quota_stu float8) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_period text := to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM');
  v_previous text := to_char(date_trunc('month', p_now AT TIME ZONE 'UTC') - interval '1 month', 'YYYY-MM');
BEGIN
  IF NOT EXISTS (SELECT 1 FROM usage_periods u WHERE u.workspace_id = p_workspace_id AND u.period = v_period) THEN
    INSERT INTO usage_periods (workspace_id, period, rollover_stu, consumed_stu, created_at)
    SELECT p_workspace_id, v_period,
           COALESCE((SELECT LEAST(GREATEST(0, p_quota_stu), GREATEST(0, p_quota_stu + prev.rollover_stu - prev.consumed_stu))
                       FROM usage_periods prev WHERE prev.workspace_id = p_workspace_id AND prev.period = v_previous), 0),
           0, p_now
    ON CONFLICT (workspace_id, period) DO NOTHING;
  END IF;
  RETURN v_period;
END
$$;

-- `p_length` base62 characters from random(): delivery ids past those the caller drew (outbox_enqueue).
-- VOLATILE, so a statement that calls it per row gets a new id per row.
CREATE FUNCTION random_base62(p_length integer) RETURNS text
LANGUAGE sql VOLATILE AS $$
  SELECT string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 1 + floor(random() * 62)::int, 1), '')
    FROM generate_series(1, p_length)
$$;

-- One outbox event and a delivery per active destination subscribed to its type (what
-- domain/events/outbox.ts enqueueEvent writes). The envelope is built by the caller; delivery ids
-- come from `p_delivery_ids` (drawn by the caller), and only past those from random_base62.
CREATE FUNCTION outbox_enqueue(p_id text, p_tenant_id text, p_type text, p_data jsonb, p_body text, p_now timestamptz, p_delivery_ids text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO outbox_events (id, tenant_id, type, data, body, created_at) VALUES (p_id, p_tenant_id, p_type, p_data, p_body, p_now);
  INSERT INTO deliveries (id, event_id, destination_id, status, attempts, next_attempt_at, created_at)
  SELECT COALESCE(p_delivery_ids[d.n], 'dlv_' || random_base62(24)), p_id, d.id, 'pending', 0, p_now, p_now
    FROM (SELECT w.id, row_number() OVER (ORDER BY w.created_at, w.id)::int AS n FROM webhook_destinations w
           WHERE w.workspace_id = p_tenant_id AND p_type = ANY (w.events) AND (w.status = 'active' OR w.paused_reason = 'failures')) d;
END
$$;

-- Starts a run: refuses, or reserves its worst case and inserts (or adopts) its row. Returns a jsonb
-- object whose `outcome` is one of
--   replay {runId}                 the idempotency key names an earlier run (nothing reserved)
--   idempotency_mismatch           the key was used with another request
--   gone                           the run to adopt is no longer waiting (canceled, or taken over)
--   stale_history                  the conversation has turns beyond `p_conversation_turns` (the caller's
--                                  copy of it is behind: it reads the thread again and retries)
--   quota_exceeded {consumedStu, allowanceStu}   the hard stop (consumed: what the percentage is of)
--   kill_switch {kind, since}      the manual switch, or a tripped or spent day or hour window
--   crossed {scope}                the limit leaves no room even for the input: the window tripped,
--                                  nothing reserved (the caller records the failed run)
--   budget_reserved {budget}       it fits, but not beside what runs in progress hold
--   started {outputCap, reservedStu, limitedBy}
-- A concurrent request that claimed the same idempotency key first raises `idempotency_claim_lost`,
-- which undoes the whole statement.
CREATE FUNCTION start_run(
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
  v_cap integer; v_stu bigint;
  v_claim record;
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
    PERFORM 1 FROM runs r WHERE r.id = p_run_id AND r.workspace_id = p_workspace_id AND r.status = 'in_progress' AND r.started_at IS NULL FOR UPDATE;
    IF NOT FOUND THEN RETURN jsonb_build_object('outcome', 'gone'); END IF;
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
  v_stu := ceil((GREATEST(0, p_input_tokens) + GREATEST(0, v_cap)) * p_rate);
  IF v_consumed + v_stu > v_hardstop THEN
    -- Even with no run in progress its worst case would pass the hard stop (a smaller maxTokens may fit).
    RETURN jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed + v_reserved, 'allowanceStu', v_allowance);
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
                            'limitedBy', CASE WHEN v_cap < p_desired_output THEN v_binding END);
END
$$;

-- Closes a started run. `p_started_at` names the execution (runs.started_at): a run handed over
-- again since is left alone. The status is the one execution ended with, unless the run is already
-- terminal (a cancel that came first wins, its tokens still billed), or the manual switch was turned
-- on since the run started (`p_manual_reason`, asked for a run that would complete). Then, on the
-- run's period, windows and ledger: its reservation released, what it consumed charged, a window
-- spent to its limit (or within 1 % of it by a run that crossed it) tripped. Steps are written (those
-- with no `keptIndex` only for a completed run), a completed run's turns appended to its
-- conversation (notified to the other instances, `p_instance` being this one), and the event of its
-- outcome (`p_events`, one per `when`: completed, failed, manual) enqueued. Returns the run's row.
CREATE FUNCTION finish_run(
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
  SELECT * INTO r FROM runs WHERE id = p_run_id AND workspace_id = p_workspace_id FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'run_not_found'; END IF;
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
