-- PostgreSQL twin of sqlite/migrations/070_lanes.sql (read its comments).
ALTER TABLE notifications ADD COLUMN lane_rank BIGINT NOT NULL DEFAULT 0;
DROP INDEX notifications_ready;
CREATE INDEX notifications_ready ON notifications (priority, channel, lane_rank, seq) WHERE queue_state = 'ready';
CREATE INDEX notifications_lane_tail ON notifications (tenant, priority, channel, lane_rank)
  WHERE queue_state = 'ready';
