import type { StatusLogStore } from '../port/status-log.ts';
import { STATUS_TYPES_SQL } from '../port/status-log.ts';
import { type LoggedRow, loggedColumns, loggedFromRow } from '../rows-status.ts';
import type { Sql } from './connect.ts';

/**
 * The status log on PostgreSQL (migration 140): identity ids commit out of order across
 * transactions, so the cursor is (tx, id) and a read stops below the oldest transaction still
 * running. Every transaction below that horizon has ended, so no row can appear later behind a
 * cursor: no gap. The cost is a short delay while a transaction is open (milliseconds: claims
 * and completions are short).
 */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())';
const CURSOR = /^(\d{1,20}):(\d{1,19})$/;
const MAX = '18446744073709551615:9223372036854775807';

export function createPostgresStatusLog(sql: Sql): StatusLogStore {
  const parts = (cursor: string): [string, string] => {
    const match = CURSOR.exec(cursor);
    if (!match) throw new TypeError(`not a status-log cursor: ${cursor}`);
    return [match[1] as string, match[2] as string];
  };
  return {
    async head() {
      // ORDER BY names the table's column: a bare `tx` would be the output column, the text, and
      // sort 999 after 1000 (a stale head for as long as the older number sorts higher), read by
      // scanning the whole log instead of from its (tx, id) index.
      const [row] = await sql<
        { tx: string; id: number }[]
      >`SELECT e.tx::text AS tx, e.id FROM notification_events e
        WHERE e.tx < ${sql.unsafe(HORIZON)} ORDER BY e.tx DESC, e.id DESC LIMIT 1`;
      return row ? `${row.tx}:${row.id}` : '0:0';
    },
    isCursor: (cursor) => CURSOR.test(cursor),
    compare(a, b) {
      const [aTx, aId] = parts(a).map(BigInt) as [bigint, bigint];
      const [bTx, bId] = parts(b).map(BigInt) as [bigint, bigint];
      if (aTx !== bTx) return aTx < bTx ? -1 : 1;
      return aId === bId ? 0 : aId < bId ? -1 : 1;
    },
    async read(after, options) {
      const [afterTx, afterId] = parts(after);
      const [untilTx, untilId] = parts(options.until ?? MAX);
      const types = options.types ? [...options.types] : null;
      const tenants = options.tenants ? [...options.tenants] : null;
      const rows = await sql<Array<LoggedRow & { tx: string; id: number }>>`
        SELECT e.tx::text AS tx, e.id, ${sql.unsafe(loggedColumns(STATUS_TYPES_SQL))}
          FROM notification_events e JOIN notifications n ON n.seq = e.notification_seq
         WHERE (e.tx, e.id) > (${afterTx}::xid8, ${afterId}::bigint)
           AND (e.tx, e.id) <= (${untilTx}::xid8, ${untilId}::bigint)
           AND e.tx < ${sql.unsafe(HORIZON)}
           AND e.at >= ${options.since ?? 0} AND e.type IN (${sql.unsafe(STATUS_TYPES_SQL)})
           AND (${types}::text[] IS NULL OR e.type = ANY(${types}::text[]))
           AND (${tenants}::text[] IS NULL OR n.tenant = ANY(${tenants}::text[]))
         ORDER BY e.tx, e.id LIMIT ${options.limit}`;
      return rows.map((row) => loggedFromRow(row, `${row.tx}:${row.id}`));
    },
  };
}
