-- PostgreSQL twin of sqlite/migrations/460_quotas.sql (read its comments). Here every api process
-- leases tokens from quota_buckets in blocks (src/quotas/sources.ts).
CREATE TABLE tenant_quotas (
  tenant TEXT PRIMARY KEY,
  limits TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE quota_buckets (
  tenant TEXT NOT NULL,
  scope TEXT NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  refilled_at BIGINT NOT NULL,
  day TEXT NOT NULL,
  used BIGINT NOT NULL,
  PRIMARY KEY (tenant, scope)
);
