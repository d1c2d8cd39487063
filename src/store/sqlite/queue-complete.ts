import type { Completion } from '../port/queue.ts';
import type { SqliteDb } from './open.ts';

// Every completion is fenced: it applies only while the row is still leased to this owner at this
// attempt, so a worker whose lease expired (and was re-claimed) cannot overwrite the newer attempt.
const FENCE = "seq = ? AND lease_owner = ? AND attempts = ? AND queue_state = 'leased'";
const UNLEASE = 'lease_owner = NULL, lease_until = NULL';

/** Applies completions inside the cycle's transaction; returns the seqs whose fence failed. */
export function createCompleter(db: SqliteDb) {
  const sent = db.prepare(
    `UPDATE notifications SET status = ?, queue_state = NULL, ${UNLEASE}, provider = ?,
       provider_message_id = ?, next_attempt_at = NULL, updated_at = ?
     WHERE ${FENCE} RETURNING id, tenant`,
  );
  const retry = db.prepare(
    `UPDATE notifications SET status = 'RETRYING', queue_state = 'waiting', due_at = ?, next_attempt_at = ?,
       ${UNLEASE}, updated_at = ? WHERE ${FENCE}`,
  );
  const failed = db.prepare(
    `UPDATE notifications SET status = 'FAILED', queue_state = NULL, next_attempt_at = NULL, ${UNLEASE},
       updated_at = ? WHERE ${FENCE}`,
  );
  // A hold gives the attempt back: the claim counted it, but no provider was called.
  const hold = db.prepare(
    `UPDATE notifications SET status = 'RETRYING', queue_state = ?, due_at = ?, next_attempt_at = ?,
       attempts = attempts - 1, ${UNLEASE}, updated_at = ? WHERE ${FENCE}`,
  );
  const event = db.prepare(
    `INSERT INTO notification_events (notification_seq, type, at, attempt, provider, detail, source)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const sandbox = db.prepare(
    `INSERT INTO sandbox_messages (notification_seq, notification_id, tenant, channel, recipient, content, attempt, at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  return function complete(owner: string, now: number, completions: readonly Completion[]): number[] {
    const stale: number[] = [];
    for (const c of completions) {
      const fence = [c.seq, owner, c.attempt] as const;
      const provider = c.provider ?? null;
      switch (c.kind) {
        case 'sent':
        case 'delivered': {
          const status = c.kind === 'delivered' ? 'DELIVERED' : 'SENT';
          const row = sent.get(status, c.provider, c.providerMessageId ?? null, now, ...fence) as
            | { id: string; tenant: string }
            | undefined;
          if (!row) break;
          event.run(c.seq, 'SENT', now, c.attempt, c.provider, c.detail ?? null, null);
          if (c.kind === 'delivered') event.run(c.seq, 'DELIVERED', now, null, c.provider, null, 'provider');
          if (c.sandbox) {
            const { channel, recipient, content } = c.sandbox;
            sandbox.run(
              c.seq,
              row.id,
              row.tenant,
              channel,
              JSON.stringify(recipient),
              JSON.stringify(content),
              c.attempt,
              now,
            );
          }
          continue;
        }
        case 'retry':
          if (retry.run(c.nextAttemptAt, c.nextAttemptAt, now, ...fence).changes === 0) break;
          event.run(c.seq, 'ATTEMPT_FAILED', now, c.attempt, provider, c.detail, null);
          event.run(c.seq, 'RETRYING', now, c.attempt, null, null, null);
          continue;
        case 'failed':
          if (failed.run(now, ...fence).changes === 0) break;
          event.run(c.seq, 'ATTEMPT_FAILED', now, c.attempt, provider, c.detail, null);
          event.run(c.seq, 'FAILED', now, c.attempt, null, c.detail, null);
          continue;
        case 'hold': {
          const state = c.until <= now ? 'ready' : 'waiting';
          const due = state === 'ready' ? null : c.until;
          if (hold.run(state, due, c.until, now, ...fence).changes === 0) break;
          event.run(c.seq, 'THROTTLED', now, null, provider, c.detail, null);
          continue;
        }
      }
      stale.push(c.seq);
    }
    return stale;
  };
}
