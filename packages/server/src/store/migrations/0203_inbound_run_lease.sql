-- The hand-over of an inbound run is leased, not held in a transaction: the executor needs the
-- store for its own transactions (on embedded PGlite they would wait for each other), and a
-- worker that dies mid hand-over lets the lease run out so another hands the run over again.
ALTER TABLE inbound_events ADD COLUMN run_lease_until timestamptz;
