-- SQLite's 491 moves its recipients' index of workflow runs out of the trigger's commit, entered
-- in bulk by the engine (decision 0064). PostgreSQL keeps `workflow_runs_recipient`, entered by
-- each insert: its triggers are committed by many processes, with no one writer's commit to
-- relieve. Nothing changes here; the file keeps the two adapters' lists of migrations the same.
SELECT 1;
