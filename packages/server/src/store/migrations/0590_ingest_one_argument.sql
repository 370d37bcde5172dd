-- The ingestion of an inbound event takes one argument with named keys (store/functions/ingest_inbound_event.sql):
-- the signature of 16 positional parameters goes, with its row of schema_functions (its file creates the new one).
DROP FUNCTION IF EXISTS ingest_inbound_event(
  text, text, text, text, text, text, timestamptz, text, text, integer, timestamptz, text, text, text, text, text);
DELETE FROM schema_functions WHERE name = 'ingest_inbound_event';
