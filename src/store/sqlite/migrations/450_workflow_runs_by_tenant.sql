-- Within a priority, tenants take turns at the engine's take of due runs (src/store/due-runs.ts,
-- decision 0030): the walk finds the next tenant with runs in the due-time index, then that
-- tenant's first due runs, each a seek into this index, so one tenant's million runs falling due
-- do not hold back another tenant's run of the same priority for more than one step.
CREATE INDEX workflow_runs_due_tenant ON workflow_runs (priority, tenant, due_at) WHERE due_at IS NOT NULL;
