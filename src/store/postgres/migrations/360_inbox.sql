-- PostgreSQL twin of sqlite/migrations/360_inbox.sql (read its comments). IDs compare bytewise
-- ("C"), as SQLite compares them, so both page in one order.
CREATE TABLE inbox_messages (
  id TEXT COLLATE "C" PRIMARY KEY,
  notification_seq BIGINT NOT NULL,
  tenant TEXT NOT NULL,
  recipient_id TEXT COLLATE "C" NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  url TEXT,
  data TEXT,
  category TEXT,
  created_at BIGINT NOT NULL,
  seen_at BIGINT,
  read_at BIGINT,
  archived_at BIGINT
);
CREATE INDEX inbox_messages_recipient ON inbox_messages (tenant, recipient_id, created_at, id);
CREATE INDEX inbox_messages_unread ON inbox_messages (tenant, recipient_id, created_at, id)
  WHERE read_at IS NULL AND archived_at IS NULL;
CREATE INDEX inbox_messages_unseen ON inbox_messages (tenant, recipient_id, created_at, id)
  WHERE seen_at IS NULL AND archived_at IS NULL;
