-- Status callbacks and live status (docs/callbacks.md). The status log itself is notification_events: a status change
-- and its event are committed together, so the event table is the outbox, and a row's id is its
-- place in the log (one writer at a time, so ids commit in order). callback_messages is the
-- fan-out of that log to each callback; callback_attempts keeps what each attempt got.
CREATE TABLE callbacks (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,               -- JSON array of the statuses reported
  secret TEXT NOT NULL,               -- sealed like the signing keys (HERALD_KEY_ENCRYPTION_SECRET)
  previous_secret TEXT,               -- the one before a rotation, still signed with for a day
  rotated_at INTEGER,
  disabled_at INTEGER,
  disabled_reason TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX callbacks_tenant ON callbacks (tenant, created_at, id);

CREATE TABLE callback_messages (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,            -- webhook-id, the same on every attempt
  callback_id TEXT NOT NULL,
  notification_id TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,                -- 'pending' | 'delivered' | 'failed'
  attempts INTEGER NOT NULL DEFAULT 0,
  due_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  created_at INTEGER NOT NULL
);
-- Pending messages in log order per callback and notification: the order rule's look-up.
CREATE INDEX callback_messages_pending ON callback_messages (callback_id, notification_id, seq)
  WHERE state = 'pending';
CREATE INDEX callback_messages_due ON callback_messages (callback_id, due_at, seq) WHERE state = 'pending';

CREATE TABLE callback_attempts (
  id INTEGER PRIMARY KEY,
  callback_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  notification_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX callback_attempts_by_callback ON callback_attempts (callback_id, id);

-- How far the fan-out has read the status log (one row; NULL until the first fan-out).
CREATE TABLE callback_fanout (id INTEGER PRIMARY KEY CHECK (id = 1), cursor TEXT);
INSERT INTO callback_fanout (id, cursor) VALUES (1, NULL);
