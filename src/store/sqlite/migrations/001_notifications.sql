-- Notifications: one row each, in acceptance order (seq). The queue lives in the same table:
-- queue_state says whether a row is ready to claim, waiting until due_at (scheduled or retrying),
-- leased by a worker until lease_until, or out of the queue (NULL). Partial indexes keep each set
-- small and in claim order, so a claim is an index seek whatever the backlog.
CREATE TABLE notifications (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  channel TEXT NOT NULL,
  priority INTEGER NOT NULL,          -- 0 CRITICAL, 1 HIGH, 2 NORMAL, 3 LOW
  status TEXT NOT NULL,
  queue_state TEXT,                   -- 'ready' | 'waiting' | 'leased' | NULL
  due_at INTEGER,                     -- ms; a waiting row becomes ready then
  recipient TEXT NOT NULL,            -- JSON, unmasked (masked only in responses)
  template_key TEXT,
  template_version INTEGER,
  content TEXT,                       -- JSON inline content, when no template
  variables TEXT,                     -- JSON
  metadata TEXT,                      -- JSON
  idempotency_key TEXT,
  request_hash TEXT,
  scheduled_at INTEGER,
  expires_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  lease_owner TEXT,
  lease_until INTEGER,
  provider TEXT,
  provider_message_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX notifications_ready ON notifications (priority, channel, seq) WHERE queue_state = 'ready';
CREATE INDEX notifications_waiting ON notifications (due_at) WHERE queue_state = 'waiting';
CREATE INDEX notifications_leased ON notifications (lease_until) WHERE queue_state = 'leased';
CREATE INDEX notifications_tenant_seq ON notifications (tenant, seq);
CREATE UNIQUE INDEX notifications_idempotency ON notifications (tenant, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX notifications_provider_message ON notifications (provider, provider_message_id)
  WHERE provider_message_id IS NOT NULL;

-- Events are appended, never rewritten; id gives their order. QUEUED at acceptance is implied by
-- created_at and not stored, which saves one write per accepted notification.
CREATE TABLE notification_events (
  id INTEGER PRIMARY KEY,
  notification_seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  attempt INTEGER,
  provider TEXT,
  detail TEXT,
  source TEXT
);
CREATE INDEX notification_events_by_notification ON notification_events (notification_seq, id);
