-- Workflow definitions (docs/workflows.md), stored as templates are: one head row a key (the
-- current version) and every version ever saved. Versions are immutable and kept after a delete,
-- because a run keeps the version it started with; a key saved again after a delete continues
-- the version numbers, so a run's version never names other steps.
CREATE TABLE workflows (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  current_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
);

CREATE TABLE workflow_versions (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT,
  category TEXT,
  steps TEXT NOT NULL,                -- JSON array of steps, as validated at save
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, version)
);
