-- ensure_usage_period: the period row of `p_now` (`YYYY-MM`, UTC), created on first use with the rollover
-- of the period before it (what it left of its allowance, capped at one period's quota); returns the
-- period. The rollover's one home: the first statement of an invocation (start_runs), a close's settlement
-- (settle_runs) and the usage reads (domain/spending/usage-store.ts `ensurePeriod`) call it.
CREATE OR REPLACE FUNCTION ensure_usage_period(p_workspace_id text, p_now timestamptz, p_quota_stu float8) RETURNS text
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
