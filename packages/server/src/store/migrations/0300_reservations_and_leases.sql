-- Reservations are held apart from what was charged, and running runs hold a lease.
--
-- usage_windows.spent_stu and usage_periods.consumed_stu are now only what runs were charged; the
-- worst case held by runs in progress is reserved_stu on the same rows. Admission counts both, so
-- concurrent starts on any number of instances cannot go past a kill-switch limit or the quota's
-- hard stop; a switch trips on what was charged, not on what others merely hold.
ALTER TABLE usage_windows ADD COLUMN reserved_stu bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_periods ADD COLUMN reserved_stu bigint NOT NULL DEFAULT 0;

-- Until now a reservation was added to spent_stu: move what runs in progress hold to reserved_stu.
UPDATE usage_windows w
   SET reserved_stu = held.stu, spent_stu = GREATEST(0, w.spent_stu - held.stu)
  FROM (SELECT workspace_id, window_hour AS window_start, sum(reserved_stu) AS stu
          FROM runs WHERE status = 'in_progress' AND reserved_stu > 0 GROUP BY workspace_id, window_hour) held
 WHERE w.workspace_id = held.workspace_id AND w.scope = 'hour' AND w.window_start = held.window_start;
UPDATE usage_windows w
   SET reserved_stu = held.stu, spent_stu = GREATEST(0, w.spent_stu - held.stu)
  FROM (SELECT workspace_id, window_day AS window_start, sum(reserved_stu) AS stu
          FROM runs WHERE status = 'in_progress' AND reserved_stu > 0 GROUP BY workspace_id, window_day) held
 WHERE w.workspace_id = held.workspace_id AND w.scope = 'day' AND w.window_start = held.window_start;
UPDATE usage_periods p
   SET reserved_stu = held.stu
  FROM (SELECT workspace_id, to_char(window_day AT TIME ZONE 'UTC', 'YYYY-MM') AS period, sum(reserved_stu) AS stu
          FROM runs WHERE status = 'in_progress' AND reserved_stu > 0 GROUP BY 1, 2) held
 WHERE p.workspace_id = held.workspace_id AND p.period = held.period;

-- The lease of a run being executed: its instance renews it; once it has run out (the instance
-- died), the sweeper ends the run and releases its reservation. Runs already in progress have none
-- and are swept at once: nothing executes them any more.
ALTER TABLE runs ADD COLUMN lease_until timestamptz;
-- How many times an interrupted inbound run was handed over again.
ALTER TABLE runs ADD COLUMN recoveries integer NOT NULL DEFAULT 0;
CREATE INDEX runs_in_progress_lease ON runs (lease_until) WHERE status = 'in_progress';

-- The input of an inbound run is kept until the run ends (so an interrupted run can be handed over
-- again), then forgotten by run id.
CREATE INDEX inbound_events_run ON inbound_events (run_id);
