-- Topics and broadcasts (src/recipients, docs/topics.md, docs/topics.md).
-- A tenant's topics; `subscribers` is a counter kept in the transaction that changes the
-- memberships, so GET /topics reads no membership.
CREATE TABLE topics (
  tenant TEXT NOT NULL,
  topic_key TEXT NOT NULL,
  name TEXT,
  subscribers INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, topic_key)
);

-- Memberships. `seq` never repeats (AUTOINCREMENT), so a broadcast's snapshot, "every
-- membership up to seq S", never takes in one made after it, even once the newest was removed.
CREATE TABLE topic_subscribers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT NOT NULL,
  topic_key TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- A topic's members in ID order: the list, and the fan-out's cursor.
CREATE UNIQUE INDEX topic_subscribers_member ON topic_subscribers (tenant, topic_key, recipient_id);
-- A recipient's memberships, erased with it.
CREATE INDEX topic_subscribers_recipient ON topic_subscribers (tenant, recipient_id);

-- A broadcast: the notification every subscriber gets (its JSON columns as a notification's),
-- and the fan-out's progress. `fanned_to` is the last recipient ID fanned out and `until_seq` the
-- snapshot of memberships taken when the fan-out started; both move only in the transaction that
-- inserts a chunk's notifications, so a crash resumes exactly where the last commit left.
-- `cancelled_to` is the last notification seq a cancel has looked at. `pending` is 1 while
-- the fan-out or a cancel has work left.
CREATE TABLE broadcasts (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  topic_key TEXT NOT NULL,
  status TEXT NOT NULL,
  channel TEXT NOT NULL,
  priority INTEGER NOT NULL,
  template_key TEXT,
  template_version INTEGER,
  content TEXT,
  variables TEXT,
  metadata TEXT,
  category TEXT,
  locale TEXT,
  scheduled_at INTEGER,
  expires_at INTEGER,
  recipients INTEGER,
  created INTEGER NOT NULL DEFAULT 0,
  fanned_to TEXT NOT NULL DEFAULT '',
  until_seq INTEGER,
  cancelled_to INTEGER NOT NULL DEFAULT 0,
  pending INTEGER NOT NULL,
  advanced_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX broadcasts_tenant ON broadcasts (tenant, id);
-- The broadcasts with work left, least recently advanced first (they take turns).
CREATE INDEX broadcasts_pending ON broadcasts (advanced_at) WHERE pending = 1;

-- Which broadcast made a notification: GET /notifications?broadcastId=, its counts by status
-- (status in the index: the counts read no row) and its cancel.
ALTER TABLE notifications ADD COLUMN broadcast_id TEXT;
CREATE INDEX notifications_broadcast ON notifications (tenant, broadcast_id, seq, status)
  WHERE broadcast_id IS NOT NULL;
