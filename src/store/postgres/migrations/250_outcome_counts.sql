-- The delivery history (src/notifications/outcomes.ts, GET /admin/history): notifications of a
-- tenant and channel that ended DELIVERED, FAILED or SKIPPED, per bucket of `span` ms (a minute,
-- kept for the last hour; an hour, kept for the last 7 days) starting at `bucket`. Written in
-- the transaction of the completions counted, one row per key a cycle. `shard` is the backend
-- (pg_backend_pid()) whose transaction wrote the row: two workers' cycles committing at once
-- never wait for each other's lock on a shared counter row; a read sums the shards.
CREATE TABLE outcome_counts (
  tenant TEXT NOT NULL,
  span INTEGER NOT NULL,
  bucket BIGINT NOT NULL,
  channel TEXT NOT NULL,
  outcome TEXT NOT NULL,
  shard INTEGER NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (tenant, span, bucket, channel, outcome, shard)
);
-- Every tenant's buckets (an operator's dashboard) and the prune.
CREATE INDEX outcome_counts_bucket ON outcome_counts (span, bucket);
