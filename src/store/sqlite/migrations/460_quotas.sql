-- Per-tenant quotas (docs/quotas.md, decision 0033): the limits an operator set for a tenant, and
-- one row per tenant and scope ('total', a channel, or either with '#bulk', the share NORMAL and LOW
-- may use) holding its token bucket (tokens, refilled_at; on SQLite kept in memory, the columns
-- unused) and its usage of the UTC day `day` (used). Times are epoch ms.
CREATE TABLE tenant_quotas (
  tenant TEXT PRIMARY KEY,
  limits TEXT NOT NULL,                -- JSON: { total?, channels? }, each { ratePerSecond?, burst?, perDay? }
  updated_at INTEGER NOT NULL
);

CREATE TABLE quota_buckets (
  tenant TEXT NOT NULL,
  scope TEXT NOT NULL,
  tokens REAL NOT NULL,
  refilled_at INTEGER NOT NULL,
  day TEXT NOT NULL,                   -- YYYY-MM-DD (UTC) that `used` counts
  used INTEGER NOT NULL,
  PRIMARY KEY (tenant, scope)
);
