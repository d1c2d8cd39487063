-- The notification's `traceparent` (migration 470) kept with a callback message that waits in the
-- outbox for a retry (docs/tracing.md): the retried POST continues the notification's trace, as
-- the first attempt did from the status log. NULL when the change carried none.
ALTER TABLE callback_messages ADD COLUMN trace_context TEXT;
