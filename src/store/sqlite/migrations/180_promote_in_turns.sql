-- Within a priority, tenants take turns at promotion (promoteTurn in src/store/queue-core.ts):
-- the walk finds the next tenant with waiting rows, then that tenant's first due rows, each a
-- seek into this index, so one tenant's million rows falling due before another's one row do
-- not hold that row back until the million are promoted.
CREATE INDEX notifications_waiting_tenant ON notifications (priority, tenant, due_at) WHERE queue_state = 'waiting';
