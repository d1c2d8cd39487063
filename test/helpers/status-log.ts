import type { Status } from '../../src/notifications/model.ts';
import type { createSqliteStore } from '../../src/store/sqlite/index.ts';

/**
 * Writes one notification of `tenant` in `status`, with its status event, straight into a SQLite
 * store: one change in the status log, for tests of the log's readers.
 */
export function logChange(
  store: ReturnType<typeof createSqliteStore>,
  change: { seq: number; id: string; tenant: string; status: Status },
): void {
  const now = Date.now();
  store.db
    .prepare(
      `INSERT INTO notifications (seq, id, tenant, channel, priority, status, recipient, created_at, updated_at)
       VALUES (?, ?, ?, 'email', 2, ?, '{}', ?, ?)`,
    )
    .run(change.seq, change.id, change.tenant, change.status, now, now);
  store.db
    .prepare('INSERT INTO notification_events (notification_seq, type, at) VALUES (?, ?, ?)')
    .run(change.seq, change.status, now);
}
