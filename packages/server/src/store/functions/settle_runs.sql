-- settle_runs: the settlement of runs that end, the one place where it is written. Every way a run ends
-- settles through it: its close (finish_run / finish_runs, store/functions/finish_runs.sql), a cancel and
-- the sweeper (domain/runs/recovery.ts, through domain/spending/budget.ts `settleRuns`). For each run:
--
-- * its reservation (`reserved_stu`) is released from the period it was taken on (the month of its day
--   window) and from its day and hour windows (never below zero);
-- * what it consumed (`stu`) is charged to the period of its charge (the month of `now`: the same period,
--   but at a month's turn the new one, created when missing with its rollover, ensure_usage_period) and
--   to the run's day and hour windows (those its reservation was taken on);
-- * a window trips (`tripped_at`, kept from the first time) when what it was charged reaches its limit,
--   or, for the scope a run crossed (`crossed`: its output cut at the cap that scope's limit left), when
--   it comes within `trip_margin` of it (limit - ceil(limit × trip_margin)).
--
-- `p` is a jsonb array of `settle_run_args` objects (named keys). Amounts are STU; the limits and the
-- margin come from the caller (the margin's one home is domain/usage/kill-switch.ts `TRIP_MARGIN`). A
-- settlement without a quota (`quota_stu` null: a cancel, a sweep) creates no period row and charges
-- none unless it has STU to charge.
--
-- The runs are summed per workspace, then per period and per window: each period row and each window row
-- is updated once, whatever the number of runs, and the trips are checked on the sums (with the crossing
-- margin for a scope any of the runs crossed). Rows are locked per workspace (in workspace-id order, byte
-- order), the periods first (in period order), then the windows, day before hour (in start order), the
-- order start_run takes them in. The caller locked the runs' rows first.

-- The type is declared here, beside the one function that reads it, so that whenever it changes the function is
-- replaced with it (a session's compiled PL/pgSQL function keeps the types of its variables).
DROP TYPE IF EXISTS settle_run_args;
CREATE TYPE settle_run_args AS (
  workspace_id text,
  -- The windows the run's reservation was taken on (runs.window_day, runs.window_hour).
  window_day   timestamptz,
  window_hour  timestamptz,
  reserved_stu float8,
  stu          float8,
  crossed      text,
  now          timestamptz,
  quota_stu    float8,
  limit_hour   float8,
  limit_day    float8,
  trip_margin  float8
);

CREATE OR REPLACE FUNCTION settle_runs(p jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_items settle_run_args[] := ARRAY(SELECT x FROM jsonb_populate_recordset(NULL::settle_run_args, p) AS x);
  v_ws text;
  c record;
BEGIN
  FOR v_ws IN SELECT s.workspace_id FROM unnest(v_items) AS s GROUP BY s.workspace_id ORDER BY s.workspace_id COLLATE "C" LOOP
    -- The periods charged, created when missing (a settlement with a quota: a close).
    FOR c IN SELECT to_char(s.now AT TIME ZONE 'UTC', 'YYYY-MM') AS period, min(s.now) AS at, max(s.quota_stu) AS quota
               FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws AND s.quota_stu IS NOT NULL
              GROUP BY 1 ORDER BY 1 LOOP
      PERFORM ensure_usage_period(v_ws, c.at, c.quota);
    END LOOP;
    -- Each period row once: what the reservations taken on it give back, what is charged to it.
    PERFORM 1 FROM usage_periods u
      WHERE u.workspace_id = v_ws
        AND u.period IN (SELECT to_char(s.window_day AT TIME ZONE 'UTC', 'YYYY-MM') FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws
                         UNION SELECT to_char(s.now AT TIME ZONE 'UTC', 'YYYY-MM') FROM unnest(v_items) AS s
                                WHERE s.workspace_id = v_ws AND (s.quota_stu IS NOT NULL OR s.stu <> 0))
      ORDER BY u.period FOR UPDATE;
    UPDATE usage_periods u
       SET reserved_stu = GREATEST(0, u.reserved_stu - d.released), consumed_stu = u.consumed_stu + d.charged
      FROM (SELECT m.period, sum(m.released) AS released, sum(m.charged) AS charged
              FROM (SELECT to_char(s.window_day AT TIME ZONE 'UTC', 'YYYY-MM') AS period, COALESCE(s.reserved_stu, 0) AS released, 0::float8 AS charged
                      FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws
                    UNION ALL
                    SELECT to_char(s.now AT TIME ZONE 'UTC', 'YYYY-MM'), 0, COALESCE(s.stu, 0)
                      FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws AND (s.quota_stu IS NOT NULL OR s.stu <> 0)) AS m
             GROUP BY m.period) AS d
     WHERE u.workspace_id = v_ws AND u.period = d.period;

    -- Each window row once (created when missing), locked day first; charged, released and tripped on the sums.
    INSERT INTO usage_windows (workspace_id, scope, window_start)
    SELECT v_ws, 'day', s.window_day FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws
    UNION SELECT v_ws, 'hour', s.window_hour FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws
    ON CONFLICT (workspace_id, scope, window_start) DO NOTHING;
    PERFORM 1 FROM usage_windows w
      WHERE w.workspace_id = v_ws
        AND ((w.scope = 'day' AND w.window_start IN (SELECT s.window_day FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws))
          OR (w.scope = 'hour' AND w.window_start IN (SELECT s.window_hour FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws)))
      ORDER BY w.scope, w.window_start FOR UPDATE;
    UPDATE usage_windows w
       SET spent_stu = w.spent_stu + d.charged,
           reserved_stu = GREATEST(0, w.reserved_stu - d.released),
           tripped_at = CASE
             WHEN w.tripped_at IS NULL
              AND (w.spent_stu + d.charged >= d.limit_stu
                   OR (d.crossed AND w.spent_stu + d.charged >= d.limit_stu - ceil(d.limit_stu * d.margin)))
             THEN d.at ELSE w.tripped_at END
      FROM (SELECT 'day'::text AS scope, s.window_day AS window_start, sum(COALESCE(s.reserved_stu, 0)) AS released, sum(COALESCE(s.stu, 0)) AS charged,
                   min(s.limit_day) AS limit_stu, COALESCE(bool_or(s.crossed = 'day'), false) AS crossed, max(s.now) AS at,
                   COALESCE(max(s.trip_margin), 0) AS margin
              FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws GROUP BY s.window_day
            UNION ALL
            SELECT 'hour', s.window_hour, sum(COALESCE(s.reserved_stu, 0)), sum(COALESCE(s.stu, 0)),
                   min(s.limit_hour), COALESCE(bool_or(s.crossed = 'hour'), false), max(s.now), COALESCE(max(s.trip_margin), 0)
              FROM unnest(v_items) AS s WHERE s.workspace_id = v_ws GROUP BY s.window_hour) AS d
     WHERE w.workspace_id = v_ws AND w.scope = d.scope AND w.window_start = d.window_start;
  END LOOP;
END
$$;
