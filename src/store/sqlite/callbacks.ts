import { attemptOf, type CallbackStore, type NewAttempt } from '../port/callbacks.ts';
import {
  type AttemptRow,
  attemptFromRow,
  type CallbackRow,
  callbackFromRow,
  type LeasedRow,
  leasedFromRow,
} from '../rows-status.ts';
import { relaxedSync, type SqliteDb } from './open.ts';

/** The SQLite callbacks store: one connection, so a claim needs no row locks. */
export function createSqliteCallbacks(db: SqliteDb): CallbackStore {
  // What the sender writes is redone if a power cut loses it (see relaxedSync): no fsync each.
  const relaxed = relaxedSync(db);
  const insert = db.prepare(
    `INSERT INTO callbacks (id, tenant, url, events, secret, previous_secret, rotated_at, disabled_at, disabled_reason, created_at, cursor)
     VALUES (@id, @tenant, @url, @events, @secret, NULL, NULL, NULL, NULL, @createdAt, @cursor)`,
  );
  const list = db.prepare('SELECT * FROM callbacks WHERE tenant = ? ORDER BY created_at, id');
  const count = db.prepare('SELECT count(*) FROM callbacks WHERE tenant = ?').pluck();
  const get = db.prepare('SELECT * FROM callbacks WHERE tenant = ? AND id = ?');
  const enabled = db.prepare('SELECT * FROM callbacks WHERE disabled_at IS NULL ORDER BY created_at, id');
  // A removed callback's pending messages go with it (an index range); what it sent or gave up on
  // is left to the pruner, like every other callback's: by callback alone, the statement read the
  // whole table, every callback's last 7 days, holding the write lock all the while.
  const removeMessages = db.prepare(
    "DELETE FROM callback_messages WHERE callback_id = ? AND state = 'pending'",
  );
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
  const leaseHead = db
    .prepare(
      `UPDATE callbacks SET head_owner = @owner, head_lease_until = @until
        WHERE id = @id AND disabled_at IS NULL
          AND (head_owner IS NULL OR head_owner = @owner OR head_lease_until <= @now)
       RETURNING cursor`,
    )
    .pluck();
  const moveHead = db.prepare(
    'UPDATE callbacks SET cursor = ?, head_lease_until = ? WHERE id = ? AND head_owner = ? AND cursor = ?',
  );
  const addWaiting = db.prepare(
    `INSERT INTO callback_messages (id, callback_id, notification_id, body, state, attempts, due_at, created_at,
       trace_context)
     VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  );
  const pendingAmong = db
    .prepare(
      `SELECT DISTINCT notification_id FROM callback_messages
        WHERE callback_id = ? AND state = 'pending' AND notification_id IN (SELECT value FROM json_each(?))`,
    )
    .pluck();
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
     RETURNING id, callback_id, notification_id, body, attempts, created_at, trace_context`,
  );
  const settle = db.prepare(
    `UPDATE callback_messages SET state = ?, due_at = ?, lease_owner = NULL, lease_until = NULL
      WHERE id = ? AND lease_owner = ? AND attempts = ? AND state = 'pending'`,
  );
  const record = db.prepare(
    `INSERT INTO callback_attempts (callback_id, message_id, notification_id, attempt, status_code, error, at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  // The oldest rows by key (rows are added in time order), so a prune reads `limit` rows, never
  // the whole table: neither table has an index on time.
  const pruneAttempts = db.prepare(
    'DELETE FROM callback_attempts WHERE id IN (SELECT id FROM callback_attempts ORDER BY id LIMIT ?) AND at < ?',
  );
  const pruneMessages = db.prepare(
    `DELETE FROM callback_messages WHERE seq IN (SELECT seq FROM callback_messages ORDER BY seq LIMIT ?)
        AND created_at < ? AND state <> 'pending'`,
  );
  const attempts = db.prepare(
    'SELECT * FROM callback_attempts WHERE callback_id = ? AND id < ? ORDER BY id DESC LIMIT ?',
  );

  const recordAttempt = (a: NewAttempt, now: number) =>
    record.run(a.callbackId, a.messageId, a.notificationId, a.attempt, a.statusCode, a.error, now);

  const advance = db.transaction(
    (...[id, owner, from, to, progress, now, until]: Parameters<CallbackStore['advance']>) => {
      if (moveHead.run(to, until, id, owner, from).changes === 0) return false;
      for (const a of progress.attempts) recordAttempt(a, now);
      for (const m of progress.waiting)
        addWaiting.run(
          m.id,
          m.callbackId,
          m.notificationId,
          m.body,
          m.attempts,
          m.dueAt,
          m.createdAt,
          m.traceContext ?? null,
        );
      return true;
    },
  );

  const completeAll = db.transaction(
    (owner: string, attempts: Parameters<CallbackStore['complete']>[1], now: number) => {
      for (const finished of attempts) {
        const { message, outcome } = finished;
        const state = outcome.kind === 'retry' ? 'pending' : outcome.kind;
        const dueAt = outcome.kind === 'retry' ? outcome.retryAt : now;
        settle.run(state, dueAt, message.id, owner, message.attempt);
        recordAttempt(attemptOf(finished), now);
      }
    },
  );

  return {
    async create(callback, cursor, perTenant) {
      return db.transaction(() => {
        if ((count.get(callback.tenant) as number) >= perTenant) return false;
        insert.run({ ...callback, events: JSON.stringify(callback.events), cursor });
        return true;
      })();
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
    async leaseHead(id, owner, now, until) {
      return relaxed(() => leaseHead.get({ id, owner, now, until }) as string | undefined);
    },
    async advance(id, owner, from, to, progress, now, until) {
      return relaxed(() => advance(id, owner, from, to, progress, now, until));
    },
    async pendingAmong(id, notificationIds) {
      if (notificationIds.length === 0) return new Set();
      return new Set(pendingAmong.all(id, JSON.stringify(notificationIds)) as string[]);
    },
    async dueCallbacks(now, limit) {
      return due.all({ now, limit }) as string[];
    },
    async claim(callbackId, owner, now, leaseUntil, limit) {
      return relaxed(
        db.transaction(() => {
          const seqs = claimable.all({ callback: callbackId, now, limit }) as number[];
          return seqs.map((seq) => leasedFromRow(lease.get(owner, leaseUntil, seq) as LeasedRow));
        }),
      );
    },
    async complete(owner, attempts, now) {
      relaxed(() => completeAll(owner, attempts, now));
    },
    async prune(before, limit) {
      return relaxed(
        () => pruneAttempts.run(limit, before).changes + pruneMessages.run(limit, before).changes,
      );
    },
    async deliveries(tenant, id, before, limit) {
      if (!get.get(tenant, id)) return undefined;
      return (attempts.all(id, before ?? Number.MAX_SAFE_INTEGER, limit) as AttemptRow[]).map(attemptFromRow);
    },
  };
}
