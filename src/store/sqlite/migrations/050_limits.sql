-- Provider limits shared by every worker (scale-out area): token buckets and open circuits.
-- One row per provider; tokens is fractional (refill is continuous). Times are epoch ms.
CREATE TABLE provider_buckets (
  key TEXT PRIMARY KEY,
  tokens DOUBLE PRECISION NOT NULL,
  refilled_at BIGINT NOT NULL
);

CREATE TABLE provider_circuits (
  key TEXT PRIMARY KEY,
  open_until BIGINT,                  -- NULL: closed
  updated_at BIGINT NOT NULL
);
