import type { Suppression, SuppressionRecord } from '../../suppressions/model.ts';
import { scannedPage } from '../port/scanned-page.ts';
import { keyText, type SuppressionKey, type SuppressionStore } from '../port/suppressions.ts';
import {
  SUPPRESSION_COLUMNS as COLUMNS,
  type SuppressionRow as Row,
  suppressionFromRow,
  WIDENS,
} from '../rows-suppressions.ts';
import type { Query, Sql } from './connect.ts';
import { scanFloor } from './scan-floor.ts';

const json = (value: unknown) => JSON.stringify(value);

/**
 * Adds suppressions inside the caller's transaction (a completion's or a report's, so the
 * suppression commits with the status change that caused it). One statement for the batch.
 */
export async function addSuppressionsOn(
  tx: Query,
  entries: readonly Suppression[],
  now: number,
): Promise<SuppressionRecord[]> {
  if (entries.length === 0) return [];
  const input = entries.map((e, ord) => ({ ...e, ord }));
  // De-duplicated (one key twice in one INSERT ... ON CONFLICT is an error), keeping the widest
  // reason of each key, then inserted in the given order, as SQLite does.
  await tx`
    INSERT INTO suppressions (tenant, channel, recipient, reason, created_at)
    SELECT tenant, channel, recipient, reason, ${now}::bigint FROM (
      SELECT DISTINCT ON (tenant, channel, recipient) tenant, channel, recipient, reason, ord
      FROM json_to_recordset(${json(input)}::text::json)
        AS e(tenant text, channel text, recipient text, reason text, ord int)
      ORDER BY tenant, channel, recipient, (reason = 'unsubscribe'), ord) d
    ORDER BY ord
    ON CONFLICT (tenant, channel, recipient) DO UPDATE SET reason = excluded.reason, created_at = excluded.created_at
    WHERE ${tx.unsafe(WIDENS)}`;
  const rows = await matchOn(tx, entries);
  const byKey = new Map(rows.map((r) => [keyText(r), r]));
  return entries.flatMap((e) => byKey.get(keyText(e)) ?? []);
}

/** The suppressions among `keys`, inside the caller's transaction (the claim's). */
export async function matchOn(tx: Query, keys: readonly SuppressionKey[]): Promise<SuppressionRecord[]> {
  if (keys.length === 0) return [];
  const rows = await tx<Row[]>`
    SELECT s.id, s.tenant, s.channel, s.recipient, s.reason, s.created_at
    FROM json_to_recordset(${json(keys)}::text::json) AS k(tenant text, channel text, recipient text)
    JOIN suppressions s USING (tenant, channel, recipient)`;
  return rows.map(suppressionFromRow);
}

/** The PostgreSQL implementation of the suppression port. */
export function createPostgresSuppressions(sql: Sql): SuppressionStore {
  return {
    add: (entries, now) => sql.begin((tx) => addSuppressionsOn(tx, entries, now)),
    async remove(key) {
      const rows = await sql`DELETE FROM suppressions
        WHERE tenant = ${key.tenant} AND channel = ${key.channel} AND recipient = ${key.recipient} RETURNING id`;
      return rows.length > 0;
    },
    async list(tenant, o) {
      const range = sql`tenant = ${tenant} ${o.before === undefined ? sql`` : sql`AND id < ${o.before}`}`;
      // A channel alone filters the tenant's suppressions (with a recipient, its key's index finds them).
      const floor =
        o.channel !== undefined && o.recipient === undefined
          ? await scanFloor(sql, 'suppressions', 'id', range)
          : undefined;
      const rows = await sql<Row[]>`SELECT ${sql.unsafe(COLUMNS)} FROM suppressions WHERE ${range}
        ${floor === undefined ? sql`` : sql`AND id >= ${floor}`}
        ${o.channel === undefined ? sql`` : sql`AND channel = ${o.channel}`}
        ${o.recipient === undefined ? sql`` : sql`AND recipient = ${o.recipient}`}
        ORDER BY id DESC LIMIT ${o.limit}`;
      return scannedPage(rows.map(suppressionFromRow), o.limit, floor);
    },
    match: (keys) => matchOn(sql, keys),
  };
}
