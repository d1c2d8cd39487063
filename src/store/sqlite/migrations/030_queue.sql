-- Queue control and the sandbox (scheduler area). The queue itself lives in `notifications`
-- (001): queue_state/due_at/lease_* and the ready/waiting/leased partial indexes.

-- Pauses, one row per pause of one (priority, channel) cell; resumed_at NULL = still paused.
-- Kept in the database so every worker process (and the CLI) sees the same pauses, and kept after
-- resume so a claim can tell that a notification was held back by one (its THROTTLED event is
-- written when it is next considered: O(1) pause and resume whatever the backlog).
CREATE TABLE queue_pauses (
  id INTEGER PRIMARY KEY,
  priority INTEGER NOT NULL,
  channel TEXT NOT NULL,
  paused_at INTEGER NOT NULL,
  resumed_at INTEGER
);
CREATE UNIQUE INDEX queue_pauses_active ON queue_pauses (priority, channel) WHERE resumed_at IS NULL;

-- Messages the sandbox providers "delivered": rendered content and the unmasked recipient, so a
-- developer can see exactly what would have gone out. Inserted in the same transaction as the
-- DELIVERED completion that produced them.
CREATE TABLE sandbox_messages (
  id INTEGER PRIMARY KEY,
  notification_seq INTEGER NOT NULL,
  notification_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  channel TEXT NOT NULL,
  recipient TEXT NOT NULL,            -- JSON
  content TEXT NOT NULL,              -- JSON
  attempt INTEGER NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX sandbox_messages_tenant ON sandbox_messages (tenant, id);
CREATE INDEX sandbox_messages_notification ON sandbox_messages (notification_id);
