-- When the run service took a run over (reserved its budget and handed it to the engine). A run row
-- inserted by inbound ingestion has none until then; a second hand-over of the same run after a
-- crash finds it set and does not execute it twice.
ALTER TABLE runs ADD COLUMN started_at timestamptz;
