import type { CallbackStore } from '../port/callbacks.ts';
import { type AttemptRow, attemptFromRow, type CallbackRow, callbackFromRow } from '../rows-status.ts';
import type { SqliteDb } from './open.ts';

/** The SQLite callbacks store: one connection, so a claim needs no row locks. */
export function createSqliteCallbacks(db: SqliteDb): CallbackStore {
  const insert = db.prepare(
    `INSERT INTO callbacks (id, tenant, url, events, secret, previous_secret, rotated_at, disabled_at, disabled_reason, created_at)
     VALUES (@id, @tenant, @url, @events, @secret, NULL, NULL, NULL, NULL, @createdAt)`,
  );
  const list = db.prepare('SELECT * FROM callbacks WHERE tenant = ? ORDER BY created_at, id');
  const get = db.prepare('SELECT * FROM callbacks WHERE tenant = ? AND id = ?');
  const enabled = db.prepare('SELECT * FROM callbacks WHERE disabled_at IS NULL ORDER BY created_at, id');
  const removeMessages = db.prepare('DELETE FROM callback_messages WHERE callback_id = ?');
  const removeAttempts = db.prepare('DELETE FROM callback_attempts WHERE callback_id = ?');
  const removeOne = db.prepare('DELETE FROM callbacks WHERE tenant = ? AND id = ?');
  const rotate = db.prepare(
    'UPDATE callbacks SET previous_secret = secret, secret = ?, rotated_at = ? WHERE tenant = ? AND id = ?',
  );
  const disable = db.prepare(
    'UPDATE callbacks SET disabled_at = ?, disabled_reason = ? WHERE id = ? AND disabled_at IS NULL',
  );
  const abandon = db.prepare(
    "UPDATE callback_messages SET state = 'failed' WHERE callback_id = ? AND state = 'pending'",
  );
  const cursor = db.prepare('SELECT cursor FROM callback_fanout WHERE id = 1').pluck();
  const moveCursor = db.prepare('UPDATE callback_fanout SET cursor = ? WHERE id = 1 AND cursor IS ?');
  const addMessage = db.prepare(
    `INSERT INTO callback_messages (id, callback_id, notification_id, body, state, attempts, due_at, created_at)
     VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`,
  );
  // Per enabled callback, one index seek for a due message: never a scan of the whole outbox,
  // which holds every message not yet delivered (100,000 after a burst; grouping them on every
  // pass took most of the dispatch thread).
  const due = db
    .prepare(
      `SELECT c.id FROM callbacks c WHERE c.disabled_at IS NULL AND EXISTS (
         SELECT 1 FROM callback_messages m WHERE m.callback_id = c.id AND m.state = 'pending'
            AND m.due_at <= @now AND (m.lease_until IS NULL OR m.lease_until <= @now))
       ORDER BY c.created_at, c.id LIMIT @limit`,
    )
    .pluck();
  // The first pending message of each notification, if due and not leased: the order rule.
  const claimable = db
    .prepare(
      `SELECT m.seq FROM callback_messages m
      WHERE m.callback_id = @callback AND m.state = 'pending' AND m.due_at <= @now
        AND (m.lease_until IS NULL OR m.lease_until <= @now)
        AND NOT EXISTS (SELECT 1 FROM callback_messages p WHERE p.callback_id = m.callback_id
              AND p.notification_id = m.notification_id AND p.state = 'pending' AND p.seq < m.seq)
      ORDER BY m.due_at, m.seq LIMIT @limit`,
    )
    .pluck();
  const lease = db.prepare(
    `UPDATE callback_messages SET lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE seq = ?
     RETURNING id, callback_id, notification_id, body, attempts, created_at`,
  );
  const settle = db.prepare(
    `UPDATE callback_messages SET state = ?, due_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND lease_owner = ? AND attempts = ? AND state = 'pending'`,
  );
  const record = db.prepare(
    `INSERT INTO callback_attempts (callback_id, message_id, notification_id, attempt, status_code, error, at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const attempts = db.prepare(
    'SELECT * FROM callback_attempts WHERE callback_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
  );

  const fanOut = db.transaction((from: string | null, to: string, messages, now: number) => {
    if (moveCursor.run(to, from).changes === 0) return false;
    for (const m of messages) addMessage.run(m.id, m.callbackId, m.notificationId, m.body, now, now);
    return true;
  }) as (
    from: string | null,
    to: string,
    messages: Parameters<CallbackStore['fanOut']>[2],
    now: number,
  ) => boolean;

  const completeAll = db.transaction(
    (owner: string, attempts: Parameters<CallbackStore['complete']>[1], now: number) => {
      for (const { message, outcome, statusCode, error } of attempts) {
        const state = outcome.kind === 'retry' ? 'pending' : outcome.kind;
        const dueAt = outcome.kind === 'retry' ? outcome.retryAt : now;
        settle.run(state, dueAt, message.id, owner, message.attempt);
        record.run(
          message.callbackId,
          message.id,
          message.notificationId,
          message.attempt,
          statusCode,
          error,
          now,
        );
      }
    },
  );

  return {
    async create(callback) {
      insert.run({ ...callback, events: JSON.stringify(callback.events) });
    },
    async list(tenant) {
      return (list.all(tenant) as CallbackRow[]).map(callbackFromRow);
    },
    async get(tenant, id) {
      const row = get.get(tenant, id) as CallbackRow | undefined;
      return row && callbackFromRow(row);
    },
    async enabled() {
      return (enabled.all() as CallbackRow[]).map(callbackFromRow);
    },
    async remove(tenant, id) {
      return db.transaction(() => {
        if (removeOne.run(tenant, id).changes === 0) return false;
        removeMessages.run(id);
        removeAttempts.run(id);
        return true;
      })();
    },
    async rotateSecret(tenant, id, secret, now) {
      return rotate.run(secret, now, tenant, id).changes > 0;
    },
    async disable(id, reason, now) {
      db.transaction(() => {
        disable.run(now, reason, id);
        abandon.run(id);
      })();
    },
    async fanoutCursor() {
      return (cursor.get() as string | null) ?? null;
    },
    async fanOut(from, to, messages, now) {
      return fanOut(from, to, messages, now);
    },
    async dueCallbacks(now, limit) {
      return due.all({ now, limit }) as string[];
    },
    async claim(callbackId, owner, now, leaseUntil, limit) {
      return db.transaction(() => {
        const seqs = claimable.all({ callback: callbackId, now, limit }) as number[];
        return seqs.map((seq) => {
          const row = lease.get(owner, leaseUntil, seq) as {
            id: string;
            callback_id: string;
            notification_id: string;
            body: string;
            attempts: number;
            created_at: number;
          };
          return {
            id: row.id,
            callbackId: row.callback_id,
            notificationId: row.notification_id,
            body: row.body,
            attempt: row.attempts,
            createdAt: row.created_at,
          };
        });
      })();
    },
    async complete(owner, attempts, now) {
      completeAll(owner, attempts, now);
    },
    async deliveries(tenant, id, before, limit) {
      if (!get.get(tenant, id)) return undefined;
      return (attempts.all(id, before ?? Number.MAX_SAFE_INTEGER, limit) as AttemptRow[]).map(attemptFromRow);
    },
  };
}
