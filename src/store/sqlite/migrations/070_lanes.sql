-- Tenant fairness (docs/dispatch.md, "Tenant lines"): within a (priority, channel) cell the queue
-- is claimed by (lane_rank, seq), where lane_rank is a row's turn in its tenant's line. A row
-- joining the queue takes the rank after its tenant's last ready row, or the cell's head rank
-- when its tenant has none (so an idle tenant gets no credit), so claims go round-robin across
-- tenants and stay FIFO within each. The rules live in src/store/lanes.ts, for both databases.
-- Rows already queued keep rank 0 and drain first, in seq order.
ALTER TABLE notifications ADD COLUMN lane_rank INTEGER NOT NULL DEFAULT 0;
DROP INDEX notifications_ready;
CREATE INDEX notifications_ready ON notifications (priority, channel, lane_rank, seq) WHERE queue_state = 'ready';
-- The tail of each tenant's line: where the next row of that tenant joins.
CREATE INDEX notifications_lane_tail ON notifications (tenant, priority, channel, lane_rank)
  WHERE queue_state = 'ready';
