-- finish_run: closes a run that executed, in one statement (domain/runs/close.ts, through runs/queries/close.ts
-- `finishRun`). Its one argument is a jsonb object with the keys of `finish_run_args` (declared in
-- store/functions/finish_runs.sql; generated/db.ts `FunctionArgument<'finish_run_args'>` types it for the
-- caller). A lone close is a batch of one: finish_runs holds the rules, and returns the run's row as it
-- stands after the close.
CREATE OR REPLACE FUNCTION finish_run(p jsonb) RETURNS SETOF runs
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM finish_runs(jsonb_build_array(p));
END
$$;
