-- The W3C `traceparent` of the span that accepted a workflow trigger, stored only when that span
-- was sampled (docs/tracing.md "Workflows", decision 0039). A trigger keeps it for the runs its
-- topic fan-out makes later; each run keeps it for the notifications its send steps make, which
-- store it as their own `trace_context` (migration 470), so each send is processed in the
-- trigger's trace, however long the run waits and whichever worker takes it. NULL when Herald
-- traces nothing.
ALTER TABLE workflow_triggers ADD COLUMN trace_context TEXT;
ALTER TABLE workflow_runs ADD COLUMN trace_context TEXT;
