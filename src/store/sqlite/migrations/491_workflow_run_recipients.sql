-- The recipients' index of workflow runs (GET /workflow-runs?recipientId=), entered in bulk by the
-- engine instead of by each trigger's commit (docs/workflow-runs.md "The recipients' index",
-- decision 0064). A trigger's runs go to its recipients' places in this index, a leaf page each
-- where the recipients have runs already: entered at the insert, that was most of the pages a
-- trigger group's commit wrote. Now a run is inserted without an entry; `indexRecipients` enters
-- the runs after `up_to`, oldest first, thousands at a time sorted by recipient (each recipient's
-- place written once for all of its runs), and moves `up_to` in the same transaction. The list
-- reads the runs after `up_to` by `seq` and the ones up to it here, so a run is listed by its
-- recipient from its trigger's commit on. Runs are never deleted, so no run is ever given a
-- `seq` at or below `up_to` after the fact.
DROP INDEX workflow_runs_recipient;
CREATE TABLE workflow_run_recipients (
  tenant TEXT NOT NULL,
  recipient_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (tenant, recipient_id, seq)
) WITHOUT ROWID;
INSERT INTO workflow_run_recipients (tenant, recipient_id, seq)
  SELECT tenant, recipient_id, seq FROM workflow_runs ORDER BY tenant, recipient_id, seq;
CREATE TABLE workflow_runs_indexed (up_to INTEGER NOT NULL);
INSERT INTO workflow_runs_indexed (up_to) SELECT coalesce(max(seq), 0) FROM workflow_runs;
