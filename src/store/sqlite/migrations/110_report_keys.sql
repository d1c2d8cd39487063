-- Replayed and repeated delivery reports (README, "Delivery reports"): each report has a key
-- (the provider's event id, else a digest of what it says), and a notification gets one event
-- per distinct key; a pending report is kept once per key. webhook_tokens holds the Mailgun
-- signature tokens seen within the 5-minute freshness window, so each is accepted once.
ALTER TABLE notification_events ADD COLUMN report_key TEXT;
CREATE UNIQUE INDEX notification_events_report ON notification_events (notification_seq, report_key)
  WHERE report_key IS NOT NULL;
ALTER TABLE pending_reports ADD COLUMN report_key TEXT;
CREATE UNIQUE INDEX pending_reports_key ON pending_reports (provider, provider_message_id, report_key)
  WHERE report_key IS NOT NULL;
CREATE TABLE webhook_tokens (
  provider TEXT NOT NULL,
  token TEXT NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (provider, token)
);
CREATE INDEX webhook_tokens_seen ON webhook_tokens (seen_at);
