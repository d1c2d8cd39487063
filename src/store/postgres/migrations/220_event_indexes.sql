-- Each event was written into three indexes: the primary key on id, (notification_seq, id) for a
-- notification's history, and (tx, id) for the status log. No statement looks an event up by its
-- id alone (every read goes through one of the other two, and their id column orders ties), so
-- the primary key's index was a third of each event's index work, and a notification delivered
-- writes three events (PROCESSING, SENT, DELIVERED): docs/scale-out.md, "Cost per notification".
-- The identity stays: ids still come from it, unique and rising within a transaction.
ALTER TABLE notification_events DROP CONSTRAINT notification_events_pkey;
