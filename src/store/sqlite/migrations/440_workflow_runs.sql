-- Workflow runs (src/workflows/engine.ts, docs/workflows.md "Runs", decision 0030).
-- A trigger: what its runs start from, its Idempotency-Key and first answer (replayed within 24 h),
-- and, for a topic, the fan-out's progress as a broadcast's (`fanned_to`, `until_seq`, `pending`,
-- moved only in the transaction that makes a chunk of runs).
CREATE TABLE workflow_triggers (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  workflow_key TEXT NOT NULL,
  version INTEGER NOT NULL,
  steps INTEGER NOT NULL,
  topic_key TEXT,
  priority INTEGER NOT NULL,
  locale TEXT,
  variables TEXT,
  scheduled_at INTEGER,
  idempotency_key TEXT,
  request_hash TEXT,
  answer TEXT,
  runs INTEGER NOT NULL DEFAULT 0,
  fanned_to TEXT NOT NULL DEFAULT '',
  until_seq INTEGER,
  pending INTEGER NOT NULL,
  advanced_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX workflow_triggers_idempotency ON workflow_triggers (tenant, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
-- Topic triggers still making runs, least recently advanced first.
CREATE INDEX workflow_triggers_pending ON workflow_triggers (advanced_at) WHERE pending = 1;

-- A run: where it is (`step_index`, and each step's record in `steps`, a JSON array of
-- { status, notificationId?, at?, until? }), and `due_at`, set while it has work: now for a
-- RUNNING run, the end of its delay or digest window for a WAITING one, NULL once it has ended.
-- `digest` is { count, items } once its digest window closed.
CREATE TABLE workflow_runs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  workflow_key TEXT NOT NULL,
  version INTEGER NOT NULL,
  recipient_id TEXT NOT NULL,
  trigger_id TEXT NOT NULL,
  status TEXT NOT NULL,
  step_index INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  locale TEXT,
  variables TEXT,
  digest TEXT,
  steps TEXT NOT NULL,
  due_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- The due-time index: only runs with work are in it, by priority then due time, so the engine's
-- claim reads the head of each priority and an idle engine reads one entry (the earliest).
CREATE INDEX workflow_runs_due ON workflow_runs (priority, due_at) WHERE due_at IS NOT NULL;
-- The lists (GET /workflow-runs and its filters), newest first.
CREATE INDEX workflow_runs_tenant ON workflow_runs (tenant, seq);
CREATE INDEX workflow_runs_trigger ON workflow_runs (tenant, trigger_id, seq);
CREATE INDEX workflow_runs_recipient ON workflow_runs (tenant, recipient_id, seq);
CREATE INDEX workflow_runs_workflow ON workflow_runs (tenant, workflow_key, seq);
-- /metrics: waiting runs by workflow, read from the index alone.
CREATE INDEX workflow_runs_waiting ON workflow_runs (workflow_key) WHERE status = 'WAITING';

-- An open digest: one per workflow version, step, recipient and key value (the primary key is the
-- concurrency rule: two runs reaching it at once, on two workers, make one row and the second
-- joins it). `run_id` waits until `until`; the joiners' variables gather in `items`. Deleted in
-- the transaction that moves the waiting run on.
CREATE TABLE workflow_digests (
  tenant TEXT NOT NULL,
  workflow_key TEXT NOT NULL,
  version INTEGER NOT NULL,
  step_index INTEGER NOT NULL,
  recipient_id TEXT NOT NULL,
  key_value TEXT NOT NULL,
  run_id TEXT NOT NULL,
  until INTEGER NOT NULL,
  count INTEGER NOT NULL,
  items TEXT NOT NULL,
  PRIMARY KEY (tenant, workflow_key, version, step_index, recipient_id, key_value)
);

-- A throttle's marks: one per run that passed the step, read over the sliding window.
CREATE TABLE workflow_throttle_marks (
  tenant TEXT NOT NULL,
  workflow_key TEXT NOT NULL,
  step_index INTEGER NOT NULL,
  recipient_id TEXT NOT NULL,
  key_value TEXT NOT NULL,
  at INTEGER NOT NULL,
  run_id TEXT NOT NULL
);
CREATE INDEX workflow_throttle_window
  ON workflow_throttle_marks (tenant, workflow_key, step_index, recipient_id, key_value, at);

-- Which run made a notification (a send step): its conditions read the statuses of the run's own.
ALTER TABLE notifications ADD COLUMN workflow_run_id TEXT;
