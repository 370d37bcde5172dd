-- start_runs: the first statement of every invocation that arrives together (domain/spending's group commit:
-- spending/start-batch.ts sends the starts that waited while the previous statement ran, through
-- spending/queries.ts `startRuns`; budget.ts `reserveRun` turns each decision into the contract's errors). One
-- argument: a jsonb array of `start_run_args` objects (below; generated/db.ts types them as
-- `FunctionArgument<'start_run_args'>`), one per run, N >= 1. It answers a jsonb array of decisions, one per
-- element, in input order.
--
-- Each run: the idempotency claim (a replay reserves nothing), the length of the conversation's thread, the
-- run's row when an inbound run is adopted (by its primary key alone, the rest checked on the locked row), the
-- period row (the quota), the day and hour windows and the manual switch, the output cap shrunk to the binding
-- limit, then the reservation of the run's worst case on the period and both windows, the run's row (inserted,
-- or adopted) with the start of its request (`Run.requestPreview`), and its idempotency claim.
--
-- Locks, held for this statement only: the adopted runs' rows first, by id (byte order), then per workspace (by
-- id, byte order, so two statements on two instances take workspaces in the same order): its period row, then
-- its day and hour windows. A workspace's rows are locked ONCE for all its runs of the batch, which are decided
-- in arrival order against running totals (a refused run changes nothing; an admitted run's reservation counts
-- for the next); then its period and windows are updated once, with the sums. The runs are inserted last, in
-- one statement (the counter rows of GET /runs follow at commit: store/functions/run_counts.sql). Runs of one
-- workspace that span an hour (or a day, or a period) form one group per hour, in time order.
--
-- The rules per run are those of a lone start:
-- - A retried request (same credential and Idempotency-Key) answers `replay` with the first one's run, or
--   `idempotency_mismatch` when its request differs; a claim lost to a concurrent request (two in the same
--   batch, or on another instance) raises `idempotency_claim_lost` and the whole statement is undone (the
--   group commit then sends each run alone).
-- - `stale_history`: the caller's copy of the conversation is behind the store's.
-- - `gone`: the inbound run to adopt is not this workspace's, not in progress, or already started.
-- - `quota_exceeded` at the quota's hard stop (`hardstop_pct` of the allowance, given with each run:
--   domain/usage/policy.ts `HARDSTOP_PCT`), or when not even the input and one output token fit under it beside
--   what was charged (`inputTooLarge`, with what was charged alone, so the answer's `policy` and `pctConsumed` are
--   those usage reads). Below that, a worst case that does not fit runs with its output cap shrunk to what fits
--   (not a crossing: no `limitedBy`).
-- - `kill_switch`: manual wins, then day, then hour; a tripped window counts as spent.
-- - The binding limit (run, hour, day: the first on a tie, by what was charged alone) shrinks the output cap;
--   when not even the input and one token fit, the run is `crossed` at once and an hour or day window trips
--   (the next runs of the batch see it tripped).
-- - `budget_reserved`: it fits the limits and the quota but not beside what runs in progress hold.
DROP TYPE IF EXISTS start_run_args CASCADE;
CREATE TYPE start_run_args AS (
  workspace_id text,
  run_id text,
  -- Adopt the inbound run `run_id` (waiting for its hand-over) instead of inserting one.
  adopt boolean,
  now timestamptz,
  lease_until timestamptz,
  agent_slug text,
  answered_by text,
  alias text,
  source text,
  conversation_id text,
  -- How many turns the conversation had in the copy the engine is given (checked against the store's).
  conversation_turns integer,
  request_preview text,
  quota_stu float8,
  -- The hard stop, in percent of the allowance (quota plus rollover).
  hardstop_pct float8,
  -- STU per token of the run's alias.
  rate float8,
  input_tokens integer,
  desired_output integer,
  limit_run float8,
  limit_hour float8,
  limit_day float8,
  credential_id text,
  idempotency_key text,
  request_hash text,
  claim_expires_at timestamptz
);

CREATE OR REPLACE FUNCTION start_runs(p_runs jsonb) RETURNS jsonb
LANGUAGE plpgsql
-- Each statement planned once per connection (finish_runs.sql says why): the check of a conversation's length,
-- run once per run, was otherwise planned again every time.
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  -- In input order (a function scan returns its rows in the order the function gives them).
  v_args start_run_args[] := ARRAY(SELECT x FROM jsonb_populate_recordset(NULL::start_run_args, p_runs) AS x);
  v_n integer := cardinality(v_args);
  v_out jsonb[] := array_fill(NULL::jsonb, ARRAY[v_n]);  -- each run's decision, by position
  v_stus bigint[] := array_fill(NULL::bigint, ARRAY[v_n]); -- each admitted run's reservation
  a start_run_args;
  i integer;
  g record;
  v_claim record;
  v_waiting record;
  v_claims integer := 0;
  v_claimed integer;
  -- The group being decided: a workspace and an hour, its period and windows locked.
  v_period text; v_day timestamptz;
  v_consumed float8; v_reserved float8; v_rollover float8;
  v_manual timestamptz;
  v_day_spent float8; v_day_reserved float8; v_day_tripped timestamptz;
  v_hour_spent float8; v_hour_reserved float8; v_hour_tripped timestamptz;
  v_added bigint; v_tripped boolean;
  -- One run's decision.
  v_allowance float8; v_hardstop float8;
  v_binding text; v_binding_room float8;
  v_cap integer; v_quota_cap float8; v_stu bigint;  -- v_quota_cap: tokens the hard stop leaves, past 2^31 under a large quota
BEGIN
  -- A retried request answers with the first one's run and reserves nothing; a thread behind the store's is refused.
  FOR i IN 1 .. v_n LOOP
    a := v_args[i];
    IF a.idempotency_key IS NOT NULL THEN
      DELETE FROM idempotency_keys k WHERE k.credential_id = a.credential_id AND k.idempotency_key = a.idempotency_key AND k.expires_at <= a.now;
      SELECT k.request_hash, k.run_id INTO v_claim FROM idempotency_keys k WHERE k.credential_id = a.credential_id AND k.idempotency_key = a.idempotency_key;
      IF FOUND THEN
        IF v_claim.request_hash <> a.request_hash THEN
          v_out[i] := jsonb_build_object('outcome', 'idempotency_mismatch');
        ELSE
          v_out[i] := jsonb_build_object('outcome', 'replay', 'runId', v_claim.run_id);
        END IF;
        CONTINUE;
      END IF;
    END IF;
    -- The earlier turns the caller gave the engine must be the whole thread (another instance may have added some).
    IF a.conversation_id IS NOT NULL AND a.conversation_turns IS DISTINCT FROM
       (SELECT COALESCE(max(t.seq) + 1, 0) FROM conversation_turns t WHERE t.workspace_id = a.workspace_id AND t.conversation_id = a.conversation_id) THEN
      v_out[i] := jsonb_build_object('outcome', 'stale_history');
    END IF;
  END LOOP;

  -- The adopted runs' rows first (the order every statement that ends a run locks in), by id, each by its
  -- primary key alone and the rest checked on the locked row (a plan that stays the key's index, 0518).
  FOR i IN SELECT s.i FROM generate_subscripts(v_args, 1) AS s(i)
            WHERE (v_args[s.i]).adopt IS TRUE AND v_out[s.i] IS NULL ORDER BY (v_args[s.i]).run_id COLLATE "C" LOOP
    a := v_args[i];
    SELECT r.workspace_id, r.status, r.started_at INTO v_waiting FROM runs r WHERE r.id = a.run_id FOR UPDATE;
    IF NOT FOUND OR v_waiting.workspace_id IS DISTINCT FROM a.workspace_id OR v_waiting.status <> 'in_progress' OR v_waiting.started_at IS NOT NULL THEN
      v_out[i] := jsonb_build_object('outcome', 'gone');
    END IF;
  END LOOP;

  -- Per workspace (byte order) and hour: its rows locked once, its runs decided in arrival order, its rows updated once.
  FOR g IN SELECT w.workspace_id, w.hour, min(w.i) AS first_i
             FROM (SELECT (v_args[s.i]).workspace_id AS workspace_id, s.i,
                          date_trunc('hour', (v_args[s.i]).now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour
                     FROM generate_subscripts(v_args, 1) AS s(i) WHERE v_out[s.i] IS NULL) w
            GROUP BY w.workspace_id, w.hour ORDER BY w.workspace_id COLLATE "C", w.hour LOOP
    a := v_args[g.first_i];
    v_day := date_trunc('day', a.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
    -- The quota: the period row, locked.
    v_period := ensure_usage_period(g.workspace_id, a.now, a.quota_stu);
    SELECT u.consumed_stu, u.reserved_stu, u.rollover_stu INTO v_consumed, v_reserved, v_rollover
      FROM usage_periods u WHERE u.workspace_id = g.workspace_id AND u.period = v_period FOR UPDATE;
    -- The kill switches: the day and hour windows, locked day first, and the manual switch.
    INSERT INTO usage_windows (workspace_id, scope, window_start) VALUES (g.workspace_id, 'day', v_day), (g.workspace_id, 'hour', g.hour)
      ON CONFLICT (workspace_id, scope, window_start) DO NOTHING;
    PERFORM 1 FROM usage_windows w
      WHERE w.workspace_id = g.workspace_id AND ((w.scope = 'day' AND w.window_start = v_day) OR (w.scope = 'hour' AND w.window_start = g.hour))
      ORDER BY w.scope FOR UPDATE;
    SELECT w.spent_stu, w.reserved_stu, w.tripped_at INTO v_day_spent, v_day_reserved, v_day_tripped
      FROM usage_windows w WHERE w.workspace_id = g.workspace_id AND w.scope = 'day' AND w.window_start = v_day;
    SELECT w.spent_stu, w.reserved_stu, w.tripped_at INTO v_hour_spent, v_hour_reserved, v_hour_tripped
      FROM usage_windows w WHERE w.workspace_id = g.workspace_id AND w.scope = 'hour' AND w.window_start = g.hour;
    SELECT k.manual_since INTO v_manual FROM kill_switches k WHERE k.workspace_id = g.workspace_id;
    v_added := 0; v_tripped := false;

    FOR i IN SELECT s.i FROM generate_subscripts(v_args, 1) AS s(i)
              WHERE v_out[s.i] IS NULL AND (v_args[s.i]).workspace_id = g.workspace_id
                AND date_trunc('hour', (v_args[s.i]).now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' = g.hour
              ORDER BY s.i LOOP
      a := v_args[i];
      v_allowance := a.quota_stu + v_rollover;
      IF v_consumed > 0 AND v_consumed * 100 >= GREATEST(v_allowance, 1) * a.hardstop_pct THEN
        v_out[i] := jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance);
        CONTINUE;
      END IF;
      v_hardstop := floor(GREATEST(v_allowance, 1) * a.hardstop_pct / 100);
      -- Manual wins, then day, then hour (the longest wait); a tripped window counts as spent.
      IF v_manual IS NOT NULL THEN
        v_out[i] := jsonb_build_object('outcome', 'kill_switch', 'kind', 'manual', 'since', v_manual);
        CONTINUE;
      END IF;
      IF v_day_tripped IS NOT NULL OR v_day_spent >= a.limit_day THEN
        v_out[i] := jsonb_build_object('outcome', 'kill_switch', 'kind', 'day', 'since', v_day_tripped);
        CONTINUE;
      END IF;
      IF v_hour_tripped IS NOT NULL OR v_hour_spent >= a.limit_hour THEN
        v_out[i] := jsonb_build_object('outcome', 'kill_switch', 'kind', 'hour', 'since', v_hour_tripped);
        CONTINUE;
      END IF;

      -- The limit that leaves the least room by what was charged alone (run, hour, day: the first on a tie).
      v_binding := 'run'; v_binding_room := a.limit_run;
      IF a.limit_hour - v_hour_spent < v_binding_room THEN v_binding := 'hour'; v_binding_room := a.limit_hour - v_hour_spent; END IF;
      IF a.limit_day - v_day_spent < v_binding_room THEN v_binding := 'day'; v_binding_room := a.limit_day - v_day_spent; END IF;
      -- Output tokens that fit in a room after this run's input: floor(max(0, room) / rate) - input.
      v_cap := LEAST(a.desired_output, floor(GREATEST(0, v_binding_room) / a.rate) - a.input_tokens);
      IF v_cap < 1 THEN
        -- Not even the input and one token fit: the run crosses at once, and an hour or day window trips.
        IF v_binding = 'day' THEN
          v_day_tripped := COALESCE(v_day_tripped, a.now); v_tripped := true;
        ELSIF v_binding = 'hour' THEN
          v_hour_tripped := COALESCE(v_hour_tripped, a.now); v_tripped := true;
        END IF;
        v_out[i] := jsonb_build_object('outcome', 'crossed', 'scope', v_binding);
        CONTINUE;
      END IF;
      -- The quota's hard stop, by what was charged alone (what runs in progress hold answers budget_reserved below):
      -- a worst case that does not fit shrinks the output cap to what does, as the windows' limits do.
      v_quota_cap := floor(GREATEST(0, floor(v_hardstop - v_consumed)) / a.rate) - a.input_tokens;
      IF v_quota_cap < v_cap THEN
        IF v_quota_cap < 1 THEN
          -- Not even the input and one output token fit under the hard stop.
          v_out[i] := jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance, 'inputTooLarge', true);
          CONTINUE;
        END IF;
        v_cap := v_quota_cap::integer; v_binding := NULL;  -- below v_cap here, so it fits
      END IF;
      v_stu := ceil((GREATEST(0, a.input_tokens) + GREATEST(0, v_cap)) * a.rate);
      IF v_consumed + v_stu > v_hardstop THEN
        -- Rounding only (the cap fits by construction): never pass the hard stop.
        v_out[i] := jsonb_build_object('outcome', 'quota_exceeded', 'consumedStu', v_consumed, 'allowanceStu', v_allowance, 'inputTooLarge', true);
        CONTINUE;
      END IF;
      -- It fits the limits and the quota; only what runs in progress hold (those admitted before it in this
      -- batch included) keeps it out: retry shortly.
      IF floor(GREATEST(0, a.limit_hour - v_hour_spent - v_hour_reserved) / a.rate) - a.input_tokens < v_cap THEN
        v_out[i] := jsonb_build_object('outcome', 'budget_reserved', 'budget', 'hour');
        CONTINUE;
      END IF;
      IF floor(GREATEST(0, a.limit_day - v_day_spent - v_day_reserved) / a.rate) - a.input_tokens < v_cap THEN
        v_out[i] := jsonb_build_object('outcome', 'budget_reserved', 'budget', 'day');
        CONTINUE;
      END IF;
      IF v_consumed + v_reserved + v_stu > v_hardstop THEN
        v_out[i] := jsonb_build_object('outcome', 'budget_reserved', 'budget', 'quota');
        CONTINUE;
      END IF;

      -- Admitted: its worst case joins the running totals.
      v_reserved := v_reserved + v_stu; v_day_reserved := v_day_reserved + v_stu; v_hour_reserved := v_hour_reserved + v_stu;
      v_added := v_added + v_stu;
      v_stus[i] := v_stu;
      IF a.idempotency_key IS NOT NULL THEN v_claims := v_claims + 1; END IF;
      v_out[i] := jsonb_build_object('outcome', 'started', 'outputCap', v_cap, 'reservedStu', v_stu,
                                     'limitedBy', CASE WHEN v_cap < a.desired_output THEN v_binding END);  -- NULL when the quota shrank it
    END LOOP;

    -- The group's reservations (and trips), once per row.
    IF v_added > 0 THEN
      UPDATE usage_periods u SET reserved_stu = u.reserved_stu + v_added WHERE u.workspace_id = g.workspace_id AND u.period = v_period;
    END IF;
    IF v_added > 0 OR v_tripped THEN
      UPDATE usage_windows w SET reserved_stu = w.reserved_stu + v_added,
                                 tripped_at = CASE w.scope WHEN 'day' THEN v_day_tripped ELSE v_hour_tripped END
       WHERE w.workspace_id = g.workspace_id AND ((w.scope = 'day' AND w.window_start = v_day) OR (w.scope = 'hour' AND w.window_start = g.hour));
    END IF;
  END LOOP;

  -- The admitted runs' rows: the new ones in one insert, in arrival order; an adopted one by its primary key.
  INSERT INTO runs (id, workspace_id, status, agent_slug, answered_by, alias, source, conversation_id,
                    reserved_stu, window_hour, window_day, created_at, updated_at, started_at, lease_until, request_preview)
  SELECT r.run_id, r.workspace_id, 'in_progress', r.agent_slug, r.answered_by, r.alias, r.source, r.conversation_id,
         v_stus[s.i], date_trunc('hour', r.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', date_trunc('day', r.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
         r.now, r.now, r.now, r.lease_until, r.request_preview
    FROM generate_subscripts(v_args, 1) AS s(i), LATERAL (SELECT (v_args[s.i]).*) AS r
   WHERE v_stus[s.i] IS NOT NULL AND r.adopt IS NOT TRUE
   ORDER BY s.i;
  FOR i IN SELECT s.i FROM generate_subscripts(v_args, 1) AS s(i) WHERE v_stus[s.i] IS NOT NULL AND (v_args[s.i]).adopt IS TRUE LOOP
    a := v_args[i];
    UPDATE runs r SET answered_by = a.answered_by, conversation_id = a.conversation_id, reserved_stu = v_stus[i],
                      window_hour = date_trunc('hour', a.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                      window_day = date_trunc('day', a.now AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                      updated_at = a.now, started_at = a.now, lease_until = a.lease_until,
                      request_preview = COALESCE(a.request_preview, r.request_preview)
     WHERE r.id = a.run_id;
  END LOOP;
  -- Their idempotency claims: one lost to a concurrent request undoes the whole statement.
  IF v_claims > 0 THEN
    INSERT INTO idempotency_keys (credential_id, idempotency_key, workspace_id, request_hash, run_id, created_at, expires_at)
    SELECT r.credential_id, r.idempotency_key, r.workspace_id, r.request_hash, r.run_id, r.now, r.claim_expires_at
      FROM generate_subscripts(v_args, 1) AS s(i), LATERAL (SELECT (v_args[s.i]).*) AS r
     WHERE v_stus[s.i] IS NOT NULL AND r.idempotency_key IS NOT NULL
     ORDER BY s.i
    ON CONFLICT (credential_id, idempotency_key) DO NOTHING;
    GET DIAGNOSTICS v_claimed = ROW_COUNT;
    IF v_claimed < v_claims THEN RAISE EXCEPTION 'idempotency_claim_lost'; END IF;
  END IF;
  RETURN to_jsonb(v_out);
END
$$;
