-- PostgreSQL twin of sqlite/migrations/190_ready_index_condition.sql (read its comments).
DROP INDEX notifications_ready;
CREATE INDEX notifications_ready ON notifications (priority, channel, lane_rank, seq)
  WHERE queue_state = 'ready' AND lane_rank >= 0;
