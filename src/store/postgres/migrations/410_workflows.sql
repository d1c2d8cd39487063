-- PostgreSQL twin of sqlite/migrations/410_workflows.sql (read its comments). BIGINT for epoch-ms
-- times, keys compared bytewise (COLLATE "C") so lists page in SQLite's order, and the steps as
-- the JSON text saved (not jsonb, which would reorder their keys).
CREATE TABLE workflows (
  tenant TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  current_version INTEGER NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key)
);

CREATE TABLE workflow_versions (
  tenant TEXT NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  version INTEGER NOT NULL,
  name TEXT,
  category TEXT,
  steps TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, key, version)
);
