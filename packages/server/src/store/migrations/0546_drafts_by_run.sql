-- GET /drafts?run_id=…: a run's drafts without reading the workspace's others.
CREATE INDEX drafts_run ON drafts (run_id, created_at);
