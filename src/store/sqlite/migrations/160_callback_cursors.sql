-- Callbacks are sent straight from the status log (docs/callbacks.md): each callback keeps its own
-- place in the log (cursor) and a lease on reading it (head_owner until head_lease_until), so
-- one worker at a time sends a callback's new changes. callback_messages now holds only the
-- messages that wait for a retry (or behind one of their notification's), not every message.
ALTER TABLE callbacks ADD COLUMN cursor TEXT NOT NULL DEFAULT '0';
ALTER TABLE callbacks ADD COLUMN head_owner TEXT;
ALTER TABLE callbacks ADD COLUMN head_lease_until INTEGER;
-- The fan-out's place becomes every callback's: nothing it had not read yet is lost or repeated.
UPDATE callbacks SET cursor = coalesce((SELECT cursor FROM callback_fanout WHERE id = 1), '0');
DROP TABLE callback_fanout;
