-- Each process's latest metrics (store/port/process-metrics.ts): one row per running process,
-- replaced every few seconds, read by any API process for the deployment's dashboard.
CREATE TABLE process_metrics (
  process_id TEXT PRIMARY KEY,
  roles TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  snapshot TEXT NOT NULL
);
