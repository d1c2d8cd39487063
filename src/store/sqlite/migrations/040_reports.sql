-- Delivery reports (webhooks, SMPP receipts) that arrived before the notification's provider
-- message id was recorded: a provider can call back faster than the worker commits its SENT.
-- They wait here, keyed like the notification index, and are applied when the id is recorded.
CREATE TABLE pending_reports (
  id INTEGER PRIMARY KEY,
  provider TEXT NOT NULL,
  provider_message_id TEXT NOT NULL,
  outcome TEXT NOT NULL,              -- 'DELIVERED' | 'FAILED' | 'SENT'
  detail TEXT,
  source TEXT NOT NULL,               -- 'webhook' | 'receipt'
  reported_at INTEGER NOT NULL,       -- ms, when the provider says it happened
  received_at INTEGER NOT NULL        -- ms, when Herald got it (for purging strays)
);
CREATE INDEX pending_reports_message ON pending_reports (provider, provider_message_id);
CREATE INDEX pending_reports_received ON pending_reports (received_at);
