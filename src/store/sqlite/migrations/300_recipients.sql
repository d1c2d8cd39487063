-- A tenant's recipients (src/recipients, docs/recipients.md): the caller's own ID for a person, its
-- profile (addresses, push targets, locale, time zone, name, data) as JSON, replaced whole by a
-- PUT, and its preferences as JSON, kept apart so that a replaced profile keeps them.
CREATE TABLE recipients (
  tenant TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  profile TEXT NOT NULL,
  preferences TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, recipient_id)
);

-- A tenant's declared categories: defaults per channel, and whether opt-outs are ignored.
CREATE TABLE categories (
  tenant TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  required INTEGER NOT NULL,
  default_channels TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
);
