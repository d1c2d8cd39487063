-- Each recipient's in-app inbox (docs/inbox.md). A message is the stored content
-- of one `inapp` notification: `id` is the notification's ID and `notification_seq` its row, so an
-- action appends the notification's SEEN / READ / ARCHIVED event without a lookup. `data` is JSON
-- text. Written by the completion that makes the notification DELIVERED, in its transaction.
CREATE TABLE inbox_messages (
  id TEXT PRIMARY KEY,
  notification_seq INTEGER NOT NULL,
  tenant TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  url TEXT,
  data TEXT,
  category TEXT,
  created_at INTEGER NOT NULL,
  seen_at INTEGER,
  read_at INTEGER,
  archived_at INTEGER
);
-- A recipient's messages newest first: GET /inbox's pages (every filter walks it backwards from its
-- cursor) and the erasure of a deleted recipient.
CREATE INDEX inbox_messages_recipient ON inbox_messages (tenant, recipient_id, created_at, id);
-- The unread and the unseen ones of a recipient, archived ones left out as the counts leave them:
-- `counts` reads only these entries (a recipient's unread, not its whole inbox, nor the store),
-- and the `unread` / `unseen` filters page through them.
CREATE INDEX inbox_messages_unread ON inbox_messages (tenant, recipient_id, created_at, id)
  WHERE read_at IS NULL AND archived_at IS NULL;
CREATE INDEX inbox_messages_unseen ON inbox_messages (tenant, recipient_id, created_at, id)
  WHERE seen_at IS NULL AND archived_at IS NULL;
