-- PostgreSQL twin of sqlite/migrations/240_recipient_digest.sql. Adding a column without a
-- default rewrites nothing; the partial index holds no row yet, so building it is one scan.
-- Each notification's recipient digest: a keyed HMAC of its address (src/notifications/
-- recipient-digest.ts), never the address itself, so an admin can find a tenant's notifications
-- to one exact address (GET /notifications?recipient=) through this index rather than by reading
-- every recipient. Written at acceptance; notifications accepted before this migration keep NULL
-- (not found by a recipient search) and are left out of the index.
ALTER TABLE notifications ADD COLUMN recipient_digest TEXT;
CREATE INDEX notifications_recipient ON notifications (tenant, recipient_digest, seq)
  WHERE recipient_digest IS NOT NULL;
