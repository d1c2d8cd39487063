-- PostgreSQL twin of sqlite/migrations/340_localization.sql (read its comments).
ALTER TABLE notifications ADD COLUMN locale TEXT;
ALTER TABLE notification_events ADD COLUMN locale TEXT;

CREATE TABLE template_locales (
  tenant TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  version INTEGER NOT NULL,
  locale TEXT COLLATE "C" NOT NULL,
  content TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key, version, locale)
);
