-- finish_runs: closes runs that executed, several in one statement (the group commit of domain/runs/
-- close-batch.ts sends the closes that waited while the previous statement ran; a lone close is a batch of
-- one, store/functions/finish_run.sql). `p` is a jsonb array of `finish_run_args` objects (below, read with
-- jsonb_populate_recordset). The statement commits all of the closes or none (a run that raises undoes the others,
-- which the caller then closes one by one). Returns the runs' rows as they stand after (one per element;
-- the caller matches them by id).
--
-- For each run: `started_at` names the execution (runs.started_at); a run handed over again since is left
-- alone and nothing is billed. The status is the one execution ended with, unless the run is already
-- terminal (a cancel that came first wins, its tokens still billed), or the manual switch was turned on
-- since the run started (`manual_reason`, asked for a run that would complete). Its row takes its usage and
-- gives back its reservation; a ledger line is written for what it consumed; steps are written (those with
-- no `keptIndex` only for a completed run), and a completed run's drafts; a completed run's turns are appended to its conversation
-- (notified to the other instances, `instance` being this one); the event of its outcome (`events`, one per
-- `when`) is enqueued (outbox_enqueue); its execution's event log (`log`) is written to run_events. A run that
-- paused for an approval and was resumed (domain/runs/pause.ts, resume.ts) adds this execution's tokens, STU and
-- events to what the pause charged and stored: the pause billed its part, this close bills only the rest.
--
-- Then the batch is settled at once (store/functions/settle_runs.sql): per workspace, each period and
-- window row the batch touches is updated once with the sums of what its runs release and are charged,
-- and the trips are checked on those sums.
--
-- Lock order: the batch's run rows first, all of them, each by its primary key (a cancel or the sweeper
-- locks a run's row, then its workspace's budget rows: taking a second run's row after a first run's
-- budget rows could deadlock with it); then, in settle_runs, per workspace in workspace-id order (byte
-- order), its period, day and hour rows. Two batches on two instances take them in the same order.
--
-- The rows are locked one by one (`id = v_id`, the one shape whose plan is the key's index whatever the
-- size of `runs`): one statement for the set (`id IN (SELECT …)`) gets a plan that assumes about ten ids,
-- which PL/pgSQL keeps for the connection's life, made while `runs` was small (a sequential scan), and
-- PGlite never analyzes, so every batch read every run stored (close-lookup.test.ts counts the rows).
-- The run is read by its key alone and its workspace checked on the locked row for the same reason: a
-- run of another workspace raises `run_not_found`, which undoes the statement.

-- The type is declared here, beside the one function that reads it, so that whenever it changes the function is
-- replaced with it (a session's compiled PL/pgSQL function keeps the types of its variables).
DROP TYPE IF EXISTS finish_run_args;
CREATE TYPE finish_run_args AS (
  run_id          text,
  workspace_id    text,
  -- The execution this close ends (runs.started_at): a run handed over again since is left alone.
  started_at      timestamptz,
  now             timestamptz,
  -- completed, failed or canceled: how the execution ended.
  status          text,
  -- Why it failed (redacted), for a failed run.
  reason          text,
  -- The reason a run that would complete fails with when the manual switch was turned on since it started.
  manual_reason   text,
  -- The scope (hour, day, run) whose limit the run's output was cut at, if any.
  crossed         text,
  content         text,
  input_tokens    integer,
  output_tokens   integer,
  -- What is charged (within the reservation), and what the engine reported beyond it (recorded only).
  stu             integer,
  unbilled_input  integer,
  unbilled_output integer,
  unbilled_stu    float8,
  alias           text,
  quota_stu       float8,
  limit_hour      float8,
  limit_day       float8,
  -- The share of a limit within which a window a run crossed trips (domain/usage/kill-switch.ts `TRIP_MARGIN`).
  trip_margin     float8,
  ledger_id       text,
  -- The steps as runs/steps.ts `stepRows` writes them (a draft's step has no `keptIndex`).
  steps           jsonb,
  -- The drafts its steps wrote, as runs/steps.ts `draftRows` writes them, kept only for a completed run (their
  -- `draft.created` events are among `events`, written for `completed`).
  drafts          jsonb,
  turn_roles      text[],
  turn_contents   text[],
  -- The prepared events, each with the outcome it is written for (`when`: completed, failed, manual).
  events          jsonb,
  delivery_ids    text[],
  -- This instance, named in the conversation notification (the others drop the thread they hold).
  instance        text,
  -- What the execution saw of the run's event log (runs/run-events.ts), written to run_events.
  log             jsonb,
  -- The agent that answered, when the execution learned it (the last department a delegating orchestrator
  -- consulted); null keeps the row's.
  answered_by     text
);

CREATE OR REPLACE FUNCTION finish_runs(p jsonb) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
DECLARE
  v_args finish_run_args[] := ARRAY(SELECT x FROM jsonb_populate_recordset(NULL::finish_run_args, p) AS x);
  a finish_run_args;
  r runs%ROWTYPE;
  v_id text;
  v_i integer;
  v_status text;
  v_reason text;
  v_when text;
  v_seq integer;
  v_settle jsonb := '[]';
  v_first boolean;
  e record;
BEGIN
  FOREACH v_id IN ARRAY ARRAY(SELECT o.run_id FROM unnest(v_args) AS o ORDER BY o.run_id COLLATE "C") LOOP
    PERFORM 1 FROM runs WHERE id = v_id FOR UPDATE;
  END LOOP;

  FOR v_i IN SELECT o.ordinality FROM unnest(v_args) WITH ORDINALITY AS o
              ORDER BY o.workspace_id COLLATE "C", o.run_id COLLATE "C", o.ordinality LOOP
    a := v_args[v_i];
    SELECT * INTO r FROM runs WHERE id = a.run_id FOR UPDATE;
    IF NOT FOUND OR r.workspace_id IS DISTINCT FROM a.workspace_id THEN RAISE EXCEPTION 'run_not_found'; END IF;
    IF r.started_at IS DISTINCT FROM a.started_at THEN
      RETURN NEXT r;
      CONTINUE;
    END IF;
    v_status := a.status; v_reason := a.reason; v_when := a.status;
    IF v_status = 'completed' AND a.manual_reason IS NOT NULL
       AND EXISTS (SELECT 1 FROM kill_switches k WHERE k.workspace_id = a.workspace_id AND k.manual_since >= a.started_at) THEN
      v_status := 'failed'; v_reason := a.manual_reason; v_when := 'manual';
    END IF;
    IF r.status <> 'in_progress' THEN v_status := r.status; END IF;
    v_reason := CASE WHEN v_status = 'failed' THEN COALESCE(r.failure_reason, v_reason, 'internal_error') ELSE r.failure_reason END;
    UPDATE runs SET status = v_status, content = CASE WHEN v_status = 'completed' THEN a.content END, failure_reason = v_reason,
                    -- Added to what a pause charged before (domain/runs/pause.ts); zero for a run that never paused.
                    input_tokens = r.input_tokens + a.input_tokens, output_tokens = r.output_tokens + a.output_tokens, stu = r.stu + a.stu,
                    reserved_stu = 0, lease_until = NULL, updated_at = a.now, completed_at = COALESCE(completed_at, a.now),
                    unbilled_input_tokens = r.unbilled_input_tokens + a.unbilled_input, unbilled_output_tokens = r.unbilled_output_tokens + a.unbilled_output,
                    unbilled_stu = r.unbilled_stu + a.unbilled_stu, answered_by = COALESCE(a.answered_by, r.answered_by)
     WHERE id = a.run_id;

    -- The settlement of its budget, with the batch's (below); the ledger line in the period of its charge.
    v_settle := v_settle || jsonb_build_object(
      'workspace_id', a.workspace_id, 'window_day', r.window_day, 'window_hour', r.window_hour,
      'reserved_stu', r.reserved_stu, 'stu', a.stu, 'crossed', a.crossed, 'now', a.now, 'quota_stu', a.quota_stu,
      'limit_hour', a.limit_hour, 'limit_day', a.limit_day, 'trip_margin', a.trip_margin);
    IF a.stu <> 0 OR a.input_tokens <> 0 OR a.output_tokens <> 0 THEN
      INSERT INTO usage_ledger (id, workspace_id, run_id, period, alias, input_tokens, output_tokens, stu, created_at)
      VALUES (a.ledger_id, a.workspace_id, a.run_id, to_char(a.now AT TIME ZONE 'UTC', 'YYYY-MM'), a.alias, a.input_tokens, a.output_tokens, a.stu, a.now);
    END IF;

    -- Steps: a draft's (no keptIndex) only for an answer that was delivered, as the draft itself.
    INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at)
    SELECT s.id, a.run_id, CASE WHEN v_status = 'completed' THEN s.index ELSE s."keptIndex" END, s.kind, s."agentSlug", s.summary, a.now
      FROM jsonb_to_recordset(COALESCE(a.steps, '[]')) AS s(id text, index integer, "keptIndex" integer, kind text, "agentSlug" text, summary text)
     WHERE v_status = 'completed' OR s."keptIndex" IS NOT NULL;
    INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at)
    SELECT s."toolCallId", a.run_id, CASE WHEN v_status = 'completed' THEN s.index ELSE s."keptIndex" END, s.name, s.arguments, s.result, s."toolStatus", a.now
      FROM jsonb_to_recordset(COALESCE(a.steps, '[]')) AS s(index integer, "keptIndex" integer, "toolCallId" text, name text, arguments jsonb, result text, "toolStatus" text)
     WHERE s."toolCallId" IS NOT NULL AND (v_status = 'completed' OR s."keptIndex" IS NOT NULL);

    INSERT INTO drafts (id, workspace_id, run_id, agent_slug, kind, subject, body, created_at)
    SELECT d.id, a.workspace_id, a.run_id, d."agentSlug", d.kind, d.subject, d.body, a.now
      FROM jsonb_to_recordset(COALESCE(a.drafts, '[]')) AS d(id text, "agentSlug" text, kind text, subject text, body text)
     WHERE v_status = 'completed';

    IF v_status = 'completed' AND r.conversation_id IS NOT NULL AND cardinality(a.turn_roles) > 0 THEN
      -- Serialises appends to one thread, so two runs of the same conversation cannot take the same seq.
      PERFORM pg_advisory_xact_lock(hashtext(a.workspace_id || ':' || r.conversation_id));
      SELECT COALESCE(max(t.seq), -1) INTO v_seq FROM conversation_turns t WHERE t.workspace_id = a.workspace_id AND t.conversation_id = r.conversation_id;
      INSERT INTO conversation_turns (workspace_id, conversation_id, seq, role, content, run_id, created_at)
      SELECT a.workspace_id, r.conversation_id, v_seq + t.n::integer, t.role, t.content, a.run_id, a.now
        FROM unnest(a.turn_roles, a.turn_contents) WITH ORDINALITY AS t(role, content, n);
      -- Instances that hold the thread in memory drop it (domain/runs/conversation.ts; the channel as store/listen.ts names it).
      PERFORM pg_notify('service_conversations.' || current_schema(), json_build_array(a.instance, a.workspace_id, r.conversation_id)::text);
    END IF;

    -- The event of the outcome: completed, or failed when this close is what failed it.
    v_when := CASE WHEN v_status = 'completed' THEN 'completed' WHEN v_status = 'failed' AND r.status = 'in_progress' THEN v_when END;
    -- A completed run's drafts' `draft.created` follow its `run.completed`; the delivery ids drawn ahead serve the
    -- first event written, the others draw their own.
    v_first := true;
    FOR e IN SELECT * FROM jsonb_to_recordset(COALESCE(a.events, '[]')) AS x("when" text, id text, type text, data jsonb, body text) WHERE x."when" = v_when LOOP
      PERFORM outbox_enqueue(e.id, a.workspace_id, e.type, e.data, e.body, a.now, CASE WHEN v_first THEN a.delivery_ids END);
      v_first := false;
    END LOOP;

    -- What the execution saw of the run's event log (domain/runs/run-events.ts), after what a pause stored
    -- (domain/runs/pause.ts: the events before it, the decision and the resume, each with its sequence).
    INSERT INTO run_events (run_id, workspace_id, events, written_at) VALUES (a.run_id, a.workspace_id, COALESCE(a.log, '[]'), a.now)
      ON CONFLICT (run_id) DO UPDATE SET events = run_events.events || EXCLUDED.events, written_at = EXCLUDED.written_at,
        last_sequence = CASE WHEN run_events.compacted_at IS NULL THEN NULL
                             ELSE GREATEST(run_events.last_sequence, (SELECT max((v->>'sequence')::integer) FROM jsonb_array_elements(EXCLUDED.events) AS v)) END;
    RETURN QUERY SELECT * FROM runs WHERE id = a.run_id;
  END LOOP;

  PERFORM settle_runs(v_settle);
END
$$;
