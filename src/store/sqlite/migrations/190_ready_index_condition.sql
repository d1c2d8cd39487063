-- The ready index takes `lane_rank >= 0` into its condition (readyIndexed in src/store/lanes.ts).
-- Every row meets it; a statement that leaves it out cannot read this index, and the tail of a
-- tenant's line (joinRank) leaves it out, so it is read from the line index, a seek, whatever the
-- planner's statistics say. On PostgreSQL, with statistics taken while no row was ready, the tail
-- was read from this index backwards, filtering by tenant: for a tenant with no ready row, all of
-- its cell's ready rows, at every acceptance and promotion of such a tenant's row.
DROP INDEX notifications_ready;
CREATE INDEX notifications_ready ON notifications (priority, channel, lane_rank, seq)
  WHERE queue_state = 'ready' AND lane_rank >= 0;
