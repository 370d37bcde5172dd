-- The start of a run's request (`Run.requestPreview`), so the runs list says what each run was asked.
-- Written by the statement that starts the run (start_run_previewed), so an invocation gains no
-- statement; runs stored before it, and runs refused before they started, keep NULL.
ALTER TABLE runs ADD COLUMN request_preview text;

-- start_run (0506), then the preview on the run's row when the run started (inserted or adopted).
-- The row is this statement's own (inserted, or locked by start_run), so the update waits on nothing.
CREATE FUNCTION start_run_previewed(
  p_workspace_id text, p_run_id text, p_adopt boolean, p_now timestamptz, p_lease_until timestamptz,
  p_agent_slug text, p_answered_by text, p_alias text, p_source text, p_conversation_id text,
  p_quota_stu float8, p_rate float8, p_input_tokens integer, p_desired_output integer,
  p_limit_run float8, p_limit_hour float8, p_limit_day float8,
  p_credential_id text, p_idempotency_key text, p_request_hash text, p_claim_expires_at timestamptz,
  p_conversation_turns integer, p_request_preview text
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  v_decision jsonb;
BEGIN
  v_decision := start_run(p_workspace_id, p_run_id, p_adopt, p_now, p_lease_until, p_agent_slug, p_answered_by, p_alias,
    p_source, p_conversation_id, p_quota_stu, p_rate, p_input_tokens, p_desired_output, p_limit_run, p_limit_hour,
    p_limit_day, p_credential_id, p_idempotency_key, p_request_hash, p_claim_expires_at, p_conversation_turns);
  IF p_request_preview IS NOT NULL AND v_decision ->> 'outcome' = 'started' THEN
    UPDATE runs SET request_preview = p_request_preview WHERE id = p_run_id;
  END IF;
  RETURN v_decision;
END
$$;
