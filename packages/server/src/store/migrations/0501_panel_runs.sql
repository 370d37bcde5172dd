-- A member may try an agent from the panel with a session: such a run's source is 'panel'.
ALTER TABLE runs DROP CONSTRAINT runs_source_check;
ALTER TABLE runs ADD CONSTRAINT runs_source_check CHECK (source IN ('api', 'inbound_webhook', 'mcp', 'panel'));
