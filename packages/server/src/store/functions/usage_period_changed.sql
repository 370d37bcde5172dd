-- usage_period_changed: the trigger of usage_periods (migration 0507 creates the triggers) that feeds the
-- usage tally (domain/spending/usage-tally.ts). A period row's insert, and every update that changes what
-- was consumed or the rollover, notify `service_usage.<schema>` with `workspace period version rollover
-- consumed`, sent at commit (never for a rollback). `version` counts those changes: row locks order two
-- updates of one row, so a higher version is always the later state, whatever order the notifications and
-- reads arrive in. The reservation (reserved_stu) is not part of the Usage resource and notifies nothing.
CREATE OR REPLACE FUNCTION usage_period_changed() RETURNS trigger
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
