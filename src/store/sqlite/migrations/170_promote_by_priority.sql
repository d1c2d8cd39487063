-- Waiting rows (scheduled, retrying, held) go back to ready in priority order, then due order:
-- each priority's due rows are a range of this index, so a CRITICAL retry due now is promoted in
-- the next step however many LOW rows fell due before it (promote in src/store/{sqlite,postgres}/queue.ts).
CREATE INDEX notifications_waiting_priority ON notifications (priority, due_at) WHERE queue_state = 'waiting';
