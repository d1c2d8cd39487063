-- PostgreSQL twin of sqlite/migrations/020_templates.sql (read its comments). BIGINT for epoch-ms
-- times (INTEGER is 32-bit here), and keys compared bytewise (COLLATE "C") so listing pages in
-- the same order as SQLite whatever the database's locale.
CREATE TABLE templates (
  tenant TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  channel TEXT NOT NULL,
  current_version INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key)
);

CREATE TABLE template_versions (
  tenant TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  version INTEGER NOT NULL,
  channel TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key, version)
);
