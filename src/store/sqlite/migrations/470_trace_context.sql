-- The W3C `traceparent` of the span that accepted a notification (or made a broadcast), stored
-- only when that span was sampled (docs/tracing.md, decision 0034): whoever processes the
-- notification later (another thread or process, after a restart) continues its trace from it,
-- and its status callbacks carry it. NULL when Herald traces nothing.
ALTER TABLE notifications ADD COLUMN trace_context TEXT;
ALTER TABLE broadcasts ADD COLUMN trace_context TEXT;
