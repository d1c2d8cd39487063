-- Templates: one head row a key (the current version), and every version ever saved. Versions are
-- immutable and kept after a delete, because accepted notifications pin a version and render it
-- later; a key re-created after a delete continues the version numbers, so a pin never changes.
CREATE TABLE templates (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  channel TEXT NOT NULL,
  current_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key)
);

CREATE TABLE template_versions (
  tenant TEXT NOT NULL,
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  channel TEXT NOT NULL,
  content TEXT NOT NULL,              -- JSON { subject?, text?, html?, title?, body? }
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, key, version)
);
