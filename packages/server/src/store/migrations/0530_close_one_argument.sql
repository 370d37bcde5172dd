-- The close takes one argument with named keys (store/functions/finish_run.sql, finish_runs.sql): the
-- signatures of 26 and 27 positional parameters go. finish_run_logged is folded into finish_runs (one
-- close function, the lone close a batch of one), and jsonb_text_array, which only read finish_runs' old
-- positional arrays, is no longer used. None of them has a row in schema_functions (their texts were in
-- migrations 0506, 0509, 0511 and 0517). finish_runs(jsonb) keeps its type but its argument is renamed
-- (`p`, as every close function's), which CREATE OR REPLACE cannot do: it is dropped too, with its row of
-- schema_functions, and its file creates it again.
DROP FUNCTION IF EXISTS finish_run_logged(
  text, text, timestamptz, timestamptz, text, text, text, text, text, integer, integer, integer, integer, integer, numeric,
  text, float8, float8, float8, text, jsonb, text[], text[], jsonb, text[], text, jsonb);
DROP FUNCTION IF EXISTS finish_run(
  text, text, timestamptz, timestamptz, text, text, text, text, text, integer, integer, integer, integer, integer, numeric,
  text, float8, float8, float8, text, jsonb, text[], text[], jsonb, text[], text);
DROP FUNCTION IF EXISTS jsonb_text_array(jsonb);
DROP FUNCTION IF EXISTS finish_runs(jsonb);
DELETE FROM schema_functions WHERE name = 'finish_runs';
