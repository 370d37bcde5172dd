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
-- no `keptIndex` only for a completed run), and a completed run's drafts; a completed run's turns are appended
-- to its conversation (notified to the other instances, `instance` being this one); the events of its outcome
-- (`events`, each with its `when`) are enqueued (outbox_enqueue); its execution's event log (`log`) is written to
-- run_events, unless the run completes and the log is only its answer (`answer_only`). A run that paused for an
-- approval and was resumed (domain/runs/pause.ts, resume.ts) adds this
-- execution's tokens, STU and events to what the pause charged and stored: the pause billed its part, this close
-- bills only the rest.
--
-- Set-based: each table is written by one statement for the whole batch (the runs' rows, the ledger, the steps,
-- the tool calls, the drafts, the events and their deliveries, the event logs), whatever the number of runs; only
-- a conversation's turns are appended run by run (under the thread's lock). Then the batch is settled at once
-- (store/functions/settle_runs.sql): per workspace, each period and window row the batch touches is updated once
-- with the sums of what its runs release and are charged, and the trips are checked on those sums.
--
-- Lock order: the batch's run rows first, all of them, in id order (a cancel or the sweeper locks a run's row,
-- then its workspace's budget rows: taking a second run's row after a first run's budget rows could deadlock
-- with it); then, in settle_runs, per workspace in workspace-id order (byte order), its period, day and hour
-- rows. Two batches on two instances take them in the same order.
--
-- `runs` is read by its primary key only (`id = ANY (…)`), and the function runs with `enable_seqscan` off:
-- PL/pgSQL keeps a statement's plan for the connection's life, and a plan made while `runs` was small is a
-- sequential scan, which PGlite (it never analyzes) would keep while the table grows, every batch reading every
-- run stored (close-lookup.test.ts counts the rows). A run of another workspace is not found: it raises
-- `run_not_found`, which undoes the statement.

-- The types are declared here, beside the one function that reads them, so that whenever they change the function
-- is replaced with them (a session's compiled PL/pgSQL function keeps the types of its variables).
DROP TYPE IF EXISTS finish_run_close;
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
  -- The prepared events, each with the outcome it is written for (`when`: completed, failed, manual); null when the
  -- close left them out (below), with their delivery ids.
  events          jsonb,
  -- The types of the events the close prepares (or would): what a destination must take for them to be needed.
  event_types     text[],
  delivery_ids    text[],
  -- This instance, named in the conversation notification (the others drop the thread they hold).
  instance        text,
  -- What the execution saw of the run's event log (run-events/log.ts), written to run_events; null when the close
  -- left it out (below).
  log             jsonb,
  -- Whether `log` is only the run's answer (run-events/log.ts `answerOnly`): then it is not written if the run
  -- completes (readers take it from the run's row); a run that ends otherwise (a cancel came first, the manual
  -- switch) has no answer in its row, so its log is written.
  answer_only     boolean,
  -- The agent that answered, when the execution learned it (the last department a delegating orchestrator
  -- consulted); null keeps the row's.
  answered_by     text
);

-- A close as decided, once its run is locked: how the run ends, and what of its row the rest of the statement reads.
CREATE TYPE finish_run_close AS (
  a               finish_run_args,
  -- completed, failed or canceled: the status the run ends with.
  status          text,
  -- Its failure_reason after the close.
  reason          text,
  -- Which of its prepared events are written (their `when`): completed, failed, manual, or none.
  event           text,
  -- The run's row as found: its conversation, and the windows and reservation its settlement releases.
  conversation_id text,
  window_day      timestamptz,
  window_hour     timestamptz,
  reserved_stu    float8
);

CREATE OR REPLACE FUNCTION finish_runs(p jsonb) RETURNS SETOF runs
LANGUAGE plpgsql
-- Every statement below reads `runs` by its key: never let a plan made while the table was small scan it (see above).
SET enable_seqscan = off
-- A statement's plan is made once per connection: with the custom plans PostgreSQL otherwise picks for a batch of one
-- (its arrays' sizes known), four of them were planned again at every close, a fifth of a lone close's time.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_args finish_run_args[] := ARRAY(SELECT x FROM jsonb_populate_recordset(NULL::finish_run_args, p) AS x);
  v_ids text[] := ARRAY(SELECT o.run_id FROM unnest(v_args) AS o);
  v_runs runs[];
  v_closes finish_run_close[];
  v_seq integer;
  v_thread record;
BEGIN
  -- The runs' rows, locked in id order, each of the workspace its close names: a run missing, of another workspace,
  -- or twice in the batch undoes the statement (the caller then closes each run alone: close-batch.ts).
  v_runs := ARRAY(SELECT r FROM runs AS r
                   WHERE r.id = ANY (v_ids) AND (r.id, r.workspace_id) IN (SELECT a.run_id, a.workspace_id FROM unnest(v_args) AS a)
                   ORDER BY r.id COLLATE "C" FOR UPDATE);
  IF cardinality(v_runs) <> cardinality(v_args) THEN
    RAISE EXCEPTION '%', CASE WHEN cardinality(v_ids) = (SELECT count(DISTINCT x) FROM unnest(v_ids) AS x)
                              THEN 'run_not_found' ELSE 'run_closed_twice_in_batch' END;
  END IF;

  -- How each run ends; a run handed over again since (another execution) is left alone (its row answered as it is).
  v_closes := ARRAY(
    SELECT ROW(a, s.status,
               CASE WHEN s.status = 'failed' THEN COALESCE(r.failure_reason, CASE WHEN m.manual THEN a.manual_reason ELSE a.reason END, 'internal_error')
                    ELSE r.failure_reason END,
               CASE WHEN s.status = 'completed' THEN 'completed'
                    WHEN s.status = 'failed' AND r.status = 'in_progress' THEN CASE WHEN m.manual THEN 'manual' ELSE a.status END END,
               r.conversation_id, r.window_day, r.window_hour, r.reserved_stu)::finish_run_close
      FROM unnest(v_args) AS a
      JOIN unnest(v_runs) AS r ON r.id = a.run_id
      LEFT JOIN kill_switches k ON k.workspace_id = a.workspace_id
      CROSS JOIN LATERAL (SELECT COALESCE(a.status = 'completed' AND a.manual_reason IS NOT NULL AND k.manual_since >= a.started_at, false) AS manual) AS m
      -- A cancel that came first wins (its tokens still billed); else the switch turned on since the start fails a completed run.
      CROSS JOIN LATERAL (SELECT CASE WHEN r.status <> 'in_progress' THEN r.status WHEN m.manual THEN 'failed' ELSE a.status END AS status) AS s
     WHERE r.started_at IS NOT DISTINCT FROM a.started_at
     ORDER BY a.workspace_id COLLATE "C", a.run_id COLLATE "C");
  IF cardinality(v_closes) < cardinality(v_runs) THEN
    RETURN QUERY SELECT r.* FROM unnest(v_runs) AS r JOIN unnest(v_args) AS a ON a.run_id = r.id WHERE r.started_at IS DISTINCT FROM a.started_at;
  END IF;

  -- A close may leave out what it seldom needs (domain/runs/close.ts): its events when no destination of its
  -- workspace was known to take them, and a log that is only its answer. When the outcome needs what was left out
  -- (a destination takes one of the events; a run that does not complete keeps its log), the statement is undone
  -- and the caller sends the close again whole.
  IF EXISTS (SELECT 1 FROM unnest(v_closes) AS c
              WHERE c.event IS NOT NULL AND (c.a).events IS NULL
                AND EXISTS (SELECT 1 FROM webhook_destinations w
                             WHERE w.workspace_id = (c.a).workspace_id AND w.events && (c.a).event_types)) THEN
    RAISE EXCEPTION 'close_needs_events';
  END IF;
  IF EXISTS (SELECT 1 FROM unnest(v_closes) AS c
              WHERE (c.a).log IS NULL AND NOT (c.status = 'completed' AND COALESCE((c.a).answer_only, false))) THEN
    RAISE EXCEPTION 'close_needs_log';
  END IF;

  RETURN QUERY
  WITH closed AS (
    UPDATE runs SET status = c.status, content = CASE WHEN c.status = 'completed' THEN (c.a).content END, failure_reason = c.reason,
                    -- Added to what a pause charged before (domain/runs/pause.ts); zero for a run that never paused.
                    input_tokens = runs.input_tokens + (c.a).input_tokens, output_tokens = runs.output_tokens + (c.a).output_tokens,
                    stu = runs.stu + (c.a).stu, reserved_stu = 0, lease_until = NULL, updated_at = (c.a).now,
                    completed_at = COALESCE(runs.completed_at, (c.a).now),
                    unbilled_input_tokens = runs.unbilled_input_tokens + (c.a).unbilled_input,
                    unbilled_output_tokens = runs.unbilled_output_tokens + (c.a).unbilled_output,
                    unbilled_stu = runs.unbilled_stu + (c.a).unbilled_stu,
                    answered_by = COALESCE((c.a).answered_by, runs.answered_by)
      FROM unnest(v_closes) AS c
     WHERE runs.id = ANY (v_ids) AND runs.id = (c.a).run_id
    RETURNING runs.*)
  SELECT * FROM closed;

  -- The ledger line, in the period of its charge.
  INSERT INTO usage_ledger (id, workspace_id, run_id, period, alias, input_tokens, output_tokens, stu, created_at)
  SELECT (c.a).ledger_id, (c.a).workspace_id, (c.a).run_id, to_char((c.a).now AT TIME ZONE 'UTC', 'YYYY-MM'), (c.a).alias,
         (c.a).input_tokens, (c.a).output_tokens, (c.a).stu, (c.a).now
    FROM unnest(v_closes) AS c
   WHERE (c.a).stu <> 0 OR (c.a).input_tokens <> 0 OR (c.a).output_tokens <> 0;

  -- Steps: a draft's (no keptIndex) only for an answer that was delivered, as the draft itself.
  INSERT INTO run_steps (id, run_id, index, kind, agent_slug, summary, created_at)
  SELECT s.id, (c.a).run_id, CASE WHEN c.status = 'completed' THEN s.index ELSE s."keptIndex" END, s.kind, s."agentSlug", s.summary, (c.a).now
    FROM unnest(v_closes) AS c
    CROSS JOIN LATERAL jsonb_to_recordset(COALESCE((c.a).steps, '[]')) AS s(id text, index integer, "keptIndex" integer, kind text, "agentSlug" text, summary text)
   WHERE c.status = 'completed' OR s."keptIndex" IS NOT NULL;
  INSERT INTO tool_calls (id, run_id, step_index, name, arguments, result, status, created_at)
  SELECT s."toolCallId", (c.a).run_id, CASE WHEN c.status = 'completed' THEN s.index ELSE s."keptIndex" END, s.name, s.arguments, s.result, s."toolStatus", (c.a).now
    FROM unnest(v_closes) AS c
    CROSS JOIN LATERAL jsonb_to_recordset(COALESCE((c.a).steps, '[]'))
                    AS s(index integer, "keptIndex" integer, "toolCallId" text, name text, arguments jsonb, result text, "toolStatus" text)
   WHERE s."toolCallId" IS NOT NULL AND (c.status = 'completed' OR s."keptIndex" IS NOT NULL);
  INSERT INTO drafts (id, workspace_id, run_id, agent_slug, kind, subject, body, created_at)
  SELECT d.id, (c.a).workspace_id, (c.a).run_id, d."agentSlug", d.kind, d.subject, d.body, (c.a).now
    FROM unnest(v_closes) AS c
    CROSS JOIN LATERAL jsonb_to_recordset(COALESCE((c.a).drafts, '[]')) AS d(id text, "agentSlug" text, kind text, subject text, body text)
   WHERE c.status = 'completed';

  -- A completed run's turns, appended to its conversation.
  FOR v_thread IN SELECT (x.a).workspace_id AS workspace_id, x.conversation_id, (x.a).run_id AS run_id, (x.a).now AS now,
                  (x.a).turn_roles AS roles, (x.a).turn_contents AS contents, (x.a).instance AS instance
             FROM unnest(v_closes) AS x
            WHERE x.status = 'completed' AND x.conversation_id IS NOT NULL AND cardinality((x.a).turn_roles) > 0 LOOP
    -- Serialises appends to one thread, so two runs of the same conversation cannot take the same seq.
    PERFORM pg_advisory_xact_lock(hashtext(v_thread.workspace_id || ':' || v_thread.conversation_id));
    SELECT COALESCE(max(t.seq), -1) INTO v_seq FROM conversation_turns t WHERE t.workspace_id = v_thread.workspace_id AND t.conversation_id = v_thread.conversation_id;
    INSERT INTO conversation_turns (workspace_id, conversation_id, seq, role, content, run_id, created_at)
    SELECT v_thread.workspace_id, v_thread.conversation_id, v_seq + t.n::integer, t.role, t.content, v_thread.run_id, v_thread.now
      FROM unnest(v_thread.roles, v_thread.contents) WITH ORDINALITY AS t(role, content, n);
    -- Instances that hold the thread in memory drop it (domain/runs/conversation.ts; the channel as store/listen.ts names it).
    PERFORM pg_notify('service_conversations.' || current_schema(), json_build_array(v_thread.instance, v_thread.workspace_id, v_thread.conversation_id)::text);
  END LOOP;

  -- The events of each outcome (`event`: completed, or failed when this close is what failed it), in their order: a
  -- completed run's drafts' `draft.created` follow its `run.completed`. The delivery ids drawn ahead serve each run's
  -- first event written; the others draw their own. Only when a destination of the run's workspace takes one of
  -- them: otherwise (most proxied calls) the statement would write nothing, and is skipped.
  IF EXISTS (SELECT 1 FROM unnest(v_closes) AS c
               CROSS JOIN LATERAL jsonb_to_recordset(COALESCE((c.a).events, '[]')) AS x("when" text, type text)
               JOIN webhook_destinations w ON w.workspace_id = (c.a).workspace_id AND x.type = ANY (w.events)
              WHERE x."when" = c.event) THEN
    PERFORM outbox_enqueue(COALESCE((
    SELECT jsonb_agg(jsonb_build_object('id', e.id, 'tenant_id', e.workspace_id, 'type', e.type, 'data', e.data, 'body', e.body,
                                        'now', e.now, 'delivery_ids', CASE WHEN e.k = 1 THEN to_jsonb(e.delivery_ids) END)
                     ORDER BY e.workspace_id COLLATE "C", e.run_id COLLATE "C", e.n)
      FROM (SELECT (c.a).workspace_id, (c.a).run_id, (c.a).now, (c.a).delivery_ids, x.*,
                   row_number() OVER (PARTITION BY (c.a).run_id ORDER BY x.n) AS k
              FROM unnest(v_closes) AS c
              CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(COALESCE((c.a).events, '[]')) AS ("when" text, id text, type text, data jsonb, body text))
                                 WITH ORDINALITY AS x("when", id, type, data, body, n)
             WHERE x."when" = c.event) AS e), '[]'));
  END IF;

  -- What the execution saw of the run's event log (domain/run-events/log.ts), after what a pause stored
  -- (domain/runs/pause.ts: the events before it, the decision and the resume, each with its sequence). None for a
  -- completed run whose log is only its answer (a synchronous call's), which readers take from the run's row.
  INSERT INTO run_events (run_id, workspace_id, events, written_at)
  SELECT (c.a).run_id, (c.a).workspace_id, COALESCE((c.a).log, '[]'), (c.a).now FROM unnest(v_closes) AS c
   WHERE NOT (c.status = 'completed' AND COALESCE((c.a).answer_only, false))
    ON CONFLICT (run_id) DO UPDATE SET events = run_events.events || EXCLUDED.events, written_at = EXCLUDED.written_at,
      last_sequence = CASE WHEN run_events.compacted_at IS NULL THEN NULL
                           ELSE GREATEST(run_events.last_sequence, (SELECT max((v->>'sequence')::integer) FROM jsonb_array_elements(EXCLUDED.events) AS v)) END;

  -- The settlement of the batch, at once (settle_runs.sql).
  PERFORM settle_runs(COALESCE((
    SELECT jsonb_agg(jsonb_build_object(
             'workspace_id', (c.a).workspace_id, 'window_day', c.window_day, 'window_hour', c.window_hour,
             'reserved_stu', c.reserved_stu, 'stu', (c.a).stu, 'crossed', (c.a).crossed, 'now', (c.a).now, 'quota_stu', (c.a).quota_stu,
             'limit_hour', (c.a).limit_hour, 'limit_day', (c.a).limit_day, 'trip_margin', (c.a).trip_margin))
      FROM unnest(v_closes) AS c), '[]'));
END
$$;
