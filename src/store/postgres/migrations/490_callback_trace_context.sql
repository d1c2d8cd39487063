-- PostgreSQL twin of sqlite/migrations/490_callback_trace_context.sql (read its comments).
ALTER TABLE callback_messages ADD COLUMN trace_context TEXT;
