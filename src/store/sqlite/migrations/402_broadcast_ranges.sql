-- A PostgreSQL broadcast's fan-out is made by several workers at once, each taking the next range
-- of its snapshot (postgres/broadcasts.ts, docs/topics.md, decision record 0027). SQLite has one
-- writer, which makes its broadcasts chunk by chunk in order (sqlite/broadcasts.ts): this table and
-- column stay empty here; they are the PostgreSQL schema's twins (test/store/schema-parity.test.ts).
ALTER TABLE broadcasts ADD COLUMN ranged INTEGER NOT NULL DEFAULT 0;
CREATE TABLE broadcast_ranges (
  broadcast_seq INTEGER NOT NULL,
  after_id TEXT NOT NULL,
  last_id TEXT NOT NULL,
  PRIMARY KEY (broadcast_seq, after_id)
);
