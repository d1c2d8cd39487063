-- PostgreSQL twin of sqlite/migrations/300_recipients.sql: a tenant's recipients (profile and
-- preferences as JSON text, read whole) and declared categories.
-- IDs and names compare bytewise ("C"), as SQLite compares them, so both list in one order.
CREATE TABLE recipients (
  tenant TEXT NOT NULL,
  recipient_id TEXT COLLATE "C" NOT NULL,
  profile TEXT NOT NULL,
  preferences TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, recipient_id)
);

CREATE TABLE categories (
  tenant TEXT NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  description TEXT,
  required BOOLEAN NOT NULL,
  default_channels TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, name)
);
