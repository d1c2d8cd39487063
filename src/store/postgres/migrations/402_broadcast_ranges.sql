-- Several workers make one broadcast's fan-out at once (postgres/broadcasts.ts, docs/topics.md,
-- decision record 0027). A worker leases the next range of the snapshot's recipient IDs in a short
-- transaction that moves the broadcast's cursor (fanned_to) and writes the range here; it makes
-- the range's notifications in a transaction of its own, which deletes the row. A worker that
-- dies leaves its range's row (its transaction rolled back), and another makes it.
-- `ranged`: the cursor reached the end of the snapshot; the broadcast is DONE once no range is left.
ALTER TABLE broadcasts ADD COLUMN ranged SMALLINT NOT NULL DEFAULT 0;
CREATE TABLE broadcast_ranges (
  broadcast_seq BIGINT NOT NULL,
  -- The range is the snapshot's recipient IDs after after_id, up to and including last_id.
  after_id TEXT COLLATE "C" NOT NULL,
  last_id TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (broadcast_seq, after_id)
);
