import {
  fullPage,
  LOG_SCAN_PAGES,
  LOGGED_TYPES_SQL,
  RUN_CHANGE,
  STATUS_TYPES_SQL,
  type StatusLogStore,
} from '../port/status-log.ts';
import { IS_RUN_EVENT, LOG_JOINS, type LoggedRow, loggedColumns, loggedFromRow } from '../rows-status.ts';
import { compareCursors, cursorRow, expandStarts } from '../run-starts.ts';
import { seekTime, TIME_SKEW_MS } from '../seek-time.ts';
import type { SqliteDb } from './open.ts';
import { shaped } from './shaped.ts';

/**
 * The status log on SQLite: one writer at a time takes the database's write lock before it
 * appends, so event ids commit in order and the cursor is the event id (or, for the RUNNING a run's
 * first row implies, that id marked: run-starts.ts).
 */
export function createSqliteStatusLog(db: SqliteDb): StatusLogStore {
  const head = db.prepare('SELECT max(id) FROM notification_events').pluck();
  const next = db.prepare('SELECT id, at FROM notification_events WHERE id > ? ORDER BY id LIMIT 1');
  const read = shaped<LoggedRow & { cursor_id: number }>(
    db.prepare(
      `SELECT e.id AS cursor_id, ${loggedColumns(STATUS_TYPES_SQL)}
       FROM notification_events e ${LOG_JOINS}
      WHERE e.id > @after AND e.id <= @last AND e.at >= @since AND (n.seq IS NOT NULL OR r.seq IS NOT NULL)
        AND (${IS_RUN_EVENT} OR e.type IN (${LOGGED_TYPES_SQL}))
        AND (@types IS NULL OR CASE WHEN ${IS_RUN_EVENT} THEN '${RUN_CHANGE}' IN (SELECT value FROM json_each(@types))
          ELSE e.type IN (SELECT value FROM json_each(@types)) END)
        AND (@tenants IS NULL OR coalesce(n.tenant, r.tenant) IN (SELECT value FROM json_each(@tenants)))
      ORDER BY e.id LIMIT @limit`,
    ),
  );
  const firstAfter = async (key: bigint) => {
    const row = next.get(Number(key)) as { id: number; at: number } | undefined;
    return row && { key: BigInt(row.id), at: row.at };
  };
  const compare = (a: string, b: string) => compareCursors(a, b, (x, y) => Number(x) - Number(y));
  return {
    async head() {
      return String((head.get() as number | null) ?? 0);
    },
    isCursor: (cursor) => /^\d{1,15}$/.test(cursorRow(cursor).row),
    compare,
    async read(from, options) {
      const until =
        options.until === undefined ? Number.MAX_SAFE_INTEGER : Number(cursorRow(options.until).row);
      // From an implied RUNNING, its row is read again (expandStarts leaves the RUNNING out).
      const start = cursorRow(from);
      let after = Number(start.row) - (start.start ? 1 : 0);
      const since = options.since ?? 0;
      const oldest = since - TIME_SKEW_MS;
      // Changes committed after `end` is read have higher ids, so none is skipped.
      const end = Math.min(until, (head.get() as number | null) ?? 0);
      const first =
        options.since === undefined ? undefined : (next.get(after) as { id: number; at: number } | undefined);
      if (first && first.at < oldest && first.id <= end)
        after = Number(await seekTime(BigInt(first.id - 1), BigInt(end), oldest, firstAfter));
      // Event ids are integers: the next LOG_SCAN_PAGES × limit of them hold at most that many events.
      const last = Math.min(end, after + LOG_SCAN_PAGES * options.limit);
      const scanned = last < end;
      const reached = String(Math.max(last, after));
      const readTo = compare(reached, from) < 0 ? from : reached;
      if (last <= after) return { rows: [], readTo, more: false };
      const rows = read.all({
        after,
        last,
        since,
        limit: options.limit,
        types: options.types ? JSON.stringify(options.types) : null,
        tenants: options.tenants ? JSON.stringify(options.tenants) : null,
      });
      const page = expandStarts(
        rows.map((row) => loggedFromRow(row, String(row.cursor_id))),
        { from, until: options.until, limit: options.limit },
        compare,
      );
      return fullPage(page, options.limit) ?? { rows: page, readTo, more: scanned };
    },
  };
}
