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
import type { Sql } from './connect.ts';

/**
 * The status log on PostgreSQL (migration 140): identity ids commit out of order across
 * transactions, so the cursor is (tx, id) and a read stops below the oldest transaction still
 * running. Every transaction below that horizon has ended, so no row can appear later behind a
 * cursor: no gap. The cost is a short delay while a transaction is open (milliseconds: claims
 * and completions are short). The RUNNING a run's first row implies has that row's cursor, marked
 * (run-starts.ts).
 */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())';
const CURSOR = /^(\d{1,20}):(\d{1,19})$/;
const MAX_ID = '9223372036854775807';

export function createPostgresStatusLog(sql: Sql): StatusLogStore {
  const parts = (cursor: string): [string, string] => {
    const match = CURSOR.exec(cursor);
    if (!match) throw new TypeError(`not a status-log cursor: ${cursor}`);
    return [match[1] as string, match[2] as string];
  };
  const head = async () => {
    // ORDER BY names the table's column: a bare `tx` would be the output column, the text, and
    // sort 999 after 1000 (a stale head for as long as the older number sorts higher), read by
    // scanning the whole log instead of from its (tx, id) index.
    const [row] = await sql<
      { tx: string; id: number }[]
    >`SELECT e.tx::text AS tx, e.id FROM notification_events e
      WHERE e.tx < ${sql.unsafe(HORIZON)} ORDER BY e.tx DESC, e.id DESC LIMIT 1`;
    return row ? `${row.tx}:${row.id}` : '0:0';
  };
  const compareRows = (a: string, b: string) => {
    const [aTx, aId] = parts(a).map(BigInt) as [bigint, bigint];
    const [bTx, bId] = parts(b).map(BigInt) as [bigint, bigint];
    if (aTx !== bTx) return aTx < bTx ? -1 : 1;
    return aId === bId ? 0 : aId < bId ? -1 : 1;
  };
  const compare = (a: string, b: string) => compareCursors(a, b, compareRows);
  /** Where a read from `from` starts: after its row, or just before it for the RUNNING it implies. */
  const lowerBound = (from: string): string => {
    const { row, start } = cursorRow(from);
    if (!start) return row;
    const [tx, id] = parts(row);
    return `${tx}:${BigInt(id) - 1n}`;
  };
  // Every ORDER BY below names the table's columns (e.tx): a bare `tx` would be the output
  // column, the text (see head()).
  /**
   * `from`, or, when the log's next event after it is older than `since` allows (by more than
   * TIME_SKEW_MS), a cursor after every transaction whose events are that old (seekTime).
   */
  const skipOlder = async (from: string, until: string, since: number): Promise<string> => {
    const oldest = since - TIME_SKEW_MS;
    const [fromTx, fromId] = parts(from);
    const [first] = await sql<{ tx: string; at: number }[]>`
      SELECT e.tx::text AS tx, e.at FROM notification_events e
       WHERE (e.tx, e.id) > (${fromTx}::xid8, ${fromId}::bigint) ORDER BY e.tx, e.id LIMIT 1`;
    const endTx = BigInt(parts(until)[0]);
    if (!first || first.at >= oldest || BigInt(first.tx) > endTx) return from;
    const firstAfter = async (tx: bigint) => {
      const [row] = await sql<{ tx: string; at: number }[]>`
        SELECT e.tx::text AS tx, e.at FROM notification_events e
         WHERE e.tx > ${String(tx)}::xid8 ORDER BY e.tx, e.id LIMIT 1`;
      return row && { key: BigInt(row.tx), at: row.at };
    };
    const skipTo = `${await seekTime(BigInt(first.tx) - 1n, endTx, oldest, firstAfter)}:${MAX_ID}`;
    return compare(skipTo, from) > 0 ? skipTo : from;
  };
  return {
    head,
    isCursor: (cursor) => CURSOR.test(cursorRow(cursor).row),
    compare,
    async read(from, options) {
      // Everything up to `until` has committed (the head is below every open transaction), so the
      // statements below need no horizon of their own and agree on what they see.
      const until = cursorRow(options.until ?? (await head())).row;
      if (compare(until, from) <= 0) return { rows: [], readTo: from, more: false };
      const lower = lowerBound(from);
      const after = options.since === undefined ? lower : await skipOlder(lower, until, options.since);
      const [afterTx, afterId] = parts(after);
      const [untilTx, untilId] = parts(until);
      const scan = LOG_SCAN_PAGES * options.limit;
      const types = options.types ? [...options.types] : null;
      const tenants = options.tenants ? [...options.tenants] : null;
      // The events looked at are the next `scan` of the log; the join and the filters stop once
      // `limit` of them match.
      const rows = await sql<Array<LoggedRow & { tx: string; id: number }>>`
        SELECT e.tx::text AS tx, e.id, ${sql.unsafe(loggedColumns(STATUS_TYPES_SQL))}
          FROM (SELECT * FROM notification_events
                 WHERE (tx, id) > (${afterTx}::xid8, ${afterId}::bigint)
                   AND (tx, id) <= (${untilTx}::xid8, ${untilId}::bigint)
                 ORDER BY tx, id LIMIT ${scan}) e
          ${sql.unsafe(LOG_JOINS)}
         WHERE e.at >= ${options.since ?? 0} AND (n.seq IS NOT NULL OR r.seq IS NOT NULL)
           AND (${sql.unsafe(IS_RUN_EVENT)} OR e.type IN (${sql.unsafe(LOGGED_TYPES_SQL)}))
           AND (${types}::text[] IS NULL OR CASE WHEN ${sql.unsafe(IS_RUN_EVENT)}
             THEN ${RUN_CHANGE}::text = ANY(${types}::text[]) ELSE e.type = ANY(${types}::text[]) END)
           AND (${tenants}::text[] IS NULL OR coalesce(n.tenant, r.tenant) = ANY(${tenants}::text[]))
         ORDER BY e.tx, e.id LIMIT ${options.limit}`;
      const page = expandStarts(
        rows.map((row) => loggedFromRow(row, `${row.tx}:${row.id}`)),
        { from, until: options.until, limit: options.limit },
        compare,
      );
      const full = fullPage(page, options.limit);
      if (full) return full;
      // A shorter page got through the events it looked at: all up to `until`, or `scan` of them.
      const [reach] = await sql<{ tx: string; id: string }[]>`
        SELECT e.tx::text AS tx, e.id::text AS id FROM notification_events e
         WHERE (e.tx, e.id) > (${afterTx}::xid8, ${afterId}::bigint)
           AND (e.tx, e.id) <= (${untilTx}::xid8, ${untilId}::bigint)
         ORDER BY e.tx, e.id OFFSET ${scan - 1} LIMIT 1`;
      return reach
        ? { rows: page, readTo: `${reach.tx}:${reach.id}`, more: true }
        : { rows: page, readTo: until, more: false };
    },
  };
}
