-- Auth: signing keys, tenants, users, service clients and the login-failure log.
-- Times are epoch milliseconds. Kept to SQL that PostgreSQL also accepts.
CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  alg TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  private_jwk TEXT NOT NULL,          -- JSON, or an encrypted envelope
  state TEXT NOT NULL,                -- 'active' | 'retired'
  created_at BIGINT NOT NULL,
  retired_at BIGINT,
  publish_until BIGINT
);
-- At most one active key, so two instances starting at once cannot both create one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (state) WHERE state = 'active';

CREATE TABLE tenants (
  name TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,         -- stored lowercased
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  tenant TEXT NOT NULL REFERENCES tenants (name),
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);
CREATE INDEX users_tenant ON users (tenant, created_at);

CREATE TABLE clients (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  scopes TEXT NOT NULL,               -- space-separated
  tenant TEXT NOT NULL REFERENCES tenants (name),
  disabled INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL
);
CREATE INDEX clients_tenant ON clients (tenant, created_at);

-- One row per failed login; shared by every instance so throttling holds across them.
CREATE TABLE login_failures (
  id INTEGER PRIMARY KEY,
  email TEXT NOT NULL,
  address TEXT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX login_failures_email ON login_failures (email, at);
CREATE INDEX login_failures_address ON login_failures (address, at);
CREATE INDEX login_failures_at ON login_failures (at);
