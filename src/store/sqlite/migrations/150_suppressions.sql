-- Suppressions (docs/deliverability.md): recipients a tenant no longer sends to on a channel.
-- recipient is the channel's key (src/suppressions/model.ts): a lower-cased email address, a
-- phone number, a push endpoint or device token. One row per (tenant, channel, recipient); id
-- orders the list. The claim looks them up by the unique key, one statement per claim.
CREATE TABLE suppressions (
  id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL,
  channel TEXT NOT NULL,
  recipient TEXT NOT NULL,
  reason TEXT NOT NULL,               -- Herald's own name (bounce, unsubscribe, ...) or an admin's words
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX suppressions_key ON suppressions (tenant, channel, recipient);
CREATE INDEX suppressions_list ON suppressions (tenant, id);
-- A delivery report that waits for its message id keeps what it says about the recipient.
ALTER TABLE pending_reports ADD COLUMN suppress TEXT;
