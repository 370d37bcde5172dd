-- The usage tally (domain/runs/usage-tally.ts): every instance holds each workspace's current period
-- in memory and answers GET /usage/current from it. A period row tells every instance what it now
-- holds, whoever wrote it (finish_run, a cancel's or the sweeper's settlement, the first read of a
-- period): its insert, and every update that changes what was consumed or the rollover, notify
-- `service_usage.<schema>` with `workspace period version rollover consumed`, sent at commit (never
-- for a rollback). `version` counts those changes: row locks order two updates of one row, so a
-- higher version is always the later state, whatever order the notifications and reads arrive in.
-- The reservation (reserved_stu, moved by every start_run) is not part of the Usage resource and
-- notifies nothing.
ALTER TABLE usage_periods ADD COLUMN version bigint NOT NULL DEFAULT 0;

CREATE FUNCTION usage_period_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF NEW.consumed_stu IS NOT DISTINCT FROM OLD.consumed_stu AND NEW.rollover_stu IS NOT DISTINCT FROM OLD.rollover_stu THEN
      RETURN NEW;
    END IF;
    NEW.version := OLD.version + 1;
  END IF;
  PERFORM pg_notify('service_usage.' || current_schema(),
                    concat_ws(' ', NEW.workspace_id, NEW.period, NEW.version, NEW.rollover_stu, NEW.consumed_stu));
  RETURN NEW;
END
$$;

-- After an insert (an insert that met a conflict and did nothing notifies nothing); before an update,
-- so that the version it notifies is the one written.
CREATE TRIGGER usage_period_inserted AFTER INSERT ON usage_periods
  FOR EACH ROW EXECUTE FUNCTION usage_period_changed();
CREATE TRIGGER usage_period_updated BEFORE UPDATE OF consumed_stu, rollover_stu ON usage_periods
  FOR EACH ROW EXECUTE FUNCTION usage_period_changed();
