-- A user is a tenant and an email (#46, docs/authentication.md): the same email may be a user of
-- several tenants, each with its own password and role, so one tenant's admin can neither learn
-- nor take another tenant's address. The email was UNIQUE on its own; SQLite cannot drop a
-- column constraint, so the table is rebuilt with UNIQUE (tenant, email) and every row, ids,
-- hashes and sessions_valid_after included, is copied: refresh tokens (sub = the id) and the
-- identities linked to ids keep working. No table references users, so nothing else moves.
CREATE TABLE users_per_tenant (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,                -- stored lowercased
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  tenant TEXT NOT NULL REFERENCES tenants (name),
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  sessions_valid_after BIGINT,
  UNIQUE (tenant, email)
);
INSERT INTO users_per_tenant (id, email, password_hash, role, tenant, disabled, created_at, sessions_valid_after)
  SELECT id, email, password_hash, role, tenant, disabled, created_at, sessions_valid_after FROM users;
DROP TABLE users;
ALTER TABLE users_per_tenant RENAME TO users;
CREATE INDEX users_tenant ON users (tenant, created_at);
-- A login without a tenant reads every tenant's user of the email, oldest first.
CREATE INDEX users_email ON users (email, created_at);
