-- PostgreSQL twin of sqlite/migrations/500_workflow_trace_context.sql (read its comments).
ALTER TABLE workflow_triggers ADD COLUMN trace_context TEXT;
ALTER TABLE workflow_runs ADD COLUMN trace_context TEXT;
