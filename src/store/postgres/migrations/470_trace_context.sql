-- PostgreSQL twin of sqlite/migrations/470_trace_context.sql (read its comments).
ALTER TABLE notifications ADD COLUMN trace_context TEXT;
ALTER TABLE broadcasts ADD COLUMN trace_context TEXT;
