import type { StatusLogStore } from '../port/status-log.ts';
import { STATUS_TYPES_SQL } from '../port/status-log.ts';
import { type LoggedRow, loggedColumns, loggedFromRow } from '../rows-status.ts';
import type { SqliteDb } from './open.ts';
import { shaped } from './shaped.ts';

/**
 * The status log on SQLite: one writer at a time takes the database's write lock before it
 * appends, so event ids commit in order and the cursor is the event id.
 */
export function createSqliteStatusLog(db: SqliteDb): StatusLogStore {
  const head = db.prepare('SELECT max(id) FROM notification_events').pluck();
  const read = shaped<LoggedRow & { cursor_id: number }>(
    db.prepare(
      `SELECT e.id AS cursor_id, ${loggedColumns(STATUS_TYPES_SQL)}
       FROM notification_events e JOIN notifications n ON n.seq = e.notification_seq
      WHERE e.id > @after AND e.id <= @until AND e.at >= @since AND e.type IN (${STATUS_TYPES_SQL})
        AND (@types IS NULL OR e.type IN (SELECT value FROM json_each(@types)))
        AND (@tenants IS NULL OR n.tenant IN (SELECT value FROM json_each(@tenants)))
      ORDER BY e.id LIMIT @limit`,
    ),
  );
  return {
    async head() {
      return String((head.get() as number | null) ?? 0);
    },
    isCursor: (cursor) => /^\d{1,15}$/.test(cursor),
    compare: (a, b) => Number(a) - Number(b),
    async read(after, options) {
      const rows = read.all({
        after: Number(after),
        until: options.until === undefined ? Number.MAX_SAFE_INTEGER : Number(options.until),
        since: options.since ?? 0,
        limit: options.limit,
        types: options.types ? JSON.stringify(options.types) : null,
        tenants: options.tenants ? JSON.stringify(options.tenants) : null,
      });
      return rows.map((row) => loggedFromRow(row, String(row.cursor_id)));
    },
  };
}
