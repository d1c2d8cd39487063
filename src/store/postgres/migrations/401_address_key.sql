-- PostgreSQL twin of sqlite/migrations/401_address_key.sql (read its comments).
ALTER TABLE notifications ADD COLUMN address_key TEXT;
