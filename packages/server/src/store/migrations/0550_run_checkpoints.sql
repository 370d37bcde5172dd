-- A run that waits for an approval (domain/runs/pause.ts): where its agent loop stopped, the one tool call
-- it waits to make, and who resumed it (domain/runs/resume.ts). One row per pause; a run that pauses again
-- after a resume has a row per pause, the latest one last.
--
-- `call_status` is the approved call's state: `pending_approval` until the decision (or the expiry) is
-- claimed, then `approved`, `rejected` or `expired`; an approved call is `calling` before the tool is
-- called, then `completed` or `failed`; a call found `calling` after its instance stopped is `unknown`
-- (never called again: the model is told its outcome is unknown).
--
-- `claimed_at` is set by the one instance that claimed the resumption (`UPDATE … WHERE claimed_at IS NULL
-- RETURNING`); `resumed_at` once its reservation was taken again. A claim that never reached `resumed_at`
-- (its instance stopped between the two) is given back after a lease, and the run's adoption by start_runs
-- (started_at IS NULL) keeps a second resume out either way.
CREATE TABLE run_checkpoints (
  id                 text PRIMARY KEY,                 -- chk_…
  run_id             text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  workspace_id       text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  approval_id        text NOT NULL UNIQUE REFERENCES approvals (id) ON DELETE CASCADE,
  -- The agent loop's state (conversation with its tool calls, steps, usage, step count): a plain JSON object.
  loop_state         jsonb NOT NULL,
  call_id            text NOT NULL,
  call_name          text NOT NULL,
  call_arguments     jsonb NOT NULL,
  call_status        text NOT NULL DEFAULT 'pending_approval'
                     CHECK (call_status IN ('pending_approval', 'approved', 'rejected', 'expired', 'calling', 'completed', 'failed', 'unknown')),
  -- The tool's answer (redacted), once the call ended.
  call_result        text,
  -- What the resume reserves: the next model call's input estimate and output cap.
  next_input_tokens  integer NOT NULL,
  next_output_tokens integer NOT NULL,
  -- The last sequence of the run's stored event log when it paused (the resumed execution numbers after it).
  last_sequence      integer NOT NULL,
  created_at         timestamptz NOT NULL,
  claimed_at         timestamptz,
  claimed_by         text,
  resumed_at         timestamptz,
  updated_at         timestamptz NOT NULL
);
CREATE INDEX run_checkpoints_unclaimed ON run_checkpoints (created_at) WHERE claimed_at IS NULL;
CREATE INDEX run_checkpoints_run ON run_checkpoints (run_id, created_at);
